/*
 * Exec and file audit: the notifying seccomp filter (jail side) and the supervisor (host side). See audit.h and
 * docs/jail.md "Exec and file audit".
 *
 *   agentjail-init supervise --connect SOCKET [--failure closed|open] [--stall-seconds N] [--pass-through]
 *                            [--scope exec,files]
 *     On the host, as the jail's user: connect to the launcher's SOCKET, receive the notification descriptor (one
 *     byte with SCM_RIGHTS), then answer every notification with "go on" after handing one frame per event to
 *     the launcher. Frames: u32 length (little-endian, of what follows), u8 type, then fields (u8 tag, u16 length
 *     little-endian, bytes). Types: 'E' exec, 'F' file, 'D' events let go on without a frame (count), 'H' hello,
 *     'R' the frame just before stands for nothing (its caller was interrupted before the call ran).
 *     --failure closed (the default): an event's frame is written to the socket before its syscall goes on; a
 *     launcher that takes none for N seconds (--stall-seconds, 30) ends the supervisor, whose notifications then fail
 *     (ENOSYS) until the launcher ends the session. open: frames wait in a bounded buffer; when it is full, events go
 *     on unrecorded and are counted in a 'D' frame. --pass-through answers without reading anything and only counts
 *     (the launcher's fallback under audit.failure open). --scope says what the jail's filter notifies (as
 *     agentjail-init jail --audit): with both, working directories are kept between events (see cwd_of).
 *
 * The caller's memory is read through /proc/TID/mem; the notification id is checked after reading, so a frame is
 * never made from the memory of another process that took the id's pid. What is read is what the memory held when
 * read: another thread can change it before the kernel reads it again (the record then may be wrong, and it is
 * marked racy when two reads differ). This audits, it does not decide: the gap does not open any access.
 */
#define _GNU_SOURCE
#include "audit.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/capability.h>
#include <linux/kcmp.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#ifndef __NR_fchmodat2
#define __NR_fchmodat2 452
#endif
#ifndef __NR_setxattrat
#define __NR_setxattrat 463
#endif
#ifndef __NR_file_setattr
#define __NR_file_setattr 469
#endif
#ifndef __NR_removexattrat
#define __NR_removexattrat 466
#endif
#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif
#ifndef SECCOMP_USER_NOTIF_FLAG_CONTINUE
#define SECCOMP_USER_NOTIF_FLAG_CONTINUE (1UL << 0)
#endif

#if defined(__x86_64__)
#define AUDIT_NATIVE_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define AUDIT_NATIVE_ARCH AUDIT_ARCH_AARCH64
#else
#error "agentjail-init audits x86_64 and aarch64 only"
#endif

/*
 * Open flags that make an open a change to the file tree: access for writing, create, truncate. An unnamed file
 * (O_TMPFILE) needs write access too; glibc's __O_TMPFILE includes O_DIRECTORY, which every directory listing sets.
 */
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif
#ifndef __NR_pidfd_open
#define __NR_pidfd_open 434
#endif
#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif
#define WRITE_FLAGS (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC)
#define AT_FDCWD_VALUE (-100)
#define AT_EMPTY_PATH_VALUE 0x1000
#define AT_SYMLINK_NOFOLLOW_VALUE 0x100
#define AT_REMOVEDIR_VALUE 0x200

/* Bounds: a path as the kernel takes it, arguments as a record keeps them (docs/audit-log.md). */
#define PATH_BYTES 4096
#define MAX_ARGS 256
#define ARGV_BYTES 16384
#define FRAME_BYTES (64 * 1024)
#define OPEN_BUFFER_BYTES (4 * 1024 * 1024)

int audit_parse(const char *text) {
    if (strcmp(text, "none") == 0) {
        return 0;
    }
    if (strcmp(text, "exec") == 0) {
        return AUDIT_EXEC;
    }
    if (strcmp(text, "files") == 0) {
        return AUDIT_FILES;
    }
    if (strcmp(text, "exec,files") == 0) {
        return AUDIT_EXEC | AUDIT_FILES;
    }
    return -1;
}

/* ---- the syscalls audited, and where their arguments are ------------------------------------------------------- */

enum how {
    H_EXEC,       /* execve/execveat: path, argv */
    H_OPEN,       /* flags in an argument: recorded when they write (the filter sends no other) */
    H_OPENAT2,    /* flags in struct open_how: the filter cannot read them, the supervisor does */
    H_PLAIN,      /* one path (or a descriptor) */
    H_TWO,        /* a path and a target path (rename, link) */
    H_SYMLINK,    /* the link's text and its path */
    H_BIND,       /* bind(2): a Unix socket with a path makes a file (recorded as mknod); other binds make none */
    H_CWD,        /* chdir/fchdir: no record; tells the supervisor that a working directory it knows may change */
};

struct audited {
    long nr;
    const char *name;
    const char *op;
    enum how how;
    signed char dirfd;  /* argument holding the directory descriptor, -1: AT_FDCWD */
    signed char path;   /* argument holding the path, -1: none (fd below) */
    signed char fd;     /* argument holding a descriptor that names the file, -1: none */
    signed char dirfd2; /* the target's directory descriptor */
    signed char path2;  /* the target's path (or a symlink's text) */
    signed char flags;  /* open flags, or at-flags (AT_EMPTY_PATH, AT_REMOVEDIR), or renameat2's flags */
    signed char argv;   /* execve's argv */
};

#define N -1
static const struct audited SYSCALLS[] = {
    {__NR_execve, "execve", "exec", H_EXEC, N, 0, N, N, N, N, 1},
    {__NR_execveat, "execveat", "exec", H_EXEC, 0, 1, N, N, N, 4, 2},
#ifdef __NR_open
    {__NR_open, "open", "write", H_OPEN, N, 0, N, N, N, 1, N},
#endif
    {__NR_openat, "openat", "write", H_OPEN, 0, 1, N, N, N, 2, N},
    {__NR_openat2, "openat2", "write", H_OPENAT2, 0, 1, N, N, N, 2, N},
#ifdef __NR_creat
    {__NR_creat, "creat", "write", H_PLAIN, N, 0, N, N, N, N, N},
#endif
#ifdef __NR_unlink
    {__NR_unlink, "unlink", "unlink", H_PLAIN, N, 0, N, N, N, N, N},
#endif
    {__NR_unlinkat, "unlinkat", "unlink", H_PLAIN, 0, 1, N, N, N, 2, N},
#ifdef __NR_rmdir
    {__NR_rmdir, "rmdir", "rmdir", H_PLAIN, N, 0, N, N, N, N, N},
#endif
#ifdef __NR_rename
    {__NR_rename, "rename", "rename", H_TWO, N, 0, N, N, 1, N, N},
#endif
    {__NR_renameat, "renameat", "rename", H_TWO, 0, 1, N, 2, 3, N, N},
    {__NR_renameat2, "renameat2", "rename", H_TWO, 0, 1, N, 2, 3, 4, N},
#ifdef __NR_mkdir
    {__NR_mkdir, "mkdir", "mkdir", H_PLAIN, N, 0, N, N, N, N, N},
#endif
    {__NR_mkdirat, "mkdirat", "mkdir", H_PLAIN, 0, 1, N, N, N, N, N},
#ifdef __NR_link
    /* link(old, new): the record's path is the new name, its target the existing file. */
    {__NR_link, "link", "link", H_TWO, N, 1, N, N, 0, N, N},
#endif
    {__NR_linkat, "linkat", "link", H_TWO, 2, 3, N, 0, 1, N, N},
#ifdef __NR_symlink
    {__NR_symlink, "symlink", "symlink", H_SYMLINK, N, 1, N, N, 0, N, N},
#endif
    {__NR_symlinkat, "symlinkat", "symlink", H_SYMLINK, 1, 2, N, N, 0, N, N},
    {__NR_truncate, "truncate", "truncate", H_PLAIN, N, 0, N, N, N, N, N},
    {__NR_ftruncate, "ftruncate", "truncate", H_PLAIN, N, N, 0, N, N, N, N},
#ifdef __NR_chmod
    {__NR_chmod, "chmod", "chmod", H_PLAIN, N, 0, N, N, N, N, N},
#endif
    {__NR_fchmod, "fchmod", "chmod", H_PLAIN, N, N, 0, N, N, N, N},
    {__NR_fchmodat, "fchmodat", "chmod", H_PLAIN, 0, 1, N, N, N, N, N},
    {__NR_fchmodat2, "fchmodat2", "chmod", H_PLAIN, 0, 1, N, N, N, 3, N},
#ifdef __NR_chown
    {__NR_chown, "chown", "chown", H_PLAIN, N, 0, N, N, N, N, N},
#endif
#ifdef __NR_lchown
    {__NR_lchown, "lchown", "chown", H_PLAIN, N, 0, N, N, N, N, N},
#endif
    {__NR_fchown, "fchown", "chown", H_PLAIN, N, N, 0, N, N, N, N},
    {__NR_fchownat, "fchownat", "chown", H_PLAIN, 0, 1, N, N, N, 4, N},
#ifdef __NR_utime
    {__NR_utime, "utime", "utime", H_PLAIN, N, 0, N, N, N, N, N},
#endif
#ifdef __NR_utimes
    {__NR_utimes, "utimes", "utime", H_PLAIN, N, 0, N, N, N, N, N},
#endif
#ifdef __NR_futimesat
    {__NR_futimesat, "futimesat", "utime", H_PLAIN, 0, 1, N, N, N, N, N},
#endif
    /* utimensat(fd, NULL, ...) changes the descriptor's file: path NULL falls back to the directory descriptor. */
    {__NR_utimensat, "utimensat", "utime", H_PLAIN, 0, 1, N, N, N, 3, N},
#ifdef __NR_mknod
    {__NR_mknod, "mknod", "mknod", H_PLAIN, N, 0, N, N, N, N, N},
#endif
    {__NR_mknodat, "mknodat", "mknod", H_PLAIN, 0, 1, N, N, N, N, N},
    {__NR_setxattr, "setxattr", "xattr", H_PLAIN, N, 0, N, N, N, N, N},
    {__NR_lsetxattr, "lsetxattr", "xattr", H_PLAIN, N, 0, N, N, N, N, N},
    {__NR_fsetxattr, "fsetxattr", "xattr", H_PLAIN, N, N, 0, N, N, N, N},
    {__NR_removexattr, "removexattr", "xattr", H_PLAIN, N, 0, N, N, N, N, N},
    {__NR_lremovexattr, "lremovexattr", "xattr", H_PLAIN, N, 0, N, N, N, N, N},
    {__NR_fremovexattr, "fremovexattr", "xattr", H_PLAIN, N, N, 0, N, N, N, N},
    {__NR_setxattrat, "setxattrat", "xattr", H_PLAIN, 0, 1, N, N, N, 2, N},
    {__NR_removexattrat, "removexattrat", "xattr", H_PLAIN, 0, 1, N, N, N, 2, N},
    /* Linux 6.17: chattr's flags (immutable, append-only, nodump) and the project id, by path. */
    {__NR_file_setattr, "file_setattr", "xattr", H_PLAIN, 0, 1, N, N, N, 4, N},
    {__NR_bind, "bind", "mknod", H_BIND, N, N, N, N, N, N, N},
    {__NR_chdir, "chdir", "cwd", H_CWD, N, N, N, N, N, N, N},
    {__NR_fchdir, "fchdir", "cwd", H_CWD, N, N, N, N, N, N, N},
};
#undef N

#define SYSCALL_COUNT ((int) (sizeof SYSCALLS / sizeof SYSCALLS[0]))

static const struct audited *audited(long nr) {
    for (int i = 0; i < SYSCALL_COUNT; i++) {
        if (SYSCALLS[i].nr == nr) {
            return &SYSCALLS[i];
        }
    }
    return NULL;
}

/* ---- jail side: the filter ---------------------------------------------------------------------------------------- */

/* Jumps go forward only: the open checks after the first ALLOW end at a second one. */
enum target { T_NONE, T_NOTIFY, T_ALLOW, T_OPEN_ARG1, T_OPEN_ARG2, T_ALLOW_END };

struct program {
    struct sock_filter code[256];
    unsigned char jt[256]; /* symbolic targets, resolved by finish() */
    unsigned char jf[256];
    int label[8];
    int length;
};

static void emit(struct program *p, struct sock_filter insn, enum target jt, enum target jf) {
    p->code[p->length] = insn;
    p->jt[p->length] = (unsigned char) jt;
    p->jf[p->length] = (unsigned char) jf;
    p->length++;
}

static void label(struct program *p, enum target t) {
    p->label[t] = p->length;
}

static int finish(struct program *p) {
    for (int i = 0; i < p->length; i++) {
        if (BPF_CLASS(p->code[i].code) != BPF_JMP || BPF_OP(p->code[i].code) == BPF_JA) {
            continue;
        }
        int offsets[2] = {0, 0};
        unsigned char targets[2] = {p->jt[i], p->jf[i]};
        for (int k = 0; k < 2; k++) {
            if (targets[k] != T_NONE) {
                offsets[k] = p->label[targets[k]] - (i + 1);
                if (offsets[k] < 0 || offsets[k] > 255) {
                    return -1;
                }
            }
        }
        p->code[i].jt = (unsigned char) offsets[0];
        p->code[i].jf = (unsigned char) offsets[1];
    }
    return 0;
}

#define LOAD(offset) ((struct sock_filter) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (offset)))
#define ARG_LOW(index) ((unsigned) (offsetof(struct seccomp_data, args) + 8 * (index)))

static int build_filter(struct program *p, int what) {
    memset(p, 0, sizeof *p);
    /* Another ABI has other numbers; the jail's deny filter kills it, this one leaves it alone. */
    emit(p, LOAD(offsetof(struct seccomp_data, arch)), T_NONE, T_NONE);
    emit(p, (struct sock_filter) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_NATIVE_ARCH, 0, 0), T_NONE, T_ALLOW);
    emit(p, LOAD(offsetof(struct seccomp_data, nr)), T_NONE, T_NONE);
#if defined(__x86_64__)
    emit(p, (struct sock_filter) BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 0), T_ALLOW, T_NONE);
#endif
    for (int i = 0; i < SYSCALL_COUNT; i++) {
        const struct audited *s = &SYSCALLS[i];
        int exec = s->how == H_EXEC;
        if (!(what & (exec ? AUDIT_EXEC : AUDIT_FILES))) {
            continue;
        }
        enum target t = T_NOTIFY;
        if (s->how == H_OPEN) {
            t = s->flags == 1 ? T_OPEN_ARG1 : T_OPEN_ARG2;
        }
        emit(p, (struct sock_filter) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned) s->nr, 0, 0), t, T_NONE);
    }
    label(p, T_ALLOW);
    emit(p, (struct sock_filter) BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW), T_NONE, T_NONE);
    /* The flags are an int: the low half of the argument is all the kernel reads. */
    label(p, T_OPEN_ARG1);
    emit(p, LOAD(ARG_LOW(1)), T_NONE, T_NONE);
    emit(p, (struct sock_filter) BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, WRITE_FLAGS, 0, 0), T_NOTIFY, T_ALLOW_END);
    label(p, T_OPEN_ARG2);
    emit(p, LOAD(ARG_LOW(2)), T_NONE, T_NONE);
    emit(p, (struct sock_filter) BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, WRITE_FLAGS, 0, 0), T_NOTIFY, T_ALLOW_END);
    label(p, T_NOTIFY);
    emit(p, (struct sock_filter) BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF), T_NONE, T_NONE);
    label(p, T_ALLOW_END);
    emit(p, (struct sock_filter) BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW), T_NONE, T_NONE);
    return finish(p);
}

int audit_send_fd(int channel, char byte, int fd) {
    struct iovec iov = {.iov_base = &byte, .iov_len = 1};
    union {
        struct cmsghdr header;
        char space[CMSG_SPACE(sizeof(int))];
    } control;
    memset(&control, 0, sizeof control);
    struct msghdr msg = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.space, .msg_controllen = sizeof control.space};
    struct cmsghdr *cmsg = CMSG_FIRSTHDR(&msg);
    cmsg->cmsg_level = SOL_SOCKET;
    cmsg->cmsg_type = SCM_RIGHTS;
    cmsg->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(cmsg), &fd, sizeof(int));
    ssize_t sent;
    do {
        sent = sendmsg(channel, &msg, MSG_NOSIGNAL);
    } while (sent < 0 && errno == EINTR);
    return sent == 1 ? 0 : -1;
}

int audit_install(int channel, int what, const char **step) {
    struct program p;
    if (build_filter(&p, what) != 0) {
        *step = "build the audit filter";
        errno = E2BIG;
        return -1;
    }
    struct sock_fprog prog = {.len = (unsigned short) p.length, .filter = p.code};
    /* bwrap has set it already; without it an unprivileged process may not install a filter. */
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
        *step = "set no_new_privs";
        return -1;
    }
    /*
     * Linux >= 5.19: once the supervisor has received a notification, the caller waits for its answer killably, so a
     * signal no longer withdraws a call the supervisor has already framed (and may already be answering: the kernel
     * then restarts the call even though the answer was taken, and the restart would be framed again). A fatal signal
     * still ends the wait; older kernels refuse the flag, and the 'R' frame covers what they report (ENOENT).
     */
    int fd = (int) syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER,
                           SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, &prog);
    if (fd < 0 && errno == EINVAL) {
        fd = (int) syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
    }
    if (fd < 0) {
        *step = "install the audit filter";
        return -1;
    }
    if (audit_send_fd(channel, AUDIT_HANDOFF_BYTE, fd) != 0) {
        *step = "send the audit descriptor to the host";
        return -1;
    }
    close(fd);
    char ack = 0;
    ssize_t got;
    do {
        got = read(channel, &ack, 1);
    } while (got < 0 && errno == EINTR);
    if (got != 1 || ack != 0x06) {
        if (got == 0) {
            errno = ECONNABORTED;
        } else if (got == 1) {
            errno = EPROTO;
        }
        *step = "host did not acknowledge the audit descriptor";
        return -1;
    }
    return 0;
}

/* ---- host side: the supervisor ------------------------------------------------------------------------------------ */

enum tag {
    TAG_TID = 1,      /* the caller's thread id on the host */
    TAG_PID = 2,      /* its pid inside the jail */
    TAG_PPID = 3,     /* its parent's pid inside the jail */
    TAG_UID = 4,      /* its kernel uid */
    TAG_OP = 5,       /* the operation */
    TAG_PATH = 6,     /* the path as given, or a descriptor's name */
    TAG_TARGET = 7,   /* the target path as given (rename, link) or a symlink's text */
    TAG_CWD = 8,      /* exec: the working directory */
    TAG_ARG = 9,      /* exec: one argument (repeated) */
    TAG_FLAGS = 10,   /* write: open flags in decimal */
    TAG_RACY = 11,    /* the memory changed between two reads */
    TAG_ARGV_CUT = 12,/* exec: arguments cut at the bound or unreadable */
    TAG_BASE = 13,    /* the directory a relative path is joined to */
    TAG_COUNT = 14,   /* 'D': events without a frame */
    TAG_TIME = 15,    /* realtime, milliseconds since the epoch */
    TAG_BASE2 = 16,   /* the directory a relative target is joined to */
    TAG_SYSCALL = 17, /* the syscall's name */
    TAG_RENAME = 18,  /* renameat2's flags in decimal */
    TAG_VERSION = 19, /* 'H': the frame format's version */
    TAG_MISSING = 20, /* exec: the program's file was not there (a PATH search's miss) */
    TAG_REFUSED = 21, /* the call named memory the supervisor could not read, and was answered EFAULT */
};

struct frame {
    unsigned char data[FRAME_BYTES];
    size_t length;
    int full;
};

static void frame_start(struct frame *f, char type) {
    f->length = 5;
    f->full = 0;
    f->data[4] = (unsigned char) type;
}

static void field(struct frame *f, int tag, const void *value, size_t length) {
    if (length > 0xffff) {
        length = 0xffff;
    }
    if (f->length + 3 + length > sizeof f->data) {
        f->full = 1;
        return;
    }
    f->data[f->length] = (unsigned char) tag;
    f->data[f->length + 1] = (unsigned char) (length & 0xff);
    f->data[f->length + 2] = (unsigned char) (length >> 8);
    memcpy(f->data + f->length + 3, value, length);
    f->length += 3 + length;
}

static void field_text(struct frame *f, int tag, const char *text) {
    field(f, tag, text, strlen(text));
}

static void field_number(struct frame *f, int tag, long long value) {
    char text[32];
    int n = snprintf(text, sizeof text, "%lld", value);
    field(f, tag, text, (size_t) n);
}

static void frame_end(struct frame *f) {
    uint32_t body = (uint32_t) (f->length - 4);
    f->data[0] = (unsigned char) (body & 0xff);
    f->data[1] = (unsigned char) ((body >> 8) & 0xff);
    f->data[2] = (unsigned char) ((body >> 16) & 0xff);
    f->data[3] = (unsigned char) (body >> 24);
}

/* The outgoing bytes: written at once when the socket takes them, else kept (bounded under open). */
struct outbox {
    int sock;
    unsigned char *data;
    size_t length;
    size_t capacity;
    int closed_mode;
    int stall_ms;
    unsigned long long dropped;
};

static long long now_ms(int clock) {
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (long long) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Writes what the socket takes now; -1 when the launcher is gone. */
static int flush_some(struct outbox *out) {
    while (out->length > 0) {
        ssize_t n = send(out->sock, out->data, out->length, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                return 0;
            }
            return -1;
        }
        memmove(out->data, out->data + n, out->length - (size_t) n);
        out->length -= (size_t) n;
    }
    return 0;
}

/* Waits until everything is written, at most stall_ms; 1 when it timed out, -1 when the launcher is gone. */
static int flush_all(struct outbox *out) {
    long long deadline = now_ms(CLOCK_MONOTONIC) + out->stall_ms;
    for (;;) {
        if (flush_some(out) != 0) {
            return -1;
        }
        if (out->length == 0) {
            return 0;
        }
        long long left = deadline - now_ms(CLOCK_MONOTONIC);
        if (left <= 0) {
            return 1;
        }
        struct pollfd pfd = {.fd = out->sock, .events = POLLOUT};
        int rc = poll(&pfd, 1, (int) left);
        if (rc < 0 && errno != EINTR) {
            return -1;
        }
        if (rc > 0 && (pfd.revents & (POLLERR | POLLHUP))) {
            return -1;
        }
    }
}

/* Adds a frame; returns 0, or 1 when it was dropped (open: the buffer is full). */
static int enqueue(struct outbox *out, const struct frame *f) {
    if (out->length + f->length > out->capacity) {
        out->dropped++;
        return 1;
    }
    memcpy(out->data + out->length, f->data, f->length);
    out->length += f->length;
    return 0;
}

/* ---- reading the caller --------------------------------------------------------------------------------------- */

struct caller {
    pid_t tid;
    long process; /* its process as the jail numbers it, 0 until known */
    int mem;      /* /proc/TID/mem, -1 until opened */
    int vm_readv; /* process_vm_readv still worth trying */
    int racy;
    /*
     * Memory the call names that /proc/TID/mem could not read: the kernel may still read it (memfd_secret, which the
     * deny filter refuses, device mappings), so the call would run unrecorded or misnamed. It is refused instead.
     */
    int unreadable;
    int answer; /* an errno the supervisor answers the call with itself (an exec of a program it found missing), or 0 */
};

static int open_mem(struct caller *c) {
    if (c->mem >= 0) {
        return 0;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/mem", (int) c->tid);
    c->mem = open(path, O_RDONLY | O_CLOEXEC);
    return c->mem >= 0 ? 0 : -1;
}

/*
 * One piece of the caller's memory, within a page. process_vm_readv first: it checks ptrace access only, which the
 * supervisor has also to a process that made itself not dumpable (ssh does), because it owns the jail's user namespace;
 * /proc/TID/mem of such a process is root's file. It also reads what the kernel's own copy would (no FOLL_FORCE: a
 * PROT_NONE page fails both). /proc/TID/mem is the fallback where process_vm_readv is not allowed (EPERM, ENOSYS).
 */
static ssize_t read_piece(struct caller *c, uint64_t at, void *buf, size_t len) {
    if (c->vm_readv) {
        struct iovec local = {.iov_base = buf, .iov_len = len};
        struct iovec remote = {.iov_base = (void *) (uintptr_t) at, .iov_len = len};
        ssize_t n = process_vm_readv(c->tid, &local, 1, &remote, 1, 0);
        if (n >= 0 || errno == EFAULT) {
            return n;
        }
        if (errno != EPERM && errno != ENOSYS) {
            return -1;
        }
        c->vm_readv = 0;
    }
    if (open_mem(c) != 0) {
        return -1;
    }
    return pread(c->mem, buf, len, (off_t) at);
}

/* Reads up to LEN bytes at ADDR a page at a time; returns how many were readable. */
static size_t read_mem(struct caller *c, uint64_t addr, void *buf, size_t len) {
    if (addr == 0) {
        return 0;
    }
    size_t done = 0;
    while (done < len) {
        uint64_t at = addr + done;
        size_t chunk = 4096 - (size_t) (at & 4095);
        if (chunk > len - done) {
            chunk = len - done;
        }
        ssize_t n = read_piece(c, at, (char *) buf + done, chunk);
        if (n <= 0) {
            break;
        }
        done += (size_t) n;
    }
    return done;
}

/* Reads a NUL-terminated string of at most CAP-1 bytes; returns its length, -1 when nothing was readable. Sets *cut
 * when the string went on past the bound or into unreadable memory. */
static long read_string_once(struct caller *c, uint64_t addr, char *out, size_t cap, int *cut) {
    size_t done = 0;
    *cut = 0;
    if (addr == 0) {
        return -1;
    }
    while (done < cap - 1) {
        uint64_t at = addr + done;
        size_t chunk = 4096 - (size_t) (at & 4095);
        if (chunk > cap - 1 - done) {
            chunk = cap - 1 - done;
        }
        size_t got = read_mem(c, at, out + done, chunk);
        void *nul = memchr(out + done, '\0', got);
        if (nul != NULL) {
            return (long) ((char *) nul - out);
        }
        done += got;
        if (got < chunk) {
            out[done] = '\0';
            *cut = 1;
            c->unreadable = 1;
            return done == 0 ? -1 : (long) done;
        }
    }
    out[done] = '\0';
    *cut = 1;
    return (long) done;
}

/*
 * Reads the string twice: two different readings mark the event racy, and the later one is kept. A string that ends
 * within its first FIRST_READ bytes (and page) is read both times by one process_vm_readv, whose second vector is
 * copied after the first: half the calls for nearly every path.
 */
#define FIRST_READ 512

static long read_string(struct caller *c, uint64_t addr, char *out, size_t cap, int *cut) {
    static char again[ARGV_BYTES];
    size_t head = 4096 - (size_t) (addr & 4095);
    if (head > FIRST_READ) {
        head = FIRST_READ;
    }
    if (head > cap - 1) {
        head = cap - 1;
    }
    if (c->vm_readv && addr != 0 && cap <= sizeof again && head > 0) {
        struct iovec local[2] = {{.iov_base = out, .iov_len = head}, {.iov_base = again, .iov_len = head}};
        struct iovec remote[2] = {{.iov_base = (void *) (uintptr_t) addr, .iov_len = head},
                                  {.iov_base = (void *) (uintptr_t) addr, .iov_len = head}};
        ssize_t n = process_vm_readv(c->tid, local, 2, remote, 2, 0);
        char *end = n == (ssize_t) (2 * head) ? memchr(out, '\0', head) : NULL;
        char *end2 = end != NULL ? memchr(again, '\0', head) : NULL;
        if (end2 != NULL) {
            *cut = 0;
            long first = (long) (end - out);
            long second = (long) (end2 - again);
            if (second != first || memcmp(out, again, (size_t) first) != 0) {
                c->racy = 1;
                memcpy(out, again, (size_t) second + 1);
            }
            return second;
        }
        /* Longer, unreadable in part, or changed into a longer one meanwhile: page by page, as below. */
    }
    long first = read_string_once(c, addr, out, cap, cut);
    if (first < 0 || cap > sizeof again) {
        return first;
    }
    int cut2;
    long second = read_string_once(c, addr, again, cap, &cut2);
    if (second != first || memcmp(out, again, (size_t) first) != 0) {
        c->racy = 1;
        if (second >= 0) {
            memcpy(out, again, (size_t) second + 1);
            *cut = cut2;
        }
        return second;
    }
    return first;
}

static void readlink_proc(pid_t tid, const char *what, char *out, size_t cap) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/%s", (int) tid, what);
    ssize_t n = readlink(path, out, cap - 1);
    if (n < 0 || (size_t) n == cap - 1) {
        n = 0; /* unreadable, or longer than a path may be: unknown (a record then says so), never a cut path */
    }
    out[n] = '\0';
}

static void cwd_of(pid_t tid, char *out, size_t cap);

/* The directory a relative path of this call is joined to: the working directory or a descriptor's. */
static void base_of(pid_t tid, int dirfd_arg, const struct seccomp_notif *req, char *out, size_t cap) {
    int dirfd = dirfd_arg < 0 ? AT_FDCWD_VALUE : (int) req->data.args[dirfd_arg];
    if (dirfd == AT_FDCWD_VALUE) {
        cwd_of(tid, out, cap);
    } else {
        char what[32];
        snprintf(what, sizeof what, "fd/%d", dirfd);
        readlink_proc(tid, what, out, cap);
    }
}

/*
 * The process inside the jail (the last NStgid field: a thread names its process), the parent's host pid and the uid,
 * from /proc/TID/status.
 */
static void status_of(pid_t tid, long *jail_tgid, long *ppid, long *uid, long *host_tgid) {
    *host_tgid = -1;
    *jail_tgid = -1;
    *ppid = -1;
    *uid = -1;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/status", (int) tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return;
    }
    char buf[4096];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) {
        return;
    }
    buf[n] = '\0';
    for (char *line = buf; line != NULL && *line != '\0';) {
        char *next = strchr(line, '\n');
        if (next != NULL) {
            *next++ = '\0';
        }
        if (strncmp(line, "Tgid:", 5) == 0) {
            *host_tgid = strtol(line + 5, NULL, 10);
        } else if (strncmp(line, "PPid:", 5) == 0) {
            *ppid = strtol(line + 5, NULL, 10);
        } else if (strncmp(line, "Uid:", 4) == 0) {
            *uid = strtol(line + 4, NULL, 10);
        } else if (strncmp(line, "NStgid:", 7) == 0) {
            /* One number only: a process of the host (the jail's first process's parent), not of the jail. */
            char *first = strchr(line, '\t');
            char *last = strrchr(line, '\t');
            *jail_tgid = first != NULL && last != first ? strtol(last, NULL, 10) : 0;
        }
        line = next;
    }
}

/*
 * Threads whose jail pid is known, each held by a pidfd (PIDFD_THREAD, Linux >= 6.9): a host tid is reused once its
 * thread is gone (pid_max may be as low as 32768), and the pidfd tells whether the thread the entry was read from is
 * still the one holding that tid. A thread keeps its process for its life (an exec by another thread of the process
 * ends it), so while its pidfd shows it alive the number holds, and the file events of a busy loop need no
 * /proc/TID/status read each (it was a third of the supervisor's time in a burst of opens: docs/benchmarks.md run 26).
 * Direct-mapped by tid: a collision costs a read, never a wrong number. Older kernels refuse the flag: every lookup
 * then reads the status file, as before.
 */
#define KNOWN_THREADS 256

/* The tid whose entry this event has found alive (or made), 0 before: see cwd_of(). */
static pid_t checked_tid;

static struct known_thread {
    pid_t tid;
    int pidfd; /* -1: empty */
    long jail_pid;
    /* The thread's working directory as last read (see "Working directories" below); valid while has_cwd. */
    int has_cwd;
    unsigned long long cwd_generation;
    long long cwd_read_ms;
    char cwd[PATH_BYTES];
} known_threads[KNOWN_THREADS];

static void known_threads_init(void) {
    for (size_t i = 0; i < KNOWN_THREADS; i++) {
        known_threads[i].pidfd = -1;
    }
}

/* 1 while the thread a pidfd refers to has not exited (a thread's pidfd turns readable when it does). */
static int thread_alive(int pidfd) {
    struct pollfd p = {.fd = pidfd, .events = POLLIN};
    int rc;
    do {
        rc = poll(&p, 1, 0);
    } while (rc < 0 && errno == EINTR);
    return rc == 0;
}

/*
 * Who a thread is, without /proc/TID/status (whose text the kernel formats whole for every read: ~20 us here, the
 * largest part of an exec's cost, docs/benchmarks.md run 29). PIDFD_GET_INFO (Linux >= 6.13) answers the host tgid,
 * the parent's host pid and the real uid, as the supervisor's namespaces see them (as the status file does to it);
 * the jail's number of a process is the last of the NSpid numbers in the fdinfo of a pidfd of it, read through one
 * descriptor number kept for that (a pidfd dup'ed onto it, then a pread of its fdinfo, which the kernel renders again
 * for whatever the number holds then). Both ask the pidfd, not a number: what they say is of the thread the pidfd
 * holds, whoever holds its tid by then. Either missing (an older kernel), the status file answers, as before.
 */
struct pidfd_info_v0 {
    uint64_t mask;
    uint64_t cgroupid;
    uint32_t pid, tgid, ppid, ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid, spare0;
};
#define AJ_PIDFD_GET_INFO _IOWR(0xFF, 11, struct pidfd_info_v0)
#define AJ_PIDFD_INFO_PID 1ULL
#define AJ_PIDFD_INFO_CREDS 2ULL

static int pidfd_info_works = 1;

/* 0 and the host tgid, parent and real uid of the thread PIDFD holds; -1 when it has exited or the kernel cannot say. */
static int pidfd_identity(int pidfd, long *host_tgid, long *ppid, long *uid) {
    if (!pidfd_info_works) {
        return -1;
    }
    struct pidfd_info_v0 info = {.mask = AJ_PIDFD_INFO_PID | AJ_PIDFD_INFO_CREDS};
    if (ioctl(pidfd, AJ_PIDFD_GET_INFO, &info) != 0) {
        if (errno != ESRCH) {
            pidfd_info_works = 0; /* ENOTTY, EINVAL: not this kernel's */
        }
        return -1;
    }
    if ((info.mask & (AJ_PIDFD_INFO_PID | AJ_PIDFD_INFO_CREDS)) != (AJ_PIDFD_INFO_PID | AJ_PIDFD_INFO_CREDS)) {
        return -1;
    }
    *host_tgid = (long) info.tgid;
    *ppid = (long) info.ppid;
    *uid = (long) info.ruid;
    return 0;
}

static int probe_fd = -1;   /* the descriptor number whose fdinfo tells a pidfd's numbers */
static int probe_info = -1; /* /proc/self/fdinfo/PROBE_FD */
static int probe_works = 1;

/* The jail's number of the process or thread PIDFD holds (0: a process of the host, in no pid namespace below the
 * supervisor's); -1 when it is gone; -2 when fdinfo cannot tell. */
static long fdinfo_jail_pid(int pidfd) {
    if (!probe_works) {
        return -2;
    }
    if (probe_fd < 0) {
        probe_fd = fcntl(pidfd, F_DUPFD_CLOEXEC, 3);
        char path[64];
        snprintf(path, sizeof path, "/proc/self/fdinfo/%d", probe_fd);
        probe_info = probe_fd < 0 ? -1 : open(path, O_RDONLY | O_CLOEXEC);
        if (probe_info < 0) {
            probe_works = 0;
            return -2;
        }
    } else if (dup3(pidfd, probe_fd, O_CLOEXEC) < 0) {
        return -2;
    }
    char buf[512];
    ssize_t n = pread(probe_info, buf, sizeof buf - 1, 0);
    if (n <= 0) {
        probe_works = 0;
        return -2;
    }
    buf[n] = '\0';
    char *line = strstr(buf, "\nNSpid:");
    if (line == NULL) {
        probe_works = 0; /* a kernel without pid namespaces, or another format */
        return -2;
    }
    line += 7;
    char *end = strchr(line, '\n');
    if (end != NULL) {
        *end = '\0';
    }
    char *first = strchr(line, '\t');
    char *last = strrchr(line, '\t');
    if (first == NULL) {
        probe_works = 0;
        return -2;
    }
    long number = strtol(last, NULL, 10);
    if (number <= 0) {
        return -1; /* "-1": exited (its pid is released) */
    }
    return last != first ? number : 0;
}

/* What an exec's record tells of its caller. */
struct identity {
    long jail_tgid; /* -1 unknown, 0 a process of the host */
    long host_tgid;
    long ppid; /* the parent's host pid */
    long uid;
};

/* The jail's number of the process holding tid TID (whose pidfd is PIDFD, with host tgid HOST_TGID): -2 when fdinfo
 * cannot tell. */
static long process_jail_pid(pid_t tid, int pidfd, long host_tgid) {
    if (host_tgid == (long) tid) {
        return fdinfo_jail_pid(pidfd);
    }
    /* Another thread of a process: its leader's number. Its leader's pidfd names the tgid, which outlives every thread
     * of it (a caller stopped in this notification included). */
    int leader = (int) syscall(__NR_pidfd_open, (pid_t) host_tgid, 0);
    if (leader < 0) {
        return -1;
    }
    long number = fdinfo_jail_pid(leader);
    close(leader);
    return number;
}

/*
 * The jail pid of the process host thread TID belongs to; -1 when it cannot be read, 0 for a process of the host. With
 * ID, also the rest of an exec's identity (the parent and uid, read now: they change over a thread's life).
 */
static long identify(pid_t tid, struct identity *id) {
    struct identity scratch;
    if (id == NULL) {
        id = &scratch;
    }
    id->jail_tgid = id->host_tgid = id->ppid = id->uid = -1;
    struct known_thread *k = &known_threads[(unsigned) tid % KNOWN_THREADS];
    if (k->pidfd >= 0 && k->tid == tid) {
        int alive;
        if (id != &scratch && pidfd_info_works) {
            alive = pidfd_identity(k->pidfd, &id->host_tgid, &id->ppid, &id->uid) == 0;
        } else {
            alive = thread_alive(k->pidfd);
            if (alive && id != &scratch) {
                long ignored;
                status_of(tid, &ignored, &id->ppid, &id->uid, &id->host_tgid);
            }
        }
        if (alive) {
            checked_tid = tid;
            id->jail_tgid = k->jail_pid;
            return k->jail_pid;
        }
    }
    if (k->pidfd >= 0) {
        close(k->pidfd);
        k->pidfd = -1;
    }
    int pidfd = (int) syscall(__NR_pidfd_open, tid, PIDFD_THREAD);
    long jail_tgid = -2;
    if (pidfd >= 0 && pidfd_identity(pidfd, &id->host_tgid, &id->ppid, &id->uid) == 0) {
        jail_tgid = process_jail_pid(tid, pidfd, id->host_tgid);
    }
    int checked = 0;
    if (jail_tgid == -2) {
        /* The pidfd first: alive after the status read, it held the tid all along, so the status read was its thread's. */
        status_of(tid, &jail_tgid, &id->ppid, &id->uid, &id->host_tgid);
        checked = pidfd >= 0 && thread_alive(pidfd);
    } else {
        checked = jail_tgid >= 0; /* read from the pidfd itself */
    }
    if (pidfd >= 0 && jail_tgid > 0 && checked) {
        k->tid = tid;
        k->pidfd = pidfd;
        k->jail_pid = jail_tgid;
        k->has_cwd = 0;
        checked_tid = tid;
    } else if (pidfd >= 0) {
        close(pidfd);
    }
    id->jail_tgid = jail_tgid;
    return jail_tgid;
}

static long jail_pid(pid_t tid) {
    return identify(tid, NULL);
}

/*
 * Working directories. A file event with a relative path needs the caller's working directory, and reading it
 * (readlink of /proc/TID/cwd) was an eighth of the supervisor's time in a burst of relative opens (docs/benchmarks.md
 * run 26). A thread's entry keeps the directory it last read, and the supervisor knows every call in the jail that
 * can change what a working directory reads as: chdir and fchdir (notified for that alone, without a record), a
 * rename (of any ancestor), an rmdir (of the directory itself: it then reads "... (deleted)"), and an exec by a thread
 * that is not its process's first one (it takes over the first one's tid, with its own working directory); a jail's
 * mounts are fixed (its deny filter refuses mount, unshare, setns, chroot and pivot_root).
 *
 * Such a call changes the directory only after the supervisor has let it go on, and it has surely returned once its
 * thread makes its next notified call or has exited. So each one bumps a generation and is pending until then; an
 * entry read while nothing is pending holds until the generation moves, and none is kept while anything is. A
 * process of the host (the user's editor) can rename a directory above a jailed working directory unseen: entries
 * are read again after CWD_KEEP_MS, so a record names the old path at most that long after such a rename. Only
 * with both exec and file auditing (--scope exec,files), since an exec by another thread is seen only as an exec;
 * without pidfds (Linux < 6.9) every event reads its directory.
 */
#define CWD_KEEP_MS 100
#define MOVES_SHARED 1 /* changes the working directory of the tasks that share the changer's */
#define MOVES_ANYONE 2 /* renames or removes a directory: anyone's working directory may be it or below it */
#define PENDING_CHANGES 64

static int cwd_keeping;                  /* the cache is on: both scopes, and nothing has disabled it */
static unsigned long long cwd_generation; /* bumped by every call that can change a working directory */
static int pending_lost;                  /* a change could not be tracked: no pidfd, or too many at once */
static struct pending_change {
    pid_t tid;
    int pidfd;
    long process;      /* the changer's process as the jail numbers it, -1 when not known */
    long nr;           /* its syscall */
    int moves;         /* MOVES_SHARED (chdir, fchdir, exec) or MOVES_ANYONE (rename, rmdir): see cwd_moving() */
    long long checked; /* when /proc/TID/syscall was last read for it (monotonic ms) */
} pending_changes[PENDING_CHANGES];
static int pending_count;

/*
 * A call by TID of PROCESS (syscall NR) that can change a working directory is about to go on; MOVES says whose:
 * MOVES_SHARED the tasks sharing TID's (chdir, fchdir, exec), MOVES_ANYONE anyone's (rename, rmdir).
 */
static void cwd_changing(pid_t tid, long process, long nr, int moves) {
    cwd_generation++;
    if (pending_lost) {
        return;
    }
    for (int i = 0; i < pending_count; i++) {
        if (pending_changes[i].tid == tid) {
            /* Pending already: the same thread (it is making this call), or a dead one's tid taken over. */
            close(pending_changes[i].pidfd);
            pending_changes[i] = pending_changes[--pending_count];
            break;
        }
    }
    int pidfd = (int) syscall(__NR_pidfd_open, tid, PIDFD_THREAD);
    if (pidfd < 0 || pending_count == PENDING_CHANGES) {
        /*
         * Nothing would tell when this one is over: working directories are read for every event from now on, and
         * a change under way in another thread no longer marks an event (see cwd_moving).
         */
        if (pidfd >= 0) {
            close(pidfd);
        }
        cwd_keeping = 0;
        pending_lost = 1;
        for (int i = 0; i < pending_count; i++) {
            close(pending_changes[i].pidfd);
        }
        pending_count = 0;
        return;
    }
    pending_changes[pending_count] =
            (struct pending_change){.tid = tid, .pidfd = pidfd, .process = process, .nr = nr, .moves = moves};
    pending_count++;
}

/*
 * Whether thread TID, alive, is surely past the call it made as syscall NR: /proc/TID/syscall names another syscall it
 * is blocked in, or says it is in none ("-1"). "running" tells nothing: it may be in that call still.
 */
static int past_call(pid_t tid, long nr) {
    char path[64];
    char text[64];
    snprintf(path, sizeof path, "/proc/%d/syscall", (int) tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return 0;
    }
    ssize_t n = read(fd, text, sizeof text - 1);
    close(fd);
    if (n <= 0) {
        return 0;
    }
    text[n] = '\0';
    char *end;
    long in = strtol(text, &end, 10);
    return end != text && in != nr;
}

/* TID makes a notified call: any change of its own has returned. */
static void cwd_seen(pid_t tid) {
    for (int i = 0; i < pending_count; i++) {
        if (pending_changes[i].tid == tid) {
            close(pending_changes[i].pidfd);
            pending_changes[i] = pending_changes[--pending_count];
            return;
        }
    }
}

/* Drops the pending changes whose threads have exited; 1 when none is left. */
static int cwd_settled(void) {
    if (pending_count == 0) {
        return 1;
    }
    struct pollfd fds[PENDING_CHANGES];
    for (int i = 0; i < pending_count; i++) {
        fds[i].fd = pending_changes[i].pidfd;
        fds[i].events = POLLIN;
        fds[i].revents = 0;
    }
    int rc;
    do {
        rc = poll(fds, (nfds_t) pending_count, 0);
    } while (rc < 0 && errno == EINTR);
    if (rc < 0) {
        return 0;
    }
    long long now = now_ms(CLOCK_MONOTONIC);
    for (int i = pending_count - 1; i >= 0; i--) {
        struct pending_change *p = &pending_changes[i];
        /* A thread blocked elsewhere (joining its workers, waiting for a child) is past its change: once a ms. */
        int past = fds[i].revents != 0;
        if (!past && now != p->checked) {
            p->checked = now;
            past = past_call(p->tid, p->nr);
        }
        if (past) {
            close(p->pidfd);
            pending_changes[i] = pending_changes[--pending_count];
        }
    }
    return pending_count == 0;
}

/*
 * Whether another task sharing TID's working directory has a change of it under way (notified, not surely returned),
 * or any task a rename or rmdir (of the directory, or one above it, under another name than read): a relative path of
 * TID's may then be walked from another directory, or one named otherwise, than the supervisor read. Asked
 * BEFORE the directory is read (a change that returns between a reading and this question would otherwise be dropped
 * as over, and the old reading kept as current), and such an event is marked racy. Sharing is the kernel's answer
 * (kcmp KCMP_FS: threads, and processes cloned with CLONE_FS; not a thread made without it); where kcmp is refused,
 * the same process. Once changes could not be tracked (pending_lost) every relative path is marked. A change
 * notified after this event was let go on, that returns before the kernel walks the event's path, leaves no mark (as
 * a string rewritten after the second reading leaves none).
 */
static int cwd_moving(pid_t tid, long process) {
    if (pending_lost) {
        return 1;
    }
    if (pending_count == 0) {
        return 0;
    }
    cwd_settled();
    for (int i = 0; i < pending_count; i++) {
        struct pending_change *p = &pending_changes[i];
        if (p->tid == tid) {
            continue;
        }
        if (p->moves == MOVES_ANYONE) {
            return 1; /* the directory read may be renamed (or removed) under the walk, by its name or an ancestor's */
        }
        long same = syscall(SYS_kcmp, (pid_t) tid, p->tid, KCMP_FS, 0, 0);
        if (same == 0 || (same < 0 && process > 0 && p->process == process)) {
            return 1;
        }
    }
    return 0;
}

/*
 * The working directory of TID; kept in its entry when jail_pid() has checked (or made) that entry in this event.
 * Called (through base_of) only right after cwd_moving() for the same event.
 */
static void cwd_of(pid_t tid, char *out, size_t cap) {
    struct known_thread *k = &known_threads[(unsigned) tid % KNOWN_THREADS];
    int entry = cwd_keeping && checked_tid == tid && k->pidfd >= 0 && k->tid == tid;
    long long now = entry ? now_ms(CLOCK_MONOTONIC) : 0;
    if (entry && k->has_cwd && k->cwd_generation == cwd_generation && now - k->cwd_read_ms < CWD_KEEP_MS) {
        snprintf(out, cap, "%s", k->cwd);
        return;
    }
    /*
     * Settled before the reading, or the reading may be of a directory a change then replaced: path_field() has just
     * asked cwd_moving(), which drops the changes surely over, so what is still pending now was pending before.
     */
    int settled = entry && pending_count == 0;
    readlink_proc(tid, "cwd", out, cap);
    if (!entry) {
        return;
    }
    k->has_cwd = 0;
    if (out[0] == '/' && settled) {
        snprintf(k->cwd, sizeof k->cwd, "%s", out);
        k->cwd_generation = cwd_generation;
        k->cwd_read_ms = now;
        k->has_cwd = 1;
    }
}

/*
 * A path argument; when there is none (a descriptor call, NULL, or "" with AT_EMPTY_PATH) the descriptor's name.
 * Returns the path and sets *base (NULL for an absolute path) when it was read whole from the caller's memory.
 */
static const char *path_field(struct frame *f, struct caller *c, const struct seccomp_notif *req, int path_arg,
                              int dirfd_arg, int fd_arg, int empty_ok, int tag, int base_tag, const char **base_out) {
    static char path[PATH_BYTES];
    static char base[PATH_BYTES];
    int cut = 0;
    long length = -1;
    if (path_arg >= 0) {
        length = read_string(c, req->data.args[path_arg], path, sizeof path, &cut);
        if (length > 0) {
            field(f, tag, path, (size_t) length);
            *base_out = NULL;
            if (path[0] != '/') {
                int from_cwd = dirfd_arg < 0 || (int) req->data.args[dirfd_arg] == AT_FDCWD_VALUE;
                if (from_cwd && cwd_moving(c->tid, c->process)) {
                    c->racy = 1;
                }
                base_of(c->tid, dirfd_arg, req, base, sizeof base);
                field_text(f, base_tag, base);
                *base_out = base;
            }
            return cut ? NULL : path;
        }
    }
    int fd_index = fd_arg >= 0 ? fd_arg : (empty_ok ? dirfd_arg : -1);
    if (fd_index >= 0) {
        char what[32];
        snprintf(what, sizeof what, "fd/%d", (int) req->data.args[fd_index]);
        readlink_proc(c->tid, what, path, sizeof path);
        field_text(f, tag, path[0] != '\0' ? path : "?");
        return NULL;
    }
    /* "" fails in the kernel (ENOENT); unreadable memory fails it with EFAULT: either way no file changes. */
    field_text(f, tag, length == 0 ? "" : "?");
    return NULL;
}

/*
 * The jail's root directory, opened once (/proc/TID/root of the first caller that needs it): every process of the jail
 * has the same one, since its deny filter refuses chroot, pivot_root, setns and unshare. An open and a close fewer per
 * exec.
 */
static int jail_root(pid_t tid) {
    static int root = -1;
    if (root < 0) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/root", (int) tid);
        root = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
    }
    return root;
}

/*
 * A missing program's look-up must see the file tree as the caller does. A supervisor root started holds
 * CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH, which the jail's processes lack: through a directory the caller cannot
 * search it would find a name missing where the kernel answers the caller EACCES, and its ENOENT would change the
 * call's outcome and tell the caller whether the name is there. The look-up runs with the two out of the effective
 * set (the supervisor's uid and groups are the jail's: its user, or root's without capabilities). 0 when done, or
 * when there is nothing to drop; -1 when the set could not be changed (no look-up may be trusted then).
 */
static int lookup_caps_state = -1; /* -1 not looked at yet, 0 nothing to drop, 1 dropped around each look-up */
static struct __user_cap_data_struct caps_held[_LINUX_CAPABILITY_U32S_3];
static struct __user_cap_data_struct caps_lookup[_LINUX_CAPABILITY_U32S_3];

static int lookup_caps(int lookup) {
    struct __user_cap_header_struct header = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    if (lookup_caps_state < 0) {
        if (syscall(SYS_capget, &header, caps_held) != 0) {
            return -1;
        }
        memcpy(caps_lookup, caps_held, sizeof caps_held);
        uint32_t dac = (1U << CAP_DAC_OVERRIDE) | (1U << CAP_DAC_READ_SEARCH);
        caps_lookup[0].effective &= ~dac;
        lookup_caps_state = (caps_held[0].effective & dac) != 0;
    }
    if (lookup_caps_state == 0) {
        return 0;
    }
    return syscall(SYS_capset, &header, lookup ? caps_lookup : caps_held) == 0 ? 0 : -1;
}

/*
 * 1 when a file system of type MAGIC decides who may look a name up by file modes alone (with ACLs), which the
 * supervisor without its two DAC capabilities then decides as the caller would; 0 for every other. procfs decides by
 * ptrace access (/proc/1/fdinfo: the supervisor passes where the caller does not, so its "missing" would tell the caller
 * what pid 1 has open), sysfs, cgroup and the like by kernel rules, FUSE, NFS and other network file systems by a
 * daemon or a server that may see the supervisor as someone else. A list of the ordinary ones, not of the odd ones: an
 * unknown type lets the kernel answer, which is always right, only slower.
 */
static int modes_decide(long magic) {
    switch ((unsigned long) magic) {
    case EXT4_SUPER_MAGIC: /* ext2, ext3 too */
    case TMPFS_MAGIC:
    case RAMFS_MAGIC:
    case XFS_SUPER_MAGIC:
    case BTRFS_SUPER_MAGIC:
    case OVERLAYFS_SUPER_MAGIC: /* the mounter's rights on the layers, the same for both, then the caller's modes */
    case SQUASHFS_MAGIC:
    case EROFS_SUPER_MAGIC_V1:
    case F2FS_SUPER_MAGIC:
    case 0x2FC12FC1UL: /* ZFS */
    case 0xCA451A4EUL: /* bcachefs */
        return 1;
    default:
        return 0;
    }
}

/*
 * After a miss of PATH (looked up with HOW beneath ROOTFD): 1 when the deepest part of it that exists is on a file
 * system whose look-ups modes_decide, so the caller would miss it too; 0 otherwise, or when that cannot be told. The
 * missing name is looked up in the file system of the directory above it, and the look-up got that far. Cuts PATH.
 * For a PATH search's miss (the directory exists): an open, an fstatfs and a close.
 */
static int miss_is_plain(int rootfd, char *path, const struct open_how *how) {
    for (;;) {
        char *slash = strrchr(path, '/');
        if (slash == NULL) {
            return 0;
        }
        slash[slash == path ? 1 : 0] = '\0';
        long fd = syscall(__NR_openat2, rootfd, path, how, sizeof *how);
        if (fd >= 0) {
            struct statfs fs;
            int plain = fstatfs((int) fd, &fs) == 0 && modes_decide((long) fs.f_type);
            close((int) fd);
            return plain;
        }
        if ((errno != ENOENT && errno != ENOTDIR) || slash == path) {
            return 0;
        }
    }
}

/*
 * Whether the program an exec names is not in the caller's file tree, as the supervisor finds it just before the kernel
 * would look: ENOENT or ENOTDIR when it is missing (a PATH search's misses), ENAMETOOLONG for a component the kernel
 * refuses whatever the directory, 0 otherwise. Looked up beneath the caller's root (RESOLVE_IN_ROOT) without following
 * any symbolic link, because links such as /proc/self or /dev/fd resolve differently for the supervisor (it is no
 * process of the jail): a path with a link on its way counts as found, except a plain relative link as its first
 * component (/bin -> usr/bin, the jail's merged /usr), which is followed by hand. An absolute path found missing is
 * answered by the supervisor with that errno (see exec_fields): the kernel would give the same answer, and the record's
 * "missing" is then a fact, not a guess a process creating the file in between could make wrong.
 */
static int program_missing(pid_t tid, const char *path, const char *base) {
    static char full[2 * PATH_BYTES + 2];
    static char again[2 * PATH_BYTES + 2];
    /* A name the kernel refuses whatever the directory (ENAMETOOLONG): a component over 255 bytes. */
    for (const char *part = path; *part != '\0';) {
        size_t length = strcspn(part, "/");
        if (length > 255) {
            return ENAMETOOLONG;
        }
        part += length + strspn(part + length, "/");
    }
    if (base != NULL) {
        if (base[0] != '/') {
            return 0;
        }
        snprintf(full, sizeof full, "%s/%s", base, path);
    } else {
        snprintf(full, sizeof full, "%s", path);
    }
    int rootfd = jail_root(tid);
    if (rootfd < 0) {
        return 0;
    }
    struct open_how how = {
        .flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
    if (lookup_caps(1) != 0) {
        return 0;
    }
    char *looked_up = full;
    long fd = syscall(__NR_openat2, rootfd, full, &how, sizeof how);
    if (fd < 0 && errno == ELOOP) {
        const char *first = full + strspn(full, "/");
        size_t length = strcspn(first, "/");
        char name[256];
        char target[256];
        ssize_t n = -1;
        if (length > 0 && length < sizeof name && first[length] == '/') {
            memcpy(name, first, length);
            name[length] = '\0';
            n = readlinkat(rootfd, name, target, sizeof target - 1);
        }
        if (n > 0) {
            target[n] = '\0';
        }
        if (n > 0 && target[0] != '/' && strstr(target, "..") == NULL) {
            snprintf(again, sizeof again, "/%s%s", target, first + length);
            fd = syscall(__NR_openat2, rootfd, again, &how, sizeof how);
            looked_up = again;
        } else {
            errno = ELOOP;
        }
    }
    int missing = fd < 0 && (errno == ENOENT || errno == ENOTDIR) ? errno : 0;
    if (fd >= 0) {
        close((int) fd);
    }
    if (missing != 0 && !miss_is_plain(rootfd, looked_up, &how)) {
        missing = 0;
    }
    lookup_caps(0);
    return missing;
}

/*
 * Reads LEN bytes at ADDR twice, into A and B, a page at a time with both readings of a page in one process_vm_readv
 * (read_mem's pieces otherwise); returns how many bytes both readings got.
 */
static size_t read_twice(struct caller *c, uint64_t addr, void *a, void *b, size_t len) {
    if (addr == 0) {
        return 0;
    }
    size_t done = 0;
    while (done < len && c->vm_readv) {
        uint64_t at = addr + done;
        size_t chunk = 4096 - (size_t) (at & 4095);
        if (chunk > len - done) {
            chunk = len - done;
        }
        struct iovec local[2] = {{.iov_base = (char *) a + done, .iov_len = chunk},
                                 {.iov_base = (char *) b + done, .iov_len = chunk}};
        struct iovec remote[2] = {{.iov_base = (void *) (uintptr_t) at, .iov_len = chunk},
                                  {.iov_base = (void *) (uintptr_t) at, .iov_len = chunk}};
        ssize_t n = process_vm_readv(c->tid, local, 2, remote, 2, 0);
        if (n == (ssize_t) (2 * chunk)) {
            done += chunk;
            continue;
        }
        if (n < 0 && (errno == EPERM || errno == ENOSYS)) {
            break; /* not allowed: read_mem falls back to /proc/TID/mem */
        }
        if (n > 0) {
            c->racy = 1; /* a page readable once and not the second time: unmapped meanwhile */
        }
        return done; /* unreadable here */
    }
    if (done < len) {
        size_t first = read_mem(c, addr + done, (char *) a + done, len - done);
        size_t second = read_mem(c, addr + done, (char *) b + done, len - done);
        done += first < second ? first : second;
    }
    return done;
}

/*
 * The first bytes of each argument, read twice, all in one process_vm_readv: up to ARG_HEAD bytes of each, within the
 * page each starts in (readable, if its first byte is). A command line of short arguments then costs one call in all
 * instead of one per argument. Returns how many of the first arguments were read whole (both readings).
 */
#define ARG_HEAD 256
static char head[2][MAX_ARGS][ARG_HEAD];
static size_t head_length[MAX_ARGS];

static size_t read_heads(struct caller *c, const uint64_t *pointers, size_t got) {
    static struct iovec local[2 * MAX_ARGS];
    static struct iovec remote[2 * MAX_ARGS];
    size_t n = 0;
    while (n < got && n < MAX_ARGS && pointers[n] != 0) {
        size_t length = 4096 - (size_t) (pointers[n] & 4095);
        head_length[n] = length < ARG_HEAD ? length : ARG_HEAD;
        n++;
    }
    if (n == 0 || !c->vm_readv) {
        return 0;
    }
    /* Each argument's two readings side by side: an unreadable argument stops the call there, the ones before it hold. */
    for (size_t i = 0; i < n; i++) {
        for (int copy = 0; copy < 2; copy++) {
            local[2 * i + copy] = (struct iovec){.iov_base = head[copy][i], .iov_len = head_length[i]};
            remote[2 * i + copy] = (struct iovec){.iov_base = (void *) (uintptr_t) pointers[i], .iov_len = head_length[i]};
        }
    }
    ssize_t read = process_vm_readv(c->tid, local, 2 * n, remote, 2 * n, 0);
    size_t whole = 0;
    for (size_t total = 0; read > 0 && whole < n; whole++) {
        total += 2 * head_length[whole];
        if (total > (size_t) read) {
            break;
        }
    }
    return whole;
}

/*
 * Argument I from its two head readings: its length when both end within the head and fit in BUDGET (a changed
 * argument marks the event racy, the second reading is kept, as read_string does); -1 when it must be read as a
 * whole (longer than its head, or than the budget allows).
 */
static long head_string(struct caller *c, size_t i, size_t budget) {
    const char *end = memchr(head[0][i], '\0', head_length[i]);
    const char *end2 = memchr(head[1][i], '\0', head_length[i]);
    /* Two readings that differ within the string (up to the later NUL, or the whole head when one has none): racy,
     * whichever way the argument is then read. */
    size_t compared = head_length[i];
    if (end != NULL && end2 != NULL) {
        size_t a = (size_t) (end - head[0][i]);
        size_t b = (size_t) (end2 - head[1][i]);
        compared = (a > b ? a : b) + 1;
    }
    if (memcmp(head[0][i], head[1][i], compared) != 0) {
        c->racy = 1;
    }
    if (end == NULL || end2 == NULL) {
        return -1;
    }
    long second = (long) (end2 - head[1][i]);
    if ((size_t) second + 1 > budget) {
        return -1;
    }
    return second;
}

/* 1 when one of the first N pointers is NULL. */
static int memchr_u64(const uint64_t *pointers, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (pointers[i] == 0) {
            return 1;
        }
    }
    return 0;
}

/*
 * 1 when this kernel opens an exec's program file before it copies argv and the environment (Linux 6.8, commit
 * 978ffcbf00d8 "execve: open the executable file before doing anything else"): a path it cannot exec then fails with
 * the path's errno (EACCES, ENOENT, ELOOP...) even when argv is unreadable, and EFAULT comes only after the file
 * opened. Before 6.8 the kernel copies argv first, and answers EFAULT whatever the path.
 */
static int exec_opens_first(void) {
    static int opens_first = -1;
    if (opens_first < 0) {
        struct utsname u;
        int major = 0;
        int minor = 0;
        if (uname(&u) == 0 && sscanf(u.release, "%d.%d", &major, &minor) == 2) {
            opens_first = major > 6 || (major == 6 && minor >= 8);
        } else {
            opens_first = 0;
        }
    }
    return opens_first;
}

static void exec_fields(struct frame *f, struct caller *c, const struct audited *s, const struct seccomp_notif *req) {
    int empty_path = s->flags >= 0 && (req->data.args[s->flags] & AT_EMPTY_PATH_VALUE);
    struct identity id;
    long jail_tgid = identify(c->tid, &id);
    long ppid = id.ppid, uid = id.uid, host_tgid = id.host_tgid;
    c->process = jail_tgid;
    const char *base = NULL;
    const char *path = path_field(f, c, req, s->path, s->dirfd, -1, empty_path, TAG_PATH, TAG_BASE, &base);
    /* A racy path or directory may not be the one the kernel looks up: no claim that it is missing then. */
    int path_unreadable = c->unreadable;
    int missing = path != NULL && !c->racy ? program_missing(c->tid, path, base) : 0;
    if (missing != 0) {
        field_text(f, TAG_MISSING, "1");
    }
    field_number(f, TAG_PID, jail_tgid);
    field_number(f, TAG_PPID, ppid > 0 ? jail_pid((pid_t) ppid) : -1);
    field_number(f, TAG_UID, uid);
    /* execveat's flags are checked before its path is looked up: only those every kernel takes are answered. */
    unsigned long long known = AT_SYMLINK_NOFOLLOW_VALUE | AT_EMPTY_PATH_VALUE;
    int plain = s->flags < 0 || (req->data.args[s->flags] & ~known) == 0;
    if (base == NULL && plain && (missing == ENOENT || missing == ENOTDIR)) {
        /*
         * A miss of an absolute path (two thirds of a build's exec events: each PATH search tries every directory
         * before the one holding the program) is answered here with the kernel's own errno: nothing runs, so its
         * record names the program and the caller only, without the working directory and arguments, which cost
         * most of an exec event's reading. A relative path depends on the working directory, which a host process
         * may rename unseen: its misses are only marked, and the kernel looks for itself.
         */
        c->answer = missing;
        return;
    }
    static char cwd[PATH_BYTES];
    readlink_proc(c->tid, "cwd", cwd, sizeof cwd);
    field_text(f, TAG_CWD, cwd);
    if (host_tgid != c->tid) {
        /* Not its process's first thread (or unknown): the exec gives it the first one's tid (see cwd_of). */
        cwd_changing(c->tid, jail_tgid, s->nr, MOVES_SHARED);
    }
    /* argv: the pointer array, then each string, within ARGV_BYTES in all; read twice, as paths are. */
    static uint64_t pointers[MAX_ARGS + 1];
    static uint64_t pointers2[MAX_ARGS + 1];
    uint64_t argv = req->data.args[s->argv];
    size_t got = read_twice(c, argv, pointers, pointers2, sizeof pointers) / sizeof(uint64_t);
    if (memcmp(pointers, pointers2, got * sizeof(uint64_t)) != 0) {
        c->racy = 1;
    }
    if (argv != 0 && got < MAX_ARGS + 1 && memchr_u64(pointers, got) == 0) {
        c->unreadable = 1; /* the vector runs into memory we cannot read before its NULL */
    }
    int cut_any = argv != 0 && got == 0;
    size_t budget = ARGV_BYTES;
    static char arg[ARGV_BYTES];
    size_t heads = read_heads(c, pointers, got);
    for (size_t i = 0; i < got; i++) {
        if (pointers[i] == 0) {
            break;
        }
        if (i == MAX_ARGS || budget < 2) {
            cut_any = 1;
            break;
        }
        int cut = 0;
        long length = i < heads ? head_string(c, i, budget) : -1;
        const char *text = length >= 0 ? head[1][i] : arg;
        if (length < 0) {
            length = read_string(c, pointers[i], arg, budget, &cut);
        }
        if (length < 0) {
            cut_any = 1;
            break;
        }
        field(f, TAG_ARG, text, (size_t) length);
        budget -= (size_t) length + 1;
        cut_any |= cut;
        if (i + 1 == got) {
            cut_any = 1; /* no NULL within the readable pointers */
        }
    }
    if (c->unreadable && !path_unreadable && exec_opens_first()) {
        /*
         * argv runs into memory we cannot read, and the path is readable: the kernel looks the file up first and
         * answers with the path's errno (EACCES for /etc/passwd), or EFAULT after it opened the file. Refused here,
         * it would be EFAULT either way: an answer the kernel does not give. It goes on, recorded with what could be
         * read and marked cut, as a racing thread's argv is; before 6.8 the kernel copies argv first, and the refusal
         * (EFAULT) is its own answer.
         */
        c->unreadable = 0;
        cut_any = 1;
    }
    if (cut_any || f->full) {
        field_text(f, TAG_ARGV_CUT, "1");
    }
}

static void file_fields(struct frame *f, struct caller *c, const struct audited *s, const struct seccomp_notif *req) {
    c->process = jail_pid(c->tid);
    field_number(f, TAG_PID, c->process);
    const char *op = s->op;
    int empty_ok = 0;
    if (s->nr == __NR_unlinkat && (req->data.args[2] & AT_REMOVEDIR_VALUE)) {
        op = "rmdir";
    }
    if (s->how == H_OPEN) {
        field_number(f, TAG_FLAGS, (long long) (unsigned) req->data.args[s->flags]);
    } else if (s->nr == __NR_renameat2) {
        field_number(f, TAG_RENAME, (long long) (unsigned) req->data.args[4]);
    } else if (s->flags >= 0) {
        empty_ok = (req->data.args[s->flags] & AT_EMPTY_PATH_VALUE) != 0;
    }
#ifdef __NR_creat
    if (s->nr == __NR_creat) {
        field_number(f, TAG_FLAGS, O_WRONLY | O_CREAT | O_TRUNC);
    }
#endif
    if (s->nr == __NR_utimensat && req->data.args[1] == 0) {
        empty_ok = 1;
    }
    field_text(f, TAG_OP, op);
    const char *base = NULL;
    path_field(f, c, req, s->path, s->dirfd, s->fd, empty_ok, TAG_PATH, TAG_BASE, &base);
    if (s->how == H_TWO) {
        /* linkat(fd, "", ..., AT_EMPTY_PATH) links the descriptor's file: the target is named by the descriptor. */
        int empty2 = s->nr == __NR_linkat && (req->data.args[4] & AT_EMPTY_PATH_VALUE) != 0;
        path_field(f, c, req, s->path2, s->dirfd2, -1, empty2, TAG_TARGET, TAG_BASE2, &base);
    } else if (s->how == H_SYMLINK) {
        static char text[PATH_BYTES];
        int cut = 0;
        long length = read_string(c, req->data.args[s->path2], text, sizeof text, &cut);
        field(f, TAG_TARGET, text, length < 0 ? 0 : (size_t) length);
    }
}

/* A Unix socket bound to a path: the path (joined to the working directory), else 0 (nothing in the file tree). */
/*
 * 1 when descriptor FD of the caller is a Unix socket (its inode is in the jail's /proc/TID/net/unix), 0 when it is
 * not, -1 when that cannot be told. The socket's family is fixed when it is made; the address's is the caller's word.
 */
static int is_unix_socket(pid_t tid, long fd) {
    char path[64];
    char link[64];
    snprintf(path, sizeof path, "/proc/%d/fd/%ld", (int) tid, fd);
    ssize_t n = readlink(path, link, sizeof link - 1);
    if (n <= 0) {
        return -1;
    }
    link[n] = '\0';
    unsigned long inode;
    if (sscanf(link, "socket:[%lu]", &inode) != 1) {
        return 0;
    }
    snprintf(path, sizeof path, "/proc/%d/net/unix", (int) tid);
    FILE *table = fopen(path, "re");
    if (table == NULL) {
        return -1;
    }
    char line[512];
    int found = 0;
    while (!found && fgets(line, sizeof line, table) != NULL) {
        unsigned long listed;
        /* Num RefCount Protocol Flags Type St Inode Path */
        if (sscanf(line, "%*s %*s %*s %*s %*s %*s %lu", &listed) == 1 && listed == inode) {
            found = 1;
        }
        /* A line longer than the buffer: skip its rest. */
        while (strchr(line, '\n') == NULL && fgets(line, sizeof line, table) != NULL) {
        }
    }
    fclose(table);
    return found;
}

/*
 * The name a bind gives a Unix socket: a path (a file is made: op mknod), or "@" and an abstract name (no file: op
 * bind). Every bind of a Unix socket has a frame, whatever its address reads: the address is read before the kernel
 * copies it, and a racing thread could turn an abstract name or another family into a path after our reading.
 * Returns 0 for a socket of another family (no file either way).
 */
static int bind_path(struct caller *c, const struct seccomp_notif *req, char *out, size_t cap, const char **op) {
    unsigned char addr[2 + 108];
    unsigned char again[2 + 108];
    size_t length = (size_t) req->data.args[2];
    if (length > sizeof addr) {
        length = sizeof addr;
    }
    int unix_socket = is_unix_socket(c->tid, (long) req->data.args[0]);
    if (unix_socket == 0) {
        return 0;
    }
    if (length <= 2) {
        return 0; /* the kernel refuses an address without a name (EINVAL) */
    }
    if (read_mem(c, req->data.args[1], addr, length) != length) {
        c->unreadable = req->data.args[1] != 0;
        return 0;
    }
    if (read_mem(c, req->data.args[1], again, length) != length || memcmp(addr, again, length) != 0) {
        c->racy = 1;
    }
    unsigned family = addr[0] | (unsigned) addr[1] << 8;
    if (family != AF_UNIX) {
        if (unix_socket < 0) {
            return 0;
        }
        c->racy = 1; /* a Unix socket bound to another family's address: refused, unless it changes meanwhile */
    }
    size_t n = length - 2 < cap - 2 ? length - 2 : cap - 2;
    if (addr[2] == '\0') {
        out[0] = '@';
        memcpy(out + 1, addr + 3, n - 1);
        out[n] = '\0';
        *op = "bind";
    } else {
        memcpy(out, addr + 2, n);
        out[n] = '\0';
        *op = "mknod";
    }
    return 1;
}

/* openat2's flags are in memory: an open that writes nothing needs no frame. */
static int openat2_writes(struct caller *c, const struct seccomp_notif *req, unsigned long long *flags) {
    uint64_t how[1] = {0};
    if (read_mem(c, req->data.args[2], how, sizeof how) != sizeof how) {
        return 1; /* unreadable: recorded, as the kernel will fail it or read what we could not */
    }
    *flags = how[0];
    return (how[0] & WRITE_FLAGS) != 0;
}

/* A rename (of a working directory or one above it) or an rmdir (of one): what a working directory reads as changes. */
static int changes_directories(const struct audited *s, const struct seccomp_notif *req) {
    if (strcmp(s->op, "rename") == 0) {
        return 1;
    }
#ifdef __NR_rmdir
    if (s->nr == __NR_rmdir) {
        return 1;
    }
#endif
    return s->nr == __NR_unlinkat && (req->data.args[2] & AT_REMOVEDIR_VALUE) != 0;
}

/* Lets the call go on, or with ERROR answers it with that errno instead (EFAULT for memory it cannot read). */
static int respond(int notify, const struct seccomp_notif *req, struct seccomp_notif_resp *resp, int error) {
    resp->id = req->id;
    resp->val = 0;
    resp->error = -error;
    resp->flags = error != 0 ? 0 : SECCOMP_USER_NOTIF_FLAG_CONTINUE;
    for (;;) {
        if (ioctl(notify, SECCOMP_IOCTL_NOTIF_SEND, resp) == 0) {
            return 0;
        }
        if (errno == EINTR) {
            continue;
        }
        /*
         * ENOENT: the caller was interrupted (a signal: the call did not run, and runs again as a new notification
         * when restarted) or died meanwhile; nothing waits for this answer. 1 says so.
         */
        return errno == ENOENT ? 1 : -1;
    }
}

struct supervisor {
    int notify;
    struct outbox out;
    int pass_through;
    unsigned long long passed; /* events answered without a frame (pass-through) */
    long long last_report_ms;
};

/* One notification: its frame (unless pass-through), then the answer. Returns 0, 1 when the launcher stalled, -1
 * when it is gone. */
static int handle(struct supervisor *sv, struct seccomp_notif *req, struct seccomp_notif_resp *resp) {
    static struct frame f;
    const struct audited *s = audited(req->data.nr);
    if (sv->pass_through || s == NULL) {
        /*
         * A bind is counted only when it could have made a file: most make none, and the count is of misses. A
         * change of directory is no event.
         */
        if (s == NULL || (s->how != H_BIND && s->how != H_CWD)) {
            sv->passed++;
        }
        return respond(sv->notify, req, resp, 0) >= 0 ? 0 : -1;
    }
    checked_tid = 0;
    if (pending_count > 0) {
        cwd_seen((pid_t) req->pid);
    }
    if (s->how == H_CWD) {
        cwd_changing((pid_t) req->pid, jail_pid((pid_t) req->pid), s->nr, MOVES_SHARED);
        return respond(sv->notify, req, resp, 0) >= 0 ? 0 : -1;
    }
    struct caller c = {
        .tid = (pid_t) req->pid, .process = 0, .mem = -1, .vm_readv = 1, .racy = 0, .unreadable = 0, .answer = 0};
    unsigned long long flags2 = 0;
    int wanted = 1;
    static char socket_path[PATH_BYTES];
    const char *bind_op = s->op;
    if (s->how == H_OPENAT2) {
        wanted = openat2_writes(&c, req, &flags2);
    } else if (s->how == H_BIND) {
        wanted = bind_path(&c, req, socket_path, sizeof socket_path, &bind_op);
    }
    if (wanted) {
        frame_start(&f, s->how == H_EXEC ? 'E' : 'F');
        field_number(&f, TAG_TIME, now_ms(CLOCK_REALTIME));
        field_number(&f, TAG_TID, req->pid);
        field_text(&f, TAG_SYSCALL, s->name);
        if (s->how == H_EXEC) {
            exec_fields(&f, &c, s, req);
        } else if (s->how == H_BIND) {
            c.process = jail_pid(c.tid);
            field_number(&f, TAG_PID, c.process);
            field_text(&f, TAG_OP, bind_op);
            field(&f, TAG_PATH, socket_path, strnlen(socket_path, sizeof socket_path));
            if (socket_path[0] != '/' && socket_path[0] != '@') {
                static char base[PATH_BYTES];
                if (cwd_moving(c.tid, c.process)) {
                    c.racy = 1;
                }
                readlink_proc(c.tid, "cwd", base, sizeof base);
                field_text(&f, TAG_BASE, base);
            }
        } else {
            file_fields(&f, &c, s, req);
            if (s->how == H_OPENAT2) {
                field_number(&f, TAG_FLAGS, (long long) (unsigned) flags2);
            }
            if (changes_directories(s, req)) {
                cwd_changing(c.tid, c.process, s->nr, MOVES_ANYONE);
            }
        }
        if (c.racy) {
            field_text(&f, TAG_RACY, "1");
        }
        if (c.unreadable) {
            field_text(&f, TAG_REFUSED, "1");
        }
        frame_end(&f);
    }
    if (c.mem >= 0) {
        close(c.mem);
    }
    /* Read from the right process? A pid taken over after the caller died leaves the id invalid. */
    int rc;
    do {
        rc = ioctl(sv->notify, SECCOMP_IOCTL_NOTIF_ID_VALID, &req->id);
    } while (rc != 0 && errno == EINTR); /* the housekeeping timer's signal: not an answer */
    int valid = rc == 0;
    int framed = 0;
    if (wanted && valid) {
        framed = enqueue(&sv->out, &f) == 0;
        if (!framed && sv->out.closed_mode) {
            return 1;
        }
        if (sv->out.closed_mode) {
            int rc = flush_all(&sv->out);
            if (rc != 0) {
                return rc;
            }
        } else if (flush_some(&sv->out) != 0) {
            return -1;
        }
    }
    int answered = respond(sv->notify, req, resp, c.unreadable ? EFAULT : c.answer);
    if (answered < 0) {
        return -1;
    }
    if (answered == 1 && framed) {
        /*
         * The caller was interrupted before the answer: the call did not run, so its frame stands for nothing, and a
         * restart brings a frame of its own. An 'R' frame, right behind it, takes it back (room is kept for it, as
         * for the counts: a retraction must not be lost to the buffer).
         */
        static struct frame retract;
        frame_start(&retract, 'R');
        frame_end(&retract);
        memcpy(sv->out.data + sv->out.length, retract.data, retract.length);
        sv->out.length += retract.length;
        if (flush_some(&sv->out) != 0) {
            return -1;
        }
    }
    return 0;
}

/* Frames the count of events answered without one: pass-through events, and frames dropped under open. */
static int report_unrecorded(struct supervisor *sv, int force) {
    long long now = now_ms(CLOCK_MONOTONIC);
    unsigned long long count = sv->passed + sv->out.dropped;
    if (count == 0 || (!force && now - sv->last_report_ms < 1000)) {
        return 0;
    }
    struct frame f;
    frame_start(&f, 'D');
    field_number(&f, TAG_TIME, now_ms(CLOCK_REALTIME));
    field_number(&f, TAG_COUNT, (long long) count);
    frame_end(&f);
    /* Room is kept for it: a count must not be lost to the buffer it counts. */
    if (sv->out.length + f.length <= sv->out.capacity + FRAME_BYTES) {
        memcpy(sv->out.data + sv->out.length, f.data, f.length);
        sv->out.length += f.length;
        sv->passed = 0;
        sv->out.dropped = 0;
    }
    sv->last_report_ms = now;
    return flush_some(&sv->out);
}

/* One descriptor with one byte of any value (Netty sends its own). */
static int receive_fd(int sock) {
    char byte = 0;
    struct iovec iov = {.iov_base = &byte, .iov_len = 1};
    union {
        struct cmsghdr header;
        char space[CMSG_SPACE(sizeof(int))];
    } control;
    memset(&control, 0, sizeof control);
    struct msghdr msg = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.space, .msg_controllen = sizeof control.space};
    ssize_t n;
    do {
        n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
    } while (n < 0 && errno == EINTR);
    struct cmsghdr *cmsg = n == 1 ? CMSG_FIRSTHDR(&msg) : NULL;
    if (cmsg == NULL || cmsg->cmsg_level != SOL_SOCKET || cmsg->cmsg_type != SCM_RIGHTS
            || cmsg->cmsg_len != CMSG_LEN(sizeof(int))) {
        errno = n < 0 ? errno : EPROTO;
        return -1;
    }
    int fd;
    memcpy(&fd, CMSG_DATA(cmsg), sizeof fd);
    return fd;
}

static void die(int code, const char *what) {
    fprintf(stderr, "agentjail-init: supervise: %s: %s\n", what, strerror(errno));
    _exit(code);
}

/* Exit codes of supervise, kept in sync with dev.agentjail.jail.audit.Supervisor. */
enum {
    SUPERVISE_DONE = 0,    /* the jail ended (every process the filter applies to is gone) */
    SUPERVISE_GONE = 2,    /* the launcher closed its socket */
    SUPERVISE_STALLED = 3, /* closed: the launcher took no frame within --stall-seconds */
    SUPERVISE_FAILED = 4,  /* a syscall of the supervisor's own failed */
    SUPERVISE_USAGE = 5,
};

#define TICK_MS 250

/* Takes one notification off the descriptor and answers it; ends the supervisor as its exit codes say. */
static void serve(struct supervisor *sv, struct seccomp_notif *req, struct seccomp_notif_resp *resp, size_t resp_size) {
    memset(resp, 0, resp_size);
    int handled = handle(sv, req, resp);
    if (handled == 1) {
        errno = ETIMEDOUT;
        die(SUPERVISE_STALLED, "the launcher took no audit frame within the stall bound");
    }
    if (handled < 0) {
        die(SUPERVISE_GONE, "hand an event to the launcher");
    }
}

static volatile sig_atomic_t ticked;

static void on_tick(int signal_number) {
    (void) signal_number;
    ticked = 1;
}

int audit_supervise(int argc, char **argv) {
    const char *connect_path = NULL;
    int closed_mode = 1;
    int stall_seconds = 30;
    int pass_through = 0;
    int scope = 0;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--connect") == 0 && i + 1 < argc) {
            connect_path = argv[++i];
        } else if (strcmp(argv[i], "--failure") == 0 && i + 1 < argc) {
            i++;
            if (strcmp(argv[i], "closed") == 0) {
                closed_mode = 1;
            } else if (strcmp(argv[i], "open") == 0) {
                closed_mode = 0;
            } else {
                errno = EINVAL;
                die(SUPERVISE_USAGE, "--failure takes closed or open");
            }
        } else if (strcmp(argv[i], "--stall-seconds") == 0 && i + 1 < argc) {
            stall_seconds = atoi(argv[++i]);
            if (stall_seconds < 1 || stall_seconds > 3600) {
                errno = EINVAL;
                die(SUPERVISE_USAGE, "--stall-seconds takes 1 to 3600");
            }
        } else if (strcmp(argv[i], "--pass-through") == 0) {
            pass_through = 1;
        } else if (strcmp(argv[i], "--scope") == 0 && i + 1 < argc) {
            scope = audit_parse(argv[++i]);
            if (scope < 0) {
                errno = EINVAL;
                die(SUPERVISE_USAGE, "--scope takes exec, files, exec,files or none");
            }
        } else {
            errno = EINVAL;
            die(SUPERVISE_USAGE, "usage: supervise --connect SOCKET [--failure closed|open] [--stall-seconds N]"
                                 " [--pass-through] [--scope exec,files]");
        }
    }
    if (connect_path == NULL) {
        errno = EINVAL;
        die(SUPERVISE_USAGE, "--connect is required");
    }
    signal(SIGPIPE, SIG_IGN);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if (strlen(connect_path) >= sizeof addr.sun_path) {
        errno = ENAMETOOLONG;
        die(SUPERVISE_USAGE, "socket path");
    }
    strcpy(addr.sun_path, connect_path);
    int sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (sock < 0 || connect(sock, (struct sockaddr *) &addr, sizeof addr) != 0) {
        die(SUPERVISE_FAILED, "connect to the launcher");
    }
    /* Hello first: the launcher hands the descriptor over once it knows who is listening. */
    static struct frame hello;
    frame_start(&hello, 'H');
    field_text(&hello, TAG_VERSION, "1");
    frame_end(&hello);
    for (size_t sent = 0; sent < hello.length;) {
        ssize_t n = send(sock, hello.data + sent, hello.length - sent, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            die(SUPERVISE_GONE, "greet the launcher");
        }
        sent += (size_t) n;
    }
    int notify = receive_fd(sock);
    if (notify < 0) {
        if (errno == 0) {
            errno = ECONNRESET;
        }
        die(SUPERVISE_GONE, "receive the notification descriptor");
    }
    /*
     * Linux >= 6.6: the kernel hands each notification and its answer over on the CPU it runs on, as a synchronous
     * wake-up, instead of waking the other side wherever it sleeps. Older kernels refuse it; it is only a hint.
     */
    ioctl(notify, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP);
    known_threads_init();
    cwd_keeping = !pass_through && scope == (AUDIT_EXEC | AUDIT_FILES);
    struct seccomp_notif_sizes sizes;
    if (syscall(__NR_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) != 0) {
        die(SUPERVISE_FAILED, "seccomp notification sizes");
    }
    size_t req_size = sizes.seccomp_notif > sizeof(struct seccomp_notif) ? sizes.seccomp_notif
                                                                          : sizeof(struct seccomp_notif);
    size_t resp_size = sizes.seccomp_notif_resp > sizeof(struct seccomp_notif_resp)
                               ? sizes.seccomp_notif_resp
                               : sizeof(struct seccomp_notif_resp);
    struct seccomp_notif *req = malloc(req_size);
    struct seccomp_notif_resp *resp = malloc(resp_size);
    struct supervisor sv = {
        .notify = notify,
        .out = {.sock = sock,
                .data = malloc(OPEN_BUFFER_BYTES + 2 * FRAME_BYTES),
                .capacity = OPEN_BUFFER_BYTES,
                .closed_mode = closed_mode,
                .stall_ms = stall_seconds * 1000},
        .pass_through = pass_through,
        .last_report_ms = now_ms(CLOCK_MONOTONIC),
    };
    if (req == NULL || resp == NULL || sv.out.data == NULL) {
        die(SUPERVISE_FAILED, "memory");
    }
    /*
     * The loop waits in SECCOMP_IOCTL_NOTIF_RECV itself while nothing else needs watching: a poll before each
     * notification was one syscall in seven of an event. A timer breaks that wait every TICK_MS (SIGALRM, without
     * SA_RESTART: the ioctl returns EINTR) for what does: the launcher closing its socket, the counts of events
     * without a frame, and the jail's end (RECV then fails with ENOENT at once, and the poll sees POLLHUP). Frames
     * waiting for the socket (open mode) put the loop back to polling until they are written.
     */
    struct sigaction tick_action = {.sa_handler = on_tick};
    sigemptyset(&tick_action.sa_mask);
    struct itimerval every = {.it_interval = {.tv_usec = TICK_MS * 1000}, .it_value = {.tv_usec = TICK_MS * 1000}};
    if (sigaction(SIGALRM, &tick_action, NULL) != 0 || setitimer(ITIMER_REAL, &every, NULL) != 0) {
        die(SUPERVISE_FAILED, "timer");
    }
    int look = 1;
    for (;;) {
        if (!look && !ticked && sv.out.length == 0) {
            memset(req, 0, req_size);
            if (ioctl(notify, SECCOMP_IOCTL_NOTIF_RECV, req) != 0) {
                if (errno != EINTR && errno != ENOENT) {
                    die(SUPERVISE_FAILED, "receive a notification");
                }
                look = 1; /* a tick, a caller interrupted before it was received, or the jail's end */
                continue;
            }
            serve(&sv, req, resp, resp_size);
            continue;
        }
        ticked = 0;
        look = 0;
        struct pollfd fds[2] = {
            {.fd = notify, .events = POLLIN},
            {.fd = sock, .events = POLLIN | (sv.out.length > 0 ? POLLOUT : 0)},
        };
        int rc = poll(fds, 2, sv.out.length > 0 ? 1000 : 0);
        if (rc < 0) {
            if (errno == EINTR) {
                continue;
            }
            die(SUPERVISE_FAILED, "poll");
        }
        if (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) {
            char byte;
            ssize_t n = recv(sock, &byte, 1, MSG_DONTWAIT);
            if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
                errno = ECONNRESET;
                die(SUPERVISE_GONE, "the launcher closed the audit socket");
            }
        }
        if (fds[1].revents & POLLOUT) {
            if (flush_some(&sv.out) != 0) {
                die(SUPERVISE_GONE, "write to the launcher");
            }
        }
        if (fds[0].revents & POLLIN) {
            memset(req, 0, req_size);
            if (ioctl(notify, SECCOMP_IOCTL_NOTIF_RECV, req) != 0) {
                if (errno == EINTR || errno == ENOENT) {
                    continue;
                }
                die(SUPERVISE_FAILED, "receive a notification");
            }
            serve(&sv, req, resp, resp_size);
        } else if (fds[0].revents & (POLLHUP | POLLERR)) {
            /* Every process under the filter has exited: the jail is over. */
            report_unrecorded(&sv, 1);
            flush_all(&sv.out);
            return SUPERVISE_DONE;
        }
        if (report_unrecorded(&sv, 0) != 0) {
            die(SUPERVISE_GONE, "write to the launcher");
        }
    }
}

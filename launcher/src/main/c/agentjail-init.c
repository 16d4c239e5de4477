/*
 * agentjail-init: the only program of ours that runs inside the jail: its pid 1, which forks the agent and reaps.
 *
 * Two modes (see docs/jail.md):
 *
 *   agentjail-init jail --port PORT --handoff SOCKET [--audit exec|files|exec,files|none] [--seccomp-fd N]
 *                       [--nofile N] [--nproc N] [--as BYTES] [--fsize BYTES] -- CMD [ARGS...]
 *     Inside the jail: listen on 127.0.0.1:PORT (and [::1]:PORT when the jail has IPv6), pass the listening
 *     descriptors to the host proxy over SOCKET with SCM_RIGHTS, wait for one ack byte per descriptor; with
 *     --audit, install the audit filter and pass its notification descriptor the same way (audit.c); load the
 *     jail's deny filter from --seccomp-fd; close every copy, apply the resource limits (core dumps always off)
 *     and exec CMD. As the jail's pid 1 (bwrap --as-pid-1) it forks first: the child execs CMD, pid 1 stays
 *     under the same filters, reaps orphans and exits with CMD's status.
 *
 *   agentjail-init supervise --connect SOCKET ...
 *     On the host: the audit supervisor (audit.c).
 *
 *   agentjail-init exec-with-fds [--join-cgroup PROCS] [--user UID GID] [--read N FILE | --read-unlink N FILE |
 *                                 --write N FILE | --path N FILE]... -- PROGRAM [ARGS...]
 *     On the host: open FILE at descriptor N (inheritable) and exec PROGRAM, because Java's ProcessBuilder
 *     cannot hand extra descriptors to bwrap (--seccomp FD, --args FD, --json-status-fd FD, --bind-fd FD).
 *     --path opens FILE as a path (O_PATH) one component at a time, following no symbolic link anywhere in it:
 *     the policy's bind sources, checked by the launcher, cannot be redirected by a link swapped in afterwards.
 *     --user (root only) drops to UID/GID, with no supplementary groups, after every descriptor is open and
 *     before PROGRAM starts: a jail started by root for a user's project runs as that user on the host.
 *
 * Every failure is fatal: one line "agentjail-init: <what failed>: <strerror>" on stderr and a distinct exit code.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <grp.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "audit.h"

/* Kept in sync with dev.agentjail.jail.InitExitCodes; InitBinaryTest runs the binary to prove them. */
enum {
    EXIT_FD_FILE = 120,  /* exec-with-fds: a descriptor file could not be opened */
    EXIT_USAGE = 121,    /* malformed arguments: a bug in the caller, never the agent's fault */
    EXIT_HANDOFF = 122,  /* the listener could not be created or handed to the host proxy */
    EXIT_LIMITS = 123,   /* a resource limit could not be applied */
    EXIT_NOEXEC = 126,   /* the command exists but could not be executed (as env(1) and sh do) */
    EXIT_NOTFOUND = 127, /* the command was not found (as env(1) and sh do) */
};

#define ACK_BYTE 0x06
#define HANDOFF_BYTE 'L'
#define ACK_TIMEOUT_SECONDS 30
#define MAX_FDS 256

static void fail(int code, const char *fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));

/* Reports errno of the failed step; callers set errno for failures that are not syscalls. */
static void fail(int code, const char *fmt, ...) {
    int saved = errno;
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    fprintf(stderr, "agentjail-init: %s: %s\n", what, strerror(saved));
    _exit(code);
}

static void usage(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

static void usage(const char *fmt, ...) {
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    fprintf(stderr, "agentjail-init: %s: %s\n", what, strerror(EINVAL));
    _exit(EXIT_USAGE);
}

/* Strict decimal parse: no sign, no spaces, no trailing junk, no overflow. */
static int parse_u64(const char *text, unsigned long long max, unsigned long long *out) {
    if (text[0] < '0' || text[0] > '9') {
        return -1;
    }
    char *end = NULL;
    errno = 0;
    unsigned long long value = strtoull(text, &end, 10);
    if (errno != 0 || *end != '\0' || value > max) {
        return -1;
    }
    *out = value;
    return 0;
}

static int parse_fd(const char *text) {
    unsigned long long value;
    /* 0-2 stay the terminal: the agent's stdio must pass through untouched. */
    if (parse_u64(text, INT_MAX, &value) != 0 || value < 3) {
        usage("bad descriptor number '%s'", text);
    }
    return (int) value;
}

static void exec_command(char **command) {
    execvp(command[0], command);
    fail(errno == ENOENT ? EXIT_NOTFOUND : EXIT_NOEXEC, "exec %s", command[0]);
}

/* ---- exec-with-fds (host side) ---------------------------------------------------------------- */

/* Moves fd to target, inheritable; the file name is for messages. */
static void place_fd(int fd, int target, const char *file) {
    if (fd == target) {
        /* dup2 onto itself keeps O_CLOEXEC, so clear it explicitly. */
        if (fcntl(fd, F_SETFD, 0) != 0) {
            fail(EXIT_FD_FILE, "fcntl %s", file);
        }
    } else {
        if (dup2(fd, target) < 0) {
            fail(EXIT_FD_FILE, "dup2 %s to %d", file, target);
        }
        close(fd);
    }
}

static void install_fd(int target, const char *file, int flags, int unlink_after) {
    int fd = open(file, flags | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0600);
    if (fd < 0) {
        fail(EXIT_FD_FILE, "open %s", file);
    }
    place_fd(fd, target, file);
    /* Unlinking right after open leaves nothing on disk even if the JVM is killed: the file may hold env values. */
    if (unlink_after && unlink(file) != 0) {
        fail(EXIT_FD_FILE, "unlink %s", file);
    }
}

/*
 * Opens the absolute path FILE with O_PATH, one component at a time from /, each with O_NOFOLLOW: a symbolic link
 * anywhere in it fails with ELOOP (or ENOTDIR) instead of being followed. "." and ".." are refused: the launcher
 * passes real paths.
 */
static int open_path_nofollow(const char *file) {
    char buf[PATH_MAX];
    if (file[0] != '/' || strlen(file) >= sizeof buf) {
        errno = file[0] != '/' ? EINVAL : ENAMETOOLONG;
        return -1;
    }
    strcpy(buf, file);
    int dir = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) {
        return -1;
    }
    char *save = NULL;
    char *part = strtok_r(buf, "/", &save);
    while (part != NULL) {
        char *next = strtok_r(NULL, "/", &save);
        if (strcmp(part, ".") == 0 || strcmp(part, "..") == 0) {
            close(dir);
            errno = EINVAL;
            return -1;
        }
        int fd = openat(dir, part, O_PATH | O_NOFOLLOW | O_CLOEXEC | (next != NULL ? O_DIRECTORY : 0));
        int saved = errno;
        close(dir);
        if (fd < 0) {
            errno = saved;
            return -1;
        }
        struct stat st;
        if (fstat(fd, &st) != 0) {
            saved = errno;
            close(fd);
            errno = saved;
            return -1;
        }
        if (S_ISLNK(st.st_mode)) {
            close(fd);
            errno = ELOOP;
            return -1;
        }
        dir = fd;
        part = next;
    }
    return dir;
}

static void install_path_fd(int target, const char *file) {
    int fd = open_path_nofollow(file);
    if (fd < 0) {
        fail(EXIT_FD_FILE, "open %s without following links", file);
    }
    place_fd(fd, target, file);
}

static void join_cgroup(const char *procs) {
    int fd = open(procs, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        fail(EXIT_FD_FILE, "open %s", procs);
    }
    /* "0" names the writing process itself, in cgroup v1 and v2 alike. */
    if (write(fd, "0\n", 2) != 2) {
        fail(EXIT_FD_FILE, "join cgroup %s", procs);
    }
    close(fd);
}

/* Drops every uid and gid (real, effective, saved; no supplementary groups) and checks that none came back. */
static void drop_to(const char *uid_text, const char *gid_text) {
    unsigned long long uid, gid;
    if (parse_u64(uid_text, 0xfffffffeULL, &uid) != 0 || parse_u64(gid_text, 0xfffffffeULL, &gid) != 0 || uid == 0) {
        usage("option --user needs a non-zero uid and a gid, not '%s' '%s'", uid_text, gid_text);
    }
    if (setgroups(0, NULL) != 0 || setresgid((gid_t) gid, (gid_t) gid, (gid_t) gid) != 0) {
        fail(EXIT_FD_FILE, "set group id %llu", gid);
    }
    if (setresuid((uid_t) uid, (uid_t) uid, (uid_t) uid) != 0) {
        fail(EXIT_FD_FILE, "set user id %llu", uid);
    }
    uid_t r, e, s;
    gid_t rg, eg, sg;
    if (getresuid(&r, &e, &s) != 0 || getresgid(&rg, &eg, &sg) != 0 || r != uid || e != uid || s != uid
            || rg != gid || eg != gid || sg != gid || setuid(0) == 0) {
        errno = EPERM;
        fail(EXIT_FD_FILE, "drop to uid %llu", uid);
    }
}

static int exec_with_fds(int argc, char **argv) {
    int used[MAX_FDS];
    int count = 0;
    int i = 2;
    const char *drop_uid = NULL;
    const char *drop_gid = NULL;
    for (; i < argc && strcmp(argv[i], "--") != 0; i += 3) {
        if (strcmp(argv[i], "--user") == 0) {
            if (i + 2 >= argc) {
                usage("option --user needs a uid and a gid");
            }
            drop_uid = argv[i + 1];
            drop_gid = argv[i + 2];
            continue;
        }
        if (strcmp(argv[i], "--join-cgroup") == 0) {
            /* Joined before bwrap starts, so every process of the jail is counted (pids.max as root). */
            if (i + 1 >= argc) {
                usage("option --join-cgroup needs a cgroup.procs file");
            }
            join_cgroup(argv[i + 1]);
            i -= 1;
            continue;
        }
        if (i + 2 >= argc) {
            usage("option %s needs a descriptor and a file", argv[i]);
        }
        int flags = 0;
        int unlink_after = 0;
        int path = 0;
        if (strcmp(argv[i], "--path") == 0) {
            path = 1;
        } else if (strcmp(argv[i], "--read") == 0) {
            flags = O_RDONLY;
        } else if (strcmp(argv[i], "--read-unlink") == 0) {
            flags = O_RDONLY;
            unlink_after = 1;
        } else if (strcmp(argv[i], "--write") == 0) {
            flags = O_WRONLY | O_CREAT | O_TRUNC;
        } else {
            usage("unknown option '%s'", argv[i]);
        }
        int target = parse_fd(argv[i + 1]);
        for (int j = 0; j < count; j++) {
            if (used[j] == target) {
                usage("descriptor %d given twice", target);
            }
        }
        if (count == MAX_FDS) {
            usage("more than %d descriptors", MAX_FDS);
        }
        used[count++] = target;
        if (path) {
            install_path_fd(target, argv[i + 2]);
        } else {
            install_fd(target, argv[i + 2], flags, unlink_after);
        }
    }
    if (i >= argc - 1) {
        usage("missing '-- PROGRAM'");
    }
    if (drop_uid != NULL) {
        drop_to(drop_uid, drop_gid);
    }
    /*
     * bwrap dies on a terminal's Ctrl-C and takes the jail down with SIGKILL. Ignoring these here keeps
     * bwrap alive; the launcher forwards them to the agent, and jail mode restores the defaults for it.
     */
    signal(SIGINT, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    exec_command(&argv[i + 1]);
    return EXIT_NOEXEC;
}

/* ---- jail mode (inside the jail) ------------------------------------------------------------- */

struct limit {
    int resource;
    const char *name;
    const char *option;
    int set;
    rlim_t value;
};

struct jail_args {
    unsigned port;
    const char *handoff;
    int audit;      /* AUDIT_EXEC | AUDIT_FILES */
    int seccomp_fd; /* the jail's deny filter, loaded after the audit filter; -1: none */
    struct limit limits[4];
    char **command;
};

/* Parsed with the other arguments, so that a bad value is a usage error before anything has happened. */
static rlim_t parse_limit(const char *value, const char *option) {
    if (strcmp(value, "unlimited") == 0) {
        return RLIM_INFINITY;
    }
    unsigned long long parsed;
    if (parse_u64(value, (unsigned long long) RLIM_INFINITY - 1, &parsed) != 0) {
        usage("bad value '%s' for %s", value, option);
    }
    return (rlim_t) parsed;
}

static void parse_jail_args(int argc, char **argv, struct jail_args *out) {
    memset(out, 0, sizeof *out);
    struct limit limits[4] = {
        {RLIMIT_NOFILE, "RLIMIT_NOFILE", "--nofile", 0, 0},
        {RLIMIT_NPROC, "RLIMIT_NPROC", "--nproc", 0, 0},
        {RLIMIT_AS, "RLIMIT_AS", "--as", 0, 0},
        {RLIMIT_FSIZE, "RLIMIT_FSIZE", "--fsize", 0, 0},
    };
    memcpy(out->limits, limits, sizeof limits);
    out->seccomp_fd = -1;
    int i = 2;
    for (; i < argc && strcmp(argv[i], "--") != 0; i += 2) {
        if (i + 1 >= argc) {
            usage("option %s needs a value", argv[i]);
        }
        const char *value = argv[i + 1];
        if (strcmp(argv[i], "--port") == 0) {
            unsigned long long port;
            if (parse_u64(value, 65535, &port) != 0 || port == 0) {
                usage("bad port '%s'", value);
            }
            out->port = (unsigned) port;
        } else if (strcmp(argv[i], "--handoff") == 0) {
            out->handoff = value;
        } else if (strcmp(argv[i], "--audit") == 0) {
            out->audit = audit_parse(value);
            if (out->audit < 0) {
                usage("bad value '%s' for --audit (exec, files, exec,files or none)", value);
            }
        } else if (strcmp(argv[i], "--seccomp-fd") == 0) {
            out->seccomp_fd = parse_fd(value);
        } else {
            struct limit *limit = NULL;
            for (int j = 0; j < 4; j++) {
                if (strcmp(argv[i], out->limits[j].option) == 0) {
                    limit = &out->limits[j];
                }
            }
            if (limit == NULL) {
                usage("unknown option '%s'", argv[i]);
            }
            limit->value = parse_limit(value, argv[i]);
            limit->set = 1;
        }
    }
    if (out->port == 0 || out->handoff == NULL) {
        usage("--port and --handoff are required");
    }
    if (i >= argc - 1) {
        usage("missing '-- COMMAND'");
    }
    out->command = &argv[i + 1];
}

/* Returns the listening fd, or -1 when this family does not exist in the jail (only allowed for IPv6). */
static int listen_loopback(int family, unsigned port) {
    int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        if (family == AF_INET6 && (errno == EAFNOSUPPORT || errno == EPROTONOSUPPORT)) {
            return -1;
        }
        fail(EXIT_HANDOFF, "socket for port %u", port);
    }
    int rc;
    if (family == AF_INET) {
        struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t) port)};
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        rc = bind(fd, (struct sockaddr *) &addr, sizeof addr);
    } else {
        int on = 1;
        /* Only [::1]; the IPv4 listener is a separate socket. */
        if (setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof on) != 0) {
            fail(EXIT_HANDOFF, "IPV6_V6ONLY for [::1]:%u", port);
        }
        struct sockaddr_in6 addr = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t) port)};
        addr.sin6_addr = in6addr_loopback;
        rc = bind(fd, (struct sockaddr *) &addr, sizeof addr);
    }
    if (rc != 0) {
        if (family == AF_INET6 && errno == EADDRNOTAVAIL) {
            close(fd);
            return -1;
        }
        fail(EXIT_HANDOFF, family == AF_INET ? "bind 127.0.0.1:%u" : "bind [::1]:%u", port);
    }
    if (listen(fd, SOMAXCONN) != 0) {
        fail(EXIT_HANDOFF, "listen on port %u", port);
    }
    return fd;
}

static int connect_handoff(const char *path) {
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof addr.sun_path) {
        usage("hand-off socket path too long: %s", path);
    }
    strcpy(addr.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        fail(EXIT_HANDOFF, "socket for %s", path);
    }
    /* A host that never answers must not leave the jail hanging forever before the agent starts. */
    struct timeval timeout = {.tv_sec = ACK_TIMEOUT_SECONDS};
    if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout) != 0
            || setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout) != 0) {
        fail(EXIT_HANDOFF, "timeouts on %s", path);
    }
    int rc;
    do {
        rc = connect(fd, (struct sockaddr *) &addr, sizeof addr);
    } while (rc != 0 && errno == EINTR);
    if (rc != 0) {
        fail(EXIT_HANDOFF, "connect %s", path);
    }
    return fd;
}

/* One descriptor per message: Netty's receiver reserves control space for exactly one. */
static void send_listener(int channel, int listener) {
    if (audit_send_fd(channel, HANDOFF_BYTE, listener) != 0) {
        fail(EXIT_HANDOFF, "send listener to host proxy");
    }
    char ack = 0;
    ssize_t got;
    do {
        got = read(channel, &ack, 1);
    } while (got < 0 && errno == EINTR);
    if (got == 0) {
        errno = ECONNABORTED;
    } else if (got == 1 && ack != ACK_BYTE) {
        errno = EPROTO;
    }
    if (got != 1 || ack != ACK_BYTE) {
        fail(EXIT_HANDOFF, "host proxy did not acknowledge the listener");
    }
}

/*
 * Loads the jail's deny filter (docs/jail.md "System calls") from FD: after the audit filter, because it refuses a
 * filter with a listener to everything after it, the agent included.
 */
static void load_deny_filter(int fd) {
    static struct sock_filter code[BPF_MAXINSNS];
    size_t have = 0;
    for (;;) {
        if (have == sizeof code) {
            errno = E2BIG;
            fail(EXIT_LIMITS, "read the seccomp program");
        }
        ssize_t n = read(fd, (char *) code + have, sizeof code - have);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            fail(EXIT_LIMITS, "read the seccomp program");
        }
        if (n == 0) {
            break;
        }
        have += (size_t) n;
    }
    close(fd);
    if (have == 0 || have % sizeof(struct sock_filter) != 0) {
        errno = EINVAL;
        fail(EXIT_LIMITS, "the seccomp program is %zu bytes, not a whole number of instructions", have);
    }
    struct sock_fprog prog = {.len = (unsigned short) (have / sizeof(struct sock_filter)), .filter = code};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
        fail(EXIT_LIMITS, "set no_new_privs");
    }
    if (syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) {
        fail(EXIT_LIMITS, "load the seccomp program");
    }
}

static void set_limit(int resource, const char *name, rlim_t limit) {
    /* Soft and hard alike: without CAP_SYS_RESOURCE the agent cannot raise them back. */
    struct rlimit rl = {.rlim_cur = limit, .rlim_max = limit};
    if (setrlimit(resource, &rl) != 0) {
        fail(EXIT_LIMITS, "setrlimit %s", name);
    }
}

/*
 * The jail's pid 1 after the fork: reap every process orphaned to us, and when the agent itself ends, end with its
 * status (128 + the signal when a signal ended it, as a shell reports it). The kernel then kills whatever the agent
 * left running, so nothing it started outlives the session. pid 1 handles no signal: the kernel drops the ones sent
 * from inside the jail, and SIGCHLD must stay at its default for waitpid to see the agent.
 */
static int reap(pid_t agent) {
    for (;;) {
        int status;
        pid_t ended = waitpid(-1, &status, __WALL);
        if (ended < 0 && errno == EINTR) {
            continue;
        }
        if (ended < 0) {
            fail(EXIT_LIMITS, "wait for the agent");
        }
        if (ended == agent && (WIFEXITED(status) || WIFSIGNALED(status))) {
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        }
    }
}

static int jail(int argc, char **argv) {
    struct jail_args args;
    parse_jail_args(argc, argv, &args);
    /*
     * Nobody in the jail may ptrace us, read our memory or take our descriptors (the hand-off socket, below):
     * without CAP_SYS_PTRACE, which the agent never has, a process that is not dumpable is out of its reach. The
     * agent's exec makes it dumpable again, for its own debuggers.
     */
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) {
        fail(EXIT_LIMITS, "set not dumpable");
    }

    int listeners[2];
    int count = 0;
    listeners[count++] = listen_loopback(AF_INET, args.port);
    int v6 = listen_loopback(AF_INET6, args.port);
    if (v6 >= 0) {
        listeners[count++] = v6;
    }

    int channel = connect_handoff(args.handoff);
    for (int i = 0; i < count; i++) {
        send_listener(channel, listeners[i]);
    }
    if (args.audit != 0) {
        const char *step = "audit";
        if (audit_install(channel, args.audit, &step) != 0) {
            fail(EXIT_HANDOFF, "%s", step);
        }
    }
    if (args.seccomp_fd >= 0) {
        load_deny_filter(args.seccomp_fd);
    }
    /* Nothing of ours may keep a listener or the hand-off socket open inside the agent. */
    for (int i = 0; i < count; i++) {
        close(listeners[i]);
    }
    close(channel);

    for (int i = 0; i < 4; i++) {
        if (args.limits[i].set) {
            set_limit(args.limits[i].resource, args.limits[i].name, args.limits[i].value);
        }
    }
    set_limit(RLIMIT_CORE, "RLIMIT_CORE", 0);

    if (getpid() == 1) {
        /*
         * bwrap runs us as the jail's pid 1 (--as-pid-1) instead of its own reaper, which would sit in the jail
         * under neither filter, ptrace-able by the agent and able to run anything for it unaudited. We stay pid 1,
         * under both filters, and fork the agent.
         */
        pid_t agent = fork();
        if (agent < 0) {
            fail(EXIT_LIMITS, "fork the agent");
        }
        if (agent > 0) {
            return reap(agent);
        }
        /*
         * The child holds nothing of pid 1's (every descriptor is closed) and is about to exec the agent: dumpable
         * again now, so that the audit supervisor, the jail's user on the host, can read this exec's path and argv.
         */
        if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) != 0) {
            fail(EXIT_LIMITS, "set dumpable");
        }
    }
    /* Undo what exec-with-fds set for bwrap: the agent gets ordinary signal behaviour. */
    signal(SIGINT, SIG_DFL);
    signal(SIGQUIT, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    exec_command(args.command);
    return EXIT_NOEXEC;
}

/*
 * agentjail-init hold DIR [ANCESTOR...], on the host: a session's hold on its project, for every user of the machine
 * (docs/jail.md "One session at a time on a project"). flock(2) of DIR exclusive and of each ANCESTOR shared, none
 * waiting: another session's project that is DIR, inside it (it holds DIR shared) or around it (it holds one of the
 * ancestors exclusive) makes one fail. A flock is the directory's, whichever user, state directory or path took it.
 * Only ancestors owned by DIR's owner are held, never / nor a sticky directory (/tmp): a lock on /, /home or /tmp
 * would let any user who can read them stop every session of the machine; one that cannot be opened is skipped, and
 * the locks taken are kept. Prints "held",
 * "busy PATH" or "error PATH: REASON" on stdout, then holds the locks until its standard input ends (the launcher
 * exits, however it ends).
 */
static int hold(int argc, char **argv) {
    /* Ctrl-C reaches the launcher's whole process group: the launcher ends the session, and this ends with it. */
    signal(SIGINT, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
    uid_t owner = 0;
    for (int i = 2; i < argc; i++) {
        int fd = open(argv[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) != 0) {
            if (i == 2) {
                printf("error %s: %s\n", argv[i], strerror(errno));
                fflush(stdout);
                return 1;
            }
            if (fd >= 0) {
                close(fd);
            }
            continue; /* an ancestor this user cannot read: the project's own lock still holds */
        }
        if (i == 2) {
            owner = st.st_uid;
        } else if (st.st_uid != owner || (st.st_mode & S_ISVTX) || strcmp(argv[i], "/") == 0) {
            close(fd);
            continue;
        }
        int rc;
        do {
            rc = flock(fd, (i == 2 ? LOCK_EX : LOCK_SH) | LOCK_NB);
        } while (rc != 0 && errno == EINTR);
        if (rc != 0 && errno != EWOULDBLOCK && i > 2) {
            close(fd); /* an ancestor on a file system without flock: the project's own lock still holds */
            continue;
        }
        if (rc != 0) {
            printf(errno == EWOULDBLOCK ? "busy %s\n" : "error %s: %s\n", argv[i], strerror(errno));
            fflush(stdout);
            return 1;
        }
    }
    printf("held\n");
    fflush(stdout);
    char buffer[256];
    for (;;) {
        ssize_t n = read(STDIN_FILENO, buffer, sizeof buffer);
        if (n == 0 || (n < 0 && errno != EINTR)) {
            return 0;
        }
    }
}

int main(int argc, char **argv) {
    if (argc >= 2 && strcmp(argv[1], "jail") == 0) {
        return jail(argc, argv);
    }
    if (argc >= 2 && strcmp(argv[1], "exec-with-fds") == 0) {
        return exec_with_fds(argc, argv);
    }
    if (argc >= 2 && strcmp(argv[1], "supervise") == 0) {
        return audit_supervise(argc, argv);
    }
    if (argc >= 3 && strcmp(argv[1], "hold") == 0) {
        return hold(argc, argv);
    }
    usage("usage: agentjail-init jail|exec-with-fds|supervise|hold [OPTIONS] [-- COMMAND [ARGS...]]");
}

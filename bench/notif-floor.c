/*
 * What a seccomp user notification costs by itself, with no agentjail in the way (docs/benchmarks.md, issue 20).
 *
 *   notif-floor [ITERATIONS]
 *
 * A child process times ITERATIONS (default 100,000) of open(O_WRONLY | O_CREAT | O_TRUNC) + close over 100 relative
 * paths in out/, first unfiltered, then under a filter that returns SECCOMP_RET_USER_NOTIF for openat, the way the
 * jail's file audit does. Its parent is the least supervisor there can be: it receives each notification and answers
 * "go on" (SECCOMP_USER_NOTIF_FLAG_CONTINUE) at once, reading nothing and writing nothing, with the synchronous wake-up
 * flag the audit supervisor sets too. Prints microseconds per iteration, unfiltered and notified, and their ratio.
 * Whatever a real supervisor does per event comes on top of the difference.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif

static double loop_us(long n) {
    char p[64];
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (long i = 0; i < n; i++) {
        snprintf(p, sizeof p, "out/n%ld", i % 100);
        int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0) {
            perror("open");
            exit(1);
        }
        close(fd);
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    return ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / 1e3 / n;
}

static int notifying_filter(void) {
    struct sock_filter code[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {.len = sizeof code / sizeof code[0], .filter = code};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
        perror("PR_SET_NO_NEW_PRIVS");
        exit(1);
    }
    int fd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
    if (fd < 0) {
        perror("seccomp");
        exit(1);
    }
    return fd;
}

static void send_fd(int sock, int fd) {
    char byte = 'L';
    struct iovec iov = {.iov_base = &byte, .iov_len = 1};
    union {
        struct cmsghdr h;
        char buf[CMSG_SPACE(sizeof(int))];
    } control;
    memset(&control, 0, sizeof control);
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
                         .msg_controllen = sizeof control.buf};
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &fd, sizeof fd);
    if (sendmsg(sock, &msg, 0) != 1) {
        perror("sendmsg");
        exit(1);
    }
}

static int receive_fd(int sock) {
    char byte;
    struct iovec iov = {.iov_base = &byte, .iov_len = 1};
    union {
        struct cmsghdr h;
        char buf[CMSG_SPACE(sizeof(int))];
    } control;
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
                         .msg_controllen = sizeof control.buf};
    if (recvmsg(sock, &msg, 0) != 1) {
        return -1;
    }
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    if (c == NULL || c->cmsg_type != SCM_RIGHTS) {
        return -1;
    }
    int fd;
    memcpy(&fd, CMSG_DATA(c), sizeof fd);
    return fd;
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 100000;
    if (n <= 0) {
        fprintf(stderr, "usage: notif-floor [ITERATIONS]\n");
        return 2;
    }
    if (mkdir("out", 0755) != 0 && errno != EEXIST) {
        perror("mkdir out");
        return 1;
    }
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, pair) != 0) {
        perror("socketpair");
        return 1;
    }
    pid_t child = fork();
    if (child < 0) {
        perror("fork");
        return 1;
    }
    if (child == 0) {
        close(pair[0]);
        loop_us(n / 10 + 1); /* warm the page cache and the dentries */
        double plain = loop_us(n);
        int listener = notifying_filter();
        send_fd(pair[1], listener);
        close(listener);
        double notified = loop_us(n);
        printf("unfiltered %.2f us/iter, notified %.2f us/iter, %.2fx (%ld iterations)\n", plain, notified,
               notified / plain, n);
        return 0;
    }
    close(pair[1]);
    int notify = receive_fd(pair[0]);
    if (notify < 0) {
        waitpid(child, NULL, 0);
        return 1;
    }
    ioctl(notify, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP);
    struct seccomp_notif req;
    struct seccomp_notif_resp resp;
    for (;;) {
        /* RECV would wait forever once the child is gone: poll says so with POLLHUP. */
        struct pollfd p = {.fd = notify, .events = POLLIN};
        if (poll(&p, 1, -1) < 0) {
            if (errno == EINTR) {
                continue;
            }
            break;
        }
        if (!(p.revents & POLLIN)) {
            break;
        }
        memset(&req, 0, sizeof req);
        if (ioctl(notify, SECCOMP_IOCTL_NOTIF_RECV, &req) != 0) {
            if (errno == EINTR || errno == ENOENT) { /* ENOENT: its caller was interrupted meanwhile */
                continue;
            }
            break;
        }
        memset(&resp, 0, sizeof resp);
        resp.id = req.id;
        resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
        ioctl(notify, SECCOMP_IOCTL_NOTIF_SEND, &resp);
    }
    int status;
    waitpid(child, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

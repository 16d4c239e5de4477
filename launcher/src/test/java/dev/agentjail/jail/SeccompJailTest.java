package dev.agentjail.jail;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.agentjail.jail.JailHarness.Result;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.unix.FileDescriptor;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The seccomp filter inside a real jail, probed by a tiny C program that makes each syscall directly. */
class SeccompJailTest {
    /** Probe name → what the probe must report inside the jail. */
    private static final Map<String, String> EXPECTED = expected();

    private static final String PROBE = """
            #define _GNU_SOURCE
            #include <errno.h>
            #include <fcntl.h>
            #include <linux/filter.h>
            #include <linux/seccomp.h>
            #include <linux/sched.h>
            #include <pthread.h>
            #include <sched.h>
            #include <signal.h>
            #include <stdint.h>
            #include <stdio.h>
            #include <string.h>
            #include <sys/ioctl.h>
            #include <sys/personality.h>
            #include <sys/ptrace.h>
            #include <sys/syscall.h>
            #include <sys/wait.h>
            #include <termios.h>
            #include <unistd.h>

            static void *thread_main(void *arg) { return arg; }

            /* Runs a clone-like call: the child exits at once, the parent reaps it. */
            static long forked(long rc) {
                if (rc == 0) _exit(0);
                if (rc > 0) waitpid((pid_t) rc, NULL, 0);
                return rc < 0 ? -1 : 0;
            }

            static long probe(const char *name) {
                if (!strcmp(name, "getpid")) return syscall(SYS_getpid) > 0 ? 0 : -1;
                if (!strcmp(name, "fork")) return forked(syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0));
                if (!strcmp(name, "thread")) {
                    pthread_t t;
                    int rc = pthread_create(&t, NULL, thread_main, NULL);
                    if (rc) { errno = rc; return -1; }
                    return pthread_join(t, NULL);
                }
                if (!strcmp(name, "clone-newns")) return forked(syscall(SYS_clone, CLONE_NEWNS | SIGCHLD, 0, 0, 0, 0));
                if (!strcmp(name, "clone-newuser")) return forked(syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0));
                if (!strcmp(name, "clone3")) {
                    struct clone_args args;
                    memset(&args, 0, sizeof args);
                    args.exit_signal = SIGCHLD;
                    return forked(syscall(SYS_clone3, &args, sizeof args));
                }
                if (!strcmp(name, "unshare-user")) return syscall(SYS_unshare, CLONE_NEWUSER);
                if (!strcmp(name, "unshare-net")) return syscall(SYS_unshare, CLONE_NEWNET);
                if (!strcmp(name, "setns")) {
                    int fd = open("/proc/self/ns/uts", O_RDONLY);
                    return syscall(SYS_setns, fd, 0);
                }
                if (!strcmp(name, "mount")) return syscall(SYS_mount, "none", "/tmp", "tmpfs", 0, 0);
                if (!strcmp(name, "umount2")) return syscall(SYS_umount2, "/proc", 0);
                if (!strcmp(name, "chroot")) return syscall(SYS_chroot, "/");
                if (!strcmp(name, "fsopen")) return syscall(SYS_fsopen, "tmpfs", 0);
                if (!strcmp(name, "open_tree")) return syscall(SYS_open_tree, AT_FDCWD, "/tmp", 0);
                if (!strcmp(name, "keyctl")) return syscall(SYS_keyctl, 0, -3, 0);
                if (!strcmp(name, "add_key")) return syscall(SYS_add_key, "user", "x", "y", 1, -3);
                if (!strcmp(name, "bpf")) return syscall(SYS_bpf, 0, 0, 0);
                if (!strcmp(name, "perf_event_open")) return syscall(SYS_perf_event_open, 0, 0, -1, -1, 0);
                if (!strcmp(name, "userfaultfd")) return syscall(SYS_userfaultfd, 0);
                if (!strcmp(name, "io_uring_setup")) {
                    char params[120];
                    memset(params, 0, sizeof params);
                    return syscall(SYS_io_uring_setup, 1, params);
                }
                if (!strcmp(name, "tiocsti")) return syscall(SYS_ioctl, 0, (unsigned long) TIOCSTI, "x");
                if (!strcmp(name, "tiocsti-high-bits")) return syscall(SYS_ioctl, 0, (1UL << 32) | TIOCSTI, "x");
                if (!strcmp(name, "tioclinux")) return syscall(SYS_ioctl, 0, (unsigned long) TIOCLINUX, "x");
                if (!strcmp(name, "tcgets")) {
                    struct termios t;
                    return syscall(SYS_ioctl, 0, (unsigned long) TCGETS, &t);
                }
                if (!strcmp(name, "personality-query")) return personality(0xffffffff) == -1 ? -1 : 0;
                if (!strcmp(name, "personality-read-implies-exec")) return syscall(SYS_personality, READ_IMPLIES_EXEC);
                if (!strcmp(name, "seccomp-listener")) {
                    struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
                    struct sock_fprog prog = {.len = 1, .filter = &allow};
                    long fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
                    return fd < 0 ? -1 : 0;
                }
                if (!strcmp(name, "ptrace-traceme")) return syscall(SYS_ptrace, PTRACE_TRACEME, 0, 0, 0);
                errno = EINVAL;
                return -2;
            }

            int main(int argc, char **argv) {
                for (int i = 1; i < argc; i++) {
                    errno = 0;
                    long rc = probe(argv[i]);
                    const char *result = rc == -2 ? "UNKNOWN-PROBE" : rc >= 0 ? "OK"
                        : errno == EPERM ? "EPERM" : errno == ENOSYS ? "ENOSYS" : errno == ENOTTY ? "ENOTTY"
                        : strerrorname_np(errno);
                    printf("%s=%s\\n", argv[i], result ? result : "?");
                    fflush(stdout);
                }
                return 0;
            }
            """;

    private static EventLoopGroup group;

    @TempDir
    Path root;

    @BeforeAll
    static void startGroup() {
        JailPrerequisites.requireBwrap();
        group = new MultiThreadIoEventLoopGroup(1, EpollIoHandler.newFactory());
    }

    @AfterAll
    static void stopGroup() {
        if (group != null) {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }

    @Test
    void blockedSyscallsFailAndEverydayOnesStillWork() throws Exception {
        JailHarness jail = new JailHarness(root, group);
        Path probe = JailPrerequisites.compile(jail.project(), "probe", PROBE);
        List<String> command = new ArrayList<>(List.of(probe.toString()));
        command.addAll(EXPECTED.keySet());
        Result result = jail.run(fd -> new FileDescriptor(fd).close(), command.toArray(String[]::new));
        assertEquals(0, result.exit(), result::toString);
        Map<String, String> actual = new TreeMap<>();
        result.stdout().lines().map(line -> line.split("=", 2)).forEach(kv -> actual.put(kv[0], kv[1]));
        assertEquals(new TreeMap<>(EXPECTED), actual, result::toString);
    }

    private static Map<String, String> expected() {
        Map<String, String> expected = new LinkedHashMap<>();
        expected.put("getpid", "OK");
        expected.put("fork", "OK");
        // glibc tries clone3 first and falls back to clone when the filter answers ENOSYS.
        expected.put("thread", "OK");
        expected.put("clone-newns", "EPERM");
        expected.put("clone-newuser", "EPERM");
        expected.put("clone3", "ENOSYS");
        expected.put("unshare-user", "EPERM");
        expected.put("unshare-net", "EPERM");
        expected.put("setns", "EPERM");
        expected.put("mount", "EPERM");
        expected.put("umount2", "EPERM");
        expected.put("chroot", "EPERM");
        expected.put("fsopen", "EPERM");
        expected.put("open_tree", "EPERM");
        expected.put("keyctl", "EPERM");
        expected.put("add_key", "EPERM");
        expected.put("bpf", "EPERM");
        expected.put("perf_event_open", "EPERM");
        expected.put("userfaultfd", "EPERM");
        expected.put("io_uring_setup", "EPERM");
        // stdin is a pipe: an ioctl that gets through the filter fails with ENOTTY instead.
        expected.put("tiocsti", "EPERM");
        expected.put("tiocsti-high-bits", "EPERM");
        expected.put("tioclinux", "EPERM");
        expected.put("tcgets", "ENOTTY");
        expected.put("personality-query", "OK");
        expected.put("personality-read-implies-exec", "EPERM");
        expected.put("seccomp-listener", "EPERM");
        expected.put("ptrace-traceme", "OK");
        return expected;
    }
}

package dev.agentjail.jail;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import dev.agentjail.jail.JailHarness.Result;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.unix.FileDescriptor;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The seccomp filter inside a real jail, probed by a tiny C program that makes each syscall directly. */
class SeccompJailTest {
    /** aarch64 has no open, creat, mkdir, mknod or chmod syscalls: their probes run on x86_64 only. */
    private static final boolean X86_64 = "amd64".equals(System.getProperty("os.arch"));

    /** Probe name → what the probe must report inside the jail. */
    private static final Map<String, String> EXPECTED = expected();

    private static final Path PYTHON = Path.of("/usr/bin/python3");

    /** Everyday tools inside the jail: Python's socket and os modules, coreutils' chmod and install. */
    private static final String PYTHON_PROBE = """
            import errno, os, socket, subprocess

            def report(name, action):
                try:
                    action()
                    result = "OK"
                except OSError as e:
                    result = errno.errorcode.get(e.errno, str(e.errno))
                print(name + "=" + result, flush=True)

            def sock(family, kind, protocol=0):
                return lambda: socket.socket(family, kind, protocol).close()

            def command(*argv):
                def run():
                    done = subprocess.run(argv, capture_output=True, text=True)
                    if done.returncode != 0:
                        refused = os.strerror(errno.EPERM) in done.stderr
                        raise OSError(errno.EPERM if refused else 0, done.stderr)
                return run

            def plain(name):
                with open(name, "w") as f:
                    f.write("#!/bin/sh\\n")
                os.chmod(name, 0o644)

            def pair():
                a, b = socket.socketpair()
                a.sendall(b"x")
                assert b.recv(1) == b"x"
                a.close()
                b.close()

            # Creation only: nothing here connects anywhere.
            report("vsock", sock(socket.AF_VSOCK, socket.SOCK_STREAM))
            report("packet", sock(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3)))
            report("inet", sock(socket.AF_INET, socket.SOCK_STREAM))
            report("inet6", sock(socket.AF_INET6, socket.SOCK_DGRAM))
            report("unix", sock(socket.AF_UNIX, socket.SOCK_STREAM))
            report("unix-pair", pair)
            report("netlink-route", sock(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE))
            report("if_nameindex", socket.if_nameindex)
            report("netlink-uevent", sock(socket.AF_NETLINK, socket.SOCK_DGRAM, 15))

            for name in ["chmod-4755", "chmod-g+s", "chmod-755", "chmod+x", "os-chmod-4755", "install-source"]:
                plain(name)
            report("chmod-4755", command("chmod", "4755", "chmod-4755"))
            report("chmod-g+s", command("chmod", "g+s", "chmod-g+s"))
            report("install-4755", command("install", "-m", "4755", "install-source", "install-4755"))
            report("os-chmod-4755", lambda: os.chmod("os-chmod-4755", 0o4755))
            report("os-open-4755", lambda: os.close(os.open("os-open-4755", os.O_CREAT | os.O_WRONLY, 0o4755)))
            report("os-mkdir-2775", lambda: os.mkdir("os-mkdir-2775", 0o2775))
            report("chmod-755", command("chmod", "755", "chmod-755"))
            report("chmod+x", command("chmod", "+x", "chmod+x"))
            report("os-open-755", lambda: os.close(os.open("os-open-755", os.O_CREAT | os.O_WRONLY, 0o755)))
            report("os-mkdir-775", lambda: os.mkdir("os-mkdir-775", 0o775))
            """;

    private static final String PROBE = """
            #define _GNU_SOURCE
            #include <errno.h>
            #include <fcntl.h>
            #include <linux/filter.h>
            #include <linux/openat2.h>
            #include <linux/seccomp.h>
            #include <linux/sched.h>
            #include <pthread.h>
            #include <sched.h>
            #include <signal.h>
            #include <stdint.h>
            #include <stdio.h>
            #include <string.h>
            #include <sys/ioctl.h>
            #include <sys/socket.h>
            #include <sys/stat.h>
            #include <sys/personality.h>
            #include <sys/ptrace.h>
            #include <sys/syscall.h>
            #include <sys/wait.h>
            #include <termios.h>
            #include <unistd.h>

            #ifndef SYS_fchmodat2
            #define SYS_fchmodat2 452
            #endif
            #define HIGH (1UL << 32)

            static void *thread_main(void *arg) { return arg; }

            /* Runs a clone-like call: the child exits at once, the parent reaps it. */
            static long forked(long rc) {
                if (rc == 0) _exit(0);
                if (rc > 0) waitpid((pid_t) rc, NULL, 0);
                return rc < 0 ? -1 : 0;
            }

            /* A call that returns a descriptor: closed at once, 0 or -1. */
            static long closed(long fd) {
                if (fd >= 0) close((int) fd);
                return fd < 0 ? -1 : 0;
            }

            /* An ordinary 0644 file named after the probe, for the chmod probes to change. */
            static const char *fresh(const char *name) {
                close(open(name, O_CREAT | O_WRONLY | O_TRUNC, 0644));
                return name;
            }

            static long socket_pair(long domain) {
                int sv[2];
                long rc = syscall(SYS_socketpair, domain, SOCK_STREAM, 0, sv);
                if (rc == 0) { close(sv[0]); close(sv[1]); }
                return rc;
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
                /* Sockets: created only, never connected. */
                if (!strcmp(name, "socket-vsock")) return closed(syscall(SYS_socket, AF_VSOCK, SOCK_STREAM, 0));
                if (!strcmp(name, "socket-vsock-high-bits"))
                    return closed(syscall(SYS_socket, HIGH | AF_VSOCK, SOCK_STREAM, 0));
                if (!strcmp(name, "socket-packet")) return closed(syscall(SYS_socket, AF_PACKET, SOCK_RAW, 0));
                if (!strcmp(name, "socket-inet-sock-packet"))
                    return closed(syscall(SYS_socket, AF_INET, SOCK_PACKET, 0));
                if (!strcmp(name, "socket-alg")) return closed(syscall(SYS_socket, AF_ALG, SOCK_SEQPACKET, 0));
                if (!strcmp(name, "socket-inet-vsock-above-31"))
                    return closed(syscall(SYS_socket, ((unsigned long) AF_VSOCK << 32) | AF_INET, SOCK_STREAM, 0));
                if (!strcmp(name, "socketpair-unix")) return socket_pair(AF_UNIX);
                if (!strcmp(name, "socketpair-vsock")) return socket_pair(AF_VSOCK);
                if (!strcmp(name, "netlink-route")) return closed(syscall(SYS_socket, AF_NETLINK, SOCK_RAW, 0));
                if (!strcmp(name, "netlink-sock-diag")) return closed(syscall(SYS_socket, AF_NETLINK, SOCK_RAW, 4));
                if (!strcmp(name, "netlink-uevent")) return closed(syscall(SYS_socket, AF_NETLINK, SOCK_DGRAM, 15));
                /* Modes: each probe works on a file named after itself, which the test inspects from the host. */
                if (!strcmp(name, "fchmod-setgid")) {
                    int fd = open(name, O_CREAT | O_WRONLY, 0644);
                    long rc = syscall(SYS_fchmod, fd, 02755);
                    close(fd);
                    return rc;
                }
                if (!strcmp(name, "fchmodat-setuid")) return syscall(SYS_fchmodat, AT_FDCWD, fresh(name), 06755);
                if (!strcmp(name, "fchmodat-setuid-high-bits"))
                    return syscall(SYS_fchmodat, AT_FDCWD, fresh(name), HIGH | 04755);
                if (!strcmp(name, "fchmodat-0755-setuid-above-31"))
                    return syscall(SYS_fchmodat, AT_FDCWD, fresh(name), (04000UL << 32) | 0755);
                if (!strcmp(name, "fchmodat2-setuid")) return syscall(SYS_fchmodat2, AT_FDCWD, fresh(name), 04755, 0);
                if (!strcmp(name, "mkdirat-setgid")) return syscall(SYS_mkdirat, AT_FDCWD, name, 02775);
                if (!strcmp(name, "mknodat-setuid")) return syscall(SYS_mknodat, AT_FDCWD, name, S_IFREG | 04755, 0);
                if (!strcmp(name, "openat-creat-setuid"))
                    return closed(syscall(SYS_openat, AT_FDCWD, name, O_CREAT | O_WRONLY, 04755));
                if (!strcmp(name, "openat-creat-setuid-high-bits"))
                    return closed(syscall(SYS_openat, AT_FDCWD, name, O_CREAT | O_WRONLY, HIGH | 04755));
                if (!strcmp(name, "openat-tmpfile-setuid"))
                    return closed(syscall(SYS_openat, AT_FDCWD, ".", O_TMPFILE | O_WRONLY, 04755));
                if (!strcmp(name, "openat-existing-mode-ignored"))
                    return closed(syscall(SYS_openat, AT_FDCWD, fresh(name), O_WRONLY, 04755));
                if (!strcmp(name, "openat2-creat")) {
                    struct open_how how = {.flags = O_CREAT | O_WRONLY, .mode = 04755};
                    return closed(syscall(SYS_openat2, AT_FDCWD, name, &how, sizeof how));
                }
            #ifdef SYS_open
                if (!strcmp(name, "chmod-setuid")) return syscall(SYS_chmod, fresh(name), 04755);
                if (!strcmp(name, "creat-setuid")) return closed(syscall(SYS_creat, name, 04755));
                if (!strcmp(name, "mkdir-setgid")) return syscall(SYS_mkdir, name, 02775);
                if (!strcmp(name, "mknod-setuid")) return syscall(SYS_mknod, name, S_IFREG | 04755, 0);
                if (!strcmp(name, "open-creat-setuid"))
                    return closed(syscall(SYS_open, name, O_CREAT | O_WRONLY, 04755));
            #endif
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
        assertEquals(new TreeMap<>(EXPECTED), reported(result), result::toString);
        assertEquals(List.of(), setidEntries(jail.project()), "setuid or setgid entries left on the host");
        // The kernel reads a umode_t: S_ISUID above bit 31 is no setuid, and the call sets 0755.
        assertEquals(0755, mode(jail.project().resolve("fchmodat-0755-setuid-above-31")));
    }

    @Test
    void everydayToolsGetOnlyAllowedSocketsAndCannotSetSetuidOrSetgidBits() throws Exception {
        JailPrerequisites.require(Files.isExecutable(PYTHON), "python3 at " + PYTHON);
        JailHarness jail = new JailHarness(root, group);
        Path script = Files.writeString(jail.project().resolve("probe.py"), PYTHON_PROBE);
        Result result = jail.run(fd -> new FileDescriptor(fd).close(), "python3", script.toString());
        assertEquals(0, result.exit(), result::toString);
        Map<String, String> expected = new TreeMap<>();
        expected.put("vsock", "EAFNOSUPPORT");
        expected.put("packet", "EAFNOSUPPORT");
        expected.put("inet", "OK");
        expected.put("inet6", "OK");
        expected.put("unix", "OK");
        expected.put("unix-pair", "OK");
        expected.put("netlink-route", "OK");
        expected.put("if_nameindex", "OK");
        expected.put("netlink-uevent", "EPROTONOSUPPORT");
        expected.put("chmod-4755", "EPERM");
        expected.put("chmod-g+s", "EPERM");
        expected.put("install-4755", "EPERM");
        expected.put("os-chmod-4755", "EPERM");
        expected.put("os-open-4755", "EPERM");
        expected.put("os-mkdir-2775", "EPERM");
        expected.put("chmod-755", "OK");
        expected.put("chmod+x", "OK");
        expected.put("os-open-755", "OK");
        expected.put("os-mkdir-775", "OK");
        assertEquals(expected, reported(result), result::toString);
        Path project = jail.project();
        assertEquals(List.of(), setidEntries(project), "setuid or setgid entries left on the host");
        assertEquals(0644, mode(project.resolve("chmod-4755")), "a refused chmod leaves the mode as it was");
        assertEquals(0755, mode(project.resolve("chmod-755")));
        assertNotEquals(0, mode(project.resolve("chmod+x")) & 0100, "chmod +x makes the file executable");
        assertFalse(Files.exists(project.resolve("os-open-4755")), "a refused creation creates nothing");
        assertFalse(Files.exists(project.resolve("os-mkdir-2775")), "a refused creation creates nothing");
    }

    private static Map<String, String> reported(Result result) {
        Map<String, String> actual = new TreeMap<>();
        result.stdout().lines().map(line -> line.split("=", 2)).forEach(kv -> actual.put(kv[0], kv[1]));
        return actual;
    }

    /** Everything under {@code dir}, as the host sees it, whose mode has S_ISUID or S_ISGID. */
    private static List<String> setidEntries(Path dir) throws IOException {
        try (Stream<Path> paths = Files.walk(dir)) {
            return paths.filter(path -> (mode(path) & 06000) != 0)
                    .map(path -> path + " 0" + Integer.toOctalString(mode(path)))
                    .toList();
        }
    }

    /** The permission bits (with setuid, setgid and sticky) of {@code path} on the host, not following links. */
    private static int mode(Path path) {
        try {
            return (Integer) Files.getAttribute(path, "unix:mode", LinkOption.NOFOLLOW_LINKS) & 07777;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
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
        // Socket families are an allow list; the kernel reads the family as an int.
        expected.put("socket-vsock", "EAFNOSUPPORT");
        expected.put("socket-vsock-high-bits", "EAFNOSUPPORT");
        expected.put("socket-packet", "EAFNOSUPPORT");
        expected.put("socket-inet-sock-packet", "EAFNOSUPPORT");
        expected.put("socket-alg", "EAFNOSUPPORT");
        expected.put("socket-inet-vsock-above-31", "OK");
        expected.put("socketpair-unix", "OK");
        expected.put("socketpair-vsock", "EAFNOSUPPORT");
        expected.put("netlink-route", "OK");
        expected.put("netlink-sock-diag", "OK");
        expected.put("netlink-uevent", "EPROTONOSUPPORT");
        // No setuid or setgid mode, however it is set.
        expected.put("fchmod-setgid", "EPERM");
        expected.put("fchmodat-setuid", "EPERM");
        expected.put("fchmodat-setuid-high-bits", "EPERM");
        expected.put("fchmodat-0755-setuid-above-31", "OK");
        expected.put("fchmodat2-setuid", "EPERM");
        expected.put("mkdirat-setgid", "EPERM");
        expected.put("mknodat-setuid", "EPERM");
        expected.put("openat-creat-setuid", "EPERM");
        expected.put("openat-creat-setuid-high-bits", "EPERM");
        expected.put("openat-tmpfile-setuid", "EPERM");
        expected.put("openat-existing-mode-ignored", "OK");
        expected.put("openat2-creat", "ENOSYS");
        if (X86_64) {
            expected.put("chmod-setuid", "EPERM");
            expected.put("creat-setuid", "EPERM");
            expected.put("mkdir-setgid", "EPERM");
            expected.put("mknod-setuid", "EPERM");
            expected.put("open-creat-setuid", "EPERM");
        }
        return expected;
    }
}

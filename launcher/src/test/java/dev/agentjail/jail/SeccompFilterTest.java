package dev.agentjail.jail;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class SeccompFilterTest {
    private static final int X86_64 = 0xC000003E;
    private static final int AARCH64 = 0xC00000B7;
    private static final int I386 = 0x40000003;

    private static final int ALLOW = 0x7FFF0000;
    private static final int EPERM = 0x00050000 | 1;
    private static final int ENOSYS = 0x00050000 | 38;
    private static final int KILL = 0x80000000;
    private static final int EAFNOSUPPORT = 0x00050000 | 97;
    private static final int EPROTONOSUPPORT = 0x00050000 | 93;

    private static final long SIGCHLD = 17;
    private static final long THREAD_FLAGS = 0x3d0f00;
    private static final long CLONE_NEWUSER = 0x10000000;
    private static final long CLONE_NEWNS = 0x00020000;
    private static final long CLONE_NEWNET = 0x40000000;
    private static final long CLONE_NEWCGROUP = 0x02000000;

    private static final long AF_UNSPEC = 0;
    private static final long AF_UNIX = 1;
    private static final long AF_INET = 2;
    private static final long AF_INET6 = 10;
    private static final long AF_KEY = 15;
    private static final long AF_NETLINK = 16;
    private static final long AF_PACKET = 17;
    private static final long AF_RDS = 21;
    private static final long AF_CAN = 29;
    private static final long AF_TIPC = 30;
    private static final long AF_BLUETOOTH = 31;
    private static final long AF_ALG = 38;
    private static final long AF_VSOCK = 40;
    private static final long AF_XDP = 44;
    private static final long AF_MCTP = 45;

    private static final long SOCK_STREAM = 1;
    private static final long SOCK_DGRAM = 2;
    private static final long SOCK_RAW = 3;
    private static final long SOCK_PACKET = 10;
    private static final long SOCK_NONBLOCK = 04000;
    private static final long SOCK_CLOEXEC = 02000000;
    private static final long SOCK_FLAGS = SOCK_NONBLOCK | SOCK_CLOEXEC;

    private static final long NETLINK_ROUTE = 0;
    private static final long NETLINK_SOCK_DIAG = 4;
    private static final long NETLINK_AUDIT = 9;
    private static final long NETLINK_NETFILTER = 12;
    private static final long NETLINK_KOBJECT_UEVENT = 15;
    private static final long NETLINK_GENERIC = 16;

    private static final long O_WRONLY = 01;
    private static final long O_CREAT = 0100;
    private static final long O_TRUNC = 01000;
    private static final long O_TMPFILE_BIT = 020000000;
    /** O_TMPFILE is __O_TMPFILE | O_DIRECTORY, and O_DIRECTORY differs between the arches. */
    private static final Map<Integer, Long> O_TMPFILE =
            Map.of(X86_64, O_TMPFILE_BIT | 0200000, AARCH64, O_TMPFILE_BIT | 040000);

    private static final long HIGH_HALF = 0xFFFF_FFFF_0000_0000L;

    private static final BpfInterpreter FILTER = new BpfInterpreter(SeccompFilter.program());

    static Stream<Arguments> cases() {
        List<Arguments> cases = new ArrayList<>();
        // x86_64: name, nr, args, expected
        cases.add(of(X86_64, "getpid", 39, ALLOW));
        cases.add(of(X86_64, "read", 0, ALLOW));
        cases.add(of(X86_64, "getrlimit (aarch64's unshare number)", 97, ALLOW));
        cases.add(of(X86_64, "unshare", 272, EPERM, CLONE_NEWUSER));
        cases.add(of(X86_64, "setns", 308, EPERM));
        cases.add(of(X86_64, "mount", 165, EPERM));
        cases.add(of(X86_64, "umount2", 166, EPERM));
        cases.add(of(X86_64, "pivot_root", 155, EPERM));
        cases.add(of(X86_64, "chroot", 161, EPERM));
        cases.add(of(X86_64, "open_tree", 428, EPERM));
        cases.add(of(X86_64, "move_mount", 429, EPERM));
        cases.add(of(X86_64, "fsopen", 430, EPERM));
        cases.add(of(X86_64, "fsconfig", 431, EPERM));
        cases.add(of(X86_64, "fsmount", 432, EPERM));
        cases.add(of(X86_64, "fspick", 433, EPERM));
        cases.add(of(X86_64, "mount_setattr", 442, EPERM));
        cases.add(of(X86_64, "open_tree_attr", 467, EPERM));
        cases.add(of(X86_64, "open_by_handle_at", 304, EPERM));
        cases.add(of(X86_64, "keyctl", 250, EPERM));
        cases.add(of(X86_64, "add_key", 248, EPERM));
        cases.add(of(X86_64, "request_key", 249, EPERM));
        cases.add(of(X86_64, "bpf", 321, EPERM));
        cases.add(of(X86_64, "perf_event_open", 298, EPERM));
        cases.add(of(X86_64, "userfaultfd", 323, EPERM));
        cases.add(of(X86_64, "io_uring_setup", 425, EPERM));
        cases.add(of(X86_64, "io_uring_enter", 426, EPERM));
        cases.add(of(X86_64, "io_uring_register", 427, EPERM));
        cases.add(of(X86_64, "kexec_load", 246, EPERM));
        cases.add(of(X86_64, "kexec_file_load", 320, EPERM));
        cases.add(of(X86_64, "init_module", 175, EPERM));
        cases.add(of(X86_64, "finit_module", 313, EPERM));
        cases.add(of(X86_64, "delete_module", 176, EPERM));
        cases.add(of(X86_64, "ptrace stays allowed", 101, ALLOW));
        cases.add(of(X86_64, "clone fork", 56, ALLOW, SIGCHLD));
        cases.add(of(X86_64, "clone thread", 56, ALLOW, THREAD_FLAGS));
        cases.add(of(X86_64, "clone fork, junk in the ignored high half", 56, ALLOW, (1L << 32) | SIGCHLD));
        cases.add(of(X86_64, "clone NEWUSER", 56, EPERM, CLONE_NEWUSER | SIGCHLD));
        cases.add(of(X86_64, "clone NEWNS", 56, EPERM, CLONE_NEWNS));
        cases.add(of(X86_64, "clone NEWNET", 56, EPERM, CLONE_NEWNET));
        cases.add(of(X86_64, "clone NEWCGROUP", 56, EPERM, CLONE_NEWCGROUP));
        cases.add(of(X86_64, "clone3", 435, ENOSYS));
        cases.add(of(X86_64, "ioctl TCGETS", 16, ALLOW, 0, 0x5401));
        cases.add(of(X86_64, "ioctl FIONREAD", 16, ALLOW, 0, 0x541B));
        cases.add(of(X86_64, "ioctl TIOCSTI", 16, EPERM, 0, 0x5412));
        cases.add(of(X86_64, "ioctl TIOCLINUX", 16, EPERM, 0, 0x541C));
        cases.add(of(X86_64, "ioctl TIOCSTI with high bits", 16, EPERM, 0, (1L << 32) | 0x5412));
        cases.add(of(X86_64, "ioctl TIOCLINUX with high bits", 16, EPERM, 0, 0xFFFF_FFFF_0000_541CL));
        cases.add(of(X86_64, "ioctl TIOCSTI in the fd slot only", 16, ALLOW, 0x5412, 0x5401));
        cases.add(of(X86_64, "personality PER_LINUX", 135, ALLOW, 0));
        cases.add(of(X86_64, "personality query", 135, ALLOW, 0xFFFF_FFFFL));
        cases.add(of(X86_64, "personality PER_LINUX32", 135, ALLOW, 8));
        cases.add(of(X86_64, "personality ADDR_NO_RANDOMIZE", 135, ALLOW, 0x0040000));
        cases.add(of(X86_64, "personality READ_IMPLIES_EXEC", 135, EPERM, 0x0400000));
        cases.add(of(X86_64, "personality MMAP_PAGE_ZERO", 135, EPERM, 0x0100000));
        cases.add(of(X86_64, "personality ADDR_LIMIT_3GB", 135, EPERM, 0x8000000));
        cases.add(of(X86_64, "seccomp filter", 317, ALLOW, 1, 0));
        cases.add(of(X86_64, "seccomp filter TSYNC", 317, ALLOW, 1, 1));
        cases.add(of(X86_64, "seccomp filter NEW_LISTENER", 317, EPERM, 1, 8));
        cases.add(of(X86_64, "seccomp strict", 317, ALLOW, 0, 0));
        cases.add(of(X86_64, "seccomp get-action-avail, flags slot 8", 317, ALLOW, 2, 8));
        cases.add(of(X86_64, "x32 getpid", 0x40000000 | 39, KILL));
        cases.add(of(X86_64, "x32 unshare", 0x40000000 | 272, KILL));
        cases.add(of(X86_64, "nr -1 (tracer skip)", -1, ALLOW));
        // aarch64
        cases.add(of(AARCH64, "getpid", 172, ALLOW));
        cases.add(of(AARCH64, "syscall 272 (x86's unshare number)", 272, ALLOW));
        cases.add(of(AARCH64, "unshare", 97, EPERM));
        cases.add(of(AARCH64, "setns", 268, EPERM));
        cases.add(of(AARCH64, "mount", 40, EPERM));
        cases.add(of(AARCH64, "umount2", 39, EPERM));
        cases.add(of(AARCH64, "pivot_root", 41, EPERM));
        cases.add(of(AARCH64, "chroot", 51, EPERM));
        cases.add(of(AARCH64, "keyctl", 219, EPERM));
        cases.add(of(AARCH64, "add_key", 217, EPERM));
        cases.add(of(AARCH64, "request_key", 218, EPERM));
        cases.add(of(AARCH64, "bpf", 280, EPERM));
        cases.add(of(AARCH64, "perf_event_open", 241, EPERM));
        cases.add(of(AARCH64, "userfaultfd", 282, EPERM));
        cases.add(of(AARCH64, "io_uring_setup", 425, EPERM));
        cases.add(of(AARCH64, "kexec_load", 104, EPERM));
        cases.add(of(AARCH64, "kexec_file_load", 294, EPERM));
        cases.add(of(AARCH64, "init_module", 105, EPERM));
        cases.add(of(AARCH64, "finit_module", 273, EPERM));
        cases.add(of(AARCH64, "delete_module", 106, EPERM));
        cases.add(of(AARCH64, "open_by_handle_at", 265, EPERM));
        cases.add(of(AARCH64, "clone fork", 220, ALLOW, SIGCHLD));
        cases.add(of(AARCH64, "clone NEWPID", 220, EPERM, 0x20000000));
        cases.add(of(AARCH64, "clone3", 435, ENOSYS));
        cases.add(of(AARCH64, "ioctl TIOCSTI", 29, EPERM, 1, 0x5412));
        cases.add(of(AARCH64, "ioctl TCGETS", 29, ALLOW, 1, 0x5401));
        cases.add(of(AARCH64, "personality READ_IMPLIES_EXEC", 92, EPERM, 0x0400000));
        cases.add(of(AARCH64, "seccomp NEW_LISTENER", 277, EPERM, 1, 8));
        // Not killed as x32 would be on x86_64: an unknown number, ENOSYS as the kernel itself answers.
        cases.add(of(AARCH64, "high numbers are not x32 here", 0x40000000 | 39, ENOSYS));
        // Any other architecture has other numbers: nothing in the filter would mean what it says.
        cases.add(of(I386, "i386 getpid", 20, KILL));
        cases.add(of(I386, "i386 anything", 0, KILL));
        cases.add(of(0xC0000028 /* ARM */, "arm", 0, KILL));
        return cases.stream();
    }

    /** socket and socketpair on both arches: domain, type and protocol are their first three arguments. */
    static Stream<Arguments> socketCases() {
        List<Arguments> cases = new ArrayList<>();
        for (SocketCall call : SocketCall.values()) {
            for (int arch : List.of(X86_64, AARCH64)) {
                Table t = new Table(cases, arch, call.number(arch), call.name().toLowerCase(Locale.ROOT));
                t.add("AF_UNIX", ALLOW, AF_UNIX, SOCK_STREAM, 0);
                t.add("AF_UNIX, cloexec datagram", ALLOW, AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
                t.add("AF_INET stream", ALLOW, AF_INET, SOCK_STREAM, 0);
                t.add("AF_INET raw (the kernel asks for CAP_NET_RAW)", ALLOW, AF_INET, SOCK_RAW, 1);
                t.add("AF_INET6 datagram", ALLOW, AF_INET6, SOCK_DGRAM | SOCK_NONBLOCK, 0);
                t.add("AF_INET6 SOCK_PACKET is no alias", ALLOW, AF_INET6, SOCK_PACKET, 0);
                t.add("AF_NETLINK route", ALLOW, AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
                t.add("AF_NETLINK sock_diag", ALLOW, AF_NETLINK, SOCK_DGRAM, NETLINK_SOCK_DIAG);
                // The kernel reads an int: junk above bit 31 neither refuses an allowed family nor hides another.
                t.add("AF_INET, AF_VSOCK above bit 31", ALLOW, AF_VSOCK << 32 | AF_INET, SOCK_STREAM, 0);
                t.add("AF_VSOCK, junk above bit 31", EAFNOSUPPORT, HIGH_HALF | AF_VSOCK, SOCK_STREAM, 0);
                t.add("AF_UNIX only above bit 31", EAFNOSUPPORT, AF_UNIX << 32, SOCK_STREAM, 0);
                t.add("AF_VSOCK", EAFNOSUPPORT, AF_VSOCK, SOCK_STREAM, 0);
                t.add("AF_PACKET", EAFNOSUPPORT, AF_PACKET, SOCK_RAW, 0x0300);
                t.add("AF_BLUETOOTH", EAFNOSUPPORT, AF_BLUETOOTH, SOCK_RAW, 0);
                t.add("AF_ALG", EAFNOSUPPORT, AF_ALG, 5, 0);
                t.add("AF_KEY", EAFNOSUPPORT, AF_KEY, SOCK_RAW, 2);
                t.add("AF_XDP", EAFNOSUPPORT, AF_XDP, SOCK_RAW, 0);
                t.add("AF_CAN", EAFNOSUPPORT, AF_CAN, SOCK_RAW, 1);
                t.add("AF_TIPC", EAFNOSUPPORT, AF_TIPC, SOCK_DGRAM, 0);
                t.add("AF_RDS", EAFNOSUPPORT, AF_RDS, 5, 0);
                t.add("AF_MCTP", EAFNOSUPPORT, AF_MCTP, SOCK_DGRAM, 0);
                t.add("AF_UNSPEC", EAFNOSUPPORT, AF_UNSPEC, SOCK_STREAM, 0);
                t.add("a family no kernel has", EAFNOSUPPORT, 4711, SOCK_STREAM, 0);
                t.add("family -1", EAFNOSUPPORT, 0xFFFF_FFFFL, SOCK_STREAM, 0);
                // socket(AF_INET, SOCK_PACKET) is an AF_PACKET socket in the kernel.
                t.add("AF_INET SOCK_PACKET", EAFNOSUPPORT, AF_INET, SOCK_PACKET, 0x0300);
                t.add("AF_INET SOCK_PACKET, nonblocking, cloexec", EAFNOSUPPORT, AF_INET, SOCK_PACKET | SOCK_FLAGS, 0);
                t.add("AF_INET SOCK_PACKET, junk above bit 31", EAFNOSUPPORT, AF_INET, HIGH_HALF | SOCK_PACKET, 0);
                t.add("AF_INET, SOCK_PACKET only above bit 31", ALLOW, AF_INET, SOCK_PACKET << 32 | SOCK_DGRAM, 0);
                // Netlink: route and sock_diag only; the kernel's own errno for a protocol it does not have.
                t.add("AF_NETLINK audit", EPROTONOSUPPORT, AF_NETLINK, SOCK_RAW, NETLINK_AUDIT);
                t.add("AF_NETLINK netfilter", EPROTONOSUPPORT, AF_NETLINK, SOCK_RAW, NETLINK_NETFILTER);
                t.add("AF_NETLINK uevent", EPROTONOSUPPORT, AF_NETLINK, SOCK_DGRAM, NETLINK_KOBJECT_UEVENT);
                t.add("AF_NETLINK generic", EPROTONOSUPPORT, AF_NETLINK, SOCK_RAW, NETLINK_GENERIC);
                t.add("AF_NETLINK protocol -1", EPROTONOSUPPORT, AF_NETLINK, SOCK_RAW, 0xFFFF_FFFFL);
                t.add(
                        "AF_NETLINK audit, junk above 31",
                        EPROTONOSUPPORT,
                        AF_NETLINK,
                        SOCK_RAW,
                        HIGH_HALF | NETLINK_AUDIT);
                t.add("AF_NETLINK route, audit above bit 31", ALLOW, AF_NETLINK, SOCK_RAW, NETLINK_AUDIT << 32);
                t.add("AF_NETLINK, audit in the type slot", ALLOW, AF_NETLINK, NETLINK_AUDIT, NETLINK_ROUTE);
            }
        }
        // The other arch's socket numbers are other calls (aarch64's 53 is fchmodat, x86_64's 198 lremovexattr).
        cases.add(of(
                X86_64,
                "x86_64 198 (lremovexattr, aarch64's socket) with AF_VSOCK",
                198,
                ALLOW,
                AF_VSOCK,
                SOCK_STREAM,
                0));
        cases.add(of(
                AARCH64, "aarch64 53 (fchmodat, x86_64's socketpair) with AF_VSOCK", 53, ALLOW, AF_VSOCK, SOCK_STREAM));
        return cases.stream();
    }

    private enum SocketCall {
        SOCKET(41, 198),
        SOCKETPAIR(53, 199);

        private final int x86;
        private final int aarch64;

        SocketCall(int x86, int aarch64) {
            this.x86 = x86;
            this.aarch64 = aarch64;
        }

        int number(int arch) {
            return arch == X86_64 ? x86 : aarch64;
        }
    }

    /** A call that sets or creates with a mode: its numbers (-1: the arch does not have it) and argument slots. */
    private record ModeCall(String name, int x86, int aarch64, int modeArg, int flagsArg) {
        static final List<ModeCall> ALL = List.of(
                new ModeCall("chmod", 90, -1, 1, -1),
                new ModeCall("fchmod", 91, 52, 1, -1),
                new ModeCall("fchmodat", 268, 53, 2, -1),
                new ModeCall("fchmodat2", 452, 452, 2, -1),
                new ModeCall("creat", 85, -1, 1, -1),
                new ModeCall("mkdir", 83, -1, 1, -1),
                new ModeCall("mkdirat", 258, 34, 2, -1),
                new ModeCall("mknod", 133, -1, 1, -1),
                new ModeCall("mknodat", 259, 33, 2, -1),
                new ModeCall("open", 2, -1, 2, 1),
                new ModeCall("openat", 257, 56, 3, 2));

        long[] args(long flags, long mode) {
            // Setuid bits in the other slots, so that a check of the wrong argument shows.
            long[] args = new long[] {06000, 06000, 06000, 06000, 06000, 06000};
            args[modeArg] = mode;
            if (flagsArg >= 0) {
                args[flagsArg] = flags;
            }
            return args;
        }
    }

    static Stream<Arguments> modeCases() {
        List<Arguments> cases = new ArrayList<>();
        long creates = O_CREAT | O_WRONLY | O_TRUNC;
        for (ModeCall call : ModeCall.ALL) {
            for (int arch : List.of(X86_64, AARCH64)) {
                int nr = arch == X86_64 ? call.x86() : call.aarch64();
                if (nr < 0) {
                    continue;
                }
                Table t = new Table(cases, arch, nr, call.name());
                t.add("0755", ALLOW, call.args(creates, 0755));
                t.add("0644", ALLOW, call.args(creates, 0644));
                t.add("01777 (sticky)", ALLOW, call.args(creates, 01777));
                t.add("0", ALLOW, call.args(creates, 0));
                t.add("04755", EPERM, call.args(creates, 04755));
                t.add("02755", EPERM, call.args(creates, 02755));
                t.add("06755", EPERM, call.args(creates, 06755));
                t.add("04000 alone", EPERM, call.args(creates, 04000));
                t.add("02000 alone", EPERM, call.args(creates, 02000));
                t.add("S_IFREG | 04755", EPERM, call.args(creates, 0100000 | 04755));
                // The kernel reads the low bits only: junk above bit 31 neither hides setuid nor refuses 0755.
                t.add("04755, junk above bit 31", EPERM, call.args(creates, HIGH_HALF | 04755));
                t.add("02000, bit 32", EPERM, call.args(creates, 1L << 32 | 02000));
                t.add("0755, setuid and setgid above bit 31", ALLOW, call.args(creates, 06000L << 32 | 0755));
                t.add("0644, every bit above 31", ALLOW, call.args(creates, HIGH_HALF | 0644));
                if (call.flagsArg() >= 0) {
                    // The mode only counts when the call creates: without O_CREAT or O_TMPFILE it is ignored junk.
                    long tmpfile = O_TMPFILE.get(arch) | O_WRONLY;
                    t.add("O_RDONLY, 04755 ignored", ALLOW, call.args(0, 04755));
                    t.add("O_WRONLY|O_TRUNC, 06777 ignored", ALLOW, call.args(O_WRONLY | O_TRUNC, 06777));
                    t.add("O_TMPFILE 04755", EPERM, call.args(tmpfile, 04755));
                    t.add("__O_TMPFILE bit 02755", EPERM, call.args(O_TMPFILE_BIT, 02755));
                    t.add("O_TMPFILE 0600", ALLOW, call.args(tmpfile, 0600));
                    t.add("O_CREAT, junk above bit 31, 04755", EPERM, call.args(HIGH_HALF | O_CREAT, 04755));
                    t.add("O_CREAT only above bit 31, 04755", ALLOW, call.args(O_CREAT << 32, 04755));
                }
            }
        }
        // memfd_secret: memory the kernel reads for a path or argv and the audit supervisor cannot.
        cases.add(of(X86_64, "x86_64 memfd_secret", 447, EPERM, 0));
        cases.add(of(AARCH64, "aarch64 memfd_secret", 447, EPERM, 0));
        // Newer than the filter: neither the deny list nor the audit knows what it does. The newest known passes.
        cases.add(of(X86_64, "x86_64 file_setattr (newest known)", 469, ALLOW, 0));
        cases.add(of(AARCH64, "aarch64 file_setattr (newest known)", 469, ALLOW, 0));
        cases.add(of(X86_64, "x86_64 470 (unknown)", 470, ENOSYS, 0));
        cases.add(of(AARCH64, "aarch64 470 (unknown)", 470, ENOSYS, 0));
        cases.add(of(AARCH64, "aarch64 1000 (unknown)", 1000, ENOSYS, 0));
        cases.add(of(AARCH64, "aarch64 -1 (a tracer's skip)", -1, ALLOW, 0));
        // openat2 keeps flags and mode in memory, which seccomp cannot read: ENOSYS sends libraries to openat.
        cases.add(of(X86_64, "x86_64 openat2", 437, ENOSYS, 0, 0, 0, 24));
        cases.add(of(AARCH64, "aarch64 openat2", 437, ENOSYS, 0, 0, 0, 24));
        // aarch64 has no chmod, creat, mkdir, mknod or open: x86_64's numbers are other calls there.
        cases.add(of(AARCH64, "aarch64 90 (capget, x86_64's chmod)", 90, ALLOW, 0, 04755));
        cases.add(of(AARCH64, "aarch64 83 (fdatasync, x86_64's mkdir)", 83, ALLOW, 0, 02755));
        cases.add(of(AARCH64, "aarch64 2 (io_submit, x86_64's open)", 2, ALLOW, 0, O_CREAT, 04755));
        // and the other way round: aarch64's numbers mean other calls on x86_64.
        cases.add(of(X86_64, "x86_64 53 (socketpair, aarch64's fchmodat)", 53, ALLOW, AF_UNIX, 1, 04755));
        cases.add(of(X86_64, "x86_64 56 (clone, aarch64's openat)", 56, ALLOW, SIGCHLD, 0, O_CREAT, 04755));
        return cases.stream();
    }

    /** Rows of one call on one arch, named "arch call case". */
    private record Table(List<Arguments> cases, int arch, int nr, String call) {
        void add(String name, int expected, long... args) {
            cases.add(of(arch, archName(arch) + " " + call + " " + name, nr, expected, args));
        }
    }

    @ParameterizedTest(name = "{1}")
    @MethodSource({"cases", "socketCases", "modeCases"})
    void filterDecidesLikeTheTable(int arch, String name, int nr, long[] args, int expected) {
        assertEquals(
                Integer.toHexString(expected),
                Integer.toHexString(FILTER.run(arch, nr, args)),
                name + " (nr " + nr + ")");
    }

    @Test
    void programIsAWellFormedSockFilterArrayThatChecksTheArchitectureFirst() {
        byte[] program = SeccompFilter.program();
        assertEquals(0, program.length % 8);
        assertTrue(program.length / 8 <= 4096, "BPF_MAXINSNS");
        // ld [4]: seccomp_data.arch
        assertEquals(BpfAssembler.LD_W_ABS, program[0] & 0xFF);
        assertEquals(4, program[4]);
    }

    @Test
    void onlyFourFamiliesAndTwoNetlinkProtocolsGetASocket() {
        for (int arch : List.of(X86_64, AARCH64)) {
            for (SocketCall call : SocketCall.values()) {
                int nr = call.number(arch);
                for (long domain = 0; domain <= 0x1_0000; domain++) {
                    long family = domain;
                    int expected =
                            Set.of(AF_UNIX, AF_INET, AF_INET6, AF_NETLINK).contains(family) ? ALLOW : EAFNOSUPPORT;
                    assertEquals(expected, FILTER.run(arch, nr, domain, SOCK_STREAM, 0), () -> "family " + family);
                }
                for (long protocol = 0; protocol <= 0x1_0000; protocol++) {
                    long netlink = protocol;
                    int expected = protocol == NETLINK_ROUTE || protocol == NETLINK_SOCK_DIAG ? ALLOW : EPROTONOSUPPORT;
                    assertEquals(
                            expected, FILTER.run(arch, nr, AF_NETLINK, SOCK_RAW, protocol), () -> "netlink " + netlink);
                }
            }
        }
    }

    @Test
    void anAfInetSocketIsRefusedOnlyWhenItsTypeIsSockPacket() {
        for (long flags : new long[] {0, SOCK_NONBLOCK, SOCK_CLOEXEC, SOCK_FLAGS}) {
            for (long type = 0; type <= 0xF; type++) {
                int expected = type == SOCK_PACKET ? EAFNOSUPPORT : ALLOW;
                long argument = type | flags;
                assertEquals(
                        expected,
                        FILTER.run(X86_64, 41, AF_INET, argument, 0),
                        () -> "type 0x" + Long.toHexString(argument));
                assertEquals(
                        expected,
                        FILTER.run(AARCH64, 198, AF_INET, argument, 0),
                        () -> "type 0x" + Long.toHexString(argument));
            }
        }
    }

    @Test
    void everyModeWithSetuidOrSetgidIsRefusedAndNoOtherMode() {
        for (ModeCall call : ModeCall.ALL) {
            for (long mode = 0; mode <= 0177777; mode++) {
                int expected = (mode & 06000) != 0 ? EPERM : ALLOW;
                long[] args = call.args(O_CREAT | O_WRONLY, mode);
                String what = call.name() + " mode 0" + Long.toOctalString(mode);
                assertEquals(expected, FILTER.run(X86_64, call.x86(), args), what);
                if (call.aarch64() >= 0) {
                    assertEquals(expected, FILTER.run(AARCH64, call.aarch64(), args), what);
                }
            }
        }
    }

    @Test
    void everyRuleHasANumberOnEveryArchitectureOrIsDeclaredAbsent() {
        for (String name : SeccompFilter.RULES.keySet()) {
            assertTrue(SeccompArch.X86_64.number(name).isPresent(), name);
            boolean legacy = Set.of("open", "creat", "mkdir", "chmod", "mknod").contains(name);
            assertEquals(!legacy, SeccompArch.AARCH64.number(name).isPresent(), name);
        }
        assertEquals(OptionalInt.of(56), SeccompArch.AARCH64.number("openat"));
        assertThrows(IllegalArgumentException.class, () -> SeccompArch.AARCH64.number("no_such_call"));
    }

    private static String archName(int arch) {
        return arch == X86_64 ? "x86_64" : "aarch64";
    }

    private static Arguments of(int arch, String name, int nr, int expected, long... args) {
        return Arguments.of(arch, name, nr, args, expected);
    }
}

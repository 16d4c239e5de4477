package dev.agentjail.jail;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
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

    private static final long SIGCHLD = 17;
    private static final long THREAD_FLAGS = 0x3d0f00;
    private static final long CLONE_NEWUSER = 0x10000000;
    private static final long CLONE_NEWNS = 0x00020000;
    private static final long CLONE_NEWNET = 0x40000000;
    private static final long CLONE_NEWCGROUP = 0x02000000;

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
        cases.add(of(AARCH64, "high numbers are not x32 here", 0x40000000 | 39, ALLOW));
        // Any other architecture has other numbers: nothing in the filter would mean what it says.
        cases.add(of(I386, "i386 getpid", 20, KILL));
        cases.add(of(I386, "i386 anything", 0, KILL));
        cases.add(of(0xC0000028 /* ARM */, "arm", 0, KILL));
        return cases.stream();
    }

    @ParameterizedTest(name = "{1}")
    @MethodSource("cases")
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
    void everyRuleHasANumberOnEveryArchitecture() {
        for (SeccompArch arch : SeccompArch.values()) {
            SeccompFilter.RULES.keySet().forEach(arch::number);
        }
    }

    private static Arguments of(int arch, String name, int nr, int expected, long... args) {
        return Arguments.of(arch, name, nr, args, expected);
    }
}

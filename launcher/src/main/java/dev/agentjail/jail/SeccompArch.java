package dev.agentjail.jail;

import java.util.Map;
import java.util.OptionalInt;
import java.util.Set;

/** The two architectures the seccomp filter knows, with the numbers of the syscalls it treats specially. */
enum SeccompArch {
    /** x86_64; numbers from arch/x86/entry/syscalls/syscall_64.tbl. */
    X86_64(
            0xC000003E,
            Map.ofEntries(
                    Map.entry("open", 2),
                    Map.entry("ioctl", 16),
                    Map.entry("socket", 41),
                    Map.entry("socketpair", 53),
                    Map.entry("clone", 56),
                    Map.entry("mkdir", 83),
                    Map.entry("creat", 85),
                    Map.entry("chmod", 90),
                    Map.entry("fchmod", 91),
                    Map.entry("mknod", 133),
                    Map.entry("personality", 135),
                    Map.entry("pivot_root", 155),
                    Map.entry("chroot", 161),
                    Map.entry("mount", 165),
                    Map.entry("umount2", 166),
                    Map.entry("init_module", 175),
                    Map.entry("delete_module", 176),
                    Map.entry("kexec_load", 246),
                    Map.entry("add_key", 248),
                    Map.entry("request_key", 249),
                    Map.entry("keyctl", 250),
                    Map.entry("openat", 257),
                    Map.entry("mkdirat", 258),
                    Map.entry("mknodat", 259),
                    Map.entry("fchmodat", 268),
                    Map.entry("unshare", 272),
                    Map.entry("perf_event_open", 298),
                    Map.entry("open_by_handle_at", 304),
                    Map.entry("setns", 308),
                    Map.entry("finit_module", 313),
                    Map.entry("seccomp", 317),
                    Map.entry("kexec_file_load", 320),
                    Map.entry("bpf", 321),
                    Map.entry("userfaultfd", 323),
                    Map.entry("io_uring_setup", 425),
                    Map.entry("io_uring_enter", 426),
                    Map.entry("io_uring_register", 427),
                    Map.entry("open_tree", 428),
                    Map.entry("move_mount", 429),
                    Map.entry("fsopen", 430),
                    Map.entry("fsconfig", 431),
                    Map.entry("fsmount", 432),
                    Map.entry("fspick", 433),
                    Map.entry("clone3", 435),
                    Map.entry("openat2", 437),
                    Map.entry("mount_setattr", 442),
                    Map.entry("fchmodat2", 452),
                    Map.entry("open_tree_attr", 467),
                    Map.entry("memfd_secret", 447)),
            Set.of()),
    /** aarch64; numbers from include/uapi/asm-generic/unistd.h, which has only the *at forms of the path calls. */
    AARCH64(
            0xC00000B7,
            Map.ofEntries(
                    Map.entry("ioctl", 29),
                    Map.entry("mknodat", 33),
                    Map.entry("mkdirat", 34),
                    Map.entry("umount2", 39),
                    Map.entry("mount", 40),
                    Map.entry("pivot_root", 41),
                    Map.entry("chroot", 51),
                    Map.entry("fchmod", 52),
                    Map.entry("fchmodat", 53),
                    Map.entry("openat", 56),
                    Map.entry("personality", 92),
                    Map.entry("unshare", 97),
                    Map.entry("kexec_load", 104),
                    Map.entry("init_module", 105),
                    Map.entry("delete_module", 106),
                    Map.entry("add_key", 217),
                    Map.entry("request_key", 218),
                    Map.entry("socket", 198),
                    Map.entry("socketpair", 199),
                    Map.entry("keyctl", 219),
                    Map.entry("clone", 220),
                    Map.entry("perf_event_open", 241),
                    Map.entry("open_by_handle_at", 265),
                    Map.entry("setns", 268),
                    Map.entry("finit_module", 273),
                    Map.entry("seccomp", 277),
                    Map.entry("bpf", 280),
                    Map.entry("userfaultfd", 282),
                    Map.entry("kexec_file_load", 294),
                    Map.entry("io_uring_setup", 425),
                    Map.entry("io_uring_enter", 426),
                    Map.entry("io_uring_register", 427),
                    Map.entry("open_tree", 428),
                    Map.entry("move_mount", 429),
                    Map.entry("fsopen", 430),
                    Map.entry("fsconfig", 431),
                    Map.entry("fsmount", 432),
                    Map.entry("fspick", 433),
                    Map.entry("clone3", 435),
                    Map.entry("openat2", 437),
                    Map.entry("mount_setattr", 442),
                    Map.entry("fchmodat2", 452),
                    Map.entry("open_tree_attr", 467),
                    Map.entry("memfd_secret", 447)),
            Set.of("open", "creat", "mkdir", "chmod", "mknod"));

    /** AUDIT_ARCH_* as seen in seccomp_data.arch. */
    final int audit;

    private final Map<String, Integer> numbers;

    /** Syscalls this architecture never had; any other name without a number is a mistake. */
    private final Set<String> absent;

    SeccompArch(int audit, Map<String, Integer> numbers, Set<String> absent) {
        this.audit = audit;
        this.numbers = numbers;
        this.absent = absent;
    }

    /** The number of {@code syscall}, or empty if this architecture does not have it. */
    OptionalInt number(String syscall) {
        Integer nr = numbers.get(syscall);
        if (nr != null) {
            return OptionalInt.of(nr);
        }
        if (absent.contains(syscall)) {
            return OptionalInt.empty();
        }
        throw new IllegalArgumentException("no syscall number for " + syscall + " on " + this);
    }
}

package dev.agentjail.jail;

import java.util.Map;

/** The two architectures the seccomp filter knows, with the numbers of the syscalls it treats specially. */
enum SeccompArch {
    /** x86_64; numbers from arch/x86/entry/syscalls/syscall_64.tbl. */
    X86_64(
            0xC000003E,
            Map.ofEntries(
                    Map.entry("ioctl", 16),
                    Map.entry("clone", 56),
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
                    Map.entry("mount_setattr", 442),
                    Map.entry("open_tree_attr", 467))),
    /** aarch64; numbers from include/uapi/asm-generic/unistd.h. */
    AARCH64(
            0xC00000B7,
            Map.ofEntries(
                    Map.entry("ioctl", 29),
                    Map.entry("umount2", 39),
                    Map.entry("mount", 40),
                    Map.entry("pivot_root", 41),
                    Map.entry("chroot", 51),
                    Map.entry("personality", 92),
                    Map.entry("unshare", 97),
                    Map.entry("kexec_load", 104),
                    Map.entry("init_module", 105),
                    Map.entry("delete_module", 106),
                    Map.entry("add_key", 217),
                    Map.entry("request_key", 218),
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
                    Map.entry("mount_setattr", 442),
                    Map.entry("open_tree_attr", 467)));

    /** AUDIT_ARCH_* as seen in seccomp_data.arch. */
    final int audit;

    private final Map<String, Integer> numbers;

    SeccompArch(int audit, Map<String, Integer> numbers) {
        this.audit = audit;
        this.numbers = numbers;
    }

    int number(String syscall) {
        Integer nr = numbers.get(syscall);
        if (nr == null) {
            throw new IllegalArgumentException("no syscall number for " + syscall + " on " + this);
        }
        return nr;
    }
}

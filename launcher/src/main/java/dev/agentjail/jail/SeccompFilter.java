package dev.agentjail.jail;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Generates the jail's seccomp program: the raw {@code struct sock_filter[]} that bwrap's {@code --seccomp FD}
 * loads. A deny list on top of the namespaces: it closes the kernel interfaces an agent never needs and that
 * escapes go through (new namespaces, mounts, keyrings, BPF, io_uring, module loading, terminal injection).
 */
public final class SeccompFilter {
    static final int RET_KILL_PROCESS = 0x80000000;
    static final int RET_ERRNO = 0x00050000;
    static final int RET_ALLOW = 0x7FFF0000;
    static final int EPERM = 1;
    static final int ENOSYS = 38;

    /** seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6] (little-endian on both arches). */
    static final int OFFSET_NR = 0;

    static final int OFFSET_ARCH = 4;

    /** clone(2) flags that create a namespace. */
    static final int CLONE_NAMESPACE_FLAGS = 0x00020000 // CLONE_NEWNS
            | 0x02000000 // CLONE_NEWCGROUP
            | 0x04000000 // CLONE_NEWUTS
            | 0x08000000 // CLONE_NEWIPC
            | 0x10000000 // CLONE_NEWUSER
            | 0x20000000 // CLONE_NEWPID
            | 0x40000000; // CLONE_NEWNET

    static final int TIOCSTI = 0x5412;
    static final int TIOCLINUX = 0x541C;

    /** personality(0xffffffff) only queries the current persona. */
    static final int PERSONALITY_QUERY = 0xFFFFFFFF;

    /**
     * Persona flags that weaken memory protections or fake an old ABI: MMAP_PAGE_ZERO, ADDR_COMPAT_LAYOUT,
     * READ_IMPLIES_EXEC, ADDR_LIMIT_32BIT, SHORT_INODE, WHOLE_SECONDS, STICKY_TIMEOUTS, ADDR_LIMIT_3GB.
     * ADDR_NO_RANDOMIZE stays allowed: debuggers use it, and it only affects the jail's own processes.
     */
    static final int PERSONALITY_UNSAFE =
            0x0100000 | 0x0200000 | 0x0400000 | 0x0800000 | 0x1000000 | 0x2000000 | 0x4000000 | 0x8000000;

    static final int SECCOMP_SET_MODE_FILTER = 1;
    static final int SECCOMP_FILTER_FLAG_NEW_LISTENER = 1 << 3;

    /** x32 syscalls are the x86_64 numbers with this bit set; nr -1 (a tracer's "skip") stays harmless. */
    static final int X32_SYSCALL_BIT = 0x40000000;

    /** What the filter does with one syscall; the argument checks look at the low 32 bits, as the kernel does. */
    enum Rule {
        /** Always fail with EPERM. */
        DENY,
        /** Fail with ENOSYS, so that libc falls back to an older syscall the filter can inspect. */
        NOT_IMPLEMENTED,
        /** EPERM if the flags ask for a new namespace. */
        CLONE_FLAGS,
        /** EPERM for TIOCSTI and TIOCLINUX. */
        IOCTL_COMMAND,
        /** EPERM for unsafe persona flags. */
        PERSONALITY_FLAGS,
        /** EPERM for a filter that asks for a user-notification listener. */
        SECCOMP_LISTENER
    }

    /** The syscalls the filter looks at, in the order of the check chain. */
    static final Map<String, Rule> RULES = rules();

    private static final String KILL = "kill";
    private static final String ALLOW = "allow";
    private static final String EPERM_LABEL = "eperm";
    private static final String ENOSYS_LABEL = "enosys";

    private SeccompFilter() {}

    /** The program bwrap reads from its {@code --seccomp} descriptor. */
    public static byte[] program() {
        BpfAssembler bpf = new BpfAssembler();
        // An unknown architecture has different syscall numbers: nothing below would mean what it says.
        bpf.load(OFFSET_ARCH);
        bpf.jumpIfEqual(SeccompArch.X86_64.audit, SeccompArch.X86_64.name(), null);
        bpf.jumpIfEqual(SeccompArch.AARCH64.audit, SeccompArch.AARCH64.name(), KILL);
        for (SeccompArch arch : List.of(SeccompArch.X86_64, SeccompArch.AARCH64)) {
            bpf.label(arch.name()).load(OFFSET_NR);
            if (arch == SeccompArch.X86_64) {
                bpf.jumpIfAtLeast(X32_SYSCALL_BIT, "x32", null);
            }
            RULES.forEach((name, rule) -> bpf.jumpIfEqual(arch.number(name), target(rule), null));
            bpf.ret(RET_ALLOW);
        }
        bpf.label("x32").jumpIfEqual(-1, ALLOW, KILL);
        argumentChecks(bpf);
        bpf.label(KILL).ret(RET_KILL_PROCESS);
        bpf.label(EPERM_LABEL).ret(RET_ERRNO | EPERM);
        bpf.label(ENOSYS_LABEL).ret(RET_ERRNO | ENOSYS);
        bpf.label(ALLOW).ret(RET_ALLOW);
        return bpf.assemble();
    }

    /** Offset of the low 32 bits of syscall argument {@code index}; the kernel ignores the high half of these. */
    static int argLow(int index) {
        return 16 + 8 * index;
    }

    private static void argumentChecks(BpfAssembler bpf) {
        // The same on both arches: flags are clone's first argument except on s390, which we do not support.
        bpf.label(Rule.CLONE_FLAGS.name()).load(argLow(0));
        bpf.jumpIfAnySet(CLONE_NAMESPACE_FLAGS, EPERM_LABEL, ALLOW);
        // ioctl's cmd is an unsigned int: comparing 64 bits would let TIOCSTI | 1L << 32 through (CVE-2019-10063).
        bpf.label(Rule.IOCTL_COMMAND.name()).load(argLow(1));
        bpf.jumpIfEqual(TIOCSTI, EPERM_LABEL, null);
        bpf.jumpIfEqual(TIOCLINUX, EPERM_LABEL, ALLOW);
        bpf.label(Rule.PERSONALITY_FLAGS.name()).load(argLow(0));
        bpf.jumpIfEqual(PERSONALITY_QUERY, ALLOW, null);
        bpf.jumpIfAnySet(PERSONALITY_UNSAFE, EPERM_LABEL, ALLOW);
        bpf.label(Rule.SECCOMP_LISTENER.name()).load(argLow(0));
        bpf.jumpIfEqual(SECCOMP_SET_MODE_FILTER, null, ALLOW);
        bpf.load(argLow(1));
        bpf.jumpIfAnySet(SECCOMP_FILTER_FLAG_NEW_LISTENER, EPERM_LABEL, ALLOW);
    }

    private static String target(Rule rule) {
        return switch (rule) {
            case DENY -> EPERM_LABEL;
            case NOT_IMPLEMENTED -> ENOSYS_LABEL;
            default -> rule.name();
        };
    }

    private static Map<String, Rule> rules() {
        Map<String, Rule> rules = new LinkedHashMap<>();
        for (String name : List.of(
                // namespaces and mounts
                "unshare",
                "setns",
                "mount",
                "umount2",
                "pivot_root",
                "chroot",
                "open_tree",
                "open_tree_attr",
                "move_mount",
                "fsopen",
                "fsconfig",
                "fsmount",
                "fspick",
                "mount_setattr",
                "open_by_handle_at",
                // kernel keyrings
                "keyctl",
                "add_key",
                "request_key",
                // BPF, perf, userfaultfd, io_uring (which creates sockets and files outside any syscall filter)
                "bpf",
                "perf_event_open",
                "userfaultfd",
                "io_uring_setup",
                "io_uring_enter",
                "io_uring_register",
                // kexec and modules
                "kexec_load",
                "kexec_file_load",
                "init_module",
                "finit_module",
                "delete_module")) {
            rules.put(name, Rule.DENY);
        }
        rules.put("clone", Rule.CLONE_FLAGS);
        // clone3 passes its flags in memory, which seccomp cannot read.
        rules.put("clone3", Rule.NOT_IMPLEMENTED);
        rules.put("ioctl", Rule.IOCTL_COMMAND);
        rules.put("personality", Rule.PERSONALITY_FLAGS);
        rules.put("seccomp", Rule.SECCOMP_LISTENER);
        return Collections.unmodifiableMap(rules);
    }
}

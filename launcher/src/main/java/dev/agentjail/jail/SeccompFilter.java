package dev.agentjail.jail;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Generates the jail's seccomp program: the raw {@code struct sock_filter[]} that bwrap's {@code --seccomp FD}
 * loads. A deny list on top of the namespaces: it closes the kernel interfaces an agent never needs and that
 * escapes go through (new namespaces, mounts, keyrings, BPF, io_uring, module loading, terminal injection), allows
 * sockets of four families only, and refuses setuid and setgid modes.
 */
public final class SeccompFilter {
    static final int RET_KILL_PROCESS = 0x80000000;
    static final int RET_ERRNO = 0x00050000;
    static final int RET_ALLOW = 0x7FFF0000;
    static final int EPERM = 1;
    static final int ENOSYS = 38;
    static final int EPROTONOSUPPORT = 93;
    static final int EAFNOSUPPORT = 97;

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

    /** The socket families a jail may create; the rest (AF_VSOCK, AF_PACKET, AF_ALG, any number) get EAFNOSUPPORT. */
    static final int AF_UNIX = 1;

    static final int AF_INET = 2;
    static final int AF_INET6 = 10;
    static final int AF_NETLINK = 16;

    /** The netlink protocols a jail may open: interface and route queries (getaddrinfo's AI_ADDRCONFIG), and ss. */
    static final int NETLINK_ROUTE = 0;

    static final int NETLINK_SOCK_DIAG = 4;

    /**
     * socket(AF_INET, SOCK_PACKET) is the obsolete spelling of an AF_PACKET socket (net/socket.c). The type is the
     * low four bits of the argument; SOCK_NONBLOCK and SOCK_CLOEXEC sit above them.
     */
    static final int SOCK_PACKET = 10;

    static final int SOCK_TYPE_MASK = 0xF;

    /**
     * S_ISUID | S_ISGID. A jail started by root is kernel uid 0 on the host's files: a setuid-root binary it left in
     * the project would be a root shell for whoever runs it outside.
     */
    static final int SETID_BITS = 04000 | 02000;

    /** Open flags with which the kernel reads the mode: O_CREAT, and __O_TMPFILE (the same on x86_64 and aarch64). */
    static final int OPEN_CREATES = 0100 | 020000000;

    /**
     * The first syscall number this filter does not know, the same on x86_64 and aarch64 since 5.x's unified table:
     * 469 ({@code file_setattr}, Linux 6.17) is the newest it and the audit know.
     */
    static final int FIRST_UNKNOWN_SYSCALL = 470;

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
        SECCOMP_LISTENER,
        /** EAFNOSUPPORT outside the allowed families, EPROTONOSUPPORT for other netlink protocols. */
        SOCKET_FAMILY,
        /** EPERM for a setuid or setgid mode in the second argument: chmod(path, mode), fchmod, creat, mkdir, mknod. */
        MODE_SECOND_ARG,
        /** The same in the third argument: fchmodat(dirfd, path, mode), fchmodat2, mkdirat, mknodat. */
        MODE_THIRD_ARG,
        /** open(path, flags, mode): the mode counts only when the flags create a file. */
        OPEN_MODE,
        /** openat(dirfd, path, flags, mode). */
        OPENAT_MODE
    }

    /** The syscalls the filter looks at, in the order of the check chain. */
    static final Map<String, Rule> RULES = rules();

    private static final String KILL = "kill";
    private static final String ALLOW = "allow";
    private static final String EPERM_LABEL = "eperm";
    private static final String ENOSYS_LABEL = "enosys";
    private static final String EAFNOSUPPORT_LABEL = "eafnosupport";
    private static final String EPROTONOSUPPORT_LABEL = "eprotonosupport";
    private static final String NETLINK_LABEL = "netlink";

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
            } else {
                bpf.jumpIfEqual(-1, ALLOW, null);
            }
            // A syscall newer than this filter knows could change files or namespaces in a way neither the deny
            // list nor the audit covers (file_setattr came with 6.17): ENOSYS, as an older kernel answers.
            bpf.jumpIfAtLeast(FIRST_UNKNOWN_SYSCALL, ENOSYS_LABEL, null);
            RULES.forEach((name, rule) -> arch.number(name).ifPresent(nr -> bpf.jumpIfEqual(nr, target(rule), null)));
            bpf.ret(RET_ALLOW);
        }
        bpf.label("x32").jumpIfEqual(-1, ALLOW, KILL);
        argumentChecks(bpf);
        bpf.label(KILL).ret(RET_KILL_PROCESS);
        bpf.label(EPERM_LABEL).ret(RET_ERRNO | EPERM);
        bpf.label(ENOSYS_LABEL).ret(RET_ERRNO | ENOSYS);
        bpf.label(EAFNOSUPPORT_LABEL).ret(RET_ERRNO | EAFNOSUPPORT);
        bpf.label(EPROTONOSUPPORT_LABEL).ret(RET_ERRNO | EPROTONOSUPPORT);
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
        socketChecks(bpf);
        // The kernel reads these modes as umode_t and the flags as int: the low 32 bits are all there is.
        bpf.label(Rule.MODE_SECOND_ARG.name());
        setidMode(bpf, 1);
        bpf.label(Rule.MODE_THIRD_ARG.name());
        setidMode(bpf, 2);
        bpf.label(Rule.OPEN_MODE.name()).load(argLow(1));
        bpf.jumpIfAnySet(OPEN_CREATES, null, ALLOW);
        setidMode(bpf, 2);
        bpf.label(Rule.OPENAT_MODE.name()).load(argLow(2));
        bpf.jumpIfAnySet(OPEN_CREATES, null, ALLOW);
        setidMode(bpf, 3);
    }

    /** socket(domain, type, protocol) and socketpair(domain, type, protocol, sv): an allow list of families. */
    private static void socketChecks(BpfAssembler bpf) {
        bpf.label(Rule.SOCKET_FAMILY.name()).load(argLow(0));
        bpf.jumpIfEqual(AF_UNIX, ALLOW, null);
        bpf.jumpIfEqual(AF_INET6, ALLOW, null);
        bpf.jumpIfEqual(AF_NETLINK, NETLINK_LABEL, null);
        bpf.jumpIfEqual(AF_INET, null, EAFNOSUPPORT_LABEL);
        bpf.load(argLow(1));
        // type & 0xF == SOCK_PACKET (0b1010) without an ALU: none of its clear bits set, both of its set bits set.
        bpf.jumpIfAnySet(SOCK_TYPE_MASK & ~SOCK_PACKET, ALLOW, null);
        bpf.jumpIfAnySet(SOCK_PACKET & 0b0010, null, ALLOW);
        bpf.jumpIfAnySet(SOCK_PACKET & 0b1000, EAFNOSUPPORT_LABEL, ALLOW);
        // The kernel's own answer for a netlink protocol it does not have.
        bpf.label(NETLINK_LABEL).load(argLow(2));
        bpf.jumpIfEqual(NETLINK_ROUTE, ALLOW, null);
        bpf.jumpIfEqual(NETLINK_SOCK_DIAG, ALLOW, EPROTONOSUPPORT_LABEL);
    }

    /** EPERM if the mode in argument {@code index} has S_ISUID or S_ISGID, else allow. */
    private static void setidMode(BpfAssembler bpf, int index) {
        bpf.load(argLow(index));
        bpf.jumpIfAnySet(SETID_BITS, EPERM_LABEL, ALLOW);
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
                // memory that only its process can see: the kernel reads a path or argv from it, the audit
                // supervisor's /proc/PID/mem cannot, and the call would run unrecorded or misnamed
                "memfd_secret",
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
        rules.put("socket", Rule.SOCKET_FAMILY);
        rules.put("socketpair", Rule.SOCKET_FAMILY);
        for (String name : List.of("chmod", "fchmod", "creat", "mkdir", "mknod")) {
            rules.put(name, Rule.MODE_SECOND_ARG);
        }
        for (String name : List.of("fchmodat", "fchmodat2", "mkdirat", "mknodat")) {
            rules.put(name, Rule.MODE_THIRD_ARG);
        }
        rules.put("open", Rule.OPEN_MODE);
        rules.put("openat", Rule.OPENAT_MODE);
        // openat2 passes its mode in memory, like clone3; libraries fall back to openat, which is checked.
        rules.put("openat2", Rule.NOT_IMPLEMENTED);
        return Collections.unmodifiableMap(rules);
    }
}

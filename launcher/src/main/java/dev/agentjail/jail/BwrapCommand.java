package dev.agentjail.jail;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/** Turns a {@link JailSpec} into bwrap's argv: a pure function, so the whole jail is asserted in unit tests. */
public final class BwrapCommand {
    private static final Set<String> BINDS =
            Set.of("--bind", "--bind-try", "--ro-bind", "--ro-bind-try", "--dev-bind-try");
    /** The binds the jail can write through. */
    private static final Set<String> WRITABLE_BINDS = Set.of("--bind", "--bind-try");

    /** How many operands each option this class emits takes. */
    private static final Map<String, Integer> OPERANDS = Map.ofEntries(
            Map.entry("--unshare-user", 0),
            Map.entry("--unshare-pid", 0),
            Map.entry("--as-pid-1", 0),
            Map.entry("--unshare-ipc", 0),
            Map.entry("--unshare-uts", 0),
            Map.entry("--unshare-net", 0),
            Map.entry("--unshare-cgroup-try", 0),
            Map.entry("--die-with-parent", 0),
            Map.entry("--new-session", 0),
            Map.entry("--clearenv", 0),
            Map.entry("--uid", 1),
            Map.entry("--gid", 1),
            Map.entry("--cap-drop", 1),
            Map.entry("--hostname", 1),
            Map.entry("--seccomp", 1),
            Map.entry("--json-status-fd", 1),
            Map.entry("--proc", 1),
            Map.entry("--dev", 1),
            Map.entry("--size", 1),
            Map.entry("--perms", 1),
            Map.entry("--tmpfs", 1),
            Map.entry("--remount-ro", 1),
            Map.entry("--chdir", 1),
            Map.entry("--setenv", 2),
            Map.entry("--symlink", 2),
            Map.entry("--bind", 2),
            Map.entry("--bind-try", 2),
            Map.entry("--bind-fd", 2),
            Map.entry("--ro-bind-fd", 2),
            Map.entry("--ro-bind", 2),
            Map.entry("--ro-bind-try", 2),
            Map.entry("--dev-bind-try", 2));

    private BwrapCommand() {}

    /** The full argv, starting with the bwrap executable. */
    public static List<String> argv(JailSpec spec) {
        List<String> argv = new ArrayList<>();
        argv.add(spec.bwrap().toString());
        argv.addAll(options(spec));
        argv.add("--");
        argv.addAll(command(spec));
        return List.copyOf(argv);
    }

    /** What bwrap executes inside the jail: agentjail-init in jail mode, followed by the agent's argv. */
    public static List<String> command(JailSpec spec) {
        return InitCommand.jail(
                JailPaths.INIT,
                spec.port(),
                JailPaths.HANDOFF_SOCKET,
                spec.audit(),
                spec.seccompFd(),
                spec.limits(),
                spec.command());
    }

    /**
     * bwrap's options, without the executable and the command: what goes into a {@code --args} file (see {@link
     * BwrapArgsFile}), which keeps environment values out of the host's process list. bwrap ignores a {@code --}
     * and a command inside such a file, so the command stays on the real command line.
     */
    public static List<String> options(JailSpec spec) {
        return options(spec, new Args(-1));
    }

    /** bwrap's options with some binds taken from descriptors, and the host path each descriptor must be opened on. */
    public record WithDescriptors(List<String> options, List<Path> sources) {
        public WithDescriptors {
            options = List.copyOf(options);
            sources = List.copyOf(sources);
        }
    }

    /**
     * The same options with the binds of host paths an agent could have changed (the policy's home entries and extra
     * binds, and the protected paths that exist in the project) taken from descriptors {@code firstBindFd}, {@code
     * firstBindFd + 1}, ... instead of paths ({@code --bind-fd}, {@code --ro-bind-fd}). The caller opens {@link
     * WithDescriptors#sources} on them in that order, following no link (see {@link InitCommand.Mode#PATH}), so that
     * nothing swapped into those paths after they were checked is bound instead.
     */
    public static WithDescriptors options(JailSpec spec, int firstBindFd) {
        if (firstBindFd < 3) {
            throw new IllegalArgumentException("descriptors 0-2 are the terminal's: " + firstBindFd);
        }
        Args args = new Args(firstBindFd);
        List<String> options = options(spec, args);
        return new WithDescriptors(options, args.sources);
    }

    private static List<String> options(JailSpec spec, Args args) {
        namespaces(spec, args);
        environment(spec, args);
        // No --seccomp: agentjail-init loads the deny filter itself, after the audit's notifying one, which the deny
        // filter would refuse (it refuses every filter with a listener).
        spec.statusFd().ifPresent(fd -> args.add("--json-status-fd", Integer.toString(fd)));
        system(spec, args);
        scratch(spec, args);
        project(spec, args);
        plumbing(spec, args);
        args.add("--chdir", spec.project().toString());
        return List.copyOf(args.list);
    }

    /**
     * Every host path the jail's argv binds in (the source of each {@code --bind}, {@code --ro-bind} and their
     * {@code -try} forms), read back from {@link #options}, so that it cannot miss a bind that method adds.
     */
    public static List<Path> bindSources(JailSpec spec) {
        return sources(spec, BINDS);
    }

    /** The sources of the binds the jail can write through ({@code --bind}, {@code --bind-try}), the project's too. */
    public static List<Path> writableBindSources(JailSpec spec) {
        return sources(spec, WRITABLE_BINDS);
    }

    private static List<Path> sources(JailSpec spec, Set<String> binds) {
        List<String> options = options(spec);
        List<Path> sources = new ArrayList<>();
        int i = 0;
        while (i < options.size()) {
            String option = options.get(i);
            if (binds.contains(option)) {
                sources.add(Path.of(options.get(i + 1)));
            }
            Integer operands = OPERANDS.get(option);
            if (operands == null) {
                throw new IllegalStateException("bindSources does not know bwrap option " + option);
            }
            i += 1 + operands;
        }
        return List.copyOf(sources);
    }

    /**
     * The first bind whose source is {@code hostPath}, lies inside it or contains it: what would make {@code
     * hostPath} visible inside the jail. Compare real paths (callers resolve symlinks in both).
     */
    public static Optional<Path> exposing(JailSpec spec, Path hostPath) {
        return bindSources(spec).stream()
                .filter(source -> source.startsWith(hostPath) || hostPath.startsWith(source))
                .findFirst();
    }

    private static void namespaces(JailSpec spec, Args args) {
        args.add("--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-net");
        // agentjail-init is the jail's pid 1: bwrap's own reaper would stay in the jail under no seccomp filter,
        // a process the agent could ptrace and make run anything unaudited and undenied (docs/jail.md "pid 1").
        args.add("--as-pid-1");
        // Not every kernel (or container) lets an unprivileged user create a cgroup namespace; the rest still holds.
        args.add("--unshare-cgroup-try");
        spec.identity().ifPresent(id -> {
            args.add("--uid", Integer.toString(id.uid()));
            args.add("--gid", Integer.toString(id.gid()));
        });
        args.add("--die-with-parent");
        if (spec.newSession()) {
            args.add("--new-session");
        }
        args.add("--cap-drop", "ALL");
        args.add("--hostname", spec.hostname());
    }

    private static void environment(JailSpec spec, Args args) {
        args.add("--clearenv");
        spec.env().forEach((name, value) -> args.add("--setenv", name, value));
    }

    private static void system(JailSpec spec, Args args) {
        HostLayout layout = spec.hostLayout();
        for (Path dir : layout.systemDirs()) {
            args.add("--ro-bind-try", dir.toString(), dir.toString());
        }
        for (HostLayout.RootLink link : layout.rootLinks()) {
            args.add("--symlink", link.target(), link.link().toString());
        }
        for (Path entry : layout.etcEntries()) {
            args.add("--ro-bind-try", entry.toString(), entry.toString());
        }
        SessionFiles files = spec.sessionFiles();
        args.add("--ro-bind", files.passwd().toString(), "/etc/passwd");
        args.add("--ro-bind", files.group().toString(), "/etc/group");
        args.add("--ro-bind", files.hosts().toString(), "/etc/hosts");
        args.add("--proc", "/proc");
        for (HostLayout.ProcCover cover : layout.procCovers()) {
            String path = cover.path().toString();
            // -try: an entry can come and go with a module; a missing one needs no cover.
            args.add("--ro-bind-try", cover.hidden() ? files.emptyFile().toString() : path, path);
        }
        args.add("--dev", "/dev");
        for (Path device : spec.devices()) {
            // Opted into by the policy (jail.devices); -try: a device may vanish between probing and start.
            args.add("--dev-bind-try", device.toString(), device.toString());
        }
    }

    private static void scratch(JailSpec spec, Args args) {
        Limits limits = spec.limits();
        args.add("--size", Long.toString(limits.shmBytes()), "--perms", "1777", "--tmpfs", "/dev/shm");
        args.add("--size", Long.toString(limits.tmpBytes()), "--perms", "1777", "--tmpfs", "/tmp");
        args.add(
                "--size",
                Long.toString(limits.homeBytes()),
                "--perms",
                "0700",
                "--tmpfs",
                spec.home().toString());
        for (HomeEntry entry : spec.homeEntries()) {
            // -try: a policy may list ~/.gitconfig for everyone, whether or not this user has one.
            String path = spec.home().resolve(entry.relative()).toString();
            String source = entry.source().map(Path::toString).orElse(path);
            args.pathBind(entry.access(), true, source, path);
        }
    }

    private static void project(JailSpec spec, Args args) {
        // After /tmp and the home tmpfs, which would otherwise hide a project living below them.
        String project = spec.project().toString();
        args.add("--bind", project, project);
        for (Bind bind : spec.extraBinds()) {
            args.pathBind(
                    bind.access(),
                    bind.optional(),
                    bind.source().toString(),
                    bind.target().toString());
        }
        // The agent's program where PATH finds it, linked to its real file (bound above): never inside a bind.
        for (AgentInstall.Link link : spec.links()) {
            args.add("--symlink", link.target().toString(), link.path().toString());
        }
        // Protections and masks come last, so that no bind above can re-expose what they cover.
        String empty = spec.sessionFiles().emptyFile().toString();
        for (ProtectedPath p : spec.protectedPaths()) {
            String path = spec.project().resolve(p.relative()).toString();
            switch (p.state()) {
                case EXISTS -> args.pathBind(Access.READ_ONLY, false, path, path);
                case PIN -> args.pathBind(Access.READ_WRITE, false, path, path);
                case REPLACED -> args.add("--ro-bind", p.source().orElseThrow().toString(), path);
                case STAGED -> args.add("--bind", p.source().orElseThrow().toString(), path);
                case MISSING_FILE -> args.add("--ro-bind", empty, path);
                case MISSING_DIR -> args.add("--perms", "0555", "--tmpfs", path, "--remount-ro", path);
            }
        }
        for (Path masked : spec.maskedFiles()) {
            args.add("--ro-bind", empty, masked.toString());
        }
    }

    private static void plumbing(JailSpec spec, Args args) {
        args.add("--ro-bind", spec.initBinary().toString(), JailPaths.INIT.toString());
        args.add("--ro-bind", spec.handoffSocket().toString(), JailPaths.HANDOFF_SOCKET.toString());
        spec.trust().ifPresent(trust -> {
            args.add("--ro-bind", trust.pemBundle().toString(), JailPaths.CA_BUNDLE.toString());
            args.add("--ro-bind", trust.trustStore().toString(), JailPaths.TRUST_STORE.toString());
        });
        // bwrap's root and /dev are tmpfs mounts owned by the agent and without a size cap: freeze them last.
        args.add("--remount-ro", "/dev");
        args.add("--remount-ro", "/");
    }

    /** Collects arguments; varargs keep each bwrap option and its operands on one line above. */
    private static final class Args {
        private final List<String> list = new ArrayList<>();
        /** The sources of the descriptor binds so far, in descriptor order. */
        private final List<Path> sources = new ArrayList<>();
        /** The descriptor of the next such bind; negative: they are binds by path. */
        private int nextBindFd;

        Args(int firstBindFd) {
            this.nextBindFd = firstBindFd;
        }

        void add(String... values) {
            list.addAll(List.of(values));
        }

        /**
         * A bind of a host path an agent could have changed since it was checked: by path ({@code -try} when
         * optional), or from the next descriptor.
         */
        void pathBind(Access access, boolean optional, String source, String target) {
            String op = access == Access.READ_ONLY ? "--ro-bind" : "--bind";
            if (nextBindFd < 0) {
                add(optional ? op + "-try" : op, source, target);
            } else {
                sources.add(Path.of(source));
                add(op + "-fd", Integer.toString(nextBindFd++), target);
            }
        }
    }
}

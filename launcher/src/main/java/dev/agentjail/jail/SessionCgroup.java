package dev.agentjail.jail;

import dev.agentjail.policy.IoErrors;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The cgroup of one session: memory (swap included), process and CPU limits for every process of the jail together.
 * Each controller comes from cgroup v2 where the unified hierarchy offers it, in the deepest directory the launcher may
 * write whose children can have controllers (a delegated subtree for an ordinary user, the launcher's own
 * hierarchy for root), else from its cgroup v1 hierarchy, under the launcher's own cgroup there. A controller that
 * cannot be had says why in {@link #placements()}; what to do about that is the caller's decision.
 */
public final class SessionCgroup {
    public static final String MEMORY = "memory";
    public static final String PIDS = "pids";
    public static final String CPU = "cpu";

    /** The CFS period the quota is a share of: 100 ms, the kernel's default. */
    static final long CPU_PERIOD_US = 100_000;

    private static final long REMOVE_WAIT_NANOS = 5_000_000_000L;

    /** Where one controller's limit went, or why it could not. */
    public sealed interface Placement {
        String controller();
    }

    /** The limit is set in {@code dir}, a v{@code version} cgroup, by writing {@code files}. */
    public record Placed(String controller, int version, Path dir, List<String> files) implements Placement {
        public Placed {
            files = List.copyOf(files);
        }

        /** For the audit record: {@code cgroup v1 DIR (memory.limit_in_bytes, ...)}. */
        public String describe() {
            return "cgroup v" + version + " " + dir + " (" + String.join(", ", files) + ")";
        }
    }

    /** The limit could not be set; {@code reason} says why, for the user. */
    public record Unavailable(String controller, String reason) implements Placement {}

    private final CgroupHost.Dirs fs;
    private final Map<String, Placement> placements;
    private final List<Path> dirs;
    private final Optional<LauncherLeaf> leaf;

    /** The launcher moved into a leaf of the delegated directory {@code parent}, which had no other process. */
    private record LauncherLeaf(Path parent, Path leaf, long pid, List<String> enabled) {}

    private SessionCgroup(
            CgroupHost.Dirs fs, Map<String, Placement> placements, Set<Path> dirs, Optional<LauncherLeaf> leaf) {
        this.fs = fs;
        this.placements = Collections.unmodifiableMap(new LinkedHashMap<>(placements));
        this.dirs = List.copyOf(dirs);
        this.leaf = leaf;
    }

    /**
     * Creates the session's cgroup {@code name} for each limit asked for: {@code memoryBytes}, {@code processes} and
     * {@code cpuMillis} (thousandths of a CPU); 0 asks for none. Never throws: what could not be had is {@link
     * Unavailable}.
     */
    public static SessionCgroup create(CgroupHost host, String name, long memoryBytes, int processes, int cpuMillis) {
        Map<String, Long> wanted = new LinkedHashMap<>();
        if (memoryBytes > 0) {
            wanted.put(MEMORY, memoryBytes);
        }
        if (processes > 0) {
            wanted.put(PIDS, (long) processes);
        }
        if (cpuMillis > 0) {
            wanted.put(CPU, (long) cpuMillis);
        }
        Map<String, Placement> placements = new LinkedHashMap<>();
        Set<Path> dirs = new LinkedHashSet<>();
        Optional<LauncherLeaf> leaf = Optional.empty();
        Optional<CgroupHost.Hierarchy> unified = host.unified();
        Set<String> offered =
                unified.map(u -> words(u.mount().resolve("cgroup.controllers"))).orElse(Set.of());
        List<String> v2 = wanted.keySet().stream().filter(offered::contains).toList();
        if (!v2.isEmpty()) {
            V2 parent = v2Parent(host, unified.get(), v2);
            if (parent.reason != null) {
                v2.forEach(c -> placements.put(c, new Unavailable(c, parent.reason)));
            } else {
                leaf = placeV2(host, name, parent, v2, wanted, placements, dirs);
            }
        }
        for (Map.Entry<String, Long> want : wanted.entrySet()) {
            String controller = want.getKey();
            if (placements.containsKey(controller)) {
                continue;
            }
            Optional<CgroupHost.Hierarchy> v1 = host.v1(controller);
            if (v1.isEmpty()) {
                placements.put(
                        controller,
                        new Unavailable(
                                controller,
                                "neither cgroup v2 (not in "
                                        + unified.map(u -> u.mount() + "/cgroup.controllers")
                                                .orElse("a mounted cgroup2 hierarchy")
                                        + ") nor a cgroup v1 " + controller + " hierarchy offers the " + controller
                                        + " controller"));
                continue;
            }
            Path dir = v1.get().self().resolve(name);
            try {
                if (!dirs.contains(dir)) {
                    host.dirs().create(dir);
                    dirs.add(dir);
                }
                placements.put(controller, new Placed(controller, 1, dir, writeV1(dir, controller, want.getValue())));
            } catch (IOException e) {
                placements.put(
                        controller, new Unavailable(controller, "cannot create or set " + dir + ": " + message(e)));
            }
        }
        return new SessionCgroup(host.dirs(), placements, dirs, leaf);
    }

    /** What became of each controller asked for, in the order memory, pids, cpu. */
    public Map<String, Placement> placements() {
        return placements;
    }

    /** The {@code cgroup.procs} file of each directory of the session: agentjail-init joins them all before bwrap. */
    public List<Path> procsFiles() {
        return dirs.stream().map(d -> d.resolve("cgroup.procs")).toList();
    }

    /**
     * How many processes the memory limit's OOM killer has killed so far: {@code oom_kill} of v2 {@code memory.events}
     * or of v1 {@code memory.oom_control}; empty without a memory cgroup or counter.
     */
    public Optional<Long> oomKills() {
        if (!(placements.get(MEMORY) instanceof Placed p)) {
            return Optional.empty();
        }
        Path file = p.dir().resolve(p.version() == 2 ? "memory.events" : "memory.oom_control");
        try {
            for (String line : Files.readAllLines(file)) {
                String[] parts = line.trim().split("\\s+");
                if (parts.length == 2 && parts[0].equals("oom_kill")) {
                    return Optional.of(Long.parseLong(parts[1]));
                }
            }
        } catch (IOException | NumberFormatException e) {
            // A counter that cannot be read counts nothing; the caller notes the absence.
        }
        return Optional.empty();
    }

    /** The pids in the memory cgroup now (host pid namespace), for naming what the OOM killer picks. */
    public List<Long> memoryPids() {
        if (!(placements.get(MEMORY) instanceof Placed p)) {
            return List.of();
        }
        return pids(p.dir());
    }

    /**
     * Kills what is left in the session's cgroups and removes them (waiting, for a bounded time, for the kernel to
     * reap the killed); a launcher moved into a leaf moves back. Returns what could not be undone, for stderr.
     */
    public List<String> remove() {
        List<String> problems = new ArrayList<>();
        for (Path dir : dirs) {
            long deadline = System.nanoTime() + REMOVE_WAIT_NANOS;
            while (true) {
                kill(dir);
                try {
                    fs.remove(dir);
                    break;
                } catch (IOException busy) {
                    if (System.nanoTime() > deadline) {
                        problems.add("cannot remove the session's cgroup " + dir + ": " + message(busy));
                        break;
                    }
                    if (!pause()) {
                        return problems;
                    }
                }
            }
        }
        leaf.ifPresent(l -> {
            try {
                if (!l.enabled().isEmpty()) {
                    write(
                            l.parent().resolve("cgroup.subtree_control"),
                            String.join(
                                    " ", l.enabled().stream().map(c -> "-" + c).toList()));
                }
                write(l.parent().resolve("cgroup.procs"), Long.toString(l.pid()));
                fs.remove(l.leaf());
            } catch (IOException e) {
                problems.add("the launcher stays in " + l.leaf() + ": " + message(e));
            }
        });
        return problems;
    }

    /** The v2 directory under which the session's group goes, or why there is none. */
    private record V2(Path dir, boolean moveLauncher, String reason) {}

    private static V2 v2Parent(CgroupHost host, CgroupHost.Hierarchy unified, List<String> controllers) {
        Path mount = unified.mount();
        for (Path dir = unified.self(); dir != null && dir.startsWith(mount); dir = dir.getParent()) {
            if (!Files.isWritable(dir.resolve("cgroup.subtree_control"))
                    || !Files.isWritable(dir.resolve("cgroup.procs"))
                    || !words(dir.resolve("cgroup.controllers")).containsAll(controllers)) {
                continue;
            }
            List<Long> procs = pids(dir);
            boolean self = dir.equals(unified.self());
            if (self && procs.equals(List.of(host.pid()))) {
                // A delegated cgroup of the launcher's own (systemd-run --scope -p Delegate=yes): the launcher
                // steps into a leaf, as a cgroup whose children have controllers may hold no process.
                return new V2(dir, true, null);
            }
            if (procs.isEmpty() || dir.equals(mount)) {
                return new V2(dir, false, null);
            }
        }
        return new V2(
                null,
                false,
                "no cgroup v2 directory from " + unified.self() + " up is writable by this user, offers "
                        + String.join(" and ", controllers) + " and holds no other process (no delegated subtree)");
    }

    private static Optional<LauncherLeaf> placeV2(
            CgroupHost host,
            String name,
            V2 parent,
            List<String> controllers,
            Map<String, Long> wanted,
            Map<String, Placement> placements,
            Set<Path> dirs) {
        Optional<LauncherLeaf> leaf = Optional.empty();
        Path leafDir = parent.dir().resolve("agentjail-launcher-" + host.pid());
        try {
            if (parent.moveLauncher()) {
                host.dirs().create(leafDir);
                write(leafDir.resolve("cgroup.procs"), Long.toString(host.pid()));
            }
            Set<String> active = words(parent.dir().resolve("cgroup.subtree_control"));
            List<String> enable =
                    controllers.stream().filter(c -> !active.contains(c)).toList();
            if (!enable.isEmpty()) {
                write(
                        parent.dir().resolve("cgroup.subtree_control"),
                        String.join(" ", enable.stream().map(c -> "+" + c).toList()));
            }
            if (parent.moveLauncher()) {
                leaf = Optional.of(new LauncherLeaf(parent.dir(), leafDir, host.pid(), enable));
            }
            Path dir = parent.dir().resolve(name);
            host.dirs().create(dir);
            dirs.add(dir);
            for (String c : controllers) {
                try {
                    placements.put(c, new Placed(c, 2, dir, writeV2(dir, c, wanted.get(c))));
                } catch (IOException e) {
                    placements.put(
                            c, new Unavailable(c, "cannot set the " + c + " limit in " + dir + ": " + message(e)));
                }
            }
        } catch (IOException e) {
            controllers.forEach(c -> placements.put(
                    c, new Unavailable(c, "cannot set up a cgroup under " + parent.dir() + ": " + message(e))));
        }
        return leaf;
    }

    private static List<String> writeV2(Path dir, String controller, long value) throws IOException {
        return switch (controller) {
            case MEMORY -> {
                write(dir.resolve("memory.max"), Long.toString(value));
                if (!Files.exists(dir.resolve("memory.swap.max"))) {
                    yield List.of("memory.max", "swap not limited: no memory.swap.max");
                }
                write(dir.resolve("memory.swap.max"), "0");
                yield List.of("memory.max", "memory.swap.max=0");
            }
            case PIDS -> {
                write(dir.resolve("pids.max"), Long.toString(value));
                yield List.of("pids.max");
            }
            default -> {
                write(dir.resolve("cpu.max"), value * CPU_PERIOD_US / 1000 + " " + CPU_PERIOD_US);
                yield List.of("cpu.max");
            }
        };
    }

    private static List<String> writeV1(Path dir, String controller, long value) throws IOException {
        return switch (controller) {
            case MEMORY -> {
                write(dir.resolve("memory.limit_in_bytes"), Long.toString(value));
                if (!Files.exists(dir.resolve("memory.memsw.limit_in_bytes"))) {
                    yield List.of("memory.limit_in_bytes", "swap not limited: no memory.memsw.limit_in_bytes");
                }
                // memsw counts memory and swap together: equal to the memory limit, it leaves no swap beyond it.
                write(dir.resolve("memory.memsw.limit_in_bytes"), Long.toString(value));
                yield List.of("memory.limit_in_bytes", "memory.memsw.limit_in_bytes");
            }
            case PIDS -> {
                write(dir.resolve("pids.max"), Long.toString(value));
                yield List.of("pids.max");
            }
            default -> {
                write(dir.resolve("cpu.cfs_period_us"), Long.toString(CPU_PERIOD_US));
                write(dir.resolve("cpu.cfs_quota_us"), Long.toString(value * CPU_PERIOD_US / 1000));
                yield List.of("cpu.cfs_period_us", "cpu.cfs_quota_us");
            }
        };
    }

    private static void kill(Path dir) {
        Path killFile = dir.resolve("cgroup.kill");
        if (Files.exists(killFile)) {
            try {
                write(killFile, "1");
                return;
            } catch (IOException e) {
                // Fall back to killing each process.
            }
        }
        for (long pid : pids(dir)) {
            ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
        }
    }

    private static boolean pause() {
        try {
            Thread.sleep(20);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** Writes to an existing cgroup file (never creates one: a missing file is a missing controller). */
    private static void write(Path file, String value) throws IOException {
        Files.writeString(file, value + "\n", StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING);
    }

    static List<Long> pids(Path dir) {
        try {
            return Files.readAllLines(dir.resolve("cgroup.procs")).stream()
                    .map(String::trim)
                    .filter(s -> !s.isEmpty())
                    .map(Long::parseLong)
                    .toList();
        } catch (IOException | NumberFormatException e) {
            return List.of();
        }
    }

    private static Set<String> words(Path file) {
        try {
            return new LinkedHashSet<>(
                    Arrays.asList(Files.readString(file).trim().split("\\s+")));
        } catch (IOException e) {
            return Set.of();
        }
    }

    private static String message(IOException e) {
        return IoErrors.describe(e);
    }
}

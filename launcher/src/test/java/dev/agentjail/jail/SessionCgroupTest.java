package dev.agentjail.jail;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.policy.Limits;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The session cgroup against fake cgroup trees in a temporary directory: a {@link FakeKernel} fills each directory
 * made much as the kernel would (v2: the parent's controllers with their files; v1: the hierarchy's files), so the v2 paths (a delegated subtree, a delegated scope of the launcher's own, no
 * delegation) and the v1 ones run where this machine offers neither.
 */
class SessionCgroupTest {
    static final long PID = 4242;
    static final String UNIFIED = "41 31 0:38 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw\n";
    static final String USER_SCOPE = "/user.slice/user-1000.slice/user@1000.service/app.slice/term.scope";

    @TempDir
    Path root;

    /** Makes cgroup directories the way the kernel fills them. */
    static final class FakeKernel implements CgroupHost.Dirs {
        @Override
        public void remove(Path dir) throws IOException {
            if (!Files.exists(dir)) {
                return;
            }
            // No migration here (a write to cgroup.procs does not empty another's), so no busy check either.
            try (Stream<Path> files = Files.list(dir)) {
                for (Path f : files.toList()) {
                    if (Files.isDirectory(f)) {
                        throw new IOException(dir + ": Device or resource busy (a child group)");
                    }
                    Files.delete(f);
                }
            }
            Files.delete(dir);
        }

        @Override
        public void create(Path dir) throws IOException {
            Files.createDirectory(dir);
            Path parent = dir.getParent();
            Files.writeString(dir.resolve("cgroup.procs"), "");
            if (Files.exists(parent.resolve("cgroup.subtree_control"))) {
                // A file keeps only the last write ("+cpu"), so the child gets every controller its parent offers.
                v2Dir(dir, Files.readString(parent.resolve("cgroup.controllers")));
                return;
            }
            try (Stream<Path> files = Files.list(parent)) {
                for (Path f : files.filter(Files::isRegularFile).toList()) {
                    if (!f.getFileName().toString().equals("cgroup.procs")) {
                        Files.writeString(dir.resolve(f.getFileName()), "");
                    }
                }
            }
        }
    }

    /** A v2 directory offering {@code controllers}, with their interface files. */
    static Path v2Dir(Path dir, String controllers) throws IOException {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("cgroup.controllers"), controllers);
        Files.writeString(dir.resolve("cgroup.subtree_control"), "");
        if (!Files.exists(dir.resolve("cgroup.procs"))) {
            Files.writeString(dir.resolve("cgroup.procs"), "");
        }
        for (String c : controllers.trim().split("\\s+")) {
            List<String> files = switch (c) {
                case "memory" -> List.of("memory.max", "memory.swap.max", "memory.events");
                case "pids" -> List.of("pids.max");
                case "cpu" -> List.of("cpu.max");
                default -> List.of();
            };
            for (String f : files) {
                Files.writeString(dir.resolve(f), f.equals("memory.events") ? "low 0\noom 0\noom_kill 0\n" : "max");
            }
        }
        return dir;
    }

    CgroupHost host(String selfCgroup, String mountInfo) {
        return new CgroupHost(root, selfCgroup, mountInfo, PID, new FakeKernel());
    }

    Path cg(String path) {
        return root.resolve("sys/fs/cgroup" + path);
    }

    static String read(Path file) throws IOException {
        return Files.readString(file).trim();
    }

    static Limits limits(long memory, int processes, int cpuMillis, Set<String> explicit) {
        return new Limits(Duration.ofHours(1), memory, processes, 4096, 1L << 30, 1L << 30, 0, cpuMillis, explicit);
    }

    /** systemd's user manager: the terminal's scope holds the shell too, so the group goes into app.slice. */
    @Test
    void anOrdinaryUserGetsTheSessionGroupInTheDelegatedSliceAboveItsScope() throws IOException {
        v2Dir(cg(""), "cpuset cpu io memory pids");
        Path slice = v2Dir(cg("/user.slice/user-1000.slice/user@1000.service/app.slice"), "cpu memory pids");
        Files.writeString(slice.resolve("cgroup.subtree_control"), "memory pids");
        Path scope = v2Dir(cg(USER_SCOPE), "memory pids");
        Files.writeString(scope.resolve("cgroup.procs"), "42\n" + PID + "\n");

        SessionCgroup cgroup =
                SessionCgroup.create(host("0::" + USER_SCOPE + "\n", UNIFIED), "agentjail-s1", 512L << 20, 64, 1500);

        Path group = slice.resolve("agentjail-s1");
        assertEquals(
                List.of(
                        new SessionCgroup.Placed("memory", 2, group, List.of("memory.max", "memory.swap.max=0")),
                        new SessionCgroup.Placed("pids", 2, group, List.of("pids.max")),
                        new SessionCgroup.Placed("cpu", 2, group, List.of("cpu.max"))),
                List.copyOf(cgroup.placements().values()));
        assertEquals("+cpu", read(slice.resolve("cgroup.subtree_control")), "only the missing controller is enabled");
        assertEquals(String.valueOf(512L << 20), read(group.resolve("memory.max")));
        assertEquals("0", read(group.resolve("memory.swap.max")));
        assertEquals("64", read(group.resolve("pids.max")));
        assertEquals("150000 100000", read(group.resolve("cpu.max")));
        assertEquals(List.of(group.resolve("cgroup.procs")), cgroup.procsFiles());
        assertEquals(Optional.of(0L), cgroup.oomKills());

        assertEquals(List.of(), cgroup.remove());
        assertFalse(Files.exists(group));
    }

    /** {@code systemd-run --user --scope -p Delegate=yes agentjail run}: the scope is the launcher's alone. */
    @Test
    void aDelegatedScopeOfTheLaunchersOwnGetsALeafForTheLauncherAndIsRestoredAfterwards() throws IOException {
        v2Dir(cg(""), "cpu memory pids");
        Path scope = v2Dir(cg("/user.slice/run-u7.scope"), "memory pids");
        Files.writeString(scope.resolve("cgroup.procs"), PID + "\n");

        SessionCgroup cgroup =
                SessionCgroup.create(host("0::/user.slice/run-u7.scope\n", UNIFIED), "agentjail-s2", 1L << 30, 32, 0);

        Path leaf = scope.resolve("agentjail-launcher-" + PID);
        assertEquals(String.valueOf(PID), read(leaf.resolve("cgroup.procs")), "the launcher moved into its leaf");
        assertEquals("+memory +pids", read(scope.resolve("cgroup.subtree_control")));
        assertInstanceOf(SessionCgroup.Placed.class, cgroup.placements().get("memory"));
        assertEquals(String.valueOf(1L << 30), read(scope.resolve("agentjail-s2/memory.max")));

        assertEquals(List.of(), cgroup.remove());
        assertEquals("-memory -pids", read(scope.resolve("cgroup.subtree_control")));
        assertEquals(String.valueOf(PID), read(scope.resolve("cgroup.procs")), "the launcher moved back");
        assertFalse(Files.exists(leaf));
        assertFalse(Files.exists(scope.resolve("agentjail-s2")));
    }

    /**
     * A login session's scope (not delegated: it holds the shell) under a slice that holds processes and does not
     * offer the controllers: nothing to use, and the reason says so.
     */
    @Test
    void withoutADelegatedSubtreeEachControllerIsUnavailableWithTheReason() throws IOException {
        v2Dir(cg(""), "cpu memory pids");
        Files.writeString(cg("/cgroup.procs"), "1\n");
        Path slice = v2Dir(cg("/user.slice"), "memory pids");
        Files.writeString(slice.resolve("cgroup.procs"), "7\n");
        Path scope = v2Dir(cg("/user.slice/session-2.scope"), "");
        Files.writeString(scope.resolve("cgroup.procs"), "42\n" + PID + "\n");

        SessionCgroup cgroup = SessionCgroup.create(
                host("0::/user.slice/session-2.scope\n", UNIFIED), "agentjail-s3", 512L << 20, 64, 1000);

        // The hierarchy's root offers the controllers and takes the group (as root may; an ordinary user cannot
        // write there, which the integration tests show for real).
        assertEquals(
                cg("/agentjail-s3"), ((SessionCgroup.Placed) cgroup.placements().get("memory")).dir());
        cgroup.remove();

        Files.writeString(cg("/cgroup.controllers"), "io");
        SessionCgroup none = SessionCgroup.create(
                host("0::/user.slice/session-2.scope\n", UNIFIED), "agentjail-s4", 512L << 20, 64, 1000);
        for (String c : List.of("memory", "pids", "cpu")) {
            SessionCgroup.Unavailable u = assertInstanceOf(
                    SessionCgroup.Unavailable.class, none.placements().get(c));
            assertTrue(u.reason().contains("offers the " + c + " controller"), u.reason());
        }
        assertEquals(List.of(), none.procsFiles());
    }

    /** This machine's layout: controllers bound to v1, an empty unified hierarchy, the launcher in a memory group. */
    @Test
    void cgroupV1ControllersAreUsedUnderTheLaunchersOwnGroupInEachHierarchy() throws IOException {
        String mounts = """
                32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
                35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
                39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
                41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
                """;
        String self = "8:pids:/\n4:memory:/process_api/abc\n1:cpu:/\n0::/\n";
        v2Dir(cg("/unified"), "hugetlb");
        Path memory = Files.createDirectories(cg("/memory/process_api/abc"));
        for (String f :
                List.of("cgroup.procs", "memory.limit_in_bytes", "memory.memsw.limit_in_bytes", "memory.oom_control")) {
            Files.writeString(memory.resolve(f), "");
        }
        Files.writeString(memory.resolve("memory.oom_control"), "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n");
        Files.createDirectories(cg("/pids"));
        Files.writeString(cg("/pids/pids.max"), "max");
        Files.createDirectories(cg("/cpu"));
        Files.writeString(cg("/cpu/cpu.cfs_period_us"), "");
        Files.writeString(cg("/cpu/cpu.cfs_quota_us"), "");

        SessionCgroup cgroup = SessionCgroup.create(host(self, mounts), "agentjail-s5", 256L << 20, 100, 500);

        Path m = memory.resolve("agentjail-s5");
        assertEquals(
                new SessionCgroup.Placed(
                        "memory", 1, m, List.of("memory.limit_in_bytes", "memory.memsw.limit_in_bytes")),
                cgroup.placements().get("memory"));
        assertEquals(String.valueOf(256L << 20), read(m.resolve("memory.limit_in_bytes")));
        assertEquals(String.valueOf(256L << 20), read(m.resolve("memory.memsw.limit_in_bytes")));
        assertEquals("100", read(cg("/pids/agentjail-s5/pids.max")));
        assertEquals("50000", read(cg("/cpu/agentjail-s5/cpu.cfs_quota_us")));
        assertEquals("100000", read(cg("/cpu/agentjail-s5/cpu.cfs_period_us")));
        assertEquals(
                List.of(
                        m.resolve("cgroup.procs"),
                        cg("/pids/agentjail-s5/cgroup.procs"),
                        cg("/cpu/agentjail-s5/cgroup.procs")),
                cgroup.procsFiles());
        Files.writeString(m.resolve("memory.oom_control"), "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n");
        assertEquals(Optional.of(2L), cgroup.oomKills());
        cgroup.remove();
        assertFalse(Files.exists(m));
    }

    @Test
    void withoutSwapAccountingTheRecordSaysSwapIsNotLimited() throws IOException {
        String mounts = "35 31 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n";
        Files.createDirectories(cg("/memory"));
        Files.writeString(cg("/memory/memory.limit_in_bytes"), "");

        SessionCgroup cgroup = SessionCgroup.create(host("4:memory:/\n", mounts), "agentjail-s6", 1L << 30, 0, 0);

        assertEquals(
                List.of("memory.limit_in_bytes", "swap not limited: no memory.memsw.limit_in_bytes"),
                ((SessionCgroup.Placed) cgroup.placements().get("memory")).files());
        assertEquals(Set.of("memory"), cgroup.placements().keySet(), "no pids or cpu asked for");
    }

    /** A policy's explicit limit that cannot be had refuses; a default is reported and the session runs. */
    @Test
    void explicitLimitsThatCannotBeEnforcedRefuseAndDefaultsAreReported() throws Exception {
        v2Dir(cg(""), "io");
        CgroupHost none = host("0::/\n", UNIFIED);

        SessionLimits.Refused memory = assertThrows(
                SessionLimits.Refused.class,
                () -> SessionLimits.apply(none, "agentjail-s7", limits(512L << 20, 64, 0, Set.of("memory")), false));
        assertTrue(
                memory.getMessage()
                        .startsWith("limits.memory: 512m cannot be enforced: no writable memory controller ("),
                memory.getMessage());
        assertTrue(memory.getMessage().contains("systemd-run --user --scope -p Delegate=yes"), memory.getMessage());

        SessionLimits.Refused cpu = assertThrows(
                SessionLimits.Refused.class,
                () -> SessionLimits.apply(none, "agentjail-s7", limits(1L << 30, 64, 500, Set.of("cpu")), false));
        assertTrue(
                cpu.getMessage().startsWith("limits.cpu: 0.5 cannot be enforced: no writable cpu"), cpu.getMessage());

        SessionLimits.Refused rootPids = assertThrows(
                SessionLimits.Refused.class,
                () -> SessionLimits.apply(none, "agentjail-s7", limits(1L << 30, 64, 0, Set.of()), true));
        assertTrue(rootPids.getMessage().startsWith("limits.processes: 64 cannot be enforced: started as root"));

        SessionLimits defaults = SessionLimits.apply(
                none,
                "agentjail-s7",
                new Limits(Duration.ofHours(1), 16L << 30, 4096, 4096, 1L << 30, 1L << 30, 64L << 30, 0, Set.of()),
                false);
        assertEquals(1, defaults.warnings().size());
        assertTrue(
                defaults.warnings().get(0).startsWith("the default limits.memory (16g) is not enforced: "),
                defaults.warnings().get(0));
        assertEquals("memory 16g: not enforced (default)", defaults.enforced().get(0));
        assertTrue(defaults.enforced().get(1).startsWith("processes 4096: rlimit RLIMIT_NPROC (no pids cgroup: "));
        assertEquals("address_space 64g: rlimit RLIMIT_AS", defaults.enforced().get(2));
        assertEquals(List.of(), defaults.joinArguments());
    }

    @Test
    void enforcedLimitsNameTheCgroupAndItsFiles() throws Exception {
        v2Dir(cg(""), "cpu memory pids");
        SessionLimits limits = SessionLimits.apply(
                host("0::/\n", UNIFIED), "agentjail-s8", limits(256L << 20, 64, 2000, Set.of("memory", "cpu")), false);
        Path group = cg("/agentjail-s8");
        assertEquals(
                List.of(
                        "memory 256m: cgroup v2 " + group + " (memory.max, memory.swap.max=0)",
                        "processes 64: cgroup v2 " + group + " (pids.max) and rlimit",
                        "cpu 2: cgroup v2 " + group + " (cpu.max)"),
                limits.enforced());
        assertEquals(List.of("--join-cgroup", group.resolve("cgroup.procs").toString()), limits.joinArguments());
        assertEquals(List.of(), limits.warnings());
        limits.cgroup().remove();
    }

    /** The OOM kill counter grows: the largest process gone since the last sample is named. */
    @Test
    void anOomKillNamesTheLargestProcessThatVanished() throws IOException {
        v2Dir(cg(""), "memory");
        SessionCgroup cgroup = SessionCgroup.create(host("0::/\n", UNIFIED), "agentjail-s9", 256L << 20, 0, 0);
        Path group = cg("/agentjail-s9");
        Path proc = Files.createDirectories(root.resolve("proc"));
        process(proc, 100, "bash", 900);
        process(proc, 101, "python3", 60000);
        process(proc, 102, "sleep", 100);
        Files.writeString(group.resolve("cgroup.procs"), "100\n101\n102\n");
        OomWatch watch = new OomWatch(cgroup, proc, List::of);
        watch.sample();

        Files.writeString(group.resolve("cgroup.procs"), "100\n");
        Files.writeString(group.resolve("memory.events"), "low 0\noom 1\noom_kill 1\n");
        watch.sample();
        Files.writeString(group.resolve("memory.events"), "low 0\noom 2\noom_kill 2\n");
        watch.sample();

        assertEquals(
                List.of("memory: oom-kill of python3 (pid 101)", "memory: oom-kill of an unidentified process"),
                watch.hits());
        // The fake group names pids that are real on this host: empty it before remove() kills what it lists.
        Files.writeString(group.resolve("cgroup.procs"), "");
        cgroup.remove();
    }

    /** Where the kernel log names the victim (the sampler missed a short-lived one), its line is believed. */
    @Test
    void anOomKillTheKernelLogNamesIsNamedFromTheLog() throws IOException {
        v2Dir(cg(""), "memory");
        SessionCgroup cgroup = SessionCgroup.create(host("0::/\n", UNIFIED), "agentjail-s10", 256L << 20, 0, 0);
        Path group = cg("/agentjail-s10");
        Path proc = Files.createDirectories(root.resolve("proc"));
        Files.writeString(group.resolve("cgroup.procs"), "");
        List<String> log = List.of(
                "[1.0] oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,"
                        + "oom_memcg=/x/agentjail-other,task_memcg=/x/agentjail-other,task=node,pid=7,uid=0",
                "[2.0] oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,"
                        + "oom_memcg=/x/agentjail-s10,task_memcg=/x/agentjail-s10,task=python3,pid=4242,uid=0");
        OomWatch watch = new OomWatch(cgroup, proc, () -> log);
        watch.sample();
        Files.writeString(group.resolve("memory.events"), "low 0\noom 1\noom_kill 1\n");
        watch.sample();
        watch.sample();
        assertEquals(List.of("memory: oom-kill of python3 (pid 4242)"), watch.hits());
        cgroup.remove();
    }

    private static void process(Path proc, long pid, String name, long pages) throws IOException {
        Path dir = Files.createDirectories(proc.resolve(Long.toString(pid)));
        Files.writeString(dir.resolve("comm"), name + "\n");
        Files.writeString(dir.resolve("statm"), (pages * 2) + " " + pages + " 10 1 0 5 0\n");
    }
}

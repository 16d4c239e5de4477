package dev.agentjail.jail;

import dev.agentjail.policy.Limits;
import java.math.BigDecimal;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Decides how each of a session's limits is enforced: memory, processes and CPU by the session's cgroup, the address
 * space by RLIMIT_AS only when the policy asks for it. A limit the policy wrote that no cgroup can carry refuses the
 * session ({@link Refused}); a default that none can carry is reported and the session runs without it. Never falls
 * back to RLIMIT_AS for memory.
 */
public final class SessionLimits {
    /** A limit the policy asked for cannot be enforced here; the message names it, the reason and the way out. */
    public static final class Refused extends Exception {
        private static final long serialVersionUID = 1L;

        Refused(String message) {
            super(message);
        }
    }

    private final SessionCgroup cgroup;
    private final List<String> enforced;
    private final List<String> warnings;

    private SessionLimits(SessionCgroup cgroup, List<String> enforced, List<String> warnings) {
        this.cgroup = cgroup;
        this.enforced = List.copyOf(enforced);
        this.warnings = List.copyOf(warnings);
    }

    /**
     * Creates the session's cgroup {@code name} for {@code limits}; {@code root}: the launcher runs as root, where the
     * kernel ignores RLIMIT_NPROC. On refusal the cgroup made so far is removed again.
     */
    public static SessionLimits apply(CgroupHost host, String name, Limits limits, boolean root) throws Refused {
        SessionCgroup cgroup =
                SessionCgroup.create(host, name, limits.memoryBytes(), limits.processes(), limits.cpuMillis());
        List<String> enforced = new ArrayList<>();
        List<String> warnings = new ArrayList<>();
        List<String> refusals = new ArrayList<>();
        String way = root ? rootWay() : userWay();
        // memory
        String memory = "memory " + size(limits.memoryBytes());
        switch (cgroup.placements().get(SessionCgroup.MEMORY)) {
            case SessionCgroup.Placed p -> enforced.add(memory + ": " + p.describe());
            case SessionCgroup.Unavailable u -> {
                String why = "no writable memory controller (" + u.reason() + "); " + way.formatted("memory");
                if (limits.isExplicit("memory")) {
                    refusals.add("limits.memory: " + size(limits.memoryBytes()) + " cannot be enforced: " + why);
                } else {
                    enforced.add(memory + ": not enforced (default)");
                    warnings.add("the default limits.memory (" + size(limits.memoryBytes()) + ") is not enforced: "
                            + why + "; the session runs without a memory limit");
                }
            }
        }
        // processes: RLIMIT_NPROC holds too, except for root
        String processes = "processes " + limits.processes();
        switch (cgroup.placements().get(SessionCgroup.PIDS)) {
            case SessionCgroup.Placed p -> enforced.add(processes + ": " + p.describe() + (root ? "" : " and rlimit"));
            case SessionCgroup.Unavailable u -> {
                if (root) {
                    refusals.add("limits.processes: " + limits.processes() + " cannot be enforced: started as root,"
                            + " the kernel ignores RLIMIT_NPROC and there is no writable pids controller ("
                            + u.reason() + "); run agentjail as a regular user, or " + way.formatted("pids"));
                } else {
                    enforced.add(processes + ": rlimit RLIMIT_NPROC (no pids cgroup: " + u.reason() + ")");
                }
            }
        }
        if (limits.cpuMillis() > 0) {
            String cpu = "cpu " + cpus(limits.cpuMillis());
            switch (cgroup.placements().get(SessionCgroup.CPU)) {
                case SessionCgroup.Placed p -> enforced.add(cpu + ": " + p.describe());
                case SessionCgroup.Unavailable u ->
                    refusals.add("limits.cpu: " + cpus(limits.cpuMillis()) + " cannot be enforced: no writable cpu"
                            + " controller (" + u.reason() + "); " + way.formatted("cpu"));
            }
        }
        if (limits.addressSpaceBytes() > 0) {
            enforced.add("address_space " + size(limits.addressSpaceBytes()) + ": rlimit RLIMIT_AS");
        }
        if (!refusals.isEmpty()) {
            cgroup.remove();
            throw new Refused(String.join("; ", refusals));
        }
        return new SessionLimits(cgroup, enforced, warnings);
    }

    /** One line per limit, {@code memory 512m: cgroup v1 DIR (memory.limit_in_bytes, ...)}: the records' limits. */
    public List<String> enforced() {
        return enforced;
    }

    /** Defaults that could not be enforced, each to report once. */
    public List<String> warnings() {
        return warnings;
    }

    public SessionCgroup cgroup() {
        return cgroup;
    }

    /** The arguments that make agentjail-init join the session's cgroups before it execs bwrap. */
    public List<String> joinArguments() {
        List<String> argv = new ArrayList<>();
        for (var procs : cgroup.procsFiles()) {
            argv.add("--join-cgroup");
            argv.add(procs.toString());
        }
        return argv;
    }

    /** A watch on the memory limit's OOM kills, if a memory cgroup with a kill counter carries it. */
    public Optional<OomWatch> oomWatch() {
        return cgroup.oomKills().isPresent() ? Optional.of(new OomWatch(cgroup, Path.of("/proc"))) : Optional.empty();
    }

    private static String rootWay() {
        return "make the %s controller available (cgroup v2: listed in /sys/fs/cgroup/cgroup.controllers and not bound"
                + " to a v1 hierarchy; cgroup v1: a mounted, writable hierarchy for it)";
    }

    private static String userWay() {
        return "an ordinary user needs a delegated cgroup v2 subtree offering %s: run under `systemd-run --user --scope"
                + " -p Delegate=yes agentjail run ...` (systemd with cgroup v2), or start agentjail as root";
    }

    /** {@code 512m}, {@code 16g}, as the policy writes sizes. */
    static String size(long bytes) {
        if (bytes % (1L << 30) == 0) {
            return (bytes >> 30) + "g";
        }
        if (bytes % (1L << 20) == 0) {
            return (bytes >> 20) + "m";
        }
        if (bytes % (1L << 10) == 0) {
            return (bytes >> 10) + "k";
        }
        return bytes + " bytes";
    }

    /** {@code 2}, {@code 0.5}, {@code 1.25}. */
    static String cpus(int millis) {
        return BigDecimal.valueOf(millis, 3).stripTrailingZeros().toPlainString();
    }
}

package dev.agentjail.jail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Names the processes the memory limit's OOM killer kills. The kernel counts kills ({@code oom_kill}) and names them
 * in its log only: when the counter grows, the victims are read from the kernel log ({@code dmesg}: its {@code
 * oom-kill:} lines whose {@code oom_memcg} is the session's cgroup) where this process may read it (root, or {@code
 * kernel.dmesg_restrict=0}). Else, and for kills the log does not show, they are taken from samples of the memory
 * cgroup every {@link #INTERVAL_MILLIS} ms (each process's name and resident size): the processes gone since the last
 * sample, largest first (the killer picks by size). A victim that lived less than one interval, or died together with
 * others, may then be named wrongly or not at all ("an unidentified process").
 */
public final class OomWatch implements AutoCloseable {
    static final long INTERVAL_MILLIS = 100;

    private record Seen(String name, long residentPages) {}

    /** The kernel's line for one kill, as printed since Linux 4.19 (mm/oom_kill.c dump_oom_summary). */
    private static final java.util.regex.Pattern KILL_LINE =
            java.util.regex.Pattern.compile("oom-kill:.*oom_memcg=([^,\\s]*).*,task=([^,]*),pid=(\\d+)");

    private final java.util.function.Supplier<List<String>> kernelLog;
    private final java.util.Set<Long> named = new java.util.HashSet<>();

    private final SessionCgroup cgroup;
    private final Path proc;
    private final List<String> hits = new ArrayList<>();
    private Map<Long, Seen> last = Map.of();
    private long kills;
    private Thread thread;

    OomWatch(SessionCgroup cgroup, Path proc) {
        this(cgroup, proc, OomWatch::dmesg);
    }

    OomWatch(SessionCgroup cgroup, Path proc, java.util.function.Supplier<List<String>> kernelLog) {
        this.cgroup = cgroup;
        this.proc = proc;
        this.kernelLog = kernelLog;
        this.kills = cgroup.oomKills().orElse(0L);
    }

    /** The kernel log's lines, or none when it cannot be read (a restricted log, no dmesg): never fails. */
    static List<String> dmesg() {
        try {
            Process p = new ProcessBuilder("dmesg")
                    .redirectErrorStream(false)
                    .redirectError(ProcessBuilder.Redirect.DISCARD)
                    .start();
            p.getOutputStream().close();
            java.util.concurrent.CompletableFuture<String> out = java.util.concurrent.CompletableFuture.supplyAsync(
                    () -> {
                        try {
                            return new String(
                                    p.getInputStream().readNBytes(4 << 20), java.nio.charset.StandardCharsets.UTF_8);
                        } catch (IOException e) {
                            return "";
                        }
                    },
                    r -> Thread.ofVirtual().start(r));
            if (!p.waitFor(2, java.util.concurrent.TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return List.of();
            }
            return p.exitValue() == 0
                    ? out.get(2, java.util.concurrent.TimeUnit.SECONDS).lines().toList()
                    : List.of();
        } catch (IOException
                | InterruptedException
                | java.util.concurrent.ExecutionException
                | java.util.concurrent.TimeoutException e) {
            return List.of();
        }
    }

    /** The kills of the session's memory cgroup the kernel log names, not named before: "NAME (pid N)". */
    private List<String> fromKernelLog() {
        String group = cgroup.placements().get("memory") instanceof SessionCgroup.Placed placed
                ? placed.dir().getFileName().toString()
                : null;
        List<String> victims = new ArrayList<>();
        if (group == null) {
            return victims;
        }
        for (String line : kernelLog.get()) {
            java.util.regex.Matcher m = KILL_LINE.matcher(line);
            if (m.find() && (m.group(1).equals("/" + group) || m.group(1).endsWith("/" + group))) {
                long pid = Long.parseLong(m.group(3));
                if (named.add(pid)) {
                    victims.add(m.group(2) + " (pid " + pid + ")");
                }
            }
        }
        return victims;
    }

    /** Starts sampling, on a daemon thread of its own. */
    public synchronized OomWatch start() {
        thread = Thread.ofPlatform().daemon().name("oom-watch").start(() -> {
            try {
                while (!Thread.currentThread().isInterrupted()) {
                    sample();
                    Thread.sleep(INTERVAL_MILLIS);
                }
            } catch (InterruptedException e) {
                // close() stops the watch.
            }
        });
        return this;
    }

    /**
     * Stops sampling, takes a last sample (the jail has exited: every process is gone) and returns the kills, one
     * line each: {@code memory: oom-kill of NAME (pid N)}.
     */
    public List<String> hits() {
        Thread t;
        synchronized (this) {
            t = thread;
        }
        if (t != null) {
            t.interrupt();
            try {
                t.join(1000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        sample();
        synchronized (this) {
            return List.copyOf(hits);
        }
    }

    @Override
    public void close() {
        hits();
    }

    synchronized void sample() {
        long now = cgroup.oomKills().orElse(kills);
        Map<Long, Seen> seen = new HashMap<>();
        for (long pid : cgroup.memoryPids()) {
            Seen s = read(pid);
            if (s != null) {
                seen.put(pid, s);
            }
        }
        if (now > kills) {
            List<String> logged = fromKernelLog();
            for (int i = 0; i < logged.size() && kills < now; i++, kills++) {
                hits.add("memory: oom-kill of " + logged.get(i));
            }
            List<Map.Entry<Long, Seen>> gone = last.entrySet().stream()
                    .filter(e -> !seen.containsKey(e.getKey()) && !named.contains(e.getKey()))
                    .sorted(Comparator.comparingLong(
                                    (Map.Entry<Long, Seen> e) -> e.getValue().residentPages())
                            .reversed())
                    .toList();
            for (long i = 0; i < now - kills; i++) {
                hits.add(
                        i < gone.size()
                                ? "memory: oom-kill of "
                                        + gone.get((int) i).getValue().name() + " (pid "
                                        + gone.get((int) i).getKey() + ")"
                                : "memory: oom-kill of an unidentified process");
            }
            kills = now;
        }
        last = seen;
    }

    private Seen read(long pid) {
        try {
            String name = Files.readString(proc.resolve(pid + "/comm")).strip();
            String[] statm =
                    Files.readString(proc.resolve(pid + "/statm")).trim().split(" ");
            return new Seen(name, statm.length > 1 ? Long.parseLong(statm[1]) : 0);
        } catch (IOException | NumberFormatException e) {
            return null;
        }
    }
}

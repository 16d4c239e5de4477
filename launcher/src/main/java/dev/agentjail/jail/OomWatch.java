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
 * Names the processes the memory limit's OOM killer kills. The kernel counts kills ({@code oom_kill}) but does not
 * name them outside its log, so this samples the memory cgroup every {@link #INTERVAL_MILLIS} ms: each process's name
 * ({@code /proc/PID/comm}) and resident size; when the counter grows, the victims are taken to be the processes gone
 * since the last sample, largest first (the killer picks by size). A victim that lived less than one interval, or
 * died together with others, may be named wrongly or not at all ("an unidentified process").
 */
public final class OomWatch implements AutoCloseable {
    static final long INTERVAL_MILLIS = 100;

    private record Seen(String name, long residentPages) {}

    private final SessionCgroup cgroup;
    private final Path proc;
    private final List<String> hits = new ArrayList<>();
    private Map<Long, Seen> last = Map.of();
    private long kills;
    private Thread thread;

    OomWatch(SessionCgroup cgroup, Path proc) {
        this.cgroup = cgroup;
        this.proc = proc;
        this.kills = cgroup.oomKills().orElse(0L);
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
            List<Map.Entry<Long, Seen>> gone = last.entrySet().stream()
                    .filter(e -> !seen.containsKey(e.getKey()))
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

package dev.agentjail.proxy.mcp.host;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One host-side MCP server process: started in a process group of its own (through {@code setsid} when the host has
 * it), fed newline-delimited JSON on stdin by a writer thread, read line by line from stdout, its stderr kept as a
 * bounded tail, and stopped as a group (TERM, then KILL) with its descendants.
 */
final class ChildProcess {
    static final int MAX_LINE = 4 << 20;
    static final long MAX_QUEUED_BYTES = 16L << 20;
    static final int STDERR_TAIL = 8 * 1024;
    static final long STOP_GRACE_MILLIS = 2000;

    private static final List<Path> SETSID = List.of(Path.of("/usr/bin/setsid"), Path.of("/bin/setsid"));
    private static final List<Path> KILL = List.of(Path.of("/usr/bin/kill"), Path.of("/bin/kill"));
    private static final byte[] END = {'\n'};

    /** What the process says; called on its reader thread. */
    interface Listener {
        void onLine(byte[] line);

        /** Once, when stdout has ended and the process is gone; {@code why} is safe to show. */
        void onExit(String why);
    }

    private final Process process;
    private final String label;
    private final boolean ownGroup;
    private final LinkedBlockingQueue<byte[]> input = new LinkedBlockingQueue<>();
    private final AtomicLong queued = new AtomicLong();
    private final StderrTail stderr = new StderrTail(STDERR_TAIL);
    private final AtomicBoolean stopping = new AtomicBoolean();
    private final CompletableFuture<Void> stopped = new CompletableFuture<>();
    private volatile String problem;

    private ChildProcess(Process process, String label, boolean ownGroup) {
        this.process = process;
        this.label = label;
        this.ownGroup = ownGroup;
    }

    /** Starts {@code argv} in {@code dir} with exactly {@code env}; the listener hears from it from now on. */
    static ChildProcess start(List<String> argv, Map<String, String> env, Path dir, String label, Listener listener)
            throws IOException {
        Optional<Path> setsid = SETSID.stream().filter(Files::isExecutable).findFirst();
        List<String> command = new ArrayList<>();
        setsid.ifPresent(p -> command.add(p.toString()));
        command.addAll(argv);
        ProcessBuilder pb = new ProcessBuilder(command).directory(dir.toFile());
        pb.environment().clear();
        pb.environment().putAll(env);
        ChildProcess child = new ChildProcess(pb.start(), label, setsid.isPresent());
        child.startThreads(listener);
        return child;
    }

    long pid() {
        return process.pid();
    }

    /** Queues one message for stdin; false when the process is gone or not reading what it is sent. */
    boolean write(byte[] line) {
        if (stopping.get() || !process.isAlive()) {
            return false;
        }
        if (queued.addAndGet(line.length + 1L) > MAX_QUEUED_BYTES) {
            queued.addAndGet(-(line.length + 1L));
            return false;
        }
        input.add(line);
        return true;
    }

    /** The stderr tail, for the host's diagnostics only. */
    String stderrTail() {
        return stderr.text();
    }

    private void startThreads(Listener listener) {
        Thread.ofPlatform().daemon().name("mcp-" + label + "-stdin").start(this::writeLoop);
        Thread.ofPlatform()
                .daemon()
                .name("mcp-" + label + "-stderr")
                .start(() -> stderr.drain(process.getErrorStream()));
        Thread.ofPlatform().daemon().name("mcp-" + label + "-stdout").start(() -> readLoop(listener));
    }

    private void writeLoop() {
        try (OutputStream out = process.getOutputStream()) {
            while (true) {
                byte[] line = input.poll(1, TimeUnit.SECONDS);
                if (line == null) {
                    if (stopping.get() || !process.isAlive()) {
                        return;
                    }
                    continue;
                }
                queued.addAndGet(-(line.length + 1L));
                out.write(line);
                out.write(END);
                if (input.isEmpty()) {
                    out.flush();
                }
            }
        } catch (IOException e) {
            // The process closed its stdin or exited: the reader sees the end and reports it.
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void readLoop(Listener listener) {
        try {
            new LineReader(process.getInputStream(), MAX_LINE).readAll(listener::onLine);
        } catch (LineReader.LineTooLongException e) {
            problem = "wrote " + e.getMessage() + " to stdout";
            stop();
        } catch (IOException e) {
            // Closed under us by stop(): the exit below says what happened.
        }
        try {
            process.waitFor();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        input.clear();
        String why = problem != null
                ? problem
                : stopping.get() ? "was stopped" : "exited with status " + process.exitValue();
        listener.onExit(why);
    }

    /**
     * Stops the process group and every descendant: TERM, then after a grace period KILL. Idempotent; the future
     * completes once the process is gone (the JVM reaps it).
     */
    CompletableFuture<Void> stop() {
        if (!stopping.compareAndSet(false, true)) {
            return stopped;
        }
        Thread.ofPlatform().daemon().name("mcp-" + label + "-stop").start(() -> {
            try {
                terminate();
            } finally {
                stopped.complete(null);
            }
        });
        return stopped;
    }

    private void terminate() {
        List<ProcessHandle> tree = new ArrayList<>(process.descendants().toList());
        signalGroup("TERM");
        process.destroy();
        tree.forEach(ProcessHandle::destroy);
        try {
            if (!process.waitFor(STOP_GRACE_MILLIS, TimeUnit.MILLISECONDS)) {
                signalGroup("KILL");
                process.destroyForcibly();
                process.waitFor(STOP_GRACE_MILLIS, TimeUnit.MILLISECONDS);
            }
            // Whatever of the group outlived its leader (a server that ignores TERM in a helper) goes now.
            signalGroup("KILL");
            tree.addAll(process.descendants().toList());
            tree.forEach(ProcessHandle::destroyForcibly);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Signals the process group the child leads; without setsid there is none of its own to signal. */
    private void signalGroup(String signal) {
        if (!ownGroup) {
            return;
        }
        Optional<Path> kill = KILL.stream().filter(Files::isExecutable).findFirst();
        if (kill.isEmpty()) {
            return;
        }
        try {
            Process p = new ProcessBuilder(kill.get().toString(), "-s", signal, "--", "-" + process.pid())
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .redirectError(ProcessBuilder.Redirect.DISCARD)
                    .start();
            p.waitFor(STOP_GRACE_MILLIS, TimeUnit.MILLISECONDS);
        } catch (IOException e) {
            // No group left to signal, or no kill: the descendants are signalled one by one as well.
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}

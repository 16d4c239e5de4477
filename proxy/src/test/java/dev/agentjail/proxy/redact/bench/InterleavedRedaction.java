package dev.agentjail.proxy.redact.bench;

import java.io.File;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Compares builds of {@link RedactionBenchmark} in the same minutes: each build's class path gets its own class loader
 * in one JVM, and the builds run in turn (the order alternating) for a number of rounds, each round timed by the
 * thread's CPU time, so the time the thread waits for a core on a shared machine is not counted. Prints the best and
 * the median MB/s of every build. Not a test; run by hand, see docs/benchmarks.md.
 *
 * <p>Arguments: {@code body} ({@code clean} or {@code secrets}), chunk size, rounds, milliseconds per round, then one
 * class path per build (its {@code test-classes}, {@code classes} and dependencies).
 */
public final class InterleavedRedaction {
    private InterleavedRedaction() {}

    public static void main(String[] args) throws Exception {
        String body = args[0];
        int chunk = Integer.parseInt(args[1]);
        int rounds = Integer.parseInt(args[2]);
        long roundNanos = Long.parseLong(args[3]) * 1_000_000L;
        int builds = args.length - 4;
        Object[] bench = new Object[builds];
        Method[] run = new Method[builds];
        for (int b = 0; b < builds; b++) {
            List<URL> urls = new ArrayList<>();
            for (String path : args[4 + b].split(File.pathSeparator)) {
                urls.add(new File(path).toURI().toURL());
            }
            ClassLoader loader = new URLClassLoader(urls.toArray(URL[]::new), ClassLoader.getPlatformClassLoader());
            Class<?> type = loader.loadClass(RedactionBenchmark.class.getName());
            bench[b] = type.getDeclaredConstructor().newInstance();
            type.getField("body").set(bench[b], body);
            type.getField("chunk").set(bench[b], chunk);
            type.getMethod("setUp").invoke(bench[b]);
            run[b] = type.getMethod("redactStreaming");
        }
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        double[][] mbs = new double[builds][rounds];
        long sink = 0;
        for (int r = -3; r < rounds; r++) {
            for (int k = 0; k < builds; k++) {
                int b = (r & 1) == 0 ? k : builds - 1 - k;
                long start = System.nanoTime();
                long cpu = threads.getCurrentThreadCpuTime();
                long ops = 0;
                do {
                    sink += (int) run[b].invoke(bench[b]);
                    ops++;
                } while (System.nanoTime() - start < roundNanos);
                cpu = threads.getCurrentThreadCpuTime() - cpu;
                if (r >= 0) {
                    mbs[b][r] = ops * (double) RedactionBenchmark.SIZE / cpu * 1e9 / 1e6;
                }
            }
        }
        for (int b = 0; b < builds; b++) {
            double[] sorted = mbs[b].clone();
            Arrays.sort(sorted);
            System.out.printf(
                    "%s chunk=%d build %d: best %.0f, median %.0f MB/s%n",
                    body, chunk, b, sorted[rounds - 1], sorted[rounds / 2]);
        }
        if (sink == Long.MIN_VALUE) {
            System.out.println();
        }
    }
}

package dev.agentjail.cli;

import java.io.PrintStream;

/**
 * Start-up timing for the people tuning it: with {@code AGENTJAIL_TRACE_STARTUP=1}, each phase of a
 * session's set-up prints one line to stderr with the milliseconds since the JVM started. Off by
 * default, and then free: one static check.
 */
public final class StartupTrace {
    private static final boolean ON = "1".equals(System.getenv("AGENTJAIL_TRACE_STARTUP"));
    private static final long START_MS = ON
            ? ProcessHandle.current()
                    .info()
                    .startInstant()
                    .map(i -> i.toEpochMilli())
                    .orElse(System.currentTimeMillis())
            : 0;

    private StartupTrace() {}

    /** Notes that {@code phase} is done. */
    public static void mark(String phase) {
        if (ON) {
            PrintStream err = System.err;
            err.println("agentjail: trace +" + (System.currentTimeMillis() - START_MS) + " ms " + phase);
        }
    }
}

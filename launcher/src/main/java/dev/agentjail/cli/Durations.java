package dev.agentjail.cli;

import dev.agentjail.policy.MalformedEntryException;
import dev.agentjail.policy.Quantities;
import java.time.Duration;

/**
 * Parses duration options ({@code 90s}, {@code 30m}, {@code 2h}) with the same rules as the policy file, and prints
 * durations the same way.
 */
final class Durations {
    private Durations() {}

    static Duration parse(String text, String option) {
        try {
            return Quantities.parseDuration(text.strip());
        } catch (MalformedEntryException e) {
            throw new CliException(ExitCodes.USAGE, option + ": " + e.getMessage() + ", got '" + text + "'");
        }
    }

    /**
     * {@code d} as people write it and {@link #parse} reads it back: in the largest of hours, minutes and seconds that
     * holds it whole ({@code 2h}, {@code 90s}), milliseconds for what is not whole seconds.
     */
    static String format(Duration d) {
        if (d.toNanosPart() % 1_000_000 == 0 && d.toMillisPart() != 0) {
            return d.toMillis() + "ms";
        }
        if (d.toNanosPart() != 0) {
            return d.toNanos() + "ns";
        }
        long seconds = d.getSeconds();
        if (seconds != 0 && seconds % 3600 == 0) {
            return seconds / 3600 + "h";
        }
        if (seconds != 0 && seconds % 60 == 0) {
            return seconds / 60 + "m";
        }
        return seconds + "s";
    }
}

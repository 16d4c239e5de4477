package dev.agentjail.cli;

import dev.agentjail.policy.MalformedEntryException;
import dev.agentjail.policy.Quantities;
import java.time.Duration;

/** Parses duration options ({@code 90s}, {@code 30m}, {@code 2h}) with the same rules as the policy file. */
final class Durations {
    private Durations() {}

    static Duration parse(String text, String option) {
        try {
            return Quantities.parseDuration(text.strip());
        } catch (MalformedEntryException e) {
            throw new CliException(ExitCodes.USAGE, option + ": " + e.getMessage() + ", got '" + text + "'");
        }
    }
}

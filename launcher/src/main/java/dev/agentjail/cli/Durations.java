package dev.agentjail.cli;

import java.time.Duration;

/** Parses durations written like {@code 500ms}, {@code 90s}, {@code 30m} or {@code 2h}. */
final class Durations {
    private Durations() {}

    static Duration parse(String text, String option) {
        var m = java.util.regex.Pattern.compile("([0-9]{1,9})(ms|s|m|h)").matcher(text.strip());
        if (!m.matches()) {
            throw new CliException(
                    ExitCodes.USAGE, option + ": expected a duration like 90s, 30m or 2h, got '" + text + "'");
        }
        long n = Long.parseLong(m.group(1));
        return switch (m.group(2)) {
            case "ms" -> Duration.ofMillis(n);
            case "s" -> Duration.ofSeconds(n);
            case "m" -> Duration.ofMinutes(n);
            default -> Duration.ofHours(n);
        };
    }
}

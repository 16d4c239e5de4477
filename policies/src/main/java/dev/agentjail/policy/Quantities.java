package dev.agentjail.policy;

import java.time.Duration;

/**
 * Strict parsing of the durations ({@code 90s}, {@code 30m}, {@code 2h}) and sizes ({@code 512k},
 * {@code 512m}, {@code 8g}, binary) that policies and command-line options use: a positive integer
 * without leading zeros and exactly one unit, within the bounds of {@link Limits}.
 */
public final class Quantities {
    /** Enough digits for any value within bounds in the smallest unit, with room to report "too large". */
    private static final int MAX_DIGITS = 15;

    private Quantities() {}

    public static Duration parseDuration(String text) throws MalformedEntryException {
        long number = number(text, "smh", "expected a number followed by s, m or h (like 90s, 30m or 2h)");
        long unitSeconds = switch (text.charAt(text.length() - 1)) {
            case 's' -> 1;
            case 'm' -> 60;
            default -> 3600;
        };
        if (number > Limits.MAX_TIMEOUT.toSeconds() / unitSeconds) {
            throw new MalformedEntryException("longer than 30 days");
        }
        return Duration.ofSeconds(number * unitSeconds);
    }

    /** A size in bytes; units are binary ({@code 1k} is 1024 bytes) and may be upper case. */
    public static long parseSize(String text) throws MalformedEntryException {
        long number = number(text, "kmgKMG", "expected a number followed by k, m or g (like 512m or 8g)");
        int shift = switch (Character.toLowerCase(text.charAt(text.length() - 1))) {
            case 'k' -> 10;
            case 'm' -> 20;
            default -> 30;
        };
        if (number > Limits.MAX_SIZE >> shift) {
            throw new MalformedEntryException("larger than 1 TiB");
        }
        return number << shift;
    }

    /** The positive number before a one-character unit taken from {@code units}. */
    private static long number(String text, String units, String shape) throws MalformedEntryException {
        int last = text.length() - 1;
        if (last < 1 || units.indexOf(text.charAt(last)) < 0) {
            throw new MalformedEntryException(shape);
        }
        for (int i = 0; i < last; i++) {
            if (text.charAt(i) < '0' || text.charAt(i) > '9') {
                throw new MalformedEntryException(shape);
            }
        }
        if (text.charAt(0) == '0') {
            throw new MalformedEntryException(last == 1 ? "must be positive" : "leading zeros are not allowed");
        }
        if (last > MAX_DIGITS) {
            // Every caller's bound is far below 10^15 in any unit.
            return Long.MAX_VALUE;
        }
        return Long.parseLong(text, 0, last, 10);
    }
}

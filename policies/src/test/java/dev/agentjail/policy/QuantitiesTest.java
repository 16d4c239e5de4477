package dev.agentjail.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class QuantitiesTest {
    static Stream<Arguments> durations() {
        return Stream.of(
                arguments("1s", Duration.ofSeconds(1)),
                arguments("90s", Duration.ofSeconds(90)),
                arguments("30m", Duration.ofMinutes(30)),
                arguments("2h", Duration.ofHours(2)),
                arguments("720h", Duration.ofDays(30)),
                arguments("43200m", Duration.ofDays(30)),
                arguments("2592000s", Duration.ofDays(30)));
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("durations")
    void durationIsParsed(String text, Duration expected) throws Exception {
        assertEquals(expected, Quantities.parseDuration(text));
    }

    static Stream<Arguments> sizes() {
        return Stream.of(
                arguments("1k", 1024L),
                arguments("512K", 512L << 10),
                arguments("512m", 512L << 20),
                arguments("1g", 1L << 30),
                arguments("16G", 16L << 30),
                arguments("1024g", 1L << 40),
                arguments("1048576m", 1L << 40),
                arguments("1073741824k", 1L << 40));
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("sizes")
    void sizeIsParsedInBinaryUnits(String text, long expected) throws Exception {
        assertEquals(expected, Quantities.parseSize(text));
    }

    static Stream<Arguments> badDurations() {
        String shape = "expected a number followed by s, m or h (like 90s, 30m or 2h)";
        return Stream.of(
                arguments("", shape),
                arguments("s", shape),
                arguments("10", shape),
                arguments("10ms", shape),
                arguments("1d", shape),
                arguments("+1h", shape),
                arguments("1 h", shape),
                arguments("\uff11h", shape),
                arguments("0h", "must be positive"),
                arguments("00s", "leading zeros are not allowed"),
                arguments("721h", "longer than 30 days"),
                arguments("43201m", "longer than 30 days"),
                arguments("9223372036854775807s", "longer than 30 days"));
    }

    @ParameterizedTest(name = "[{index}] {0}: {1}")
    @MethodSource("badDurations")
    void badDurationIsRefused(String text, String reason) {
        assertEquals(
                reason,
                assertThrows(MalformedEntryException.class, () -> Quantities.parseDuration(text))
                        .getMessage());
    }

    static Stream<Arguments> badSizes() {
        String shape = "expected a number followed by k, m or g (like 512m or 8g)";
        return Stream.of(
                arguments("", shape),
                arguments("g", shape),
                arguments("4096", shape),
                arguments("8gb", shape),
                arguments("8GiB", shape),
                arguments("1t", shape),
                arguments("1.5g", shape),
                arguments("-1g", shape),
                arguments("0k", "must be positive"),
                arguments("08g", "leading zeros are not allowed"),
                arguments("1025g", "larger than 1 TiB"),
                arguments("1048577m", "larger than 1 TiB"),
                arguments("999999999999999999999999k", "larger than 1 TiB"));
    }

    @ParameterizedTest(name = "[{index}] {0}: {1}")
    @MethodSource("badSizes")
    void badSizeIsRefused(String text, String reason) {
        assertEquals(
                reason,
                assertThrows(MalformedEntryException.class, () -> Quantities.parseSize(text))
                        .getMessage());
    }
}

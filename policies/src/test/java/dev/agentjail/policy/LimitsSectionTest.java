package dev.agentjail.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import java.time.Duration;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class LimitsSectionTest {
    private static Limits load(String section) throws PolicyException {
        return PolicyLoader.parse("version: 1\nlimits:\n" + section, "p.yaml").limits();
    }

    @Test
    void missingKeysKeepTheirDefaults() throws Exception {
        Limits timeoutOnly = load("  timeout: 90s\n");
        assertEquals(Duration.ofSeconds(90), timeoutOnly.timeout());
        assertEquals(Limits.defaults().withTimeout(Duration.ofSeconds(90)).memoryBytes(), timeoutOnly.memoryBytes());
        assertEquals(Set.of("timeout"), timeoutOnly.explicit());
        assertFalse(timeoutOnly.isExplicit("memory"));
        assertEquals(0, timeoutOnly.addressSpaceBytes());
        assertEquals(0, timeoutOnly.cpuMillis());
        assertEquals(new Limits(Duration.ofHours(12), 16L << 30, 4096, 4096, 16L << 30, 1L << 30), Limits.defaults());
        assertEquals(Set.of(), Limits.defaults().explicit());
    }

    @Test
    void everyKeyLoads() throws Exception {
        assertEquals(
                new Limits(
                        Duration.ofDays(30),
                        1L << 40,
                        Limits.MAX_PROCESSES,
                        Limits.MAX_OPEN_FILES,
                        512L << 10,
                        1L << 10,
                        64L << 30,
                        1500,
                        LimitsSection.KEYS),
                load("""
                          timeout: 720h
                          memory: 1024G
                          processes: 4194304
                          open_files: 1048576
                          file_size: 512k
                          tmp_size: "1k"
                          address_space: 64g
                          cpu: 1.5
                        """));
    }

    @ParameterizedTest(name = "[{index}] cpu: {0}")
    @MethodSource("cpuQuotas")
    void cpuQuotaIsReadInThousandthsOfACpu(String text, int millis) throws Exception {
        assertEquals(millis, load("  cpu: " + text + "\n").cpuMillis());
    }

    static Stream<Arguments> cpuQuotas() {
        return Stream.of(
                arguments("1", 1000),
                arguments("2", 2000),
                arguments("0.5", 500),
                arguments("0.001", 1),
                arguments("1.25", 1250),
                arguments("\"3\"", 3000),
                arguments("1024", 1024000));
    }

    /** Each bad value and the exact message: FILE:LINE: KEY: problem. */
    static Stream<Arguments> badSections() {
        return Stream.of(
                arguments("  timout: 2h\n", "p.yaml:3: limits.timout: unknown key 'timout' (did you mean 'timeout'?)"),
                arguments(
                        "  openfiles: 10\n",
                        "p.yaml:3: limits.openfiles: unknown key 'openfiles' (did you mean 'open_files'?)"),
                arguments("  cpus: 2\n", "p.yaml:3: limits.cpus: unknown key 'cpus' (did you mean 'cpu'?)"),
                arguments(
                        "  swap: 2g\n",
                        "p.yaml:3: limits.swap: unknown key 'swap' (expected one of: address_space, cpu, file_size,"
                                + " memory, open_files, processes, timeout, tmp_size)"),
                // CPU quotas: a positive number of CPUs, at most three decimals, at most 1024
                arguments("  cpu: 0\n", "p.yaml:3: limits.cpu: invalid CPU quota '0': must be positive"),
                arguments(
                        "  cpu: 0.0001\n",
                        "p.yaml:3: limits.cpu: invalid CPU quota '0.0001': expected a number of CPUs (like 2 or 0.5)"),
                arguments(
                        "  cpu: 50%\n",
                        "p.yaml:3: limits.cpu: invalid CPU quota '50%': expected a number of CPUs (like 2 or 0.5)"),
                arguments(
                        "  cpu: -1\n",
                        "p.yaml:3: limits.cpu: invalid CPU quota '-1': expected a number of CPUs (like 2 or 0.5)"),
                arguments("  cpu: 02\n", "p.yaml:3: limits.cpu: invalid CPU quota '02': leading zeros are not allowed"),
                arguments("  cpu: 1025\n", "p.yaml:3: limits.cpu: invalid CPU quota '1025': more than 1024 CPUs"),
                arguments("  cpu: [1]\n", "p.yaml:3: limits.cpu: expected a string, got a list"),
                arguments(
                        "  address_space: 16\n",
                        "p.yaml:3: limits.address_space: invalid size '16': expected a number followed by k, m or g"
                                + " (like 512m or 8g)"),
                arguments("  - 2h\n", "p.yaml:3: limits: expected a mapping, got a list"),
                // durations: a positive integer and one of s, m, h; at most 30 days
                arguments(
                        "  timeout: 2d\n",
                        "p.yaml:3: limits.timeout: invalid duration '2d': expected a number followed by s, m or h"
                                + " (like 90s, 30m or 2h)"),
                arguments(
                        "  timeout: 90\n",
                        "p.yaml:3: limits.timeout: invalid duration '90': expected a number followed by s, m or h"
                                + " (like 90s, 30m or 2h)"),
                arguments(
                        "  timeout: 1h30m\n",
                        "p.yaml:3: limits.timeout: invalid duration '1h30m': expected a number followed by s, m or h"
                                + " (like 90s, 30m or 2h)"),
                arguments(
                        "  timeout: -1h\n",
                        "p.yaml:3: limits.timeout: invalid duration '-1h': expected a number followed by s, m or h"
                                + " (like 90s, 30m or 2h)"),
                arguments(
                        "  timeout: 2H\n",
                        "p.yaml:3: limits.timeout: invalid duration '2H': expected a number followed by s, m or h"
                                + " (like 90s, 30m or 2h)"),
                arguments("  timeout: 0s\n", "p.yaml:3: limits.timeout: invalid duration '0s': must be positive"),
                arguments(
                        "  timeout: 090s\n",
                        "p.yaml:3: limits.timeout: invalid duration '090s': leading zeros are not allowed"),
                arguments(
                        "  timeout: 721h\n", "p.yaml:3: limits.timeout: invalid duration '721h': longer than 30 days"),
                arguments(
                        "  timeout: 2592001s\n",
                        "p.yaml:3: limits.timeout: invalid duration '2592001s': longer than 30 days"),
                arguments(
                        "  timeout: 99999999999999999999999m\n",
                        "p.yaml:3: limits.timeout: invalid duration '99999999999999999999999m': longer than 30 days"),
                arguments("  timeout:\n", "p.yaml:3: limits.timeout: expected a string, got null"),
                // sizes: a positive integer and one of k, m, g (binary); at most 1 TiB
                arguments(
                        "  memory: 8gb\n",
                        "p.yaml:3: limits.memory: invalid size '8gb': expected a number followed by k, m or g (like"
                                + " 512m or 8g)"),
                arguments(
                        "  memory: 8589934592\n",
                        "p.yaml:3: limits.memory: invalid size '8589934592': expected a number followed by k, m or g"
                                + " (like 512m or 8g)"),
                arguments(
                        "  file_size: 1.5g\n",
                        "p.yaml:3: limits.file_size: invalid size '1.5g': expected a number followed by k, m or g"
                                + " (like 512m or 8g)"),
                arguments(
                        "  tmp_size: 1t\n",
                        "p.yaml:3: limits.tmp_size: invalid size '1t': expected a number followed by k, m or g (like"
                                + " 512m or 8g)"),
                arguments("  memory: 0g\n", "p.yaml:3: limits.memory: invalid size '0g': must be positive"),
                arguments("  memory: 1025g\n", "p.yaml:3: limits.memory: invalid size '1025g': larger than 1 TiB"),
                arguments(
                        "  tmp_size: 1073741825k\n",
                        "p.yaml:3: limits.tmp_size: invalid size '1073741825k': larger than 1 TiB"),
                arguments(
                        "  file_size: 99999999999999999999k\n",
                        "p.yaml:3: limits.file_size: invalid size '99999999999999999999k': larger than 1 TiB"),
                arguments("  memory: [8g]\n", "p.yaml:3: limits.memory: expected a string, got a list"),
                // counts
                arguments("  processes: 0\n", "p.yaml:3: limits.processes: must be between 1 and 4194304, got 0"),
                arguments(
                        "  processes: 4194305\n",
                        "p.yaml:3: limits.processes: must be between 1 and 4194304, got 4194305"),
                arguments("  processes: 1k\n", "p.yaml:3: limits.processes: expected an integer, got '1k'"),
                arguments("  open_files: -1\n", "p.yaml:3: limits.open_files: expected an integer, got '-1'"),
                arguments(
                        "  open_files: 2000000\n",
                        "p.yaml:3: limits.open_files: must be between 1 and 1048576, got 2000000"),
                arguments(
                        "  open_files: 99999999999\n",
                        "p.yaml:3: limits.open_files: expected an integer, got '99999999999'"));
    }

    @ParameterizedTest(name = "[{index}] {1}")
    @MethodSource("badSections")
    void badSectionIsRefusedWithFileLineAndKey(String section, String message) {
        PolicyException e = assertThrows(PolicyException.class, () -> load(section));
        assertEquals(message, e.getMessage());
    }
}

package dev.agentjail.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * One exit-code table for every command: the README's table is {@link ExitCodes#TABLE}, and every command that takes
 * a file exits with the same code, the table's 2, when that file does not exist, naming it with the OS reason.
 */
class ExitCodeTableTest {
    private static final String MISSING = "/nonexistent-agentjail-test/missing";

    @TempDir
    static Path tmp;

    /** Every command that reads a file the user names, with that file missing. */
    static Stream<Arguments> commandsWithAMissingFile() throws IOException {
        Path dir = tmp.toRealPath();
        String log = CliErrorsTest.sampleLog();
        String out = dir.resolve("out").toString();
        return Stream.of(
                Arguments.of(List.of("log", "tail", MISSING)),
                Arguments.of(List.of("log", "summary", MISSING)),
                Arguments.of(List.of("log", "export", "--format", "ecs", "-o", out, MISSING)),
                Arguments.of(List.of("log", "verify", MISSING)),
                Arguments.of(List.of("log", "verify", "--hmac-key", MISSING, log)),
                Arguments.of(List.of("report", "-o", out, MISSING)),
                Arguments.of(List.of("policy", "suggest", "--project", dir.toString(), "--from-log", MISSING)),
                Arguments.of(List.of("policy", "check", MISSING)),
                Arguments.of(List.of("policy", "show", "--project", dir.toString(), "--policy", MISSING)),
                Arguments.of(List.of("run", "--project", dir.toString(), "--policy", MISSING, "--", "true")),
                Arguments.of(List.of("run", "--project", dir.toString(), "--audit-hmac-key", MISSING, "--", "true")),
                Arguments.of(List.of("proxy", "--policy", MISSING, "--listen", "127.0.0.1:0")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("commandsWithAMissingFile")
    void aMissingInputFileIsTheSameExitCodeForEveryCommand(List<String> args) {
        LogReaderTestCli.Run r = LogReaderTestCli.run(args.toArray(String[]::new));

        assertEquals(code("2"), r.exitCode(), () -> String.join(" ", args) + ": " + r.err());
        assertEquals(1, r.err().lines().count(), r.err());
        assertTrue(
                r.err().contains(MISSING) && r.err().contains("no such file or directory"),
                () -> "the file and the OS reason: " + r.err());
    }

    @Test
    void theReadmesTableIsTheCodesTable() throws IOException {
        Path readme = Path.of("..", "README.md");
        String text = Files.readString(readme);
        String table = text.substring(text.indexOf("## Exit codes"), text.indexOf("## Module map"));
        List<ExitCodes.Row> rows = new ArrayList<>();
        Matcher m = Pattern.compile("(?m)^\\| ([0-9-]+) \\| (.+) \\|$").matcher(table);
        while (m.find()) {
            rows.add(new ExitCodes.Row(m.group(1), plain(m.group(2))));
        }
        assertEquals(ExitCodes.TABLE, rows, "README.md's exit-code table and ExitCodes.TABLE differ");
        for (Map.Entry<String, Integer> named : Map.of(
                        "0", ExitCodes.OK,
                        "1", ExitCodes.FAILURE,
                        "2", ExitCodes.USAGE,
                        "3", ExitCodes.ENVIRONMENT,
                        "124", ExitCodes.TIMEOUT,
                        "125", ExitCodes.JAIL_SETUP,
                        "127", ExitCodes.NOT_FOUND)
                .entrySet()) {
            assertEquals(named.getValue(), code(named.getKey()), "the constant for row " + named.getKey());
        }
    }

    @Test
    void everyManPageHasTheTable() {
        java.util.Map<String, String> pages = ManPages.all(Main.commandLine(), "test");
        assertTrue(pages.size() > 10, pages::toString);
        pages.forEach((name, page) -> {
            for (ExitCodes.Row row : ExitCodes.TABLE) {
                assertTrue(page.contains(ManPages.escapeLine(row.meaning())), () -> name + " lacks " + row);
            }
        });
    }

    /** The code of the table's row {@code codes}, which must be there. */
    private static int code(String codes) {
        return ExitCodes.TABLE.stream()
                .filter(r -> r.codes().equals(codes))
                .map(r -> Integer.parseInt(r.codes()))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no row " + codes + " in ExitCodes.TABLE"));
    }

    /** A README cell as plain text: code spans and links as their text. */
    private static String plain(String cell) {
        return cell.replace("`", "").replaceAll("\\[([^]]+)]\\([^)]+\\)", "$1");
    }
}

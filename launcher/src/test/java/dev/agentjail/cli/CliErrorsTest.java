package dev.agentjail.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Errors name the cause and the way out (issue 19): an I/O failure carries the operating system's reason, met for real
 * (a directory without write access, a read-only file system, a full disk, a path under a file); {@code run} refuses
 * a project directory that is no project's before anything starts; a YAML mistake is {@code FILE:LINE:COL} and words.
 */
class CliErrorsTest {
    @TempDir
    Path tmp;

    private Path dir() throws IOException {
        return tmp.toRealPath();
    }

    @Test
    void anAuditLogInADirectoryWithoutWriteAccessSaysPermissionDeniedAndTheWayOut() throws Exception {
        Path dir = dir();
        Path logs = Files.createDirectory(dir.resolve("logs"));
        Files.setPosixFilePermissions(logs, PosixFilePermissions.fromString("r-x------"));
        Path policy = Files.writeString(dir.resolve("policy.yaml"), "version: 1\n");
        Path log = logs.resolve("aj.jsonl");
        // Under bwrap without capabilities: the mode bits hold for root too.
        CliProcess cli = new CliProcess(dir, dir).underBwrap();

        CliProcess.Run r = cli.run(
                "proxy",
                "--policy",
                policy.toString(),
                "--listen",
                "127.0.0.1:0",
                "--ca-dir",
                dir.resolve("ca").toString(),
                "--audit-log",
                log.toString());

        assertEquals(ExitCodes.ENVIRONMENT, r.exitCode(), r.describe());
        assertEquals(
                "agentjail: cannot open audit log " + log + ": " + logs.resolve(".aj.jsonl.lock")
                        + ": permission denied; pass --audit-log FILE in a directory you can write\n",
                r.err(),
                r.describe());
    }

    @Test
    void aReportInADirectoryWithoutWriteAccessSaysPermissionDenied() throws Exception {
        Path dir = dir();
        Path out = Files.createDirectory(dir.resolve("unwritable"));
        Files.setPosixFilePermissions(out, PosixFilePermissions.fromString("r-x------"));
        CliProcess cli = new CliProcess(dir, dir).underBwrap();

        CliProcess.Run r = cli.run("report", "-o", out.resolve("x.html").toString(), sampleLog());

        assertEquals(ExitCodes.FAILURE, r.exitCode(), r.describe());
        assertEquals(
                "agentjail: cannot write " + out.resolve("x.html") + ": permission denied (creating a file in " + out
                        + ")",
                lastLine(r.err()));
    }

    @Test
    void aReportOnAReadOnlyFileSystemSaysSo() throws Exception {
        Path dir = dir();
        Path out = Files.createDirectory(dir.resolve("out"));
        CliProcess cli = new CliProcess(dir, dir).underBwrap("--ro-bind", out.toString(), out.toString());

        CliProcess.Run r = cli.run("report", "-o", out.resolve("r.html").toString(), sampleLog());

        assertEquals(ExitCodes.FAILURE, r.exitCode(), r.describe());
        assertEquals(
                "agentjail: cannot write " + out.resolve("r.html") + ": read-only file system (creating a file in "
                        + out + ")",
                lastLine(r.err()));
    }

    @Test
    void aReportOnAFullDiskSaysNoSpaceLeftAndLeavesNothing() throws Exception {
        Path dir = dir();
        Path small = Files.createDirectory(dir.resolve("small"));
        // A 4 KiB tmpfs: the page's script and style alone are larger.
        CliProcess cli = new CliProcess(dir, dir).underBwrap("--size", "4096", "--tmpfs", small.toString());

        CliProcess.Run r = cli.run("report", "-o", small.resolve("r.html").toString(), sampleLog());

        assertEquals(ExitCodes.FAILURE, r.exitCode(), r.describe());
        assertEquals(
                "agentjail: cannot write " + small.resolve("r.html") + ": no space left on device",
                lastLine(r.err()),
                r.describe());
    }

    @Test
    void aReportUnderAFileSaysNotADirectory() throws Exception {
        Path file = Files.writeString(dir().resolve("file"), "x");
        Path target = file.resolve("r.html");

        LogReaderTestCli.Run r = LogReaderTestCli.run("report", "-o", target.toString(), sampleLog());

        assertEquals(ExitCodes.FAILURE, r.exitCode(), r.err());
        assertEquals(
                "agentjail: cannot write " + target + ": not a directory (creating a file in " + file + ")",
                lastLine(r.err()));
    }

    @Test
    void runFromTheHomeDirectoryIsRefusedBeforeAnythingStarts() throws Exception {
        Path dir = dir();
        CliProcess cli = new CliProcess(dir, dir);
        Path home = cli.home();
        cli = new CliProcess(home, dir);

        // Without "--": the preset named after the program would be announced if anything ran first.
        CliProcess.Run r = cli.run("run", "claude");

        assertEquals(ExitCodes.USAGE, r.exitCode(), r.describe());
        assertEquals(
                "agentjail: refusing " + home + " as the project: the project would be your whole home directory,"
                        + " read-write to the agent (~/.ssh, your shell's startup files and every other project"
                        + " included); start agentjail in your project's directory, or name it with --project DIR\n",
                r.err());
        assertEquals("", r.out());
        assertFalse(Files.exists(home.resolve(".local/state/agentjail")), "a session left state");
    }

    @Test
    void runFromTheRootDirectoryIsRefused() throws Exception {
        Path dir = dir();
        CliProcess.Run r = new CliProcess(Path.of("/"), dir).run("run", "--", "true");

        assertEquals(ExitCodes.USAGE, r.exitCode(), r.describe());
        assertEquals(
                "agentjail: refusing / as the project: the project would be the host's whole file system, read-write"
                        + " to the agent; start agentjail in your project's directory, or name it with --project"
                        + " DIR\n",
                r.err());
    }

    @ParameterizedTest(name = "--project {0}")
    @ValueSource(strings = {"/tmp", "/var/tmp", "/dev/shm"})
    void aDirectoryEveryUserSharesIsRefused(String shared) throws Exception {
        assertRefused(
                shared,
                "the project would be all of the host's " + shared + ", shared with every user and program on it");
    }

    @ParameterizedTest(name = "--project {0}")
    @ValueSource(strings = {"/usr", "/etc", "/usr/share", "/var"})
    void aSystemDirectoryIsRefused(String system) throws Exception {
        String why = switch (system) {
            case "/usr", "/etc" -> "the project would be " + system + ", a system directory the host runs from";
            case "/usr/share" -> "the project would be in /usr, a system directory the host runs from";
            default ->
                "the project would be " + system + ", a system directory that holds far more than one" + " project";
        };
        assertRefused(system, why);
    }

    private static void assertRefused(String project, String why) throws IOException {
        Path real = Path.of(project).toRealPath();
        LogReaderTestCli.Run r = LogReaderTestCli.run("run", "--project", project, "claude");
        assertEquals(ExitCodes.USAGE, r.exitCode(), r.err());
        // One line, and it is the refusal: no preset announced, no session id printed.
        assertEquals(
                "agentjail: refusing " + real + " as the project: " + why + "; " + ProjectDirectories.WAY_OUT + "\n",
                r.err());
    }

    @Test
    void aProjectOfItsOwnInsideTmpOrAHomeIsAProject() throws IOException {
        Path home = Path.of("/home/u");
        assertEquals(java.util.Optional.empty(), ProjectDirectories.why(dir().resolve("project"), home));
        assertEquals(java.util.Optional.empty(), ProjectDirectories.why(Path.of("/home/u/src/app"), home));
        assertEquals(
                java.util.Optional.empty(), ProjectDirectories.why(Path.of("/var/lib/jenkins/workspace/app"), home));
        assertTrue(ProjectDirectories.why(Path.of("/home"), home).orElseThrow().contains("hold your whole home"));
    }

    @Test
    void aYamlSyntaxErrorSaysWhatWasExpectedAtLineAndColumn() throws Exception {
        Path policy = Files.writeString(
                dir().resolve("policy.yaml"), "version: 1\nnetwork:\n  allow: [a.test]\n deny: [b]\n");

        LogReaderTestCli.Run check = LogReaderTestCli.run("policy", "check", policy.toString());
        LogReaderTestCli.Run run =
                LogReaderTestCli.run("run", "--policy", policy.toString(), "--project", dir().toString(), "--", "true");

        String expected = policy + ":4:2: bad indentation: this key, at column 2, lines up with no key above it; the"
                + " keys of one mapping start in the same column";
        assertEquals(ExitCodes.USAGE, check.exitCode(), check.err());
        assertEquals(expected + "\n", check.err());
        assertEquals(ExitCodes.USAGE, run.exitCode(), run.err());
        assertEquals("agentjail: " + expected + "\n", run.err());
    }

    /** The last line of {@code text}: the sample log's two bad lines are named on stderr before. */
    private static String lastLine(String text) {
        java.util.List<String> lines = text.lines().toList();
        return lines.isEmpty() ? "" : lines.get(lines.size() - 1);
    }

    /** The sample log of the log command tests, as a string argument. */
    static String sampleLog() {
        return LogReaderTestCli.resource("audit-sample.jsonl").toString();
    }
}

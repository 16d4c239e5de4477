package dev.agentjail.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.certs.CertificateAuthority;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CaCommandTest {
    static final Pattern FINGERPRINT = Pattern.compile("SHA-256: +(([0-9A-F]{2}:){31}[0-9A-F]{2})");

    @TempDir
    Path tmp;

    /** The outcome of one {@code agentjail} run: exit code and what it printed. */
    record Run(int exitCode, String out, String err) {
        String fingerprint() {
            Matcher m = FINGERPRINT.matcher(out);
            assertTrue(m.find(), out);
            return m.group(1);
        }
    }

    /** Runs the real entry point; picocli writes to System.out/err, swapped here for the duration. */
    static synchronized Run run(String... args) {
        PrintStream oldOut = System.out;
        PrintStream oldErr = System.err;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        try {
            System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
            System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
            int code = Main.execute(args);
            System.out.flush();
            System.err.flush();
            return new Run(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
        } finally {
            System.setOut(oldOut);
            System.setErr(oldErr);
        }
    }

    @Test
    void initCreatesTheCaOnceAndThenSaysItExists() throws Exception {
        Path dir = tmp.resolve("ca");
        Run first = run("ca", "init", "--dir", dir.toString());
        assertEquals(ExitCodes.OK, first.exitCode(), first.err());
        assertTrue(first.out().startsWith("Created the agentjail CA in " + dir), first.out());
        assertTrue(first.out().contains(dir.resolve("ca.pem").toString()), first.out());
        String fingerprint = CertificateAuthority.load(dir).sha256Fingerprint();
        assertEquals(fingerprint, first.fingerprint());
        assertEquals(
                "rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve("ca-key.pem"))));

        Run second = run("ca", "init", "--dir", dir.toString());
        assertEquals(ExitCodes.OK, second.exitCode());
        assertTrue(second.out().startsWith("The agentjail CA already exists in " + dir), second.out());
        assertEquals(fingerprint, second.fingerprint());
    }

    @Test
    void showPrintsSubjectFingerprintValidityAndPaths() throws Exception {
        Path dir = tmp.resolve("ca");
        run("ca", "init", "--dir", dir.toString());
        CertificateAuthority ca = CertificateAuthority.load(dir);

        Run show = run("ca", "show", "--dir", dir.toString());

        assertEquals(ExitCodes.OK, show.exitCode(), show.err());
        assertTrue(show.out().contains("subject:      CN=agentjail local CA ("), show.out());
        assertTrue(show.out().contains("valid until:  " + ca.notAfter()), show.out());
        assertTrue(show.out().contains("valid from:   " + ca.notBefore()), show.out());
        assertTrue(show.out().contains(dir.resolve("ca-key.pem").toString()), show.out());
        assertEquals(ca.sha256Fingerprint(), show.fingerprint());
    }

    @Test
    void showAndExportWithoutACaFailAndSayHowToCreateOne() throws Exception {
        Path dir = tmp.resolve("none");
        for (String sub : new String[] {"show", "export"}) {
            Run run = run("ca", sub, "--dir", dir.toString());
            assertEquals(ExitCodes.ENVIRONMENT, run.exitCode(), sub);
            assertTrue(run.err().contains("no agentjail CA in " + dir), run.err());
            assertTrue(run.err().contains("agentjail ca init"), run.err());
            assertEquals("", run.out());
        }
        assertTrue(Files.notExists(dir), "show and export never create a CA");
    }

    @Test
    void aGroupReadableKeyIsAnEnvironmentErrorNamingTheFix() throws Exception {
        Path dir = tmp.resolve("ca");
        run("ca", "init", "--dir", dir.toString());
        Path key = dir.resolve("ca-key.pem");
        Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("rw-r-----"));
        Run show = run("ca", "show", "--dir", dir.toString());
        assertEquals(ExitCodes.ENVIRONMENT, show.exitCode());
        assertTrue(show.err().contains("chmod 600 " + key), show.err());
    }

    @Test
    void exportPrintsThePemOrWritesIt() throws Exception {
        Path dir = tmp.resolve("ca");
        run("ca", "init", "--dir", dir.toString());
        String pem = Files.readString(dir.resolve("ca.pem"));

        Run stdout = run("ca", "export", "--dir", dir.toString());
        assertEquals(ExitCodes.OK, stdout.exitCode(), stdout.err());
        assertEquals(pem, stdout.out());

        Path file = tmp.resolve("exported.pem");
        Run toFile = run("ca", "export", "--dir", dir.toString(), "--pem", file.toString());
        assertEquals(ExitCodes.OK, toFile.exitCode(), toFile.err());
        assertEquals(pem, Files.readString(file));
        assertTrue(toFile.out().contains(file.toString()), toFile.out());

        Run unwritable = run(
                "ca",
                "export",
                "--dir",
                dir.toString(),
                "--pem",
                tmp.resolve("no/such/dir.pem").toString());
        assertEquals(ExitCodes.FAILURE, unwritable.exitCode());
        assertTrue(unwritable.err().contains("cannot write"), unwritable.err());
    }

    @Test
    void rotateMakesANewCaAndWarnsThatJailsMustRestart() throws Exception {
        Path dir = tmp.resolve("ca");
        String before = run("ca", "init", "--dir", dir.toString()).fingerprint();

        Run rotate = run("ca", "rotate", "--dir", dir.toString());

        assertEquals(ExitCodes.OK, rotate.exitCode(), rotate.err());
        String after = CertificateAuthority.load(dir).sha256Fingerprint();
        assertNotEquals(before, after);
        assertTrue(rotate.out().contains("old SHA-256:  " + before), rotate.out());
        assertTrue(rotate.out().contains("SHA-256:      " + after), rotate.out());
        assertTrue(rotate.err().contains("restart"), rotate.err());
        try (Stream<Path> files = Files.list(dir)) {
            assertEquals(
                    1,
                    files.filter(p -> p.getFileName().toString().endsWith(".old"))
                            .count());
        }
    }

    @Test
    void rotateReplacesAnUnreadableCa() throws Exception {
        Path dir = tmp.resolve("ca");
        run("ca", "init", "--dir", dir.toString());
        Files.writeString(dir.resolve("ca.pem"), "garbage");
        Run rotate = run("ca", "rotate", "--dir", dir.toString());
        assertEquals(ExitCodes.OK, rotate.exitCode(), rotate.err());
        assertTrue(rotate.err().contains("replacing an unusable CA"), rotate.err());
        assertEquals(ExitCodes.OK, run("ca", "show", "--dir", dir.toString()).exitCode());
    }

    @Test
    void caWithoutASubcommandPrintsUsage() {
        Run run = run("ca");
        assertEquals(ExitCodes.OK, run.exitCode());
        assertTrue(run.out().contains("init") && run.out().contains("rotate"), run.out());
        assertEquals(ExitCodes.USAGE, run("ca", "init", "--bogus").exitCode());
    }
}

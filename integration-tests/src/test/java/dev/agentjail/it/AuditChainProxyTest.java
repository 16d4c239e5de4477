package dev.agentjail.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.it.support.Command;
import dev.agentjail.it.support.JdkClients;
import dev.agentjail.it.support.Policies;
import dev.agentjail.it.support.ProxyProcess;
import dev.agentjail.proxy.audit.AuditChain;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 7, tamper evidence end to end: {@code agentjail proxy --audit-hmac-key --audit-max-size} writes a signed,
 * rotated log that survives {@code kill -9}; {@code agentjail log verify} passes it, and names the record deleted from
 * it afterwards.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class AuditChainProxyTest {
    private static final Duration CLI_LIMIT = Duration.ofSeconds(60);

    /** Named like the suite's other canaries, so the secret scan would find it in any log. */
    private static final String KEY = "canary-audit-hmac-key-2c9e41d7b8a35f60e14d";

    private static final int REQUESTS = 300;

    @TempDir
    Path dir;

    private Path keyFile(String mode) throws Exception {
        Path key = Files.createDirectories(dir.resolve("keys")).resolve("audit.key");
        Files.writeString(key, KEY + "\n");
        Files.setPosixFilePermissions(key, PosixFilePermissions.fromString(mode));
        return key;
    }

    @Test
    void aSignedRotatedLogVerifiesAfterKillMinusNineAndADeletedRecordIsNamed() throws Exception {
        Path policy = Files.writeString(dir.resolve("policy.yaml"), Policies.upstreamOn(9));
        Path key = keyFile("rw-------");
        Path log = dir.resolve("logs/audit.jsonl");

        try (ProxyProcess proxy = ProxyProcess.start(
                        "--policy", policy.toString(),
                        "--audit-log", log.toString(),
                        "--audit-max-size", "64k",
                        "--audit-hmac-key", key.toString());
                HttpClient http = JdkClients.viaProxy(proxy.port())) {
            for (int i = 0; i < REQUESTS; i++) {
                HttpResponse<String> r = http.send(
                        HttpRequest.newBuilder(URI.create("http://" + Policies.DENIED + "/r/" + i))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
                assertEquals(403, r.statusCode());
            }
            proxy.killHard(); // no close, no final fsync: the chain must hold as it is
        }

        List<Path> files = AuditChain.rotationSet(log);
        assertTrue(files.size() >= 3, () -> "rotated at 64 KiB: " + files);
        for (Path f : files) {
            String text = Files.readString(f, StandardCharsets.ISO_8859_1);
            assertFalse(text.contains(KEY), () -> "the HMAC key is in " + f);
            assertTrue(text.contains("\"hmac\":\""), () -> "records are signed in " + f);
        }
        Command.Result ok =
                ProxyProcess.runCli(CLI_LIMIT, "log", "verify", "--hmac-key", key.toString(), log.toString());
        assertEquals(0, ok.exitCode(), ok::describe);
        assertTrue(
                ok.out()
                        .startsWith(log + ": intact: " + files.size() + " files, " + REQUESTS + " records (seq 1–"
                                + REQUESTS + "), HMAC verified"),
                ok::describe);

        Path second = files.get(1);
        byte[] original = Files.readAllBytes(second);
        List<String> lines = new ArrayList<>(Files.readAllLines(second, StandardCharsets.UTF_8));
        lines.remove(5);
        Files.write(second, lines, StandardCharsets.UTF_8);
        Command.Result broken =
                ProxyProcess.runCli(CLI_LIMIT, "log", "verify", "--hmac-key", key.toString(), log.toString());
        assertEquals(1, broken.exitCode(), broken::describe);
        assertTrue(broken.out().startsWith(second + ":6: deleted: seq jumps from "), broken::describe);

        // Put the record back: the suite's last check verifies every audit log the tests leave behind.
        Files.write(second, original);
        assertEquals(
                0,
                ProxyProcess.runCli(CLI_LIMIT, "log", "verify", log.toString()).exitCode());
    }

    @Test
    void aKeyFileOthersCanReadStopsTheProxyBeforeItOpensTheLog() throws Exception {
        Path policy = Files.writeString(dir.resolve("policy.yaml"), Policies.upstreamOn(9));
        Path key = keyFile("rw-r--r--");
        Path log = dir.resolve("logs/audit.jsonl");

        Command.Result r = ProxyProcess.runCli(
                CLI_LIMIT,
                "proxy",
                "--policy",
                policy.toString(),
                "--listen",
                "127.0.0.1:0",
                "--audit-log",
                log.toString(),
                "--audit-hmac-key",
                key.toString());

        assertEquals(2, r.exitCode(), r::describe);
        assertTrue(r.stderr().contains("--audit-hmac-key: ") && r.stderr().contains("chmod 600"), r::describe);
        assertFalse(r.stderr().contains(KEY), r::describe);
        assertFalse(Files.exists(log), "no audit log was opened");
    }
}

package dev.agentjail.it.jail;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.agentjail.it.support.AuditLines;
import dev.agentjail.it.support.Prerequisites;
import dev.agentjail.it.support.TestTls;
import dev.agentjail.proxy.audit.AuditRecord;
import dev.agentjail.proxy.mcp.McpErrors;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 6 end to end: a real MCP client from the official Java SDK runs inside the jail ({@link McpJailClient}, on the
 * JDK the tests run with, which the jail sees read-only under /usr) and talks to real SDK servers on the host's
 * loopback over HTTPS, through the proxy, which intercepts the TLS and applies the policy's {@code mcp} section. Two
 * approved servers, {@code docs} (Streamable HTTP: answers as event streams) and {@code notes} (stateless: answers as
 * JSON), each with the tools {@code search}, {@code read_doc} and {@code delete_repo}, of which the policy approves
 * {@code search*} and {@code read_doc}.
 *
 * <p>Starting a JVM in the jail is slow, so one jail run covers every step and the tests judge its output lines, the
 * servers' records and the audit log.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class McpInJailTest {
    static final List<String> APPROVED = List.of("read_doc", "search");

    /**
     * The classes whose jars the client needs inside the jail: the SDK (core and its Jackson 3 binding, with the JSON
     * schema validator it loads), Reactor, and SLF4J's API (no provider: the SDK's logging goes nowhere).
     */
    static final List<String> CLIENT_JAR_CLASSES = List.of(
            "io.modelcontextprotocol.client.McpClient",
            "io.modelcontextprotocol.json.jackson3.JacksonMcpJsonMapper",
            "tools.jackson.databind.ObjectMapper",
            "tools.jackson.core.JsonParser",
            "com.fasterxml.jackson.annotation.JsonProperty",
            "com.networknt.schema.SchemaRegistry",
            "com.ethlo.time.ITU",
            "tools.jackson.dataformat.yaml.YAMLMapper",
            "org.snakeyaml.engine.v2.api.Load",
            "reactor.core.publisher.Mono",
            "org.reactivestreams.Publisher",
            "org.slf4j.Logger");

    static McpUpstream docs;
    static McpUpstream notes;
    static AgentjailRun.Outcome outcome;

    @TempDir
    static Path dir;

    @BeforeAll
    static void runTheClientInTheJail() throws Exception {
        AgentjailRun.requireBwrap();
        Path java = AgentjailRun.java().toRealPath();
        Prerequisites.require(
                java.startsWith("/usr/"), "a JDK under /usr, visible inside the jail (the tests run " + java + ")");
        TestTls tls = TestTls.create(Files.createDirectories(dir.resolve("tls")));
        docs = McpUpstream.streamable(Files.createDirectories(dir.resolve("docs")), tls);
        notes = McpUpstream.stateless(Files.createDirectories(dir.resolve("notes")), tls);

        AgentjailRun run = AgentjailRun.in(dir.resolve("run")).policy(policy(tls));
        String classpath = installClient(run.project().resolve("mcp-client"));
        outcome = run.run(
                java.toString(),
                "-Xmx256m",
                "-XX:TieredStopAtLevel=1",
                "-XX:+UseSerialGC",
                "-cp",
                classpath,
                McpJailClient.class.getName(),
                "docs=" + docs.url(),
                "notes=" + notes.url(),
                McpJailClient.UNAPPROVED + "=https://" + TestTls.HOST + ":" + docs.port() + "/other");
    }

    @AfterAll
    static void stopServers() throws Exception {
        if (docs != null) {
            docs.close();
        }
        if (notes != null) {
            notes.close();
        }
    }

    @Test
    void theClientInTheJailRanEveryStep() {
        assertEquals(0, outcome.exitCode(), outcome::describe);
        assertAll(List.of("docs", "notes").stream()
                .map(name -> () -> assertEquals("ok", outcome.probe(name + ".init"), outcome::describe)));
    }

    @Test
    void anApprovedToolCallWorksEndToEnd() {
        for (McpUpstream server : List.of(docs, notes)) {
            String name = server == docs ? "docs" : "notes";
            assertEquals("ran search", outcome.probe(name + ".call"), outcome::describe);
            List<McpUpstream.Call> calls = server.calls();
            assertEquals(1, calls.size(), () -> name + " should have received exactly one call: " + tools(calls));
            assertEquals("search", calls.get(0).tool());
            assertEquals(McpJailClient.QUERY, calls.get(0).arguments().get("q"));
        }
    }

    @Test
    void anUnapprovedToolGetsTheJsonRpcErrorAndNeverReachesTheServer() {
        for (McpUpstream server : List.of(docs, notes)) {
            String name = server == docs ? "docs" : "notes";
            String deny = outcome.probe(name + ".deny");
            assertAll(
                    () -> assertTrue(
                            deny.startsWith(McpErrors.TOOL_NOT_APPROVED + " "),
                            () -> name + ": the client should get JSON-RPC error " + McpErrors.TOOL_NOT_APPROVED
                                    + ", got: " + deny),
                    () -> assertTrue(deny.contains("delete_repo"), () -> "the reason names the tool: " + deny),
                    () -> assertFalse(
                            tools(server.calls()).contains("delete_repo"),
                            () -> "delete_repo reached " + name + ": " + tools(server.calls())));
        }
    }

    @Test
    void toolListsInTheJailShowOnlyApprovedToolsAsEventStreamAndAsJson() {
        assertAll(
                () -> assertEquals(String.join(",", APPROVED), outcome.probe("docs.list"), "event stream"),
                () -> assertEquals(String.join(",", APPROVED), outcome.probe("notes.list"), "JSON"));
    }

    @Test
    void aSecretInToolArgumentsArrivesRedactedAtTheServer() {
        String sent = McpJailClient.NOTE_PREFIX + McpJailClient.SECRET;
        for (McpUpstream server : List.of(docs, notes)) {
            List<McpUpstream.Call> calls = server.calls();
            assertFalse(calls.isEmpty(), outcome::describe);
            String note = String.valueOf(calls.get(0).arguments().get("note"));
            assertAll(
                    () -> assertFalse(note.contains(McpJailClient.SECRET), "the secret reached the server"),
                    () -> assertTrue(
                            note.startsWith(McpJailClient.NOTE_PREFIX + "[REDACTED"),
                            () -> "a redaction marker in place of the secret, got "
                                    + note.replace(McpJailClient.SECRET, "<secret>")),
                    () -> assertEquals(sent.length(), note.length(), "a marker of the same length"));
        }
        String log = new String(AuditLines.bytes(outcome.auditLog()), StandardCharsets.UTF_8);
        assertFalse(log.contains(McpJailClient.SECRET), "the audit log holds the secret");
        assertFalse(outcome.out().contains(McpJailClient.SECRET), "the client printed the secret");
    }

    @Test
    void mcpToAnEndpointThePolicyDoesNotApproveIsRefusedBeforeTheServer() {
        String init = outcome.probe(McpJailClient.UNAPPROVED + ".init");
        assertTrue(init.startsWith("refused"), () -> "initialize to /other should fail, got: " + init);
        assertFalse(docs.paths().contains("/other"), () -> "the server saw /other: " + docs.paths());
        JsonNode record = mcpRecords().stream()
                .filter(r -> "/other".equals(r.path("path").asText()))
                .filter(r -> "initialize".equals(r.at("/mcp/method").asText()))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no record of the initialize to /other in " + outcome.audit()));
        assertAll(
                () -> assertEquals(AuditRecord.DENY, record.path("decision").asText(), record::toString),
                () -> assertEquals(
                        McpErrors.REASON_SERVER_NOT_APPROVED,
                        record.path("reason").asText()),
                () -> assertEquals(403, record.path("status").asInt(), record::toString));
    }

    @Test
    void theAuditLogHasTheMcpRecords() {
        for (String name : List.of("docs", "notes")) {
            JsonNode init = mcpRecord(name, "initialize", null);
            JsonNode list = mcpRecord(name, "tools/list", null);
            JsonNode call = mcpRecord(name, "tools/call", "search");
            JsonNode deny = mcpRecord(name, "tools/call", "delete_repo");
            assertAll(
                    name,
                    () -> assertEquals(AuditRecord.ALLOW, init.path("decision").asText(), init::toString),
                    () -> assertEquals(
                            AuditRecord.TLS_INTERCEPT, init.path("tls").asText(), init::toString),
                    () -> assertEquals(AuditRecord.ALLOW, list.path("decision").asText(), list::toString),
                    () -> assertEquals(1, list.at("/mcp/hidden").asInt(), () -> "delete_repo hidden: " + list),
                    () -> assertEquals(AuditRecord.ALLOW, call.path("decision").asText(), call::toString),
                    () -> assertTrue(call.at("/mcp/args_bytes").asInt() > 0, call::toString),
                    () -> assertEquals(
                            "github-pat", call.at("/redactions/0/kind").asText(), () -> "the redaction: " + call),
                    () -> assertEquals(AuditRecord.DENY, deny.path("decision").asText(), deny::toString),
                    () -> assertEquals(
                            McpErrors.REASON_TOOL_NOT_APPROVED,
                            deny.path("reason").asText()),
                    () -> assertEquals(
                            "mcp.servers[" + name + "].tools", deny.path("rule").asText()));
        }
    }

    /** The policy: both servers' ports on {@code upstream.test}, their certificate, and the two approved servers. */
    private static String policy(TestTls tls) {
        return """
                version: 1
                network:
                  allow: ["%1$s:%2$d", "%1$s:%3$d"]
                  resolve: {%1$s: 127.0.0.1}
                tls:
                  upstream_ca: ["%4$s"]
                mcp:
                  servers:
                    - name: docs
                      url: %5$s
                      tools: {allow: ["search*", read_doc], deny: ["delete_*"]}
                    - name: notes
                      url: %6$s
                      tools: {allow: ["search*", read_doc], deny: ["delete_*"]}
                """.formatted(TestTls.HOST, docs.port(), notes.port(), tls.certificatePem(), docs.url(), notes.url());
    }

    /**
     * Copies the client's class and the jars it needs under {@code into} (in the project, which the jail sees) and
     * returns the class path, relative to the project (the jail's working directory).
     */
    private static String installClient(Path into) throws IOException, URISyntaxException {
        Path classes = into.resolve("classes");
        Path lib = Files.createDirectories(into.resolve("lib"));
        Set<Path> jars = new LinkedHashSet<>();
        for (String name : CLIENT_JAR_CLASSES) {
            try {
                jars.add(Path.of(Class.forName(name)
                        .getProtectionDomain()
                        .getCodeSource()
                        .getLocation()
                        .toURI()));
            } catch (ClassNotFoundException e) {
                throw new AssertionError("the test class path lacks " + name + ", which the jail's client needs", e);
            }
        }
        for (Path jar : jars) {
            assertTrue(Files.isRegularFile(jar), () -> jar + " is not a jar");
            Files.copy(jar, lib.resolve(jar.getFileName()));
        }
        String pkg = McpJailClient.class.getPackageName().replace('.', '/');
        Path from = Path.of(McpJailClient.class
                        .getProtectionDomain()
                        .getCodeSource()
                        .getLocation()
                        .toURI())
                .resolve(pkg);
        Path to = Files.createDirectories(classes.resolve(pkg));
        try (DirectoryStream<Path> files =
                Files.newDirectoryStream(from, McpJailClient.class.getSimpleName() + "*.class")) {
            for (Path f : files) {
                Files.copy(f, to.resolve(f.getFileName()));
            }
        }
        String base = into.getFileName().toString();
        return base + "/classes:" + base + "/lib/*";
    }

    private static List<JsonNode> mcpRecords() {
        List<JsonNode> found = new ArrayList<>();
        for (JsonNode r : outcome.audit()) {
            if (AuditRecord.KIND_REQUEST.equals(r.path("kind").asText()) && r.has("mcp")) {
                found.add(r);
            }
        }
        return found;
    }

    /** The one request record of {@code method} (and {@code tool}, if not null) to {@code server}. */
    private static JsonNode mcpRecord(String server, String method, String tool) {
        List<JsonNode> found = mcpRecords().stream()
                .filter(r -> server.equals(r.at("/mcp/server").asText()))
                .filter(r -> method.equals(r.at("/mcp/method").asText()))
                .filter(r -> tool == null || tool.equals(r.at("/mcp/tool").asText()))
                .toList();
        assertEquals(
                1, found.size(), () -> "one " + method + " " + tool + " record for " + server + " in " + mcpRecords());
        return found.get(0);
    }

    private static List<String> tools(List<McpUpstream.Call> calls) {
        return calls.stream().map(McpUpstream.Call::tool).toList();
    }
}

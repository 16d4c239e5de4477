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
import java.util.Base64;
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
 * loopback over HTTPS, through the proxy, which intercepts the TLS and applies the policy's {@code mcp} section. The
 * approved servers: {@code docs} (Streamable HTTP: answers as event streams), {@code notes} (stateless: answers as
 * JSON), {@code legacy} (the HTTP+SSE transport of 2024-11-05, approved by its event stream's URL) and {@code rug}
 * (stateless, changes {@code search} once {@code read_doc} is called), each with the tools {@code search}, {@code
 * read_doc} and {@code delete_repo}, of which the policy approves {@code search*} and {@code read_doc}; and {@code
 * tools}, a host-side stdio server ({@link McpStdioServer}, declared in the {@code --policy} file, as a project policy
 * may not start one) that the jail reaches at its synthetic plain-HTTP URL, its token taken from the launcher's
 * environment.
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

    /** The launcher's variable that the host-side server's {@code env} names; the jail must never see its value. */
    static final String HOST_TOKEN_VARIABLE = "IT_MCP_HOST_TOKEN";

    static final String HOST_TOKEN = "host-canary-token-3c9f1e7a5b2d4086e1";

    /** The host-side server's synthetic URL, which the jail gets as {@code AGENTJAIL_MCP_TOOLS_URL}. */
    static final String HOST_URL = "http://" + McpJailClient.HOST + ".mcp.agentjail.internal/mcp";

    static McpUpstream docs;
    static McpUpstream notes;
    static McpUpstream legacy;
    static McpUpstream rug;
    static Path hostCalls;
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
        legacy = McpUpstream.legacy(Files.createDirectories(dir.resolve("legacy")), tls);
        rug = McpUpstream.rugPull(Files.createDirectories(dir.resolve("rug")), tls);
        hostCalls = dir.resolve("host-calls.txt");

        // The policy is a --policy file: a host-side server may not come from the project layer.
        AgentjailRun run =
                AgentjailRun.in(dir.resolve("run")).policy(policy(tls, java)).env(HOST_TOKEN_VARIABLE, HOST_TOKEN);
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
                McpJailClient.LEGACY + "=" + legacy.sseUrl(),
                McpJailClient.RUG + "=" + rug.url(),
                McpJailClient.HOST + "=" + McpJailClient.FROM_ENV + "AGENTJAIL_MCP_TOOLS_URL",
                McpJailClient.UNAPPROVED + "=https://" + TestTls.HOST + ":" + docs.port() + "/other");
    }

    @AfterAll
    static void stopServers() throws Exception {
        for (McpUpstream server : new McpUpstream[] {docs, notes, legacy, rug}) {
            if (server != null) {
                server.close();
            }
        }
    }

    @Test
    void theClientInTheJailRanEveryStep() {
        assertEquals(0, outcome.exitCode(), outcome::describe);
        assertAll(List.of("docs", "notes", McpJailClient.LEGACY, McpJailClient.RUG, McpJailClient.HOST).stream()
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

    @Test
    void theLegacySseTransportIsFilteredAndDecidedLikeStreamableHttp() {
        String deny = outcome.probe(McpJailClient.LEGACY + ".deny");
        assertAll(
                () -> assertEquals(
                        String.join(",", APPROVED), outcome.probe(McpJailClient.LEGACY + ".list"), outcome::describe),
                () -> assertEquals("ran search", outcome.probe(McpJailClient.LEGACY + ".call"), outcome::describe),
                () -> assertEquals(List.of("search"), tools(legacy.calls()), "the calls that reached the server"),
                () -> assertTrue(
                        deny.startsWith(McpErrors.TOOL_NOT_APPROVED + " ") && deny.contains("delete_repo"),
                        () -> "the legacy client should get " + McpErrors.TOOL_NOT_APPROVED + ", got: " + deny),
                () -> assertTrue(
                        legacy.paths().contains(McpUpstream.SSE_ENDPOINT), () -> "no event stream: " + legacy.paths()),
                () -> assertTrue(
                        legacy.paths().contains(McpUpstream.LEGACY_MESSAGES),
                        () -> "no POST to the announced endpoint: " + legacy.paths()));
        JsonNode deniedRecord = mcpRecord(McpJailClient.LEGACY, "tools/call", "delete_repo");
        JsonNode list = mcpRecord(McpJailClient.LEGACY, "tools/list", null);
        assertAll(
                () -> assertEquals(
                        AuditRecord.DENY, deniedRecord.path("decision").asText(), deniedRecord::toString),
                () -> assertEquals(
                        McpUpstream.LEGACY_MESSAGES, deniedRecord.path("path").asText(), "no session id"),
                () -> assertEquals(
                        McpErrors.REASON_TOOL_NOT_APPROVED,
                        deniedRecord.path("reason").asText()),
                () -> assertEquals(AuditRecord.ALLOW, list.path("decision").asText(), list::toString));
    }

    @Test
    void aToolWhoseDefinitionChangesIsHiddenAndBlockedAndRecorded() {
        String call = outcome.probe(McpJailClient.RUG + ".call");
        assertAll(
                () -> assertEquals(String.join(",", APPROVED), outcome.probe(McpJailClient.RUG + ".list"), "pinned"),
                () -> assertEquals("ran read_doc", outcome.probe(McpJailClient.RUG + ".trigger"), outcome::describe),
                () -> assertEquals("read_doc", outcome.probe(McpJailClient.RUG + ".relist"), "search hidden"),
                () -> assertTrue(
                        call.startsWith(McpErrors.TOOL_CHANGED + " ") && call.contains("search"),
                        () -> "the call of the changed tool should get " + McpErrors.TOOL_CHANGED + ", got: " + call),
                () -> assertEquals(
                        List.of(McpUpstream.RUG_TRIGGER), tools(rug.calls()), "only the trigger reached the server"));
        List<JsonNode> lists = mcpRecords().stream()
                .filter(r -> McpJailClient.RUG.equals(r.at("/mcp/server").asText()))
                .filter(r -> "tools/list".equals(r.at("/mcp/method").asText()))
                .toList();
        JsonNode blocked = mcpRecord(McpJailClient.RUG, "tools/call", "search");
        assertAll(
                () -> assertEquals(2, lists.size(), () -> "two list records: " + lists),
                () -> assertFalse(lists.get(0).at("/mcp").has("changed"), () -> "the first list: " + lists.get(0)),
                () -> assertEquals("search", lists.get(1).at("/mcp/changed/0").asText(), () -> "changed: " + lists),
                () -> assertEquals(AuditRecord.DENY, blocked.path("decision").asText(), blocked::toString),
                () -> assertEquals(
                        McpErrors.REASON_TOOL_CHANGED, blocked.path("reason").asText(), blocked::toString));
    }

    @Test
    void aHostSideStdioServerAppearsInTheJailAsAnHttpEndpointWithItsCredentialOnTheHostOnly() throws IOException {
        String deny = outcome.probe(McpJailClient.HOST + ".deny");
        List<String> reached = Files.exists(hostCalls) ? Files.readAllLines(hostCalls) : List.of();
        assertAll(
                () -> assertEquals(HOST_URL, outcome.probe(McpJailClient.HOST + ".url"), "AGENTJAIL_MCP_TOOLS_URL"),
                () -> assertEquals(
                        "read_doc,search," + McpStdioServer.TOKEN_TOOL,
                        outcome.probe(McpJailClient.HOST + ".list"),
                        outcome::describe),
                () -> assertEquals("ran search", outcome.probe(McpJailClient.HOST + ".call"), outcome::describe),
                () -> assertTrue(
                        deny.startsWith(McpErrors.TOOL_NOT_APPROVED + " ") && deny.contains("delete_repo"),
                        () -> "the host-side server's unapproved tool: " + deny),
                () -> assertEquals(
                        List.of("search", McpStdioServer.TOKEN_TOOL),
                        reached,
                        "the calls that reached the host-side server"),
                () -> assertEquals(
                        McpStdioServer.sha256(HOST_TOKEN),
                        outcome.probe(McpJailClient.HOST + ".token"),
                        "the server got the token from the launcher's environment"));
        String env = new String(
                Base64.getDecoder().decode(outcome.probe(McpJailClient.HOST + ".env")), StandardCharsets.UTF_8);
        String log = new String(AuditLines.bytes(outcome.auditLog()), StandardCharsets.UTF_8);
        assertAll(
                "the token stays on the host",
                () -> assertTrue(env.contains("AGENTJAIL_MCP_TOOLS_URL=" + HOST_URL), "the jail's environment"),
                () -> assertFalse(env.contains(HOST_TOKEN), "the token is in the jail's environment"),
                () -> assertFalse(env.contains(HOST_TOKEN_VARIABLE), "the token's variable is in the jail"),
                () -> assertFalse(outcome.out().contains(HOST_TOKEN), "the token reached the jail's output"),
                () -> assertFalse(outcome.err().contains(HOST_TOKEN), "the launcher printed the token"),
                () -> assertFalse(log.contains(HOST_TOKEN), "the audit log holds the token"));
        JsonNode call = mcpRecord(McpJailClient.HOST, "tools/call", "search");
        assertAll(
                () -> assertEquals(AuditRecord.ALLOW, call.path("decision").asText(), call::toString),
                () -> assertEquals(
                        McpErrors.REASON_TOOL_NOT_APPROVED,
                        mcpRecord(McpJailClient.HOST, "tools/call", "delete_repo")
                                .path("reason")
                                .asText()));
    }

    /**
     * The policy: the remote servers' ports on {@code upstream.test} and their certificate, the four approved remote
     * servers, and the host-side server, run by {@code java} with the tests' class path, its token taken from the
     * launcher's {@value #HOST_TOKEN_VARIABLE}.
     */
    private static String policy(TestTls tls, Path java) {
        return """
                version: 1
                network:
                  allow: ["%1$s:%2$d", "%1$s:%3$d", "%1$s:%4$d", "%1$s:%5$d"]
                  resolve: {%1$s: 127.0.0.1}
                tls:
                  upstream_ca: ["%6$s"]
                mcp:
                  servers:
                    - name: docs
                      url: %7$s
                      tools: {allow: ["search*", read_doc], deny: ["delete_*"]}
                    - name: notes
                      url: %8$s
                      tools: {allow: ["search*", read_doc], deny: ["delete_*"]}
                    - name: %9$s
                      url: %10$s
                      tools: {allow: ["search*", read_doc], deny: ["delete_*"]}
                    - name: %11$s
                      url: %12$s
                      tools: {allow: ["search*", read_doc], deny: ["delete_*"]}
                    - name: %13$s
                      command: ["%14$s", "-Xmx128m", "-XX:+UseSerialGC", "-cp", "%15$s", "%16$s"]
                      env: {%17$s: "${%18$s}", %19$s: "%20$s"}
                      tools: {allow: ["search*", read_doc, %21$s], deny: ["delete_*"]}
                """.formatted(
                        TestTls.HOST,
                        docs.port(),
                        notes.port(),
                        legacy.port(),
                        rug.port(),
                        tls.certificatePem(),
                        docs.url(),
                        notes.url(),
                        McpJailClient.LEGACY,
                        legacy.sseUrl(),
                        McpJailClient.RUG,
                        rug.url(),
                        McpJailClient.HOST,
                        java,
                        System.getProperty("java.class.path"),
                        McpStdioServer.class.getName(),
                        McpStdioServer.TOKEN_VARIABLE,
                        HOST_TOKEN_VARIABLE,
                        McpStdioServer.CALLS_VARIABLE,
                        hostCalls,
                        McpStdioServer.TOKEN_TOOL);
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

package dev.agentjail.it.jail;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.agentjail.it.support.AuditLines;
import dev.agentjail.it.support.Command;
import dev.agentjail.it.support.Prerequisites;
import dev.agentjail.proxy.audit.AuditRecord;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The real agent CLIs that {@code .ci/run} installs from the npm registry at the versions pinned in {@code .ci/agents},
 * each under {@value #ROOT}{@code /PACKAGE@VERSION} (under /usr, which the jail shows read-only), and what every test
 * of one asserts about a session with it: exit 0 and the stub's answer on stdout, the real key in the stub's requests
 * and only the placeholder in the jail, one audit record per request the stub saw, and a log that verifies.
 *
 * <p>A missing agent fails the test in CI ({@code CI=true}) and skips it locally, naming the command that installs it.
 */
final class RealAgents {
    static final String ROOT = "/usr/local/lib/agentjail-ci/agents";

    /** The Node.js that .ci/run installs (>= 24); agents whose {@code engines} need more than the system's 20 use it. */
    static final Path MODERN_NODE_BIN = Prerequisites.MODERN_NODE.getParent();

    static final String PLACEHOLDER = "agentjail-placeholder-[0-9a-f]{32,}";

    /** What the wrapped command prints on stderr before it runs the agent: the credential variable it sees. */
    static final String PROBE_PREFIX = "jail-sees ";

    private static final Pattern PROBE = Pattern.compile("^" + PROBE_PREFIX + "([A-Z_]+)=(.*)$", Pattern.MULTILINE);

    private RealAgents() {}

    /** One agent package at its pinned version, installed under {@code prefix} ({@code node_modules/.bin/…}). */
    record Installed(String pkg, String version, Path prefix) {
        Path bin() {
            return prefix.resolve("node_modules/.bin");
        }

        Path packageDir() {
            return prefix.resolve("node_modules").resolve(pkg);
        }

        /** The launcher's PATH: the agent's bin directory, then the modern Node, then the standard directories. */
        String launcherPath() {
            return bin() + ":" + MODERN_NODE_BIN + ":" + AgentjailRun.STANDARD_PATH;
        }
    }

    /** The pinned version of {@code pkg} in {@code .ci/agents}. */
    static String pinned(String pkg) {
        String configured = System.getProperty("agentjail.ci.agents");
        Path list = configured != null && !configured.isBlank() ? Path.of(configured) : Path.of("..", ".ci", "agents");
        try {
            for (String line : Files.readAllLines(list)) {
                String[] words = line.strip().split("\\s+");
                if (words.length == 2 && !words[0].startsWith("#") && words[0].equals(pkg)) {
                    return words[1];
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the pinned agent versions in " + list, e);
        }
        throw new AssertionError(pkg + " is not pinned in " + list);
    }

    /**
     * The installation of {@code pkg} at its pinned version with its program {@code program} (null for a library), and
     * the modern Node;
     * skips (locally) or fails (in CI) when .ci/run has not installed it.
     */
    static Installed require(String pkg, String program) {
        AgentjailRun.requireBwrap();
        String version = pinned(pkg);
        Installed installed = new Installed(pkg, version, Path.of(ROOT, pkg + "@" + version));
        Prerequisites.require(
                program == null
                        ? Files.isRegularFile(installed.packageDir().resolve("package.json"))
                        : Files.isExecutable(installed.bin().resolve(program)),
                pkg + "@" + version + " in " + installed.prefix() + " (.ci/run installs it: `npm install --prefix "
                        + installed.prefix() + " " + pkg + "@" + version + "`)");
        Prerequisites.require(Prerequisites.MODERN_NODE);
        assertEquals(
                Optional.of(version),
                manifestVersion(installed),
                () -> installed.packageDir() + " is not the pinned version");
        return installed;
    }

    /**
     * The argv that runs {@code command} under {@code --preset} after printing, on stderr, what each of {@code
     * variables} holds in the jail: {@code sh -c 'printf …; exec "$@"'}, so the agent runs in the same session and
     * environment as the probe.
     */
    static List<String> probed(List<String> variables, List<String> command) {
        StringBuilder script = new StringBuilder();
        for (String v : variables) {
            script.append("printf '%s%s=%s\\n' '")
                    .append(PROBE_PREFIX)
                    .append("' '")
                    .append(v)
                    .append("' \"$")
                    .append(v)
                    .append("\" >&2; ");
        }
        script.append("exec \"$@\"");
        List<String> argv = new ArrayList<>(List.of("/bin/sh", "-c", script.toString(), "sh"));
        argv.addAll(command);
        return argv;
    }

    /** The value the probe printed for {@code variable}; fails when it printed none. */
    static String seen(AgentjailRun.Outcome o, String variable) {
        Matcher m = PROBE.matcher(o.err());
        while (m.find()) {
            if (m.group(1).equals(variable)) {
                return m.group(2);
            }
        }
        throw new AssertionError("the jail printed no " + PROBE_PREFIX + variable + "= line; " + o.describe());
    }

    /** How a session's requests must have carried the key. */
    record Key(String variable, String real, String header, String prefix) {
        /** The header value the stub must have received. */
        String expected() {
            return prefix + real;
        }
    }

    /**
     * Asserts what every real-agent session must show: exit 0 and the stub's answer on stdout; the stub saw at least
     * one request, each of them for one of {@code hosts}, those for the first (the key's host) with the real key in
     * {@code key}'s header (every model request, and any other that sends that header: a connectivity check may not), those for the others without it, and none with a placeholder in any header; one audit record (allowed, or an error such as a stream the client closed) for each of those requests (besides the CONNECTs' own); the real key nowhere in the jail's output, the
     * launcher's or the log; and {@code agentjail log verify} passing on the log.
     *
     * @param before how many requests the stub had seen before this session
     * @return the stub's requests of this session
     */
    static List<LlmStub.Request> assertSession(
            AgentjailRun run, AgentjailRun.Outcome o, LlmStub stub, int before, List<String> hosts, Key key) {
        assertEquals(0, o.exitCode(), o::describe);
        assertTrue(o.out().contains(stub.answer()), () -> "the stub's answer is not on stdout: " + o.describe());
        List<LlmStub.Request> seen =
                stub.requests().subList(before, stub.requests().size());
        assertTrue(
                seen.stream().anyMatch(LlmStub.Request::model), () -> "the stub saw no model request: " + o.describe());
        for (LlmStub.Request r : seen) {
            assertTrue(hosts.contains(r.host()), () -> "a request for " + r.host() + " reached the stub: " + r.uri());
            if (r.host().equals(hosts.get(0)) && (r.model() || r.header(key.header()) != null)) {
                assertEquals(
                        key.expected(),
                        r.header(key.header()),
                        () -> r.method() + " " + r.uri() + " did not carry the real key in " + key.header());
            } else {
                r.headers()
                        .forEach((name, value) -> assertFalse(
                                value.contains(key.real()), () -> "the key went to " + r.host() + " in " + name));
            }
            r.headers()
                    .forEach((name, value) -> assertFalse(
                            value.contains("agentjail-placeholder"),
                            () -> "the placeholder reached the stub in " + name));
        }
        List<JsonNode> forwarded = o.records(AuditRecord.KIND_REQUEST).stream()
                .filter(r -> hosts.contains(r.path("host").asText()))
                // Denied requests never reach the upstream; one that ended in an error (a stream the client closed)
                // did.
                .filter(r -> !AuditRecord.DENY.equals(r.path("decision").asText()))
                // The CONNECT that opened an intercepted tunnel has its own record; the stub sees what went inside.
                .filter(r -> !"CONNECT".equals(r.path("method").asText()))
                .toList();
        assertEquals(
                seen.size(),
                forwarded.size(),
                () -> "one audit record per request the stub saw; stub: " + paths(seen) + ", log: " + forwarded);
        String log = new String(AuditLines.bytes(o.auditLog()), StandardCharsets.UTF_8);
        assertFalse(o.out().contains(key.real()), "the real key reached the jail's output");
        assertFalse(o.err().contains(key.real()), "the real key is in the launcher's output");
        assertFalse(log.contains(key.real()), "the real key is in the audit log");
        Command.Result verify = run.cli("log", "verify", o.auditLog().toString());
        assertEquals(0, verify.exitCode(), () -> "agentjail log verify: " + verify.describe());
        return seen;
    }

    /** Asserts that the probe saw a placeholder, not the real key, in {@code key}'s variable. */
    static void assertPlaceholder(AgentjailRun.Outcome o, Key key) {
        String value = seen(o, key.variable());
        assertTrue(value.matches(PLACEHOLDER), () -> key.variable() + " in the jail is not a placeholder: " + value);
        assertFalse(value.contains(key.real()));
    }

    /** {@code METHOD path} of each request, for messages. */
    static List<String> paths(List<LlmStub.Request> requests) {
        return requests.stream().map(r -> r.method() + " " + r.host() + r.uri()).toList();
    }

    /** The {@code version} of the installed package's manifest. */
    static Optional<String> manifestVersion(Installed installed) {
        try {
            JsonNode m = new ObjectMapper()
                    .readTree(installed.packageDir().resolve("package.json").toFile());
            return Optional.of(m.path("version").asText());
        } catch (IOException e) {
            return Optional.empty();
        }
    }
}

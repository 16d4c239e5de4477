package dev.agentjail.it.jail;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.agentjail.it.support.Command;
import dev.agentjail.it.support.Prerequisites;
import dev.agentjail.policy.Preset;
import dev.agentjail.policy.Presets;
import dev.agentjail.proxy.audit.AuditRecord;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real agent CLI, installed from the npm registry into a temporary directory, runs inside the jail under its
 * built-in preset: Gemini CLI (a single JavaScript bundle, no install scripts needed) prints its version, which must
 * be the version of the package that was installed, and the session record shows the preset's settings.
 *
 * <p>The registry must be reachable: in CI ({@code CI=true}) an install that fails fails the test; locally the test
 * is skipped, with the reason, only when the registry does not answer at all.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class AgentCliSmokeTest {
    /** The package, and the version tested; {@code -Dagentjail.smoke.geminiCli=latest} tries the newest. */
    static final String PACKAGE = "@google/gemini-cli";

    static final String VERSION = System.getProperty("agentjail.smoke.geminiCli", "0.61.0");

    /** Gemini CLI's {@code engines.node}. */
    static final int MIN_NODE_MAJOR = 20;

    static final Duration REGISTRY_PROBE_LIMIT = Duration.ofSeconds(90);
    static final Duration INSTALL_LIMIT = Duration.ofMinutes(5);

    private static final Pattern NODE_VERSION = Pattern.compile("^v(\\d+)\\.");

    @TempDir
    Path dir;

    @Test
    void geminiCliPrintsItsVersionInsideTheJailUnderItsPreset() throws Exception {
        AgentjailRun.requireBwrap();
        Path npm = Prerequisites.require(Path.of("/usr/bin/npm"));
        Path node = node();
        Preset preset = Presets.named("gemini-cli").orElseThrow();
        assertTrue(preset.runs("gemini"));

        AgentjailRun run = AgentjailRun.in(dir).policy(withoutMetadata(preset.yaml()));
        // A user who has run Gemini CLI before has its config directory; one that does not exist is not bound.
        Files.createDirectories(run.home().resolve(".gemini"));
        Path cache = dir.resolve("npm-cache");
        Path prefix = run.project().resolve("agent");
        requireRegistry(npm, cache);
        install(npm, cache, prefix);

        Path packageDir = prefix.resolve("node_modules").resolve(PACKAGE);
        JsonNode manifest =
                new ObjectMapper().readTree(packageDir.resolve("package.json").toFile());
        String installed = manifest.path("version").asText();
        String bin = manifest.path("bin").path(preset.binaries().get(0)).asText();
        assertFalse(installed.isEmpty(), manifest::toString);
        assertFalse(bin.isEmpty(), () -> "no 'gemini' bin in " + manifest);
        if (!VERSION.equals("latest")) {
            assertEquals(VERSION, installed);
        }

        AgentjailRun.Outcome o =
                run.run(node.toString(), packageDir.resolve(bin).toString(), "--version");

        assertEquals(0, o.exitCode(), o::describe);
        List<String> lines = o.out().strip().lines().toList();
        assertFalse(lines.isEmpty(), o::describe);
        assertEquals(installed, lines.get(lines.size() - 1).strip(), o::describe);

        JsonNode start = o.only(AuditRecord.KIND_SESSION_START);
        List<String> envNames = texts(start.path("env_names"));
        List<String> binds = texts(start.path("binds"));
        assertTrue(envNames.contains("GEMINI_TELEMETRY_ENABLED"), start::toString);
        assertTrue(envNames.contains("NO_BROWSER"), start::toString);
        // Optional credentials the host does not have are skipped: no variable, no placeholder.
        assertFalse(envNames.contains("GEMINI_API_KEY"), start::toString);
        assertTrue(binds.contains("rw ~/.gemini"), start::toString);
        // Whatever Gemini CLI tried on the way (an update check, usage statistics), only the preset's hosts got out.
        List<String> allowed = preset.policy(run.home()).network().allow().stream()
                .map(p -> p.text())
                .toList();
        for (JsonNode request : o.records(AuditRecord.KIND_REQUEST)) {
            if (AuditRecord.ALLOW.equals(request.path("decision").asText())) {
                assertTrue(allowed.contains(request.path("host").asText()), request::toString);
            }
        }
    }

    /** Node 24 from .ci/run if present, else the system's node when it is new enough for Gemini CLI. */
    private static Path node() {
        if (Files.isExecutable(Prerequisites.MODERN_NODE)) {
            return Prerequisites.MODERN_NODE;
        }
        Path system = Prerequisites.require(Prerequisites.NODE);
        Command.Result r = Command.run(Duration.ofSeconds(30), List.of(system.toString(), "--version"));
        Matcher m = NODE_VERSION.matcher(r.out().strip());
        Prerequisites.require(
                r.exitCode() == 0 && m.find() && Integer.parseInt(m.group(1)) >= MIN_NODE_MAJOR,
                "Node.js >= " + MIN_NODE_MAJOR + " (" + system + " is "
                        + r.out().strip() + ")");
        return system;
    }

    /** Skips locally, fails in CI, when the registry does not answer a metadata request for the package. */
    private static void requireRegistry(Path npm, Path cache) {
        Command.Result r = Command.run(
                REGISTRY_PROBE_LIMIT,
                npm(
                        npm,
                        cache,
                        "view",
                        "--fetch-timeout=20000",
                        "--fetch-retries=1",
                        PACKAGE + "@" + VERSION,
                        "version"),
                Map.of(),
                null);
        if (r.exitCode() == 0 && !r.out().isBlank()) {
            return;
        }
        String reason = "the npm registry did not answer `npm view " + PACKAGE + "@" + VERSION + "`: " + r.describe();
        if ("true".equalsIgnoreCase(System.getenv("CI"))) {
            fail("in CI the registry must be reachable; " + reason);
        }
        assumeTrue(false, reason);
    }

    private static void install(Path npm, Path cache, Path prefix) throws Exception {
        Files.createDirectories(prefix);
        // No install scripts and no optional native modules: the bundle is plain JavaScript.
        Command.Result r = Command.run(
                INSTALL_LIMIT,
                npm(
                        npm,
                        cache,
                        "install",
                        "--prefix",
                        prefix.toString(),
                        "--no-audit",
                        "--no-fund",
                        "--no-package-lock",
                        "--ignore-scripts",
                        "--omit=optional",
                        "--loglevel=error",
                        PACKAGE + "@" + VERSION),
                Map.of(),
                null);
        assertEquals(0, r.exitCode(), () -> "npm install " + PACKAGE + "@" + VERSION + " failed: " + r.describe());
    }

    private static List<String> npm(Path npm, Path cache, String... args) {
        List<String> argv = new ArrayList<>(List.of(npm.toString(), "--cache", cache.toString()));
        argv.addAll(List.of(args));
        return argv;
    }

    /**
     * The preset as a plain policy file: without its top-level {@code preset} mapping, which only built-in presets
     * may carry.
     */
    static String withoutMetadata(String yaml) {
        StringBuilder out = new StringBuilder();
        boolean inMetadata = false;
        for (String line : yaml.lines().toList()) {
            boolean topLevel = !line.isEmpty() && !Character.isWhitespace(line.charAt(0)) && !line.startsWith("#");
            if (topLevel) {
                inMetadata = line.startsWith("preset:");
            }
            if (!inMetadata) {
                out.append(line).append('\n');
            }
        }
        assertFalse(out.toString().contains("\npreset:"), out::toString);
        return out.toString();
    }

    private static List<String> texts(JsonNode array) {
        List<String> texts = new ArrayList<>();
        array.forEach(n -> texts.add(n.asText()));
        return texts;
    }
}

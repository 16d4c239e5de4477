package dev.agentjail.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The published JSON Schema ({@code policy-v1.schema.json}) is well-formed, documented, accepts
 * every policy the project itself writes (docs and presets), and refuses what the loader refuses,
 * for the same key.
 */
class PolicySchemaTest {
    private static final Path DOCS = Path.of("..", "docs");
    private static final Path PRESETS = Path.of("src/main/resources/dev/agentjail/policy/presets");
    private static final Pattern YAML_BLOCK = Pattern.compile("```yaml\\n(.*?)```", Pattern.DOTALL);

    /** Regex syntax that Java accepts but ECMA-262 (what editors run) does not, or reads differently. */
    private static final List<String> JAVA_ONLY_REGEX =
            List.of("(?i", "(?s", "(?m", "(?x", "(?>", "\\A", "\\Z", "\\z", "\\p{", "\\h", "*+", "++", "?+", "}+");

    private static final PolicySchemaValidator VALIDATOR = PolicySchemaFixtures.validator();

    @TempDir
    Path tmp;

    @Test
    void schemaIsStrictAsciiJson() {
        String text = PolicySchemaFixtures.schemaText();
        // Strict: a trailing comma, a duplicate member or trailing text throws.
        Object schema = PolicySchemaJson.parse(text);
        assertTrue(schema instanceof Map, "the schema is a JSON object");
        // ASCII keeps `agentjail policy schema` byte-identical whatever the terminal's charset.
        assertTrue(text.chars().allMatch(c -> c < 0x80), "the schema is ASCII");
        assertTrue(text.endsWith("}\n"), "the schema ends with a newline");
    }

    @Test
    void declaresDraft202012AndItsId() {
        Map<String, Object> schema = PolicySchemaFixtures.schema();
        assertEquals("https://json-schema.org/draft/2020-12/schema", schema.get("$schema"));
        assertEquals("https://agentjail.dev/schema/policy-v1.json", schema.get("$id"));
        assertEquals("object", schema.get("type"));
        assertEquals(List.of("version"), schema.get("required"));
    }

    @Test
    void everySchemaUsesOnlyKeywordsTheValidatorImplements() {
        List<String> problems = new ArrayList<>();
        walk((schema, where) -> {
            for (String keyword : schema.keySet()) {
                if (!PolicySchemaValidator.KEYWORDS.contains(keyword)) {
                    problems.add(where + ": keyword '" + keyword + "' is not implemented by the test validator");
                }
            }
            if (schema.get("$ref") instanceof String ref) {
                try {
                    VALIDATOR.resolve(ref);
                } catch (IllegalStateException e) {
                    problems.add(where + ": " + e.getMessage());
                }
            }
            if (schema.get("pattern") instanceof String regex) {
                Pattern.compile(regex);
                if (!(schema.get("patternErrorMessage") instanceof String)) {
                    problems.add(where + ": a pattern needs a patternErrorMessage, or editors show the regex");
                }
                if (!regex.startsWith("^") || !regex.endsWith("$")) {
                    problems.add(where + ": patterns match anywhere unless anchored with ^...$: " + regex);
                }
                // Inside a character class, "*+" and the like are just characters.
                String outsideClasses = regex.replaceAll("\\[(?:\\\\.|[^\\]\\\\])*]", "[]");
                JAVA_ONLY_REGEX.stream()
                        .filter(outsideClasses::contains)
                        .forEach(java -> problems.add(where + ": '" + java + "' is not portable to ECMA-262"));
            }
        });
        assertEquals(List.of(), problems);
    }

    @Test
    void everyPropertyHasADescriptionAndExamples() {
        List<String> problems = new ArrayList<>();
        int[] documented = {0};
        walk((schema, where) -> {
            if (!isPropertyOrDefinition(where)) {
                return;
            }
            documented[0]++;
            if (!(schema.get("description") instanceof String description) || description.isBlank()) {
                problems.add(where + ": no description");
            }
            if (!(schema.get("examples") instanceof List<?> examples) || examples.isEmpty()) {
                problems.add(where + ": no examples");
            }
        });
        assertEquals(List.of(), problems);
        assertTrue(documented[0] > 80, "walked only " + documented[0] + " properties");
    }

    @Test
    void everyExampleAndDefaultIsValid() {
        List<String> problems = new ArrayList<>();
        walk((schema, where) -> {
            List<Object> values = new ArrayList<>();
            if (schema.get("examples") instanceof List<?> examples) {
                values.addAll(examples);
            }
            if (schema.containsKey("default")) {
                values.add(schema.get("default"));
            }
            for (Object value : values) {
                VALIDATOR.validate(schema, value).forEach(f -> problems.add(where + " example " + value + ": " + f));
            }
        });
        assertEquals(List.of(), problems);
    }

    @Test
    void everyObjectWithPropertiesIsClosed() {
        List<String> open = new ArrayList<>();
        walk((schema, where) -> {
            if (schema.containsKey("properties") && !where.contains("/oneOf/")) {
                if (!Boolean.FALSE.equals(schema.get("additionalProperties"))) {
                    open.add(where);
                }
            }
        });
        assertEquals(List.of(), open, "the loader refuses unknown keys everywhere; so must the schema");
    }

    @Test
    void everyYamlExampleInTheDocsIsValid() throws IOException {
        Path policyDoc = DOCS.resolve("policy.md");
        assumeTrue(
                Files.isRegularFile(policyDoc) || "true".equals(System.getenv("CI")), "needs the repository checkout");
        int checked = 0;
        for (Path doc : List.of(policyDoc, DOCS.resolve("policy-schema.md"))) {
            Matcher matcher = YAML_BLOCK.matcher(Files.readString(doc));
            for (int block = 1; matcher.find(); block++) {
                for (Object document : PolicySchemaYaml.parseAll(matcher.group(1))) {
                    assertValid(doc.getFileName() + " yaml block " + block, withVersion(document));
                    checked++;
                }
            }
        }
        assertTrue(checked >= 5, "found only " + checked + " yaml examples in the docs");
    }

    @TestFactory
    Stream<DynamicTest> everyPresetIsValid() throws IOException {
        if (!Files.isDirectory(PRESETS)) {
            return Stream.empty();
        }
        List<Path> presets;
        try (Stream<Path> files = Files.list(PRESETS)) {
            presets = files.filter(
                            f -> f.toString().endsWith(".yaml") || f.toString().endsWith(".yml"))
                    .sorted()
                    .toList();
        }
        return presets.stream()
                .map(preset -> DynamicTest.dynamicTest(preset.getFileName().toString(), () -> {
                    Object document = PolicySchemaYaml.parse(Files.readString(preset));
                    assertValid(preset.toString(), document);
                    assertTrue(((Map<?, ?>) document).containsKey("preset"), preset + " has no preset: metadata");
                }));
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("invalidDocuments")
    void invalidDocumentsAreRefusedByTheSchemaAndTheLoader(String name, Invalid invalid) throws IOException {
        List<PolicySchemaValidator.Failure> failures = VALIDATOR.validate(PolicySchemaYaml.parse(invalid.yaml()));
        assertTrue(
                failures.stream()
                        .anyMatch(f ->
                                f.path().equals(invalid.path()) && f.keyword().equals(invalid.keyword())),
                "expected " + invalid.keyword() + " at " + invalid.path() + ", got " + failures);
        if (invalid.loaderKey() == null || PolicySchemaFixtures.pending(invalid.path())) {
            return;
        }
        PolicySchemaFixtures.Sandbox sandbox = PolicySchemaFixtures.sandbox(tmp);
        PolicyException e = assertThrows(PolicyException.class, () -> sandbox.load(invalid.yaml()));
        assertEquals(invalid.loaderKey(), e.key(), e.getMessage());
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("validEdgeCases")
    void edgeCasesTheLoaderAcceptsAreValid(String name, String yaml) throws Exception {
        Map<String, Object> document = withVersion(PolicySchemaYaml.parse(yaml));
        assertValid(name, document);
        boolean pending =
                document.keySet().stream().anyMatch(PolicySchemaFixtures::pending) || pendingInside(document, "");
        if (!pending) {
            PolicySchemaFixtures.sandbox(tmp).load(PolicySchemaFixtures.toJson(document));
        }
    }

    /** A document the schema must refuse with {@code keyword} at {@code path}; the loader too, at {@code loaderKey}. */
    record Invalid(String yaml, String path, String keyword, String loaderKey) {
        /** The loader names the same key. */
        static Invalid at(String path, String keyword, String yaml) {
            return new Invalid(yaml, path, keyword, path);
        }

        /** The loader reports the problem at another key (its own check comes first or sits higher). */
        Invalid loaderKey(String key) {
            return new Invalid(yaml, path, keyword, key);
        }

        /** The schema is stricter than the loader here, for a reason given at the call. */
        Invalid schemaOnly() {
            return new Invalid(yaml, path, keyword, null);
        }
    }

    static Stream<Arguments> invalidDocuments() {
        return Stream.of(
                // The top level.
                bad("not a mapping", Invalid.at("", "type", "- version: 1\n").loaderKey("-")),
                bad("no version", Invalid.at("version", "required", "network: {allow: [a.test]}\n")),
                bad("version 2", Invalid.at("version", "const", "version: 2\n")),
                bad("version as a string", Invalid.at("version", "type", "version: '1'\n")),
                bad("unknown top-level key", Invalid.at("netwrk", "additionalProperties", "version: 1\nnetwrk: {}\n")),
                bad("extends is not a list", Invalid.at("extends", "type", "version: 1\nextends: claude-code\n")),
                bad(
                        "extends names ~user",
                        Invalid.at("extends[0]", "pattern", "version: 1\nextends: ['~bob/base.yaml']\n")
                                .loaderKey("extends")),
                bad("locked names no key", Invalid.at("locked[0]", "enum", "version: 1\nlocked: [network.mod]\n")),
                bad("locked names version", Invalid.at("locked[0]", "enum", "version: 1\nlocked: [version]\n")),
                // network
                bad("network is a list", Invalid.at("network", "type", "version: 1\nnetwork: []\n")),
                bad("network is empty", Invalid.at("network", "type", "version: 1\nnetwork:\n")),
                bad("unknown network key", Invalid.at("network.alow", "additionalProperties", net("alow: [a.test]"))),
                bad("bad mode", Invalid.at("network.mode", "enum", net("mode: audit"))),
                bad("allow is a string", Invalid.at("network.allow", "type", net("allow: api.example.com"))),
                bad("allow *", Invalid.at("network.allow[0]", "pattern", net("allow: ['*']"))),
                bad("allow *.com", Invalid.at("network.allow[0]", "pattern", net("allow: ['*.com']"))),
                bad("inner wildcard", Invalid.at("network.allow[0]", "pattern", net("allow: ['api*.example.com']"))),
                bad("port 0 in a pattern", Invalid.at("network.deny[0]", "pattern", net("deny: ['a.test:0']"))),
                bad("port 65536", Invalid.at("network.tunnel[0]", "pattern", net("tunnel: ['a.test:65536']"))),
                bad("bare ipv6", Invalid.at("network.allow[0]", "pattern", net("allow: ['2001:db8::1']"))),
                bad("ports 0", Invalid.at("network.ports[0]", "minimum", net("ports: [0]"))),
                bad("ports 70000", Invalid.at("network.ports[0]", "maximum", net("ports: [70000]"))),
                bad("ports as strings", Invalid.at("network.ports[0]", "type", net("ports: ['443']"))),
                bad("ports twice", Invalid.at("network.ports[1]", "uniqueItems", net("ports: [443, 443]"))),
                bad(
                        "resolve key with port 0",
                        Invalid.at(
                                "network.resolve.a.test:0", "propertyNames", net("resolve: {'a.test:0': 127.0.0.1}"))),
                bad(
                        "resolve to a name",
                        Invalid.at("network.resolve.a.test", "oneOf", net("resolve: {a.test: localhost}"))),
                bad("resolve to nothing", Invalid.at("network.resolve.a.test", "oneOf", net("resolve: {a.test: []}"))),
                // mcp
                bad(
                        "unknown mcp key",
                        Invalid.at("mcp.server", "additionalProperties", "version: 1\nmcp: {server: []}\n")),
                bad(
                        "unknown server key",
                        Invalid.at(
                                "mcp.servers[0].timeout",
                                "additionalProperties",
                                mcp("url: https://m.test, timeout: 5"))),
                bad(
                        "server without name",
                        Invalid.at("mcp.servers[0].name", "required", server("url: https://m.test"))),
                bad(
                        "upper-case server name",
                        Invalid.at("mcp.servers[0].name", "pattern", server("name: Docs, url: https://m.test"))),
                bad("url and command", Invalid.at("mcp.servers[0]", "oneOf", mcp("url: https://m.test, command: [x]"))),
                bad("neither url nor command", Invalid.at("mcp.servers[0]", "oneOf", mcp("sampling: false"))),
                bad(
                        "env for a remote server",
                        Invalid.at("mcp.servers[0]", "oneOf", mcp("url: https://m.test, env: {A: b}"))
                                .loaderKey("mcp.servers[0].env")),
                bad("ftp url", Invalid.at("mcp.servers[0].url", "pattern", mcp("url: 'ftp://m.test/x'"))),
                bad(
                        "url with a query",
                        Invalid.at("mcp.servers[0].url", "pattern", mcp("url: 'https://m.test/x?k=v'"))),
                bad("empty command", Invalid.at("mcp.servers[0].command", "minItems", mcp("command: []"))),
                bad(
                        "unknown tools key",
                        Invalid.at(
                                "mcp.servers[0].tools.allowed",
                                "additionalProperties",
                                mcp("url: https://m.test, tools: {allowed: [x]}"))),
                bad(
                        "resources have no deny",
                        Invalid.at(
                                "mcp.servers[0].resources.deny",
                                "additionalProperties",
                                mcp("url: https://m.test, resources: {deny: [x]}"))),
                bad(
                        "empty tool name",
                        Invalid.at(
                                "mcp.servers[0].tools.allow[0]",
                                "pattern",
                                mcp("url: https://m.test, tools: {allow: ['']}"))),
                bad(
                        "sampling: yes",
                        Invalid.at("mcp.servers[0].sampling", "type", mcp("url: https://m.test, sampling: yes"))),
                // credentials
                bad(
                        "credentials is a mapping",
                        Invalid.at("credentials", "type", "version: 1\ncredentials: {env: A}\n")),
                bad(
                        "unknown credential key",
                        Invalid.at(
                                "credentials[0].headers",
                                "additionalProperties",
                                cred("header: x-api-key, headers: [a]"))),
                bad(
                        "credential without header",
                        Invalid.at(
                                "credentials[0].header",
                                "required",
                                "version: 1\ncredentials: [{env: A, hosts: [a.test]}]\n")),
                bad(
                        "credential without hosts",
                        Invalid.at(
                                "credentials[0].hosts",
                                "minItems",
                                "version: 1\ncredentials: [{env: A, hosts: [], header: x-k}]\n")),
                bad(
                        "credential for a wildcard",
                        Invalid.at(
                                "credentials[0].hosts[0]",
                                "pattern",
                                "version: 1\ncredentials: [{env: A, hosts: ['*.a.test'], header: x-k}]\n")),
                bad(
                        "credential in a proxy variable",
                        Invalid.at(
                                "credentials[0].env",
                                "pattern",
                                "version: 1\ncredentials: [{env: HTTPS_PROXY, hosts: [a.test], header: x-k}]\n")),
                bad("header with a space", Invalid.at("credentials[0].header", "pattern", cred("header: 'x key'"))),
                bad(
                        "optional: maybe",
                        Invalid.at("credentials[0].optional", "type", cred("header: x-k, optional: maybe"))),
                // filesystem
                bad(
                        "unknown filesystem key",
                        Invalid.at("filesystem.reed", "additionalProperties", fs("reed: [/opt]"))),
                bad("relative read path", Invalid.at("filesystem.read[0]", "pattern", fs("read: [opt/tools]"))),
                bad("read /", Invalid.at("filesystem.read[0]", "pattern", fs("read: [/]"))),
                bad("read ~", Invalid.at("filesystem.read[0]", "pattern", fs("read: ['~']"))),
                bad("read ~user", Invalid.at("filesystem.write[0]", "pattern", fs("write: ['~bob/x']"))),
                bad("read /proc", Invalid.at("filesystem.read[0]", "pattern", fs("read: [/proc/1]"))),
                bad("read with ..", Invalid.at("filesystem.read[0]", "pattern", fs("read: ['~/a/../b']"))),
                bad("write twice", Invalid.at("filesystem.write[1]", "uniqueItems", fs("write: ['~/.x', '~/.x']"))),
                bad("absolute mask", Invalid.at("filesystem.mask[0]", "pattern", fs("mask: [/etc/passwd]"))),
                bad("mask with a class", Invalid.at("filesystem.mask[0]", "pattern", fs("mask: ['[ab].txt']"))),
                bad("protected ..", Invalid.at("filesystem.protected[0]", "pattern", fs("protected: [../x]"))),
                bad("relative deny path", Invalid.at("filesystem.deny[0]", "pattern", fs("deny: [.ssh]"))),
                // env
                bad("unknown env key", Invalid.at("env.pass", "additionalProperties", env("pass: [A]"))),
                bad("bad variable name", Invalid.at("env.forward[0]", "pattern", env("forward: [1BAD]"))),
                bad("forward twice", Invalid.at("env.forward[1]", "uniqueItems", env("forward: [A, A]"))),
                bad(
                        "set a proxy variable",
                        Invalid.at("env.set.HTTP_PROXY", "propertyNames", env("set: {HTTP_PROXY: x}"))),
                bad("set to a list", Invalid.at("env.set.A", "type", env("set: {A: [x]}"))),
                bad("deny *", Invalid.at("env.deny[0]", "pattern", env("deny: ['*']"))),
                bad("deny a proxy variable", Invalid.at("env.deny[0]", "pattern", env("deny: [NO_PROXY]"))),
                // limits
                bad("unknown limit", Invalid.at("limits.swap", "additionalProperties", limits("swap: 2g"))),
                bad("cpu as a percentage", Invalid.at("limits.cpu", "type", limits("cpu: 50%"))),
                bad("cpu of zero", Invalid.at("limits.cpu", "minimum", limits("cpu: 0"))),
                bad("timeout without unit", Invalid.at("limits.timeout", "pattern", limits("timeout: '12'"))),
                bad("timeout as a number", Invalid.at("limits.timeout", "type", limits("timeout: 12"))),
                bad("timeout in days", Invalid.at("limits.timeout", "pattern", limits("timeout: 1d"))),
                bad("timeout zero", Invalid.at("limits.timeout", "pattern", limits("timeout: 0s"))),
                bad("timeout leading zero", Invalid.at("limits.timeout", "pattern", limits("timeout: 090s"))),
                bad("memory in gb", Invalid.at("limits.memory", "pattern", limits("memory: 16gb"))),
                bad("tmp_size with a space", Invalid.at("limits.tmp_size", "pattern", limits("tmp_size: 1 g"))),
                bad("processes 0", Invalid.at("limits.processes", "minimum", limits("processes: 0"))),
                bad("processes as a string", Invalid.at("limits.processes", "type", limits("processes: '4096'"))),
                bad("open_files too many", Invalid.at("limits.open_files", "maximum", limits("open_files: 2000000"))),
                // jail
                bad("unknown jail key", Invalid.at("jail.host", "additionalProperties", jail("host: x"))),
                bad("hostname with a dot", Invalid.at("jail.hostname", "pattern", jail("hostname: my.host"))),
                bad("hostname with a leading -", Invalid.at("jail.hostname", "pattern", jail("hostname: -x"))),
                bad("new_session: yes", Invalid.at("jail.new_session", "type", jail("new_session: yes"))),
                // The loader reads true, True and TRUE quoted or not; editors see a quoted one as a string.
                bad(
                        "new_session quoted",
                        Invalid.at("jail.new_session", "type", jail("new_session: 'true'"))
                                .schemaOnly()),
                bad("unknown device", Invalid.at("jail.devices[0]", "enum", jail("devices: [usb]"))),
                bad("empty pre_start", Invalid.at("jail.pre_start[0]", "pattern", jail("pre_start: ['']"))),
                bad("blank pre_start", Invalid.at("jail.pre_start[0]", "pattern", jail("pre_start: ['  ']"))),
                bad("pre_start is a string", Invalid.at("jail.pre_start", "type", jail("pre_start: make"))),
                // audit, tls, redaction, preset
                bad(
                        "unknown audit key",
                        Invalid.at("audit.path", "additionalProperties", "version: 1\naudit: {path: x}\n")),
                bad("audit format json", Invalid.at("audit.format", "enum", "version: 1\naudit: {format: json}\n")),
                bad(
                        "audit log ~user",
                        Invalid.at("audit.log", "pattern", "version: 1\naudit: {log: '~bob/a.jsonl'}\n")),
                bad(
                        "unknown tls key",
                        Invalid.at("tls.ca", "additionalProperties", "version: 1\ntls: {ca: [x.pem]}\n")),
                bad(
                        "upstream_ca is a string",
                        Invalid.at("tls.upstream_ca", "type", "version: 1\ntls: {upstream_ca: x.pem}\n")),
                bad("unknown redaction key", Invalid.at("redaction.mode", "additionalProperties", red("mode: block"))),
                bad("bad action", Invalid.at("redaction.action", "enum", red("action: warn"))),
                bad(
                        "pattern without regex",
                        Invalid.at("redaction.patterns[0].regex", "required", red("patterns: [{name: itk}]"))),
                bad(
                        "pattern with a bad name",
                        Invalid.at(
                                "redaction.patterns[0].name",
                                "pattern",
                                red("patterns: [{name: Bad Name, regex: itk_x}]"))),
                bad(
                        "unknown pattern key",
                        Invalid.at(
                                "redaction.patterns[0].flags",
                                "additionalProperties",
                                red("patterns: [{name: itk, regex: itk_x, flags: i}]"))),
                bad(
                        "known value with env and file",
                        Invalid.at("redaction.known_values[0]", "oneOf", red("known_values: [{env: A, file: b}]"))),
                bad("empty known value", Invalid.at("redaction.known_values[0]", "oneOf", red("known_values: [{}]"))),
                bad(
                        "known value twice",
                        Invalid.at(
                                "redaction.known_values[1]", "uniqueItems", red("known_values: [{env: A}, {env: A}]"))),
                bad("short allow", Invalid.at("redaction.allow[0]", "minLength", red("allow: [short]"))),
                bad(
                        "unknown preset key",
                        Invalid.at(
                                        "preset.color",
                                        "additionalProperties",
                                        "version: 1\npreset: {name: x, description: y, color: red}\n")
                                .loaderKey("preset")));
    }

    static Stream<Arguments> validEdgeCases() {
        return Stream.of(
                arguments(
                        "pattern spellings",
                        net(
                                "allow: ['[2001:db8::1]:443', 0x7f.1, '*.example.com.', API.Example.COM, a_b.example.com, 'h.test:65535']")),
                arguments("pinned addresses", net("resolve: {a.test: '[::1]', b.test: [127.0.0.1, '::1']}")),
                arguments(
                        "pinned ports",
                        net("resolve: {'a.test:443': '127.0.0.1:8443', b.test: ['[::1]:9000', '[::2]:9000']}")),
                arguments("report mode and ports", net("mode: report\n  ports: [443, 8443]")),
                arguments("upper-case size units and 30 days", limits("memory: 16G\n  timeout: 720h")),
                arguments("YAML 1.2 booleans", jail("new_session: True\n  share_timezone: FALSE")),
                arguments("numbers and booleans as env values", env("set: {DEBUG: 1, CI: true, RATIO: 0.5}")),
                arguments("env deny prefixes", env("deny: [AWS_*, GITHUB_TOKEN, AWS_*]")),
                arguments("trailing slashes", fs("read: [/opt/tools/]\n  mask: [build/]")),
                arguments("deny listed twice", fs("deny: ['~/.ssh', '~/.ssh']")),
                arguments(
                        "credential hosts with ports",
                        "version: 1\nnetwork: {allow: ['[2001:db8::1]:8443', api.test]}\ncredentials:\n"
                                + "  - {env: A, hosts: ['[2001:db8::1]:8443', 'api.test:443'], header: authorization}\n"),
                arguments(
                        "host-side server with numeric argument",
                        mcp("command: [python, -m, http.server, 8080], env: {PORT: 8080}")),
                arguments("upper-case url scheme", mcp("url: 'HTTPS://MCP.example.com:8443/mcp'")),
                arguments("allow of exactly 8 characters", red("allow: ['12345678']")),
                arguments("audit settings", "version: 1\naudit: {log: audit.jsonl, format: jsonl}\n"),
                arguments("locks, one twice", "version: 1\nlocked: [network.mode, limits, credentials, limits]\n"),
                arguments("extends a file, twice", "version: 1\nextends: [../team/base.yaml, ../team/base.yaml]\n"),
                arguments(
                        "devices, one twice", jail("devices: [gpu, camera, audio, gpu]\n  pre_start: ['make deps']")));
    }

    private static Arguments bad(String name, Invalid invalid) {
        return arguments(name, invalid);
    }

    private static String net(String body) {
        return "version: 1\nnetwork:\n  " + body + "\n";
    }

    private static String fs(String body) {
        return "version: 1\nfilesystem:\n  " + body + "\n";
    }

    private static String env(String body) {
        return "version: 1\nenv:\n  " + body + "\n";
    }

    private static String limits(String body) {
        return "version: 1\nlimits:\n  " + body + "\n";
    }

    private static String jail(String body) {
        return "version: 1\njail:\n  " + body + "\n";
    }

    private static String red(String body) {
        return "version: 1\nredaction:\n  " + body + "\n";
    }

    /** One MCP server named {@code docs} with these other fields. */
    private static String mcp(String fields) {
        return server("name: docs, " + fields);
    }

    private static String server(String fields) {
        return "version: 1\nmcp:\n  servers:\n    - {" + fields + "}\n";
    }

    /** A credential for {@code A} to {@code a.test} (allowed) with these other fields. */
    private static String cred(String fields) {
        return "version: 1\nnetwork: {allow: [a.test, api.test, '[2001:db8::1]']}\ncredentials:\n  - {env: A, hosts: [a.test], "
                + fields + "}\n";
    }

    private static void assertValid(String what, Object document) {
        List<PolicySchemaValidator.Failure> failures = VALIDATOR.validate(document);
        if (!failures.isEmpty()) {
            fail(what + " does not match the schema: " + failures);
        }
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> withVersion(Object document) {
        Map<String, Object> map = new LinkedHashMap<>();
        map.put("version", PolicySchemaYaml.plain(1));
        map.putAll((Map<String, Object>) document);
        return map;
    }

    private static boolean pendingInside(Object value, String path) {
        if (value instanceof Map<?, ?> map) {
            return map.entrySet().stream().anyMatch(e -> {
                String child = path.isEmpty() ? String.valueOf(e.getKey()) : path + "." + e.getKey();
                return PolicySchemaFixtures.pending(child) || pendingInside(e.getValue(), child);
            });
        }
        if (value instanceof List<?> list) {
            return list.stream().anyMatch(item -> pendingInside(item, path + "[]"));
        }
        return false;
    }

    private static boolean isPropertyOrDefinition(String where) {
        String[] parts = where.split("/");
        if (parts.length < 2) {
            return false;
        }
        String container = parts[parts.length - 2];
        return (container.equals("properties") && !where.contains("/oneOf/")) || container.equals("$defs");
    }

    /** Visits every schema object in the schema, with its JSON pointer. */
    static void walk(BiConsumer<Map<String, Object>, String> visitor) {
        walk(PolicySchemaFixtures.schema(), "#", visitor);
    }

    @SuppressWarnings("unchecked")
    private static void walk(Object node, String where, BiConsumer<Map<String, Object>, String> visitor) {
        if (!(node instanceof Map<?, ?>)) {
            return; // A boolean schema.
        }
        Map<String, Object> schema = (Map<String, Object>) node;
        visitor.accept(schema, where);
        for (String container : List.of("properties", "$defs")) {
            if (schema.get(container) instanceof Map<?, ?> children) {
                children.forEach((name, child) -> walk(child, where + "/" + container + "/" + name, visitor));
            }
        }
        for (String single : List.of("items", "additionalProperties", "propertyNames")) {
            walk(schema.get(single), where + "/" + single, visitor);
        }
        if (schema.get("oneOf") instanceof List<?> branches) {
            for (int i = 0; i < branches.size(); i++) {
                walk(branches.get(i), where + "/oneOf/" + i, visitor);
            }
        }
    }
}

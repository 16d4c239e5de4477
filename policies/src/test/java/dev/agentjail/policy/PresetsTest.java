package dev.agentjail.policy;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;

/**
 * Every built-in preset loads as an ordinary policy and keeps the rules the presets promise: exact,
 * documented hosts; none of the telemetry hosts its own comments list; no relative paths, no limits,
 * optional credentials that go only to allowed hosts; and a broken preset resource fails loudly.
 */
class PresetsTest {
    private static final Path RESOURCES = Path.of("src", "main", "resources", "dev", "agentjail", "policy", "presets");
    private static final Path DOC = Path.of("..", "docs", "presets.md");

    /** {@code # telemetry: a.example, b.example (why)}: hosts a preset must never allow. */
    private static final Pattern KEPT_OUT = Pattern.compile("^#\\s*(telemetry|not allowed):\\s*(.*)$");

    private static final Pattern HOST_NAME =
            Pattern.compile("[a-z0-9]([a-z0-9-]*[a-z0-9])?(\\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+");

    @TempDir
    Path home;

    static Stream<Preset> presets() {
        return Presets.all().stream();
    }

    @Test
    void theNamesAreTheResourceFilesSortedAndEachDeclaresItsOwnName() throws IOException {
        Set<String> files = new TreeSet<>();
        try (Stream<Path> entries = Files.list(RESOURCES)) {
            entries.forEach(file -> {
                String name = file.getFileName().toString();
                assertTrue(name.endsWith(".yaml"), () -> "not a preset file: " + file);
                files.add(name.substring(0, name.length() - ".yaml".length()));
            });
        }
        assertEquals(files, Presets.names());
        assertEquals(9, files.size());
        List<String> order = Presets.all().stream().map(Preset::name).toList();
        assertEquals(List.copyOf(files), order);
        for (String name : files) {
            assertEquals(name, Presets.named(name).orElseThrow().name());
            assertEquals("preset:" + name, Presets.named(name).orElseThrow().sourceName());
        }
        assertEquals(Optional.empty(), Presets.named("claude"));
        assertEquals(Optional.empty(), Presets.named("../claude-code"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("presets")
    void loadsAsAPolicy(Preset preset) throws Exception {
        Policy policy = PolicyLoader.parse(preset.yaml(), "preset:" + preset.name(), Path.of("/"), home);
        assertEquals("preset:" + preset.name(), policy.source());
        assertEquals(policy.network().allow(), preset.policy(home).network().allow(), "Preset.policy loads the same");
        assertFalse(policy.network().allow().isEmpty(), "a preset allows its agent's API hosts");
    }

    @Test
    void eachBinarySelectsExactlyOnePreset() {
        Map<String, String> owners = new HashMap<>();
        for (Preset preset : Presets.all()) {
            for (String binary : preset.binaries()) {
                String earlier = owners.putIfAbsent(binary, preset.name());
                assertNull(earlier, () -> binary + " is claimed by " + earlier + " and " + preset.name());
                assertEquals(
                        preset.name(), Presets.forProgram(binary).orElseThrow().name());
                assertEquals(
                        preset.name(),
                        Presets.forProgram("/usr/local/bin/" + binary)
                                .orElseThrow()
                                .name());
            }
        }
    }

    static Stream<Arguments> programs() {
        return Stream.of(
                arguments("claude", "claude-code"),
                arguments("/home/u/.local/bin/claude", "claude-code"),
                arguments("codex", "codex"),
                arguments("gemini", "gemini-cli"),
                arguments("/usr/bin/goose", "goose"),
                arguments("aider", "aider"),
                arguments("crush", "crush"),
                arguments("opencode", "opencode"),
                arguments("pi", "pi"),
                arguments("claude-code", null),
                arguments("Claude", null),
                arguments("claude.sh", null),
                arguments("/usr/bin/claude/", null),
                arguments("", null),
                arguments("/", null),
                arguments("node", null));
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @MethodSource("programs")
    void forProgramMatchesTheFileNameOfArgvZero(String program, String preset) {
        assertEquals(Optional.ofNullable(preset), Presets.forProgram(program).map(Preset::name));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("presets")
    void everyAllowedHostIsAnExactPatternWithASourceComment(Preset preset) throws Exception {
        List<String> lines = preset.yaml().lines().toList();
        for (HostPattern allowed : preset.policy(home).network().allow()) {
            assertEquals(allowed, HostPattern.parse(allowed.text()));
            assertEquals(
                    HostPattern.Kind.EXACT,
                    allowed.kind(),
                    () -> preset.name() + ": " + allowed.text() + " is not an exact host; presets name exact hosts");
            int line = indexOf(lines, Pattern.compile("^\\s*-\\s*\"?" + Pattern.quote(allowed.text()) + "\"?\\s*$"));
            assertTrue(line >= 0, () -> preset.name() + ": " + allowed.text() + " is not a block list entry");
            assertTrue(
                    commentAbove(lines, line).contains("source: http"),
                    () -> preset.name() + ": no '# source: URL' comment right above " + allowed.text());
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("presets")
    void allowsNoneOfTheTelemetryHostsItsCommentsList(Preset preset) throws Exception {
        List<String> keptOut = keptOutHosts(preset);
        assertFalse(keptOut.isEmpty(), () -> preset.name() + " lists no '# telemetry:' or '# not allowed:' hosts");
        NetworkPolicy network = preset.policy(home).network();
        for (String host : keptOut) {
            for (String name : List.of(host, "sub." + host)) {
                assertAll(
                        () -> assertFalse(
                                network.decide(Authorities.parseConnectTarget(name + ":443"), 443)
                                        .allowed(),
                                () -> preset.name() + " allows " + name + ":443"),
                        () -> assertFalse(
                                network.decide(Authorities.parseAuthority(name, 80), 80)
                                        .allowed(),
                                () -> preset.name() + " allows " + name + ":80"));
            }
        }
    }

    @Test
    void theTelemetryCheckSeesAnAllowedTelemetryHost() throws Exception {
        // The check above must be able to fail: a preset that allows a host its comment lists.
        String yaml = """
                # telemetry: statsig.example.com (metrics)
                version: 1
                preset: {name: x, description: "x", binaries: [x]}
                network:
                  allow: [statsig.example.com]
                """;
        Preset broken = Presets.parse("x", yaml);
        NetworkPolicy network = broken.policy(home).network();
        List<String> keptOut = keptOutHosts(broken);
        assertEquals(List.of("statsig.example.com"), keptOut);
        assertTrue(network.decide(Authorities.parseConnectTarget(keptOut.get(0) + ":443"), 443)
                .allowed());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("presets")
    void namesNoRelativePathsSetsNoLimitsAndExposesNoCredentialStore(Preset preset) throws Exception {
        Policy policy = preset.policy(home);
        Set<String> topLevel = topLevelKeys(preset.yaml());
        assertFalse(topLevel.contains("limits"), "presets leave limits to team and project policies");
        assertFalse(topLevel.contains("locked"), "presets lock nothing");
        assertFalse(topLevel.contains("extends"), "presets stand alone");
        assertFalse(topLevel.contains("tls"), "presets name no files");
        assertFalse(preset.yaml().contains("file:"), "presets name no files (credentials, known values)");
        assertEquals(TlsSettings.defaults(), policy.tls());
        assertTrue(policy.redaction().knownValues().isEmpty());
        for (CredentialRule rule : policy.credentials()) {
            assertNull(rule.file(), rule.env());
        }
        for (HostPath path :
                concat(policy.filesystem().read(), policy.filesystem().write())) {
            assertEquals(
                    HostPath.Anchor.HOME, path.anchor(), () -> preset.name() + ": " + path.text() + " is not under ~/");
            assertFalse(CredentialPaths.isAlwaysHidden(path), path.text());
            assertTrue(path.path().getNameCount() >= 1);
        }
        assertEquals(List.of(), policy.filesystem().coveredCredentials(home));
        assertTrue(policy.filesystem().mask().isEmpty(), "masks belong to the project");
        for (ProjectGlob glob : policy.filesystem().protectedPaths()) {
            assertFalse(glob.pattern().startsWith("/"), glob.pattern());
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("presets")
    void credentialsAreOptionalAndGoOnlyToAllowedHosts(Preset preset) throws Exception {
        Policy policy = preset.policy(home);
        assertFalse(policy.credentials().isEmpty(), "a preset keeps its agent's API keys out of the jail");
        for (CredentialRule rule : policy.credentials()) {
            assertTrue(rule.optional(), () -> preset.name() + ": " + rule.env() + " must be optional");
            for (Target host : rule.hosts()) {
                assertTrue(
                        policy.network()
                                .decide(host, CredentialRule.DEFAULT_PORT)
                                .allowed(),
                        () -> preset.name() + ": " + rule.env() + " goes to " + host.authority()
                                + ", which the preset does not allow");
            }
            assertFalse(policy.env().forward().contains(rule.env()));
            assertFalse(policy.env().set().containsKey(rule.env()));
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("presets")
    void picksNewSessionOnPurposeWithAReason(Preset preset) throws Exception {
        List<String> lines = preset.yaml().lines().toList();
        int line = indexOf(lines, Pattern.compile("^\\s+new_session:\\s*(true|false)\\s*$"));
        assertTrue(line >= 0, () -> preset.name() + " does not set jail.new_session");
        assertTrue(commentAbove(lines, line).length() > 40, () -> preset.name() + ": say why, above new_session");
        assertEquals(
                lines.get(line).contains("true"), preset.policy(home).jail().newSession());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("presets")
    void describesItselfOnOneLine(Preset preset) {
        assertFalse(preset.description().isBlank());
        assertTrue(preset.description().length() <= Preset.MAX_DESCRIPTION);
        assertFalse(preset.binaries().isEmpty());
        assertNotEquals(preset.name(), preset.description());
    }

    /** agentjail run prints it when the agent is not on PATH: every built-in preset says how to get it. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("presets")
    void saysHowToInstallTheAgent(Preset preset) {
        assertFalse(preset.install().isBlank(), preset.name() + " has no preset.install");
        assertTrue(
                preset.install().contains(" install") || preset.install().startsWith("curl "),
                () -> preset.name() + ": " + preset.install());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("presets")
    void theDocsNameEveryHostOfThePreset(Preset preset) throws Exception {
        assumeTrue(Files.isRegularFile(DOC) || "true".equals(System.getenv("CI")), "needs the repository checkout");
        String doc = Files.readString(DOC);
        String row = doc.lines()
                .filter(line -> line.startsWith("| `" + preset.name() + "` |"))
                .findFirst()
                .orElseThrow(() -> new AssertionError("docs/presets.md has no table row for " + preset.name()));
        for (HostPattern allowed : preset.policy(home).network().allow()) {
            assertTrue(row.contains(allowed.text()), () -> "docs/presets.md: " + preset.name() + " allows " + allowed);
        }
        for (String host : keptOutHosts(preset)) {
            assertTrue(row.contains(host), () -> "docs/presets.md: " + preset.name() + " keeps out " + host);
        }
        for (String binary : preset.binaries()) {
            assertTrue(row.contains("`" + binary + "`"), () -> "docs/presets.md: " + preset.name() + " runs " + binary);
        }
    }

    static Stream<Arguments> brokenMetadata() {
        String valid = "version: 1\n";
        return Stream.of(
                arguments(valid, "no top-level 'preset' mapping"),
                arguments(valid + "preset: x\n", "'preset' must be a mapping"),
                arguments(
                        valid + "preset: {name: x, description: d, binaries: [x], extra: 1}\n", "unknown key 'extra'"),
                arguments(valid + "preset: {name: x, description: d}\n", "preset.binaries is missing"),
                arguments(valid + "preset: {name: y, description: d, binaries: [y]}\n", "but the file is named x"),
                arguments(valid + "preset: {name: x, description: d, binaries: []}\n", "names no binary"),
                arguments(valid + "preset: {name: x, description: d, binaries: x}\n", "must be a list"),
                arguments(valid + "preset: {name: x, description: \"a\\nb\", binaries: [x]}\n", "one trimmed line"),
                arguments(valid + "preset: {name: x, description: \" \", binaries: [x]}\n", "one trimmed line"),
                arguments(valid + "preset: {name: x, description: d, binaries: [123]}\n", "must be a string"),
                arguments(valid + "preset: {name: x, description: d, binaries: [x, x]}\n", "lists a binary twice"),
                arguments(valid + "preset: {name: x, description: d, binaries: [bin/x]}\n", "invalid binary name"),
                arguments(
                        valid + "preset: {name: x, description: d, binaries: [x], name: x}\n", "duplicate key 'name'"),
                arguments(valid + "preset: {name: x, description: &d d, binaries: [*d]}\n", "must be a string"),
                arguments(valid + "preset: [\n", "invalid yaml"),
                arguments("- a list\n", "expected a mapping at the top level"));
    }

    @ParameterizedTest(name = "[{index}] {1}")
    @MethodSource("brokenMetadata")
    void brokenMetadataIsABuildBugThatSaysWhere(String yaml, String problem) {
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> Presets.parse("x", yaml));
        assertTrue(e.getMessage().startsWith("presets/x.yaml"), e.getMessage());
        assertTrue(e.getMessage().contains(problem), () -> e.getMessage() + " should contain " + problem);
    }

    @Test
    void theRecordRefusesWhatTheMetadataCannotSay() {
        assertThrows(IllegalArgumentException.class, () -> new Preset("Claude", "d", List.of("c"), ""));
        assertThrows(IllegalArgumentException.class, () -> new Preset("a-", "d", List.of("c"), ""));
        assertThrows(IllegalArgumentException.class, () -> new Preset("a", "d".repeat(101), List.of("c"), ""));
        assertThrows(IllegalArgumentException.class, () -> new Preset("a", "d", List.of("-c"), ""));
        assertThrows(NullPointerException.class, () -> new Preset("a", "d", List.of("c"), null));
        assertThrows(IllegalArgumentException.class, () -> new Preset("a", "d", List.of("c"), "x\ny", ""));
        List<String> binaries = new ArrayList<>(List.of("c"));
        Preset preset = new Preset("a", "d", binaries, "");
        binaries.add("e");
        assertEquals(List.of("c"), preset.binaries());
        assertTrue(preset.runs("/x/c"));
        assertFalse(preset.runs("/c/x"));
    }

    /** Hosts listed on {@code # telemetry:} and {@code # not allowed:} lines, up to an explaining "(". */
    private static List<String> keptOutHosts(Preset preset) {
        List<String> hosts = new ArrayList<>();
        for (String line : preset.yaml().lines().toList()) {
            Matcher m = KEPT_OUT.matcher(line.strip());
            if (!m.matches()) {
                continue;
            }
            String list = m.group(2);
            int paren = list.indexOf('(');
            for (String item : (paren < 0 ? list : list.substring(0, paren)).split(",")) {
                String host = item.strip();
                if (!HOST_NAME.matcher(host).matches()) {
                    fail(preset.name() + ": '" + host + "' on a '" + m.group(1) + ":' line is not a host name");
                }
                hosts.add(host);
            }
        }
        return hosts;
    }

    private static int indexOf(List<String> lines, Pattern pattern) {
        for (int i = 0; i < lines.size(); i++) {
            if (pattern.matcher(lines.get(i)).matches()) {
                return i;
            }
        }
        return -1;
    }

    /** The comment lines directly above {@code line}, joined. */
    private static String commentAbove(List<String> lines, int line) {
        StringBuilder comment = new StringBuilder();
        for (int i = line - 1; i >= 0 && lines.get(i).strip().startsWith("#"); i--) {
            comment.insert(0, lines.get(i).strip() + "\n");
        }
        return comment.toString();
    }

    private static Set<String> topLevelKeys(String yaml) {
        Node root = new Yaml().compose(new java.io.StringReader(yaml));
        Set<String> keys = new TreeSet<>();
        for (NodeTuple tuple : ((MappingNode) root).getValue()) {
            keys.add(((ScalarNode) tuple.getKeyNode()).getValue());
        }
        return keys;
    }

    private static List<HostPath> concat(List<HostPath> a, List<HostPath> b) {
        List<HostPath> all = new ArrayList<>(a);
        all.addAll(b);
        return all;
    }
}

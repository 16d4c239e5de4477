package dev.agentjail.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class PolicyLoaderTest {
    private static final String GOOD = """
            version: 1
            network:
              allow: [api.anthropic.com, "*.githubusercontent.com", "upstream.test:8443"]
              deny: [evil.githubusercontent.com]
              resolve: {upstream.test: 127.0.0.1}   # like curl --resolve
            """;

    @TempDir
    Path dir;

    @Test
    void goodPolicyLoads() throws Exception {
        Policy policy = PolicyLoader.parse(GOOD, "p.yaml");
        assertEquals(1, policy.version());
        assertEquals("p.yaml", policy.source());
        NetworkPolicy network = policy.network();
        assertEquals(
                List.of(
                        HostPattern.parse("api.anthropic.com"),
                        HostPattern.parse("*.githubusercontent.com"),
                        HostPattern.parse("upstream.test:8443")),
                network.allow());
        assertEquals(List.of(HostPattern.parse("evil.githubusercontent.com")), network.deny());
        assertEquals(Map.of("upstream.test", List.of(InetAddress.getByName("127.0.0.1"))), network.resolve());
    }

    @Test
    void goodPolicyDecides() throws Exception {
        NetworkPolicy network = PolicyLoader.parse(GOOD, "p.yaml").network();
        assertEquals(
                Decision.deny(Reasons.DENIED_BY_RULE, "network.deny[0]=evil.githubusercontent.com"),
                network.decide(Authorities.parseConnectTarget("EVIL.githubusercontent.com.:443"), 443));
        assertEquals(
                Decision.allow(Reasons.ALLOWED, "network.allow[1]=*.githubusercontent.com"),
                network.decide(Authorities.parseConnectTarget("raw.githubusercontent.com:443"), 443));
        assertEquals(
                Decision.allow(Reasons.ALLOWED, "network.allow[2]=upstream.test:8443"),
                network.decide(Authorities.parseConnectTarget("upstream.test:8443"), 443));
        assertEquals(true, network.explicitlyAllows("upstream.test", InetAddress.getByName("127.0.0.1")));
    }

    @Test
    void blockStyleAndAllResolveValueFormsLoad() throws Exception {
        Policy policy = PolicyLoader.parse("""
                version: 1
                network:
                  allow:
                    - upstream.test:8443
                    - '[2001:db8::1]:443'
                  resolve:
                    UPSTREAM.test.: [127.0.0.1, "::1", "[2001:DB8::2]", 127.1]
                """, "p.yaml");
        NetworkPolicy network = policy.network();
        assertEquals(
                new HostPattern("upstream.test:8443", HostPattern.Kind.EXACT, "upstream.test", OptionalInt.of(8443)),
                network.allow().get(0));
        assertEquals(
                List.of(
                        InetAddress.getByName("127.0.0.1"),
                        InetAddress.getByName("::1"),
                        InetAddress.getByName("2001:db8::2"),
                        InetAddress.getByName("127.0.0.1")),
                network.pinned("upstream.test"));
        assertEquals(List.of(), network.deny());
    }

    @Test
    void everySectionLoads() throws Exception {
        Policy policy = PolicyLoader.parse("""
                version: 1
                network:
                  allow: [api.anthropic.com]
                filesystem:
                  read: ["~/.gitconfig", /opt/tools]
                  write: ["~/.claude", "~/.cache/pip"]
                  mask: [".env", ".env.*", "*.pem", "secrets/**"]
                  protected: ["Makefile"]
                env:
                  forward: [ANTHROPIC_API_KEY, GIT_AUTHOR_NAME]
                  set: {EDITOR: vi}
                limits:
                  timeout: 2h
                  memory: 8g
                  processes: 1024
                  open_files: 4096
                  file_size: 8g
                  tmp_size: 1g
                jail:
                  hostname: agentjail
                  new_session: true
                  share_timezone: true
                """, "p.yaml");
        assertEquals(
                List.of(HostPattern.parse("api.anthropic.com")),
                policy.network().allow());
        assertEquals(
                new FilesystemPolicy(
                        List.of(HostPath.parse("~/.gitconfig"), HostPath.parse("/opt/tools")),
                        List.of(HostPath.parse("~/.claude"), HostPath.parse("~/.cache/pip")),
                        List.of(
                                new ProjectGlob(".env"),
                                new ProjectGlob(".env.*"),
                                new ProjectGlob("*.pem"),
                                new ProjectGlob("secrets/**")),
                        List.of(new ProjectGlob("Makefile"))),
                policy.filesystem());
        assertEquals(
                new EnvPolicy(List.of("ANTHROPIC_API_KEY", "GIT_AUTHOR_NAME"), Map.of("EDITOR", "vi")), policy.env());
        assertEquals(
                new Limits(
                        Duration.ofHours(2),
                        8L << 30,
                        1024,
                        4096,
                        8L << 30,
                        1L << 30,
                        0,
                        0,
                        Set.of("timeout", "memory", "processes", "open_files", "file_size", "tmp_size")),
                policy.limits());
        assertEquals(new JailSettings("agentjail", true, true), policy.jail());
    }

    @Test
    void missingSectionsTakeTheirDefaults() throws Exception {
        Policy policy = PolicyLoader.parse("version: 1\n", "p.yaml");
        assertEquals(new Policy(1, NetworkPolicy.none(), "p.yaml"), policy);
        assertEquals(FilesystemPolicy.none(), policy.filesystem());
        assertEquals(EnvPolicy.none(), policy.env());
        assertEquals(Limits.defaults(), policy.limits());
        assertEquals(JailSettings.defaults(), policy.jail());
    }

    @Test
    void emptySectionsTakeTheirDefaults() throws Exception {
        Policy policy = PolicyLoader.parse(
                "version: 1\nnetwork: {}\nfilesystem: {}\nenv: {}\nlimits: {}\njail: {}\n", "p.yaml");
        assertEquals(new Policy(1, NetworkPolicy.none(), "p.yaml"), policy);
    }

    @Test
    void missingNetworkMeansNoNetwork() throws Exception {
        Policy policy = PolicyLoader.parse("version: 1\n", "p.yaml");
        assertEquals(NetworkPolicy.none(), policy.network());
        assertEquals(
                Decision.deny(Reasons.NO_NETWORK, "-"),
                policy.network().decide(Authorities.parseConnectTarget("allowed.test:443"), 443));
    }

    @Test
    void emptyNetworkMappingMeansNoNetwork() throws Exception {
        assertEquals(
                NetworkPolicy.none(),
                PolicyLoader.parse("version: 1\nnetwork: {}\n", "p.yaml").network());
    }

    /** Each kind of bad input and the exact message the user sees: FILE:LINE: KEY: problem. */
    static Stream<Arguments> badPolicies() {
        return Stream.of(
                // empty
                arguments("", "p.yaml:1: -: empty policy"),
                arguments("# only a comment\n", "p.yaml:1: -: empty policy"),
                arguments("---\n", "p.yaml:1: -: empty policy"),
                arguments("- a\n", "p.yaml:1: -: expected a mapping at the top level, got a list"),
                arguments("just text\n", "p.yaml:1: -: expected a mapping at the top level, got 'just text'"),
                // version
                arguments("network: {}\n", "p.yaml:1: version: missing required key"),
                arguments("# header\n\nnetwork: {}\n", "p.yaml:3: version: missing required key"),
                arguments("version: 2\n", "p.yaml:1: version: unsupported version 2 (supported: 1)"),
                arguments("version: 0\n", "p.yaml:1: version: unsupported version 0 (supported: 1)"),
                arguments("version: \"1\"\n", "p.yaml:1: version: expected an integer, got '1'"),
                arguments("version: 1.0\n", "p.yaml:1: version: expected an integer, got '1.0'"),
                arguments("version:\n", "p.yaml:1: version: expected an integer, got null"),
                arguments("version: [1]\n", "p.yaml:1: version: expected an integer, got a list"),
                // unknown keys, with a suggestion when it looks like a typo
                arguments(
                        "version: 1\nnetwrok: {}\n",
                        "p.yaml:2: netwrok: unknown key 'netwrok' (did you mean 'network'?)"),
                arguments(
                        "version: 1\nnetwork:\n  alow: [a.test]\n",
                        "p.yaml:3: network.alow: unknown key 'alow' (did you mean 'allow'?)"),
                arguments(
                        "version: 1\nnetwork:\n  denny: []\n",
                        "p.yaml:3: network.denny: unknown key 'denny' (did you mean 'deny'?)"),
                arguments(
                        "version: 1\nnetwork:\n  proxy: x\n",
                        "p.yaml:3: network.proxy: unknown key 'proxy' (expected one of: allow, deny, mode, ports, resolve,"
                                + " tunnel)"),
                arguments("version: 1\naudti: {}\n", "p.yaml:2: audti: unknown key 'audti' (did you mean 'audit'?)"),
                arguments("version: 1\nlimit: {}\n", "p.yaml:2: limit: unknown key 'limit' (did you mean 'limits'?)"),
                arguments(
                        "version: 1\nfilesytem: {}\n",
                        "p.yaml:2: filesytem: unknown key 'filesytem' (did you mean 'filesystem'?)"),
                arguments(
                        "version: 1\n<<: {network: {}}\n",
                        "p.yaml:2: <<: unknown key '<<' (expected one of: audit, credentials, env, extends, filesystem,"
                                + " jail, limits, locked, mcp, network, redaction, tls, trust, version)"),
                // wrong types
                arguments("version: 1\nnetwork: [a.test]\n", "p.yaml:2: network: expected a mapping, got a list"),
                arguments("version: 1\nnetwork:\n", "p.yaml:2: network: expected a mapping, got null"),
                arguments(
                        "version: 1\nnetwork:\n  allow: a.test\n",
                        "p.yaml:3: network.allow: expected a list, got 'a.test'"),
                arguments(
                        "version: 1\nnetwork:\n  allow:\n    - a.test\n    - [b.test]\n",
                        "p.yaml:5: network.allow[1]: expected a string, got a list"),
                arguments(
                        "version: 1\nnetwork:\n  allow:\n    -\n",
                        "p.yaml:4: network.allow[0]: expected a string, got null"),
                arguments(
                        "version: 1\nnetwork:\n  deny: {a.test: 1}\n",
                        "p.yaml:3: network.deny: expected a list, got a mapping"),
                arguments(
                        "version: 1\nnetwork:\n  ? [a]\n  : b\n",
                        "p.yaml:3: network: keys must be strings, got a list"),
                // invalid and over-broad patterns carry the pattern's reason
                arguments(
                        "version: 1\nnetwork:\n  allow:\n    - api.anthropic.com\n    - \"*\"\n",
                        "p.yaml:5: network.allow[1]: invalid host pattern '*': '*' alone would match every host"),
                arguments(
                        "version: 1\nnetwork:\n  allow: [ok.test, \"*.com\"]\n",
                        "p.yaml:3: network.allow[1]: invalid host pattern '*.com': wildcard over a single label is"
                                + " too broad"),
                arguments(
                        "version: 1\nnetwork:\n  allow: [ok.test]\n  deny: [\"api.*.test\"]\n",
                        "p.yaml:4: network.deny[0]: invalid host pattern 'api.*.test': '*' is only allowed as a"
                                + " leading '*.'"),
                arguments(
                        "version: 1\nnetwork:\n  allow: [\"*.0.0.1\"]\n",
                        "p.yaml:3: network.allow[0]: invalid host pattern '*.0.0.1': a wildcard cannot cover an ip"
                                + " address"),
                arguments(
                        "version: 1\nnetwork:\n  allow: [\"allowed.test:0443\"]\n",
                        "p.yaml:3: network.allow[0]: invalid host pattern 'allowed.test:0443': port has leading zeros"),
                arguments(
                        "version: 1\nnetwork:\n  allow: [\"" + "a".repeat(100) + "\"]\n",
                        "p.yaml:3: network.allow[0]: invalid host pattern '" + "a".repeat(64)
                                + "...': label longer than 63 characters"),
                // resolve: keys are host names, values IP literals, nothing is resolved
                arguments(
                        "version: 1\nnetwork:\n  resolve: {upstream.test: example.test}\n",
                        "p.yaml:3: network.resolve.upstream.test: invalid ip address 'example.test': expected an"
                                + " ip address, not a host name"),
                arguments(
                        "version: 1\nnetwork:\n  resolve:\n    upstream.test:\n      - 127.0.0.1\n      - 300.1.1.1\n",
                        "p.yaml:6: network.resolve.upstream.test[1]: invalid ip address '300.1.1.1': invalid ipv4"
                                + " address"),
                arguments(
                        "version: 1\nnetwork:\n  resolve: {upstream.test: \"fe80::1%eth0\"}\n",
                        "p.yaml:3: network.resolve.upstream.test: invalid ip address 'fe80::1%eth0': not an ipv4 or"
                                + " ipv6 address"),
                arguments(
                        "version: 1\nnetwork:\n  resolve: {upstream.test: \"127.0.0.1:0\"}\n",
                        "p.yaml:3: network.resolve.upstream.test: invalid port '0' (1-65535)"),
                arguments(
                        "version: 1\nnetwork:\n  resolve: {upstream.test: \"[::1]:99999\"}\n",
                        "p.yaml:3: network.resolve.upstream.test: invalid port '99999' (1-65535)"),
                arguments(
                        "version: 1\nnetwork:\n  resolve: {upstream.test: [\"127.0.0.1:80\", 127.0.0.2]}\n",
                        "p.yaml:3: network.resolve.upstream.test[1]: every address of 'upstream.test' needs the same"
                                + " port (or none): a connection dials one port"),
                arguments(
                        "version: 1\nnetwork:\n  resolve: {upstream.test: []}\n",
                        "p.yaml:3: network.resolve.upstream.test: expected at least one ip address"),
                arguments(
                        "version: 1\nnetwork:\n  resolve: {upstream.test: }\n",
                        "p.yaml:3: network.resolve.upstream.test: expected a string, got null"),
                arguments(
                        "version: 1\nnetwork:\n  resolve: {127.0.0.1: 127.0.0.1}\n",
                        "p.yaml:3: network.resolve.127.0.0.1: a resolve key must be a host name, not an ip address"),
                arguments(
                        "version: 1\nnetwork:\n  resolve: {\"upstream.test:0\": 127.0.0.1}\n",
                        "p.yaml:3: network.resolve.upstream.test:0: invalid host name: port out of range"),
                arguments(
                        "version: 1\nnetwork:\n  resolve: {\"*.upstream.test\": 127.0.0.1}\n",
                        "p.yaml:3: network.resolve.*.upstream.test: invalid host name: invalid character in host name"),
                arguments(
                        "version: 1\nnetwork:\n  resolve:\n    a.test: 127.0.0.1\n    A.TEST.: 127.0.0.2\n",
                        "p.yaml:5: network.resolve.A.TEST.: duplicate host 'a.test' after canonicalisation"),
                arguments(
                        "version: 1\nnetwork:\n  resolve: [upstream.test]\n",
                        "p.yaml:3: network.resolve: expected a mapping, got a list"),
                // duplicate keys, at the line of the second one
                arguments("version: 1\nversion: 1\n", "p.yaml:2: version: duplicate key 'version'"),
                arguments(
                        "version: 1\nnetwork:\n  allow: [a.test]\n  allow: [b.test]\n",
                        "p.yaml:4: network.allow: duplicate key 'allow'"),
                arguments(
                        "version: 1\nnetwork:\n  resolve:\n    a.test: 127.0.0.1\n    a.test: 127.0.0.2\n",
                        "p.yaml:5: network.resolve.a.test: duplicate key 'a.test'"),
                // anchors and aliases are refused
                arguments(
                        "version: 1\nnetwork:\n  allow: &hosts [a.test]\n  deny: *hosts\n",
                        "p.yaml:3: network.allow: anchors and aliases are not allowed"),
                arguments("version: &v 1\n", "p.yaml:1: version: anchors and aliases are not allowed"),
                // YAML syntax errors in words, at FILE:LINE:COLUMN (an unclosed quote or bracket where it opens)
                arguments(
                        "version: 1\nnetwork:\n  allow: [a.test]\n deny: [b]\n",
                        "p.yaml:4:2: bad indentation: this key, at column 2, lines up with no key above it; the keys of"
                                + " one mapping start in the same column"),
                arguments(
                        "version: 1\nnetwork:\n  allow: [a]\n    deny: [b]\n",
                        "p.yaml:4:5: bad indentation: this key, at column 5, lines up with no key above it; the keys of"
                                + " one mapping start in the same column"),
                arguments(
                        "version: 1\nnetwork:\n  allow:\n    - a\n   - b\n",
                        "p.yaml:5:4: bad indentation: this list item ('-'), at column 4, lines up with nothing above"
                                + " it; the items of one list start in the same column"),
                arguments(
                        "version: 1\nnetwork:\n  allow: [a.test\n",
                        "p.yaml:3:10: unclosed '[': the list that starts here is not closed with ']' before the end of"
                                + " the file"),
                arguments(
                        "version: 1\nnetwork:\n  allow: [a, b\n  deny: [c]\n",
                        "p.yaml:3:10: unclosed '[': the list that starts here needs ',' or ']' at line 4, column 7,"
                                + " not ':'"),
                arguments(
                        "version: 1\nnetwork: {allow: [a]\n",
                        "p.yaml:2:10: unclosed '{': the mapping that starts here is not closed with '}' before the end"
                                + " of the file"),
                arguments(
                        "version: 1\nnetwork:\n  allow: \"a.test\n",
                        "p.yaml:3:10: unclosed quote: the string that starts here with \" has no closing \""),
                arguments(
                        "version: 1\nnetwork:\n  allow: 'a.test\n",
                        "p.yaml:3:10: unclosed quote: the string that starts here with ' has no closing '"),
                arguments(
                        "version: 1\nnetwork\n  allow: []\n",
                        "p.yaml:2:1: a key without a value: expected ':' after this key (key: value)"),
                arguments(
                        "version: 1\nnetwork:\n\tallow: []\n",
                        "p.yaml:3:1: a tab character: YAML indents with spaces only"),
                arguments(
                        "version: 1\nnetwork:\n  allow: a: b\n",
                        "p.yaml:3:11: unexpected ':': a value cannot be another 'key: value' on the same line; quote"
                                + " it, or start the nested mapping on the next line (or is this line indented too far?)"),
                arguments("version: 1\nnetwork:\n  allow: [a.test]]\n", "p.yaml:3:18: a stray ']' that closes nothing"),
                arguments(
                        "version: 1\n- a\n",
                        "p.yaml:2:1: a list item ('-') where a key of the mapping that starts at line 1, column 1 was"
                                + " expected"),
                arguments(
                        "version: 1\nnetwork:\n  - a\n  b: c\n",
                        "p.yaml:4:3: a key where a list item ('- ...') of the list that starts at line 3, column 3 was"
                                + " expected"),
                arguments("version: 1\nnetwork: ]\n", "p.yaml:2:10: a value was expected here, but found ']'"),
                arguments(
                        "version: 1\nnetwork: @x\n", "p.yaml:2:10: '@' cannot start a value; put the value in quotes"),
                arguments(
                        "version: 1\nkey: \"\\q\"\n",
                        "p.yaml:2:8: unknown escape '\\q' in a double-quoted string; use single quotes, or write a"
                                + " backslash as '\\\\'"),
                arguments(
                        "version: 1\n---\nversion: 1\n",
                        "p.yaml:2:1: a second document ('---'): a policy file holds one document"),
                arguments("version: 1\nnetwork: !!foo x\n", "p.yaml:2:10: tags ('!!...') are not allowed"),
                arguments(
                        "version: 1\nnetwork: *nope\n",
                        "p.yaml:2:10: '*nope' refers to no anchor (anchors and aliases are not allowed)"));
    }

    @ParameterizedTest(name = "[{index}] {1}")
    @MethodSource("badPolicies")
    void badPolicyIsRefusedWithFileLineAndKey(String yaml, String message) {
        PolicyException e = assertThrows(PolicyException.class, () -> PolicyLoader.parse(yaml, "p.yaml"));
        assertEquals(message, e.getMessage());
    }

    @Test
    void exceptionExposesItsParts() {
        PolicyException e = assertThrows(
                PolicyException.class,
                () -> PolicyLoader.parse("version: 1\nnetwork:\n  allow: [\"*.test\"]\n", "team.yaml"));
        assertEquals("team.yaml", e.file());
        assertEquals(3, e.line());
        assertEquals("network.allow[0]", e.key());
    }

    @Test
    void billionLaughsIsRefusedQuickly() {
        StringBuilder bomb = new StringBuilder("a0: &a0 [x, x, x, x, x, x, x, x, x]\n");
        for (int i = 1; i < 10; i++) {
            bomb.append("a").append(i).append(": &a").append(i).append(" [");
            for (int j = 0; j < 9; j++) {
                bomb.append(j > 0 ? ", " : "").append("*a").append(i - 1);
            }
            bomb.append("]\n");
        }
        PolicyException e = assertTimeoutPreemptively(
                Duration.ofSeconds(5),
                () -> assertThrows(PolicyException.class, () -> PolicyLoader.parse(bomb.toString(), "p.yaml")));
        assertEquals("p.yaml:0: -: too many aliases (anchors and aliases are not allowed)", e.getMessage());
    }

    @Test
    void deepNestingIsRefused() {
        String deep = "version: 1\nnetwork:\n  allow: " + "[".repeat(100) + "]".repeat(100) + "\n";
        PolicyException e = assertThrows(PolicyException.class, () -> PolicyLoader.parse(deep, "p.yaml"));
        assertEquals("p.yaml:0: -: nested deeper than 20 levels", e.getMessage());
    }

    @Test
    void hugePolicyIsRefusedBeforeParsing() {
        String huge = "version: 1\n#" + "x".repeat(PolicyLoader.MAX_CODE_POINTS) + "\n";
        PolicyException e = assertThrows(PolicyException.class, () -> PolicyLoader.parse(huge, "p.yaml"));
        assertEquals("p.yaml:0: -: policy larger than 1 MiB", e.getMessage());
    }

    @Test
    void loadUsesThePathAsGivenAsSource() throws Exception {
        Path file = dir.resolve("agentjail.yaml");
        Files.writeString(file, GOOD);
        Policy policy = PolicyLoader.load(file);
        assertEquals(file.toString(), policy.source());
        assertEquals(PolicyLoader.parse(GOOD, file.toString()), policy);
    }

    @Test
    void loadReportsErrorsAgainstThePath() throws Exception {
        Path file = dir.resolve("bad.yaml");
        Files.writeString(file, "version: 1\nnetwork:\n  alow: []\n");
        PolicyException e = assertThrows(PolicyException.class, () -> PolicyLoader.load(file));
        assertEquals(file + ":3: network.alow: unknown key 'alow' (did you mean 'allow'?)", e.getMessage());
    }

    @Test
    void missingFileIsUnreadable() {
        Path file = dir.resolve("missing.yaml");
        PolicyException e = assertThrows(PolicyException.class, () -> PolicyLoader.load(file));
        assertEquals(file + ":0: -: cannot read: no such file or directory", e.getMessage());
        assertEquals(0, e.line());
    }

    @Test
    void directoryIsUnreadable() {
        PolicyException e = assertThrows(PolicyException.class, () -> PolicyLoader.load(dir));
        assertEquals(dir + ":0: -: cannot read: is a directory", e.getMessage());
    }

    @Test
    void invalidUtf8IsUnreadable() throws Exception {
        Path file = dir.resolve("latin1.yaml");
        Files.write(file, "version: 1 # caf\u00e9\n".getBytes(StandardCharsets.ISO_8859_1));
        PolicyException e = assertThrows(PolicyException.class, () -> PolicyLoader.load(file));
        assertEquals(file + ":0: -: cannot read: not valid utf-8", e.getMessage());
    }

    @Test
    void nearestKeySuggestsOnlyTypos() {
        assertEquals(
                "allow",
                YamlNodes.nearest("alow", Set.of("allow", "deny", "resolve")).orElseThrow());
        assertEquals(
                "deny",
                YamlNodes.nearest("DENY".toLowerCase(Locale.ROOT), Set.of("allow", "deny"))
                        .orElseThrow());
        assertEquals(true, YamlNodes.nearest("xyz", Set.of("allow", "deny")).isEmpty());
        assertEquals(3, YamlNodes.editDistance("kitten", "sitting"));
    }
}

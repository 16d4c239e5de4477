package dev.agentjail.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class RedactionSectionTest {
    private static final Path BASE = Path.of("/policies/project");
    private static final Path HOME = Path.of("/home/dev");

    private static RedactionPolicy load(String section) throws PolicyException {
        return PolicyLoader.parse("version: 1\nredaction:\n" + section, "p.yaml", BASE, HOME)
                .redaction();
    }

    @Test
    void everyKeyLoads() throws Exception {
        RedactionPolicy redaction = load("""
                  action: block
                  patterns:
                    - name: internal-token
                      regex: 'itk_[A-Za-z0-9]{32}'
                    - {name: dollar-token, regex: '\\$tok_x+'}
                  known_values:
                    - env: DATABASE_PASSWORD
                    - file: ~/.config/acme/token
                    - file: secrets/ci-token
                    - file: /etc/acme/key
                  allow:
                    - "AKIAIOSFODNN7EXAMPLE"
                    - "example-not-a-secret"
                """);
        assertEquals(RedactionPolicy.Action.BLOCK, redaction.action());
        assertEquals(
                List.of(
                        CustomPattern.of("internal-token", "itk_[A-Za-z0-9]{32}"),
                        CustomPattern.of("dollar-token", "\\$tok_x+")),
                redaction.patterns());
        assertEquals("$tok_", redaction.patterns().get(1).literalPrefix());
        assertEquals(
                List.of(
                        KnownValue.env("DATABASE_PASSWORD"),
                        KnownValue.file(Path.of("/home/dev/.config/acme/token")),
                        KnownValue.file(Path.of("/policies/project/secrets/ci-token")),
                        KnownValue.file(Path.of("/etc/acme/key"))),
                redaction.knownValues());
        assertEquals(List.of("AKIAIOSFODNN7EXAMPLE", "example-not-a-secret"), redaction.allow());
    }

    @Test
    void absentOrEmptySectionIsTheDefault() throws Exception {
        assertEquals(
                RedactionPolicy.defaults(),
                PolicyLoader.parse("version: 1\n", "p.yaml").redaction());
        assertEquals(RedactionPolicy.defaults(), load("  {}\n"));
        assertEquals(RedactionPolicy.Action.REDACT, load("  action: redact\n").action());
        RedactionPolicy defaults = RedactionPolicy.defaults();
        assertEquals(RedactionPolicy.Action.REDACT, defaults.action());
        assertEquals(List.of(), defaults.patterns());
        assertEquals(List.of(), defaults.knownValues());
        assertEquals(List.of(), defaults.allow());
    }

    @Test
    void knownValueFilesNormaliseAndResolveAgainstThePolicyDirectory() throws Exception {
        RedactionPolicy redaction = load("""
                  known_values:
                    - file: ./a/../b/token
                    - file: ../shared/token
                """);
        assertEquals(
                List.of(
                        KnownValue.file(Path.of("/policies/project/b/token")),
                        KnownValue.file(Path.of("/policies/shared/token"))),
                redaction.knownValues());
    }

    static Stream<Arguments> badSections() {
        String hint = ", so the scanner can look for them first; write the fixed prefix of the token, as in"
                + " 'itk_[A-Za-z0-9]{32}'";
        return Stream.of(
                // keys and shapes
                arguments(
                        "  actoin: block\n",
                        "p.yaml:3: redaction.actoin: unknown key 'actoin' (did you mean 'action'?)"),
                arguments(
                        "  knwon_values: []\n",
                        "p.yaml:3: redaction.knwon_values: unknown key 'knwon_values' (did you mean 'known_values'?)"),
                arguments(
                        "  secrets: []\n",
                        "p.yaml:3: redaction.secrets: unknown key 'secrets' (expected one of: action, allow,"
                                + " known_values, patterns)"),
                arguments("  - action\n", "p.yaml:3: redaction: expected a mapping, got a list"),
                arguments("  patterns: {a: b}\n", "p.yaml:3: redaction.patterns: expected a list, got a mapping"),
                // action
                arguments("  action: blok\n", "p.yaml:3: redaction.action: expected redact or block, got 'blok'"),
                arguments("  action: BLOCK\n", "p.yaml:3: redaction.action: expected redact or block, got 'BLOCK'"),
                arguments("  action: [block]\n", "p.yaml:3: redaction.action: expected a string, got a list"),
                // patterns
                arguments("  patterns: [itk_x]\n", "p.yaml:3: redaction.patterns[0]: expected a mapping, got 'itk_x'"),
                arguments(
                        "  patterns:\n    - {name: a, regx: 'itk_'}\n",
                        "p.yaml:4: redaction.patterns[0].regx: unknown key 'regx' (did you mean 'regex'?)"),
                arguments(
                        "  patterns:\n    - regex: 'itk_'\n",
                        "p.yaml:4: redaction.patterns[0].name: missing required key"),
                arguments(
                        "  patterns:\n    - name: a\n", "p.yaml:4: redaction.patterns[0].regex: missing required key"),
                arguments(
                        "  patterns:\n    - {name: Internal, regex: 'itk_'}\n",
                        "p.yaml:4: redaction.patterns[0].name: invalid name 'Internal': must match"
                                + " [a-z0-9][a-z0-9-]{0,39}"),
                arguments(
                        "  patterns:\n    - {name: a, regex: 'itk_'}\n    - {name: b, regex: 'xtk_'}\n"
                                + "    - name: a\n      regex: 'ytk_'\n",
                        "p.yaml:6: redaction.patterns[2].name: 'a' is already used at redaction.patterns[0].name"),
                arguments(
                        "  patterns:\n    - name: a\n      regex: 'ab?c'\n",
                        "p.yaml:5: redaction.patterns[0].regex: invalid pattern 'ab?c': must start with at least 3"
                                + " literal characters (found 'a')" + hint),
                arguments(
                        "  patterns:\n    - name: a\n      regex: '(abc)'\n",
                        "p.yaml:5: redaction.patterns[0].regex: invalid pattern '(abc)': must start with at least 3"
                                + " literal characters (found '')" + hint),
                arguments(
                        "  patterns:\n    - name: a\n      regex: 'itk_[a-z'\n",
                        "p.yaml:5: redaction.patterns[0].regex: invalid pattern 'itk_[a-z': invalid regex: Unclosed"
                                + " character class near index 7"),
                arguments(
                        "  patterns:\n    - name: a\n      regex: 'itk_x|y'\n",
                        "p.yaml:5: redaction.patterns[0].regex: invalid pattern 'itk_x|y': a top-level '|' means"
                                + " matches need not start with the prefix; group the alternatives after it, as in"
                                + " 'tok_(a|b)'"),
                // known values
                arguments(
                        "  known_values: [DATABASE_PASSWORD]\n",
                        "p.yaml:3: redaction.known_values[0]: expected a mapping, got 'DATABASE_PASSWORD'"),
                arguments(
                        "  known_values:\n    - {}\n", "p.yaml:4: redaction.known_values[0]: expected 'env' or 'file'"),
                arguments(
                        "  known_values:\n    - {env: A, file: /a}\n",
                        "p.yaml:4: redaction.known_values[0]: give either 'env' or 'file', not both"),
                arguments(
                        "  known_values:\n    - {envv: A}\n",
                        "p.yaml:4: redaction.known_values[0].envv: unknown key 'envv' (did you mean 'env'?)"),
                arguments(
                        "  known_values:\n    - env: 1A\n",
                        "p.yaml:4: redaction.known_values[0].env: invalid variable name '1A': must match"
                                + " [A-Za-z_][A-Za-z0-9_]*"),
                arguments(
                        "  known_values:\n    - env: A\n    - env: A\n",
                        "p.yaml:5: redaction.known_values[1]: the same value is already listed at"
                                + " redaction.known_values[0]"),
                arguments(
                        "  known_values:\n    - file: ~/t\n    - file: /home/dev/t\n",
                        "p.yaml:5: redaction.known_values[1]: the same value is already listed at"
                                + " redaction.known_values[0]"),
                arguments(
                        "  known_values:\n    - file: ~root/t\n",
                        "p.yaml:4: redaction.known_values[0].file: invalid path '~root/t': '~user' is not supported;"
                                + " write '~/' for your own home"),
                arguments(
                        "  known_values:\n    - file: \"\"\n",
                        "p.yaml:4: redaction.known_values[0].file: invalid path '': empty path"),
                arguments(
                        "  known_values:\n    - file: \"a\\0b\"\n",
                        "p.yaml:4: redaction.known_values[0].file: invalid path 'a\\x00b': NUL and other control"
                                + " characters are not allowed"),
                arguments(
                        "  known_values:\n    - file: ~\n",
                        "p.yaml:4: redaction.known_values[0].file: expected a string, got null"),
                arguments(
                        "  known_values:\n    - file: \"~\"\n",
                        "p.yaml:4: redaction.known_values[0].file: invalid path '~': '~' is a directory, not a file"),
                // allow-listed values
                arguments(
                        "  allow: [longenough, short]\n",
                        "p.yaml:3: redaction.allow[1]: too short (5 characters): an allow-listed value needs at least"
                                + " 8, so it cannot exempt a fragment of a real secret"),
                arguments(
                        "  allow:\n    - longenough\n    - longenough\n",
                        "p.yaml:5: redaction.allow[1]: the same value is already listed at redaction.allow[0]"),
                arguments("  allow: [{a: b}]\n", "p.yaml:3: redaction.allow[0]: expected a string, got a mapping"));
    }

    @ParameterizedTest(name = "[{index}] {1}")
    @MethodSource("badSections")
    void badSectionIsRefusedWithFileLineAndKey(String section, String message) {
        PolicyException e = assertThrows(PolicyException.class, () -> load(section));
        assertEquals(message, e.getMessage());
    }

    @Test
    void recordChecksAndCopies() throws Exception {
        CustomPattern a = CustomPattern.of("a", "itk_x");
        assertThrows(
                IllegalArgumentException.class,
                () -> new RedactionPolicy(RedactionPolicy.Action.REDACT, List.of(a, a), List.of(), List.of()));
        assertThrows(
                IllegalArgumentException.class,
                () -> new RedactionPolicy(RedactionPolicy.Action.REDACT, List.of(), List.of(), List.of("short")));
        assertThrows(
                IllegalArgumentException.class,
                () -> new RedactionPolicy(
                        RedactionPolicy.Action.REDACT,
                        List.of(),
                        List.of(KnownValue.env("A"), KnownValue.env("A")),
                        List.of()));
        assertThrows(IllegalArgumentException.class, () -> KnownValue.file(Path.of("relative")));
        assertThrows(IllegalArgumentException.class, () -> KnownValue.env("HTTPS_PROXY"));
        assertThrows(IllegalArgumentException.class, () -> new KnownValue(KnownValue.Kind.ENV, "A", Path.of("/a")));
        assertThrows(NullPointerException.class, () -> new KnownValue(KnownValue.Kind.FILE, null, null));
    }
}

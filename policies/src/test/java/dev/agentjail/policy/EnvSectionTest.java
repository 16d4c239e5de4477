package dev.agentjail.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class EnvSectionTest {
    private static EnvPolicy load(String section) throws PolicyException {
        return PolicyLoader.parse("version: 1\nenv:\n" + section, "p.yaml").env();
    }

    @Test
    void valuesAreKeptAsWrittenInFileOrder() throws Exception {
        EnvPolicy env = load("""
                  forward:
                    - ANTHROPIC_API_KEY
                    - _private
                  set:
                    ZED: "1"
                    EDITOR: vi
                    MODE: 010
                    FLAG: yes
                    EMPTY: ""
                """);
        assertEquals(List.of("ANTHROPIC_API_KEY", "_private"), env.forward());
        assertEquals(Map.of("ZED", "1", "EDITOR", "vi", "MODE", "010", "FLAG", "yes", "EMPTY", ""), env.set());
        assertEquals(
                List.of("ZED", "EDITOR", "MODE", "FLAG", "EMPTY"),
                List.copyOf(env.set().keySet()));
    }

    /** Each bad entry and the exact message: FILE:LINE: KEY: problem. */
    static Stream<Arguments> badSections() {
        return Stream.of(
                arguments("  forwrd: []\n", "p.yaml:3: env.forwrd: unknown key 'forwrd' (did you mean 'forward'?)"),
                arguments("  sett: {}\n", "p.yaml:3: env.sett: unknown key 'sett' (did you mean 'set'?)"),
                arguments(
                        "  pass: []\n", "p.yaml:3: env.pass: unknown key 'pass' (expected one of: deny, forward, set)"),
                arguments("  forward: HOME\n", "p.yaml:3: env.forward: expected a list, got 'HOME'"),
                arguments("  set: [A=1]\n", "p.yaml:3: env.set: expected a mapping, got a list"),
                // names
                arguments(
                        "  forward: [1ABC]\n",
                        "p.yaml:3: env.forward[0]: invalid variable name '1ABC': must match [A-Za-z_][A-Za-z0-9_]*"),
                arguments(
                        "  forward: [OK, A-B]\n",
                        "p.yaml:3: env.forward[1]: invalid variable name 'A-B': must match [A-Za-z_][A-Za-z0-9_]*"),
                arguments(
                        "  forward: [\"\"]\n",
                        "p.yaml:3: env.forward[0]: invalid variable name '': must match [A-Za-z_][A-Za-z0-9_]*"),
                arguments(
                        "  set: {\"A B\": x}\n",
                        "p.yaml:3: env.set.A B: invalid variable name 'A B': must match [A-Za-z_][A-Za-z0-9_]*"),
                arguments(
                        "  set: {\"A=B\": x}\n",
                        "p.yaml:3: env.set.A=B: invalid variable name 'A=B': must match [A-Za-z_][A-Za-z0-9_]*"),
                // the proxy variables belong to agentjail
                arguments(
                        "  forward: [HTTPS_PROXY]\n",
                        "p.yaml:3: env.forward[0]: 'HTTPS_PROXY' is set by agentjail to point at its proxy"),
                arguments(
                        "  set:\n    EDITOR: vi\n    no_proxy: \"*\"\n",
                        "p.yaml:5: env.set.no_proxy: 'no_proxy' is set by agentjail to point at its proxy"),
                arguments(
                        "  set: {HTTP_PROXY: \"http://evil.test\"}\n",
                        "p.yaml:3: env.set.HTTP_PROXY: 'HTTP_PROXY' is set by agentjail to point at its proxy"),
                arguments(
                        "  set: {all_proxy: \"\"}\n",
                        "p.yaml:3: env.set.all_proxy: 'all_proxy' is set by agentjail to point at its proxy"),
                // each name once
                arguments(
                        "  forward: [A, B, A]\n", "p.yaml:3: env.forward[2]: 'A' is already listed at env.forward[0]"),
                arguments(
                        "  forward: [A]\n  set: {A: x}\n",
                        "p.yaml:4: env.set.A: 'A' is also forwarded at env.forward[0]; forward it or set it, not"
                                + " both"),
                arguments("  set:\n    A: 1\n    A: 2\n", "p.yaml:5: env.set.A: duplicate key 'A'"),
                // values
                arguments("  set: {A: }\n", "p.yaml:3: env.set.A: expected a string, got null"),
                arguments("  set: {A: [x]}\n", "p.yaml:3: env.set.A: expected a string, got a list"),
                arguments("  set: {A: \"a\\0b\"}\n", "p.yaml:3: env.set.A: NUL is not allowed in a value"));
    }

    @ParameterizedTest(name = "[{index}] {1}")
    @MethodSource("badSections")
    void badSectionIsRefusedWithFileLineAndKey(String section, String message) {
        PolicyException e = assertThrows(PolicyException.class, () -> load(section));
        assertEquals(message, e.getMessage());
    }
}

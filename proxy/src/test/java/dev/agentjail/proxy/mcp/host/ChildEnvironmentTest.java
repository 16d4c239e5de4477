package dev.agentjail.proxy.mcp.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ChildEnvironmentTest {
    private static final Map<String, String> HOST = Map.of(
            "PATH", "/host/bin",
            "HOME", "/home/u",
            "GITHUB_TOKEN", "ghs-value",
            "AWS_SECRET_ACCESS_KEY", "never",
            "HTTPS_PROXY", "http://127.0.0.1:1");

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "${GITHUB_TOKEN}|ghs-value",
                "Bearer ${GITHUB_TOKEN}|Bearer ghs-value",
                "${HOME}/.config/x|/home/u/.config/x",
                "plain|plain",
                "$GITHUB_TOKEN|$GITHUB_TOKEN",
                "a$|a$",
                "cost: $5|cost: $5"
            })
    void referencesAreExpandedAndOtherDollarsKept(String value, String expected) throws Exception {
        assertEquals(expected, ChildEnvironment.expand(value, HOST, "gh", "X"));
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "${MISSING}|mcp.servers[gh].env.X needs the host variable MISSING, which is not set in agentjail's"
                        + " environment",
                "${GITHUB_TOKEN|mcp.servers[gh].env.X: malformed ${...} reference (expected ${NAME}, NAME of letters,"
                        + " digits and '_')",
                "${}|mcp.servers[gh].env.X: malformed ${...} reference (expected ${NAME}, NAME of letters, digits and"
                        + " '_')",
                "${A-B}|mcp.servers[gh].env.X: malformed ${...} reference (expected ${NAME}, NAME of letters, digits"
                        + " and '_')"
            })
    void badReferencesAreErrorsThatNeverShowAValue(String value, String message) {
        HostServerException e =
                assertThrows(HostServerException.class, () -> ChildEnvironment.expand(value, HOST, "gh", "X"));
        assertEquals(message, e.getMessage());
    }

    @Test
    void theEnvironmentIsTheBaseVariablesAndTheServersOwn() throws Exception {
        Map<String, String> serverEnv = new LinkedHashMap<>();
        serverEnv.put("GITHUB_PERSONAL_ACCESS_TOKEN", "${GITHUB_TOKEN}");

        Map<String, String> env = ChildEnvironment.build(HOST, serverEnv, "gh");

        assertEquals(Map.of("PATH", "/host/bin", "HOME", "/home/u", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghs-value"), env);
    }

    @Test
    void aHostWithoutPathGetsADefault() throws Exception {
        assertEquals(Map.of("PATH", ChildEnvironment.DEFAULT_PATH), ChildEnvironment.build(Map.of(), Map.of(), "x"));
    }
}

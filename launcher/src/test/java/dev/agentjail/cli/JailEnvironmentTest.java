package dev.agentjail.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.policy.EnvPolicy;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class JailEnvironmentTest {
    private static final Map<String, String> HOST = Map.of(
            "PATH", "/usr/bin:/bin",
            "HOME", "/home/dev",
            "TERM", "xterm-256color",
            "AWS_SECRET_ACCESS_KEY", "canary-aws",
            "ANTHROPIC_API_KEY", "canary-anthropic",
            "NO_PROXY", "*",
            "SSH_AUTH_SOCK", "/run/user/1000/ssh.sock");

    @Test
    void onlyTheNamedHostVariablesCrossIntoTheJail() {
        Map<String, String> env = JailEnvironment.build(
                HOST,
                new EnvPolicy(List.of("ANTHROPIC_API_KEY"), Map.of()),
                3128,
                Path.of("/home/dev"),
                "s1",
                Map.of());
        assertEquals("canary-anthropic", env.get("ANTHROPIC_API_KEY"));
        assertFalse(env.containsKey("AWS_SECRET_ACCESS_KEY"));
        assertFalse(env.containsKey("SSH_AUTH_SOCK"));
        assertEquals("xterm-256color", env.get("TERM"));
        assertEquals("/usr/bin:/bin", env.get("PATH"));
    }

    @Test
    void everyRuntimeIsPointedAtTheProxyAndNothingMayBypassIt() {
        Map<String, String> env =
                JailEnvironment.build(HOST, EnvPolicy.none(), 4321, Path.of("/home/dev"), "s1", Map.of());
        for (String name :
                List.of("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "npm_config_https_proxy")) {
            assertEquals("http://127.0.0.1:4321", env.get(name), name);
        }
        assertEquals("1", env.get("NODE_USE_ENV_PROXY"));
        assertTrue(env.get("JAVA_TOOL_OPTIONS").contains("-Dhttps.proxyPort=4321"));
        assertFalse(env.containsKey("NO_PROXY"));
        assertFalse(env.containsKey("no_proxy"));
    }

    @Test
    void policyValuesCannotOverrideTheProxySettings() {
        Map<String, String> set = new LinkedHashMap<>();
        set.put("EDITOR", "vi");
        Map<String, String> env =
                JailEnvironment.build(HOST, new EnvPolicy(List.of(), set), 3128, Path.of("/home/dev"), "s1", Map.of());
        assertEquals("vi", env.get("EDITOR"));
        assertEquals("/home/dev", env.get("HOME"));
        assertEquals("s1", env.get("AGENTJAIL_SESSION"));
    }

    @Test
    void everyRuntimeTrustsTheJailsCaBundleAndTheJvmItsTrustStore() {
        Map<String, String> set = new LinkedHashMap<>();
        set.put("SSL_CERT_FILE", "/etc/ssl/other.pem");
        Map<String, String> env =
                JailEnvironment.build(HOST, new EnvPolicy(List.of(), set), 3128, Path.of("/home/dev"), "s1", Map.of());
        for (String name : List.of(
                "SSL_CERT_FILE",
                "NODE_EXTRA_CA_CERTS",
                "REQUESTS_CA_BUNDLE",
                "CURL_CA_BUNDLE",
                "GIT_SSL_CAINFO",
                "CARGO_HTTP_CAINFO",
                "PIP_CERT",
                "DENO_CERT")) {
            assertEquals("/run/agentjail/ca-bundle.pem", env.get(name), name);
        }
        assertEquals(
                "-Dhttp.proxyHost=127.0.0.1 -Dhttp.proxyPort=3128 -Dhttps.proxyHost=127.0.0.1 -Dhttps.proxyPort=3128"
                        + " -Dhttp.nonProxyHosts= -Djavax.net.ssl.trustStore=/run/agentjail/truststore.p12"
                        + " -Djavax.net.ssl.trustStoreType=PKCS12 -Djavax.net.ssl.trustStorePassword=changeit",
                env.get("JAVA_TOOL_OPTIONS"));
    }

    @Test
    void credentialVariablesHoldTheirPlaceholderNeverTheHostValue() {
        Map<String, String> env = JailEnvironment.build(
                HOST,
                EnvPolicy.none(),
                3128,
                Path.of("/home/dev"),
                "s1",
                Map.of("ANTHROPIC_API_KEY", "agentjail-placeholder-0123456789abcdef0123456789abcdef"));
        assertEquals("agentjail-placeholder-0123456789abcdef0123456789abcdef", env.get("ANTHROPIC_API_KEY"));
        assertFalse(env.containsValue("canary-anthropic"));
    }
}

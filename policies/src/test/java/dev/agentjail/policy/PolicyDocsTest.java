package dev.agentjail.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Every YAML example in docs/policy.md loads, so the documentation cannot drift from the loader. */
class PolicyDocsTest {
    private static final Path DOC = Path.of("..", "docs", "policy.md");
    private static final Pattern YAML_BLOCK = Pattern.compile("```yaml\\n(.*?)```", Pattern.DOTALL);

    @TempDir
    Path base;

    @TempDir
    Path home;

    @Test
    void everyYamlExampleLoads() throws Exception {
        assumeTrue(Files.isRegularFile(DOC) || "true".equals(System.getenv("CI")), "needs the repository checkout");
        // The files the examples name, so the tls section's existence check passes.
        Files.createDirectories(base.resolve("certs"));
        Files.writeString(base.resolve("certs/wiremock.pem"), "x");
        Files.createDirectories(home.resolve(".config/agentjail"));
        Files.writeString(home.resolve(".config/agentjail/corp-ca.pem"), "x");

        List<String> blocks = new ArrayList<>();
        Matcher matcher = YAML_BLOCK.matcher(Files.readString(DOC));
        while (matcher.find()) {
            blocks.add(matcher.group(1));
        }
        assertFalse(blocks.isEmpty());
        for (String block : blocks) {
            String yaml = block.startsWith("version:") ? block : "version: 1\n" + block;
            PolicyLoader.parse(yaml, "policy.md", base, home);
        }
        Policy full = PolicyLoader.parse(blocks.get(0), "policy.md", base, home);
        assertEquals(List.of(base.resolve("certs/wiremock.pem")), full.tls().upstreamCa());
        assertEquals("ANTHROPIC_API_KEY", full.credentials().get(0).env());
        assertEquals(true, full.network().tunnelled(Authorities.parseConnectTarget("mtls.example.com:443"), 443));
    }
}

package dev.agentjail.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** A host-side MCP server ({@code mcp.servers[].command}) may come from every layer but the project's. */
class HostCommandsTest {
    private static final String HOST_SERVER = """
            version: 1
            mcp:
              servers:
                - name: remote
                  url: https://mcp.example.com/mcp
                - name: github
                  command: [github-mcp-server, stdio]
                  env: {GITHUB_TOKEN: "${GITHUB_TOKEN}"}
            """;

    @TempDir
    Path dir;

    private Path write(String name, String yaml) throws IOException {
        Path file = dir.resolve(name);
        Files.writeString(file, yaml);
        return file;
    }

    private EffectivePolicy load(PolicyLayer layer, Path file) throws PolicyException {
        return PolicyStack.load(List.of(PolicyStack.Input.file(layer, file)), dir.resolve("home"));
    }

    @Test
    void aProjectPolicyCannotStartAHostSideServer() throws Exception {
        Path project = write(".agentjail.yaml", HOST_SERVER);

        PolicyException e = assertThrows(PolicyException.class, () -> load(PolicyLayer.PROJECT, project));

        assertEquals(project.toString(), e.file());
        assertEquals(7, e.line());
        assertEquals("mcp.servers[1].command", e.key());
        assertEquals(project + ":7: mcp.servers[1].command: " + HostCommands.PROBLEM, e.getMessage());
    }

    @Test
    void norCanAFileTheProjectExtends() throws Exception {
        write("shared.yaml", HOST_SERVER);
        Path project = write(".agentjail.yaml", "version: 1\nextends: [shared.yaml]\n");

        PolicyException e = assertThrows(PolicyException.class, () -> load(PolicyLayer.PROJECT, project));

        assertEquals(dir.resolve("shared.yaml").toString(), e.file());
        assertEquals("mcp.servers[1].command", e.key());
    }

    @ParameterizedTest
    @EnumSource(
            value = PolicyLayer.class,
            names = {"TEAM", "USER", "OVERRIDE"})
    void everyOtherLayerMay(PolicyLayer layer) throws Exception {
        Path file = write("policy.yaml", HOST_SERVER);

        McpServer github = load(layer, file).policy().mcp().server("github").orElseThrow();

        assertEquals(List.of("github-mcp-server", "stdio"), github.command());
    }

    @Test
    void aProjectPolicyMayStillApproveRemoteServers() throws Exception {
        Path project = write(".agentjail.yaml", """
                version: 1
                mcp:
                  servers:
                    - name: remote
                      url: https://mcp.example.com/mcp
                """);

        assertEquals(
                1, load(PolicyLayer.PROJECT, project).policy().mcp().servers().size());
    }
}

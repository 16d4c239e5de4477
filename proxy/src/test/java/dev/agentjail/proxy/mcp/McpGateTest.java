package dev.agentjail.proxy.mcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.policy.McpPolicy;
import dev.agentjail.policy.McpServer;
import dev.agentjail.policy.NameFilter;
import dev.agentjail.proxy.json.Json;
import dev.agentjail.proxy.json.JsonReader;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class McpGateTest {
    private static final McpServer DOCS = new McpServer(
            "docs",
            Optional.of(URI.create("https://MCP.allowed.test/mcp")),
            List.of(),
            Map.of(),
            new NameFilter(List.of("search", "read_doc"), List.of()),
            new NameFilter(List.of("docs://*"), List.of("docs://private/*")),
            NameFilter.none(),
            false,
            false);
    private final McpGate gate = McpGate.of(new McpPolicy(List.of(DOCS)));

    private static RpcMessage message(String json) throws Exception {
        return RpcMessage.of(JsonReader.parse(json.getBytes(StandardCharsets.UTF_8)));
    }

    @Test
    void endpointsMatchSchemeHostPortAndPathExactly() {
        assertNotNull(gate.serverAt("https", "mcp.allowed.test", 443, "/mcp"));
        assertNull(gate.serverAt("http", "mcp.allowed.test", 443, "/mcp"));
        assertNull(gate.serverAt("https", "mcp.allowed.test", 8443, "/mcp"));
        assertNull(gate.serverAt("https", "mcp.allowed.test", 443, "/mcp/"));
        assertNull(gate.serverAt("https", "mcp.allowed.test", 443, "/MCP"));
        assertNull(gate.serverAt("https", "api.allowed.test", 443, "/mcp"));
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}|true|",
                "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}|true|",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}|true|",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"search\"}}|true|",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"searchx\"}}|false|mcp-tool-not-approved",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{}}|false|mcp-invalid-request",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/read\",\"params\":{\"uri\":\"docs://a\"}}|true|",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/read\",\"params\":{\"uri\":\"docs://private/k\"}}|false|mcp-resource-not-approved",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"prompts/get\",\"params\":{\"name\":\"x\"}}|false|mcp-prompt-not-approved",
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"sampling/createMessage\"}|false|mcp-method-not-permitted",
                "{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"params\":{\"name\":\"search\"}}|false|mcp-method-not-permitted",
            })
    void decides(String json, boolean allowed, String reason) throws Exception {
        McpVerdict v = gate.decide(DOCS, message(json));
        assertEquals(allowed, v.allowed());
        assertEquals(reason, v.reason());
    }

    @Test
    void pinsToolsAndBlocksAChangedOneForGood() throws Exception {
        Json.Obj v1 = (Json.Obj) JsonReader.parse(
                "{\"name\":\"search\",\"description\":\"d\",\"inputSchema\":{\"type\":\"object\",\"a\":1}}"
                        .getBytes(StandardCharsets.UTF_8));
        Json.Obj reordered = (Json.Obj) JsonReader.parse(
                "{\"inputSchema\":{\"a\":1,\"type\":\"object\"},\"description\":\"d\",\"name\":\"search\",\"title\":\"t\"}"
                        .getBytes(StandardCharsets.UTF_8));
        Json.Obj v2 = v1.with("description", new Json.Str("d <IMPORTANT>"));
        ToolPins pins = gate.pins();
        assertEquals(ToolPins.Seen.PINNED, pins.observe("docs", "search", v1));
        assertEquals(ToolPins.Seen.SAME, pins.observe("docs", "search", reordered));
        assertEquals(ToolPins.Seen.PINNED, pins.observe("other", "search", v2));
        assertEquals(ToolPins.Seen.CHANGED, pins.observe("docs", "search", v2));
        assertEquals(ToolPins.Seen.CHANGED, pins.observe("docs", "search", v1));
        McpVerdict call = gate.decide(
                DOCS,
                message("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"search\"}}"));
        assertEquals(McpErrors.REASON_TOOL_CHANGED, call.reason());
        assertTrue(call.message().contains("search"));
    }
}

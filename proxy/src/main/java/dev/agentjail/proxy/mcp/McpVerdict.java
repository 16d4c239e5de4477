package dev.agentjail.proxy.mcp;

/**
 * The proxy's decision on one MCP message: allowed, or refused with a JSON-RPC {@code code}, an audit {@code reason},
 * a {@code message} the agent can act on, and the policy {@code rule} that decided (e.g. {@code
 * mcp.servers[docs].tools}).
 */
public record McpVerdict(boolean allowed, int code, String reason, String message, String rule) {
    static McpVerdict allow(String rule) {
        return new McpVerdict(true, 0, null, null, rule);
    }

    static McpVerdict refuse(int code, String reason, String message, String rule) {
        return new McpVerdict(false, code, reason, message, rule);
    }
}

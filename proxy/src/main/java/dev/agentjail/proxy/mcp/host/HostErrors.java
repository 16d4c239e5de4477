package dev.agentjail.proxy.mcp.host;

/**
 * JSON-RPC error codes and reason codes of the bridge to host-side MCP servers; they continue {@code McpErrors}'
 * range and are documented in docs/mcp-host-servers.md.
 */
public final class HostErrors {
    /** The server process could not be started (missing {@code ${NAME}}, program not found, too many sessions). */
    public static final int UNAVAILABLE = -32010;
    /** The server process exited (or broke the protocol) while the request was waiting for its answer. */
    public static final int EXITED = -32011;

    /** The target names the reserved domain but no configured host-side server, or not as plain HTTP on port 80. */
    public static final String REASON_UNKNOWN = "mcp-host-unknown";
    /** The bridge could not be reached (the proxy is shutting down). */
    public static final String REASON_UNAVAILABLE = "mcp-host-unavailable";

    private HostErrors() {}
}

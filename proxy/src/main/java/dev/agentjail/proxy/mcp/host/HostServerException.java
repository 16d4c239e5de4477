package dev.agentjail.proxy.mcp.host;

/** A host-side MCP server cannot be started or used; the message is safe to show (it never holds a value). */
final class HostServerException extends Exception {
    HostServerException(String message) {
        super(message, null, false, false);
    }
}

package dev.agentjail.proxy.mcp;

import dev.agentjail.proxy.json.Json;
import java.nio.charset.StandardCharsets;

/**
 * The JSON-RPC error codes and audit reason codes of the proxy's MCP decisions (docs/mcp.md lists them), and the
 * error responses built from them. Codes are stable: agents may act on them.
 */
public final class McpErrors {
    /** JSON-RPC: the body is not strict JSON (or not UTF-8). */
    public static final int PARSE_ERROR = -32700;
    /** JSON-RPC: the body is JSON but not a JSON-RPC message the proxy accepts (a batch, a bad shape). */
    public static final int INVALID_REQUEST = -32600;
    /** The tool is not approved by the server's {@code tools} filter. */
    public static final int TOOL_NOT_APPROVED = -32001;
    /** The resource is not approved by the server's {@code resources} filter. */
    public static final int RESOURCE_NOT_APPROVED = -32002;
    /** The prompt is not approved by the server's {@code prompts} filter. */
    public static final int PROMPT_NOT_APPROVED = -32003;
    /** The tool's definition changed since the proxy first saw it (rug pull): calls are blocked. */
    public static final int TOOL_CHANGED = -32004;
    /** The request goes to a host and path that is not an approved MCP server. */
    public static final int SERVER_NOT_APPROVED = -32005;
    /** The method is not one the proxy lets through to an approved server. */
    public static final int METHOD_NOT_PERMITTED = -32006;
    /** The body cannot be inspected (too large, compressed, not UTF-8 JSON). */
    public static final int UNINSPECTABLE = -32007;
    /**
     * The request names an {@code Mcp-Session-Id} the server did not issue through this proxy, or one that ended, or
     * sends {@code Last-Event-ID} without a session: answered with HTTP 404, on which clients start a new session.
     */
    public static final int SESSION_UNKNOWN = -32008;

    public static final String REASON_PARSE_ERROR = "mcp-parse-error";
    public static final String REASON_INVALID_REQUEST = "mcp-invalid-request";
    public static final String REASON_BATCH_REFUSED = "mcp-batch-refused";
    public static final String REASON_TOOL_NOT_APPROVED = "mcp-tool-not-approved";
    public static final String REASON_RESOURCE_NOT_APPROVED = "mcp-resource-not-approved";
    public static final String REASON_PROMPT_NOT_APPROVED = "mcp-prompt-not-approved";
    public static final String REASON_TOOL_CHANGED = "mcp-tool-changed";
    public static final String REASON_SERVER_NOT_APPROVED = "mcp-server-not-approved";
    public static final String REASON_METHOD_NOT_PERMITTED = "mcp-method-not-permitted";
    public static final String REASON_UNINSPECTABLE = "mcp-uninspectable";
    /** An {@code Mcp-Session-Id} or {@code MCP-Protocol-Version} header the proxy cannot vouch for. */
    public static final String REASON_BAD_HEADER = "mcp-bad-header";
    /**
     * A request to an approved server whose {@code Content-Type} lets the server read its body in another charset
     * than UTF-8 (another charset, one named twice, a malformed parameter list): answered with 415.
     */
    public static final String REASON_CHARSET_REFUSED = "mcp-charset-refused";
    /** An {@code Mcp-Session-Id} not issued through this proxy (or ended), or a {@code Last-Event-ID} without one. */
    public static final String REASON_SESSION_UNKNOWN = "mcp-session-unknown";
    /**
     * A legacy HTTP+SSE stream announced a message endpoint the proxy does not approve (another origin, a second one,
     * one taken, too many sessions): the stream ends.
     */
    public static final String REASON_ENDPOINT_REFUSED = "mcp-endpoint-refused";
    /** A server-to-client request (sampling, elicitation) the policy does not allow was dropped from a stream. */
    public static final String REASON_SERVER_REQUEST_DROPPED = "mcp-server-request-dropped";
    /**
     * A response from an approved server that a client could act on but the proxy cannot filter as the client would
     * read it (a redirect, a type no client reads as JSON or an event stream, types the clients disagree on, several
     * {@code Content-Type} headers, a compressed body, a charset other than UTF-8), or one that holds only server
     * requests the policy drops: answered with 502.
     */
    public static final String REASON_RESPONSE_REFUSED = "mcp-response-refused";

    private McpErrors() {}

    /** {@code {"jsonrpc":"2.0","id":<id>,"error":{"code":<code>,"message":<message>}}}; a null id is written as null. */
    public static byte[] errorBody(Json id, int code, String message) {
        StringBuilder out = new StringBuilder(96 + message.length());
        out.append("{\"jsonrpc\":\"2.0\",\"id\":");
        out.append(id == null ? "null" : id.text());
        out.append(",\"error\":{\"code\":").append(code).append(",\"message\":");
        Json.Str.quote(out, message);
        out.append("}}");
        return out.toString().getBytes(StandardCharsets.UTF_8);
    }
}

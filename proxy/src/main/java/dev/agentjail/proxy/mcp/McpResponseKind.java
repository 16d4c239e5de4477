package dev.agentjail.proxy.mcp;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Decides, from its status and headers, how a response from an approved MCP endpoint is relayed: filtered as JSON or
 * as an event stream, refused, or passed. The rule: every response that an official MCP client would read MCP
 * messages from goes through the filter, read the way the clients read it; anything else that a client could still
 * act on is refused (502); only what no client reads passes.
 *
 * <p>How the clients read a response (docs/mcp.md has the sources): the TypeScript SDK up to 1.29 takes any 2xx whose
 * {@code Content-Type} contains {@code text/event-stream} (checked first) or {@code application/json}, case-sensitive,
 * and later versions compare the media type; the Python SDK takes any status below 400 (redirects followed) whose
 * lower-cased type starts with {@code application/json} (checked first) or {@code text/event-stream}; the Java SDK
 * any 2xx whose lower-cased first type contains {@code text/event-stream} (first) or {@code application/json}. A
 * {@code GET} is read as an event stream by the TypeScript SDK whatever its type. The body of a {@code 202}, and of
 * the answer to a POST that carries no request, is not read by any of them.
 */
sealed interface McpResponseKind {
    /** Collected whole and filtered as one JSON-RPC message or a batch. */
    record FilterJson() implements McpResponseKind {}

    /** Filtered event by event. */
    record FilterSse() implements McpResponseKind {}

    /** Relayed as it is: no client reads MCP messages from it. */
    record Pass(String why) implements McpResponseKind {}

    /** Refused with 502: a client could act on it, and the proxy cannot filter it as the client reads it. */
    record Refuse(String detail) implements McpResponseKind {}

    /** What the request asked of the server, which decides what a client reads from the answer. */
    enum Asked {
        /** A POST carrying a JSON-RPC request: its answer's body is read as JSON or as an event stream. */
        ANSWER,
        /** A POST carrying a notification or a response, or a POST to a legacy message endpoint. */
        NO_ANSWER,
        /** A GET: the server's event stream (Streamable HTTP, or the legacy transport's stream). */
        STREAM,
        /** Anything else ({@code DELETE}, {@code HEAD}, …): no MCP message is read from the answer. */
        NOTHING
    }

    /** One client's reading of a {@code Content-Type}. */
    enum Reading {
        JSON,
        SSE
    }

    String JSON_TYPE = "application/json";
    String SSE_TYPE = "text/event-stream";

    /** The kind of the response with {@code status} and {@code headers} to a request that {@code asked}. */
    static McpResponseKind of(Asked asked, int status, HttpHeaders headers) {
        if (asked == Asked.NOTHING) {
            return new Pass("no MCP message is read from this answer");
        }
        if (status >= 300 && status < 400) {
            // Clients follow redirects (fetch, httpx with follow_redirects): the answer would come from elsewhere.
            return new Refuse("a redirect (" + status + ") from an approved MCP endpoint would lead the client off it");
        }
        if (status < 200 || status >= 300) {
            return new Pass("clients read no MCP message from a status other than 2xx (a JSON-RPC error at most)");
        }
        List<String> types = headers.getAll(HttpHeaderNames.CONTENT_TYPE);
        if (types.size() > 1) {
            return new Refuse("the MCP server's response has " + types.size() + " Content-Type headers");
        }
        String type = types.isEmpty() ? "" : types.getFirst();
        Set<Reading> readings = readings(type);
        boolean empty = headers.getInt(HttpHeaderNames.CONTENT_LENGTH, -1) == 0 || status == 204 || status == 205;
        if (readings.size() > 1) {
            return new Refuse("clients disagree on whether Content-Type '" + McpGate.printable(type)
                    + "' is JSON or an event stream");
        }
        if (readings.isEmpty()) {
            if (empty || asked == Asked.NO_ANSWER || (asked == Asked.ANSWER && status == 202)) {
                return new Pass("no client reads this body");
            }
            return new Refuse("Content-Type '" + McpGate.printable(type)
                    + "' from an approved MCP endpoint is neither JSON nor an event stream");
        }
        Reading reading = readings.iterator().next();
        if (reading == Reading.JSON && asked == Asked.STREAM && !empty) {
            return new Refuse("a JSON answer to a GET, which clients read as an event stream");
        }
        String coding = String.join(",", headers.getAll(HttpHeaderNames.CONTENT_ENCODING));
        for (String c : coding.split(",")) {
            if (!c.isBlank() && !c.strip().equalsIgnoreCase("identity")) {
                return new Refuse(
                        "a compressed MCP response (" + McpGate.printable(coding.strip()) + ") cannot be filtered");
            }
        }
        String charset = charsetProblem(type);
        if (charset != null) {
            return new Refuse(charset);
        }
        return reading == Reading.JSON ? new FilterJson() : new FilterSse();
    }

    /** How the official clients read {@code type} (a single header's value; "" when absent): zero, one or two ways. */
    static Set<Reading> readings(String type) {
        Set<Reading> out = EnumSet.noneOf(Reading.class);
        String lower = type.toLowerCase(Locale.ROOT);
        // TypeScript SDK up to 1.29: case-sensitive substring, event stream first.
        add(out, type.contains(SSE_TYPE) ? Reading.SSE : type.contains(JSON_TYPE) ? Reading.JSON : null);
        // Java SDK: lower-cased substring, event stream first.
        add(out, lower.contains(SSE_TYPE) ? Reading.SSE : lower.contains(JSON_TYPE) ? Reading.JSON : null);
        // Python SDK: lower-cased prefix, JSON first.
        add(out, lower.startsWith(JSON_TYPE) ? Reading.JSON : lower.startsWith(SSE_TYPE) ? Reading.SSE : null);
        // TypeScript SDK from 1.30: the media type, parameters left out.
        String essence = lower.split(";", 2)[0].strip();
        add(out, essence.equals(SSE_TYPE) ? Reading.SSE : essence.equals(JSON_TYPE) ? Reading.JSON : null);
        return out;
    }

    private static void add(Set<Reading> out, Reading r) {
        if (r != null) {
            out.add(r);
        }
    }

    /**
     * Why the {@code charset} of {@code type} is one the proxy cannot read the body in, or null: the filter reads
     * UTF-8, and a client that decodes by the charset (httpx's text streams do) would read other events than it. Every
     * reading a client's parser could make of the type counts ({@link JsonCharset#utf8Problem}).
     */
    private static String charsetProblem(String type) {
        return JsonCharset.utf8Problem(type, false, "an MCP response");
    }
}

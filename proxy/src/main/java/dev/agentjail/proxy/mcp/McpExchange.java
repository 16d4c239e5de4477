package dev.agentjail.proxy.mcp;

import dev.agentjail.policy.McpServer;
import dev.agentjail.policy.Target;
import dev.agentjail.proxy.ProxyReasons;
import dev.agentjail.proxy.audit.McpDetails;
import dev.agentjail.proxy.json.Json;
import dev.agentjail.proxy.json.JsonException;
import dev.agentjail.proxy.json.JsonReader;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The MCP inspection of one HTTP exchange. A POST to an approved MCP endpoint has its (already redacted) body
 * collected, parsed as one JSON-RPC message and decided before anything is dialled; a POST elsewhere has the start of
 * its body looked at, and is refused if it is MCP. On the way back, list results and event streams from an approved
 * server are filtered. Lives on the connection's event loop.
 */
public final class McpExchange {
    /** Largest MCP message body the proxy collects; a larger one is refused. */
    public static final int MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

    /** How much of a POST body to another destination is held to look for MCP before it streams on. */
    public static final int SNIFF_BYTES = 64 * 1024;

    /** Largest JSON response (to a list request) the proxy collects to filter. */
    public static final int MAX_RESPONSE_BYTES = 8 * 1024 * 1024;

    /** Protocol revisions the proxy knows how to inspect; a request naming another one is refused. */
    static final Set<String> PROTOCOL_VERSIONS = Set.of("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25");

    /** Longest session id accepted; real ones are UUIDs or similar. */
    static final int MAX_SESSION_ID = 256;

    private static final byte[] JSONRPC_KEY = "\"jsonrpc\"".getBytes(StandardCharsets.US_ASCII);

    /** What the collected request body leads to. */
    public enum Step {
        /** Keep collecting. */
        MORE,
        /** Dial and forward what was collected ({@link #takeBody()}), then the rest of the body as usual. */
        FORWARD,
        /** Answer with {@link #refusal}; nothing goes upstream. */
        REFUSE
    }

    /** How the response is relayed. */
    public enum ResponseMode {
        /** As is. */
        PASS,
        /** Collected whole, filtered, sent with a new length. */
        JSON,
        /** Event by event, filtered. */
        SSE
    }

    private final McpGate gate;
    private final McpServer server;
    private final String authority;
    private final boolean collecting;

    private byte[] body = new byte[0];
    private int bodyLength;
    private boolean decided;
    private boolean bodyComplete;
    private String streamProblem;

    private String method;
    private Json id;
    private String tool;
    private long argsBytes = -1;
    private McpVerdict verdict;
    private HttpResponseStatus refusalStatus;
    private boolean mcpSeen;

    private ResponseMode responseMode = ResponseMode.PASS;
    private HttpResponse heldHead;
    private byte[] response;
    private int responseLength;
    private SseFilter sse;
    private int hidden;
    private List<String> changed = List.of();
    private List<String> flagged = List.of();
    private final java.util.ArrayList<McpDetails> droppedMessages = new java.util.ArrayList<>();

    private McpExchange(McpGate gate, McpServer server, String authority, boolean collecting) {
        this.gate = gate;
        this.server = server;
        this.authority = authority;
        this.collecting = collecting;
    }

    /**
     * The MCP inspection {@code request} needs, or null when it needs none: requests to an approved endpoint ({@code
     * scheme}, canonical host, port and {@code path} without query equal to a server's url), and POSTs with a body
     * anywhere else (whose content is checked for MCP).
     */
    public static McpExchange start(McpGate gate, HttpRequest request, String scheme, Target target, String path) {
        McpServer server = gate.serverAt(scheme, target.host(), target.port(), path);
        boolean post = request.method().equals(HttpMethod.POST);
        if (server != null) {
            return new McpExchange(gate, server, target.authority(), post);
        }
        if (post && hasBody(request) && !encoded(request)) {
            return new McpExchange(gate, null, target.authority(), true);
        }
        return null;
    }

    /**
     * Refuses, from its head alone, a request to an approved endpoint that could not be inspected (a compressed body,
     * a WebSocket upgrade): true when it did, and {@link #refusal} answers.
     */
    public boolean refusedFromHead(HttpRequest request, boolean websocket) {
        if (server == null) {
            return false;
        }
        String header = badHeader(request);
        if (header != null) {
            refuse(
                    HttpResponseStatus.BAD_REQUEST,
                    McpVerdict.refuse(McpErrors.INVALID_REQUEST, McpErrors.REASON_BAD_HEADER, header, rule()));
            return true;
        }
        String problem = null;
        if (websocket) {
            problem = "MCP over WebSocket is not inspected; use Streamable HTTP";
        } else if (encoded(request)) {
            problem = "a compressed MCP request body is not inspected";
        }
        if (problem == null) {
            return false;
        }
        refuse(
                HttpResponseStatus.UNSUPPORTED_MEDIA_TYPE,
                McpVerdict.refuse(McpErrors.UNINSPECTABLE, McpErrors.REASON_UNINSPECTABLE, problem, rule()));
        return true;
    }

    /** What is wrong with the request's MCP headers, or null (corpus cases 149 and 150). */
    private static String badHeader(HttpRequest request) {
        List<String> sessions = request.headers().getAll("Mcp-Session-Id");
        if (sessions.size() > 1) {
            return "more than one Mcp-Session-Id header";
        }
        if (sessions.size() == 1) {
            String id = sessions.getFirst();
            boolean ok = !id.isEmpty() && id.length() <= MAX_SESSION_ID;
            for (int i = 0; ok && i < id.length(); i++) {
                ok = id.charAt(i) >= 0x21 && id.charAt(i) <= 0x7e;
            }
            if (!ok) {
                return "Mcp-Session-Id must be 1 to " + MAX_SESSION_ID + " visible ASCII characters";
            }
        }
        List<String> versions = request.headers().getAll("MCP-Protocol-Version");
        if (versions.size() > 1 || (versions.size() == 1 && !PROTOCOL_VERSIONS.contains(versions.getFirst()))) {
            return "MCP-Protocol-Version must be one of " + new java.util.TreeSet<>(PROTOCOL_VERSIONS);
        }
        return null;
    }

    private static boolean encoded(HttpRequest request) {
        String coding = request.headers().get(HttpHeaderNames.CONTENT_ENCODING);
        return coding != null && !coding.strip().equalsIgnoreCase("identity");
    }

    private static boolean hasBody(HttpRequest request) {
        return request.headers().contains(HttpHeaderNames.TRANSFER_ENCODING)
                || HttpUtil.getContentLength(request, 0L) > 0;
    }

    /** Whether the request body is collected before the upstream is dialled. */
    public boolean collecting() {
        return collecting;
    }

    /** Whether this exchange goes to an approved MCP server. */
    public boolean approved() {
        return server != null;
    }

    /** Takes one (redacted) body part and releases it; {@code content} may be null (nothing to add). */
    public Step offer(HttpContent content, boolean last) {
        try {
            if (decided) {
                return Step.FORWARD;
            }
            if (content != null) {
                ByteBuf data = content.content();
                int n = data.readableBytes();
                int cap = server != null ? MAX_MESSAGE_BYTES : Integer.MAX_VALUE;
                if ((long) bodyLength + n > cap) {
                    body = null;
                    return refuse(
                            HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE,
                            McpVerdict.refuse(
                                    McpErrors.UNINSPECTABLE,
                                    McpErrors.REASON_UNINSPECTABLE,
                                    "MCP message larger than " + MAX_MESSAGE_BYTES + " bytes",
                                    rule()));
                }
                if (bodyLength + n > body.length) {
                    body = Arrays.copyOf(body, Math.max(bodyLength + n, Math.min(cap, body.length * 2 + 1024)));
                }
                data.getBytes(data.readerIndex(), body, bodyLength, n);
                bodyLength += n;
            }
            bodyComplete = last;
            return server != null ? approvedStep(last) : sniffStep(last);
        } finally {
            if (content != null) {
                content.release();
            }
        }
    }

    private Step approvedStep(boolean last) {
        if (!last) {
            return Step.MORE;
        }
        decided = true;
        mcpSeen = true;
        Json value;
        try {
            value = JsonReader.parse(body, 0, bodyLength);
        } catch (JsonException e) {
            return refuse(
                    HttpResponseStatus.BAD_REQUEST,
                    McpVerdict.refuse(
                            McpErrors.PARSE_ERROR,
                            McpErrors.REASON_PARSE_ERROR,
                            "the MCP request body is not strict UTF-8 JSON: " + e.getMessage(),
                            rule()));
        }
        if (value instanceof Json.Arr) {
            return refuse(
                    HttpResponseStatus.BAD_REQUEST,
                    McpVerdict.refuse(
                            McpErrors.INVALID_REQUEST,
                            McpErrors.REASON_BATCH_REFUSED,
                            "JSON-RPC batches are not accepted; send one message per request",
                            rule()));
        }
        RpcMessage message;
        try {
            message = RpcMessage.of(value);
        } catch (RpcMessage.InvalidMessage e) {
            if (value instanceof Json.Obj o && o.get("id") instanceof Json candidate) {
                id = candidate instanceof Json.Str || candidate instanceof Json.Num ? candidate : null;
            }
            return refuse(
                    HttpResponseStatus.BAD_REQUEST,
                    McpVerdict.refuse(
                            McpErrors.INVALID_REQUEST, McpErrors.REASON_INVALID_REQUEST, e.getMessage(), rule()));
        }
        note(message);
        verdict = gate.decide(server, message);
        if (!verdict.allowed()) {
            // A decision on a well-formed message: the agent gets it as the answer to its call.
            return refuse(
                    message.kind() == RpcMessage.Kind.REQUEST ? HttpResponseStatus.OK : HttpResponseStatus.FORBIDDEN,
                    verdict);
        }
        return Step.FORWARD;
    }

    private void note(RpcMessage message) {
        method = message.method();
        id = message.id();
        if ("tools/call".equals(method) || "prompts/get".equals(method)) {
            tool = message.param("name");
        } else if (method != null && method.startsWith("resources/") && !method.endsWith("/list")) {
            tool = message.param("uri");
        }
        if ("tools/call".equals(method) && message.params() instanceof Json.Obj p && p.get("arguments") != null) {
            argsBytes = p.get("arguments").text().getBytes(StandardCharsets.UTF_8).length;
        }
    }

    /** Another destination: is this MCP? Decided on the whole body if it is small, else on its start. */
    private Step sniffStep(boolean last) {
        int first = 0;
        while (first < bodyLength && isJsonSpace(body[first])) {
            first++;
        }
        if (first < bodyLength && body[first] != '{' && body[first] != '[') {
            return forwardUninspected();
        }
        if (last) {
            decided = true;
            try {
                Json value = JsonReader.parse(body, 0, bodyLength);
                return carriesMcp(value) ? refuseUnapproved(value) : forwardUninspected();
            } catch (JsonException e) {
                return contains(body, bodyLength, JSONRPC_KEY) ? refuseUnapproved(null) : forwardUninspected();
            }
        }
        if (bodyLength < SNIFF_BYTES) {
            return Step.MORE;
        }
        decided = true;
        Json.Obj start = JsonReader.prefixMembers(body, bodyLength);
        if (start == null) {
            return contains(body, bodyLength, JSONRPC_KEY) ? refuseUnapproved(null) : forwardUninspected();
        }
        return start.get("jsonrpc") != null || McpGate.isMcpMethod(start.string("method"))
                ? refuseUnapproved(start)
                : forwardUninspected();
    }

    private Step forwardUninspected() {
        decided = true;
        return Step.FORWARD;
    }

    private static boolean carriesMcp(Json value) {
        if (value instanceof Json.Obj o) {
            return McpGate.isMcpMethod(o.string("method"));
        }
        if (value instanceof Json.Arr a) {
            return a.items().stream().anyMatch(McpExchange::carriesMcp);
        }
        return false;
    }

    private Step refuseUnapproved(Json value) {
        mcpSeen = true;
        if (value instanceof Json.Obj o) {
            method = o.string("method");
            Json candidate = o.get("id");
            id = candidate instanceof Json.Str || candidate instanceof Json.Num ? candidate : null;
        }
        return refuse(
                HttpResponseStatus.FORBIDDEN,
                McpVerdict.refuse(
                        McpErrors.SERVER_NOT_APPROVED,
                        McpErrors.REASON_SERVER_NOT_APPROVED,
                        "MCP to " + authority + " is not approved: no mcp.servers entry has this url",
                        "mcp.servers"));
    }

    private Step refuse(HttpResponseStatus status, McpVerdict v) {
        decided = true;
        verdict = v;
        refusalStatus = status;
        body = null;
        return Step.REFUSE;
    }

    private String rule() {
        return server == null ? "mcp.servers" : "mcp.servers[" + server.name() + "]";
    }

    /**
     * The collected body, to be sent before the rest of the request (the last part when the whole body was
     * collected); null once taken, or when nothing was collected from a body that goes on.
     */
    public HttpContent takeBody() {
        if (body == null) {
            return null;
        }
        ByteBuf buf = bodyLength == 0 ? Unpooled.EMPTY_BUFFER : Unpooled.wrappedBuffer(body, 0, bodyLength);
        body = null;
        if (bodyComplete) {
            return new DefaultLastHttpContent(buf);
        }
        return bodyLength == 0 ? null : new DefaultHttpContent(buf);
    }

    /** Whether the exchange was refused (and {@link #refusal} answers it). */
    public boolean refused() {
        return refusalStatus != null;
    }

    public HttpResponseStatus refusalStatus() {
        return refusalStatus;
    }

    public String refusalReason() {
        return verdict.reason();
    }

    public String refusalRule() {
        return verdict.rule();
    }

    public String refusalDetail() {
        return verdict.message();
    }

    /**
     * The JSON-RPC error response for a refusal: the request's id (null when it had none or could not be read), the
     * stable code, the message, and the reason and rule headers every proxy refusal carries.
     */
    public FullHttpResponse refusal(ByteBufAllocator alloc, boolean close) {
        byte[] bytes = McpErrors.errorBody(id, verdict.code(), verdict.message());
        FullHttpResponse r = new DefaultFullHttpResponse(
                HttpVersion.HTTP_1_1, refusalStatus, alloc.buffer(bytes.length).writeBytes(bytes));
        r.headers()
                .set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON)
                .setInt(HttpHeaderNames.CONTENT_LENGTH, bytes.length)
                .set(ProxyReasons.HEADER, verdict.reason())
                .set(ProxyReasons.RULE_HEADER, McpGate.printable(verdict.rule()));
        if (close) {
            r.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        }
        return r;
    }

    /** The MCP part of the exchange's record, or null when the exchange turned out not to be MCP. */
    public McpDetails details() {
        if (server == null && !mcpSeen) {
            return null;
        }
        String idText = id instanceof Json.Str s ? s.value() : id instanceof Json.Num n ? n.literal() : null;
        return new McpDetails(
                server == null ? null : server.name(),
                method,
                tool == null ? null : McpGate.printable(tool),
                idText,
                argsBytes,
                hidden,
                changed,
                flagged,
                sse == null ? 0 : sse.dropped());
    }

    // ---- the response ----

    /** Decides how the response whose head is {@code head} is relayed. */
    public ResponseMode onResponseHead(HttpResponse head) {
        if (server == null) {
            return ResponseMode.PASS;
        }
        String type = head.headers().get(HttpHeaderNames.CONTENT_TYPE);
        String mime = type == null ? "" : type.split(";", 2)[0].strip().toLowerCase(Locale.ROOT);
        if (mime.equals("text/event-stream")) {
            responseMode = ResponseMode.SSE;
            sse = new SseFilter(this::rewrite);
            head.headers().remove(HttpHeaderNames.CONTENT_LENGTH);
            HttpUtil.setTransferEncodingChunked(head, true);
        } else if (mime.equals("application/json")
                && ListFilter.filters(method)
                && head.status().code() == 200) {
            responseMode = ResponseMode.JSON;
            heldHead = head;
            response = new byte[0];
        }
        return responseMode;
    }

    public ResponseMode responseMode() {
        return responseMode;
    }

    /** The response head held back while a JSON response is collected. */
    public HttpResponse heldHead() {
        return heldHead;
    }

    /** Collects one part of a JSON response (and releases it); false when it is too large to filter. */
    public boolean collectResponse(HttpContent content) {
        try {
            ByteBuf data = content.content();
            int n = data.readableBytes();
            if ((long) responseLength + n > MAX_RESPONSE_BYTES) {
                return false;
            }
            if (responseLength + n > response.length) {
                response = Arrays.copyOf(
                        response,
                        Math.max(responseLength + n, Math.min(MAX_RESPONSE_BYTES, response.length * 2 + 1024)));
            }
            data.getBytes(data.readerIndex(), response, responseLength, n);
            responseLength += n;
            return true;
        } finally {
            content.release();
        }
    }

    /** The collected JSON response, filtered; null when it is not the JSON-RPC response it should be. */
    public byte[] filteredResponse() {
        try {
            RpcMessage message = RpcMessage.of(JsonReader.parse(response, 0, responseLength));
            Json.Obj out = rewrite(message);
            if (out == message.raw()) {
                return Arrays.copyOf(response, responseLength);
            }
            return out == null ? null : out.text().getBytes(StandardCharsets.UTF_8);
        } catch (JsonException | RpcMessage.InvalidMessage e) {
            return null;
        } finally {
            response = null;
        }
    }

    /**
     * Filters the next bytes of an event stream (without releasing {@code in}): what to send on, possibly empty, or
     * null when the stream cannot be followed ({@link #streamProblem()} says why).
     */
    public ByteBuf filterSse(ByteBuf in, boolean last, ByteBufAllocator alloc) {
        byte[] data = new byte[in.readableBytes()];
        in.getBytes(in.readerIndex(), data);
        byte[] out;
        try {
            out = sse.feed(data, 0, data.length, last);
        } catch (SseFilter.StreamException e) {
            streamProblem = e.getMessage();
            return null;
        }
        return out.length == 0
                ? Unpooled.EMPTY_BUFFER
                : alloc.buffer(out.length).writeBytes(out);
    }

    /** The server-to-client requests dropped since the last call, each to be recorded on its own; then forgotten. */
    public List<McpDetails> takeDropped() {
        List<McpDetails> out = List.copyOf(droppedMessages);
        droppedMessages.clear();
        return out;
    }

    /** Why the event stream could not be followed. */
    public String streamProblem() {
        return streamProblem;
    }

    /** One server-to-client message: list results are filtered, sampling and elicitation dropped unless allowed. */
    private Json.Obj rewrite(RpcMessage message) {
        if (message.kind() == RpcMessage.Kind.RESPONSE) {
            if (id != null && id.equals(message.id()) && ListFilter.filters(method)) {
                ListFilter.Filtered f = ListFilter.filter(gate, server, method, message.raw());
                hidden += f.hidden();
                changed = concat(changed, f.changed());
                flagged = concat(flagged, f.flagged());
                return f.message();
            }
            return message.raw();
        }
        String m = message.method();
        if (("sampling/createMessage".equals(m) && !server.sampling())
                || ("elicitation/create".equals(m) && !server.elicitation())) {
            droppedMessages.add(
                    new McpDetails(server.name(), m, null, message.idText(), -1, 0, List.of(), List.of(), 0));
            return null;
        }
        return message.raw();
    }

    private static List<String> concat(List<String> a, List<String> b) {
        return b.isEmpty()
                ? a
                : java.util.stream.Stream.concat(a.stream(), b.stream()).toList();
    }

    /** Whether {@code b} is JSON whitespace. */
    private static boolean isJsonSpace(byte b) {
        return b == ' ' || b == '\t' || b == '\n' || b == '\r';
    }

    private static boolean contains(byte[] hay, int length, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (hay[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return true;
        }
        return false;
    }
}

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
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Set;

/**
 * The MCP inspection of one HTTP exchange. A POST to an approved MCP endpoint has its (already redacted) body
 * collected, parsed as one JSON-RPC message and decided before anything is dialled; a POST elsewhere has the start of
 * its body looked at, and is refused if it is MCP. On the way back, list results and event streams from an approved
 * server are filtered. A {@code GET} stream that announces a legacy HTTP+SSE message endpoint opens a {@link
 * LegacySession} for as long as it lasts; POSTs to that endpoint are decided like any others, their list answers are
 * filtered on the stream, and their refusals are put on it. Lives on the connection's event loop.
 */
public final class McpExchange {
    /** Largest MCP message body the proxy collects; a larger one is refused. */
    public static final int MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

    /** How much of a POST body to another destination is held to look for MCP before it streams on. */
    public static final int SNIFF_BYTES = McpDetection.SNIFF_BYTES;

    /** Largest JSON response (to a list request) the proxy collects to filter. */
    public static final int MAX_RESPONSE_BYTES = 8 * 1024 * 1024;

    /** Protocol revisions the proxy knows how to inspect; a request naming another one is refused. */
    static final Set<String> PROTOCOL_VERSIONS = Set.of("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25");

    /** Longest session id accepted; real ones are UUIDs or similar. */
    static final int MAX_SESSION_ID = 256;

    static final String SESSION_HEADER = "Mcp-Session-Id";
    static final String LAST_EVENT_ID = "Last-Event-ID";

    /** What the collected request body leads to. */
    public enum Step {
        /** Keep collecting. */
        MORE,
        /** Dial and forward what was collected ({@link #takeBody()}), then the rest of the body as usual. */
        FORWARD,
        /** Answer with {@link #refusal}; nothing goes upstream. */
        REFUSE
    }

    final McpGate gate;
    final McpServer server;
    final String scheme;
    final Target target;
    final String originForm;
    final boolean get;
    private final boolean delete;
    final boolean collecting;
    /** The legacy session this request is a message of (a POST to its message endpoint), or null. */
    final LegacySession legacy;
    /** How a body to a place that is not an approved endpoint is read to find MCP in it; null for approved ones. */
    private final McpDetection detection;

    /** The length of the held start at which detection decides again. */
    private int nextDecision;

    /** The scan of the rest of a body decided on its start, or null. */
    private McpTail tail;

    private byte[] body = new byte[0];
    private int bodyLength;
    private boolean decided;
    private boolean bodyComplete;
    /** SHA-256 of the request's {@code Mcp-Session-Id} (never the id itself), or null when it has none. */
    String sessionHash;

    String method;
    private Json id;
    private String tool;
    private long argsBytes = -1;
    private McpVerdict verdict;
    private HttpResponseStatus refusalStatus;
    private boolean mcpSeen;
    /** The message is a request (has a method and an id): a refusal answers it. */
    boolean expectsAnswer;

    /** The response side; answers to a destination that is not an approved server pass. */
    private final McpAnswer answer;

    private McpExchange(
            McpGate gate,
            McpServer server,
            LegacySession legacy,
            String scheme,
            Target target,
            String originForm,
            HttpRequest request,
            boolean collecting) {
        this.gate = gate;
        this.server = server;
        this.legacy = legacy;
        this.scheme = scheme;
        this.target = target;
        this.originForm = originForm;
        this.get = request.method().equals(HttpMethod.GET);
        this.delete = request.method().equals(HttpMethod.DELETE);
        this.collecting = collecting;
        this.detection = server == null
                ? new McpDetection(
                        joined(request, HttpHeaderNames.CONTENT_ENCODING),
                        joined(request, HttpHeaderNames.CONTENT_TYPE))
                : null;
        this.answer = new McpAnswer(this);
    }

    private static String joined(HttpRequest request, CharSequence name) {
        List<String> values = request.headers().getAll(name);
        return values.isEmpty() ? null : String.join(", ", values);
    }

    /**
     * The MCP inspection {@code request} needs, or null when it needs none: requests to an approved endpoint (the
     * exact {@code scheme}, canonical host, port, path and query of an open legacy session's message endpoint; or
     * {@code scheme}, canonical host, port and path, without the query, of a server's url), and requests with a body
     * anywhere else, whatever their method (whose content is checked for MCP). {@code originForm}: the request's path and query.
     */
    public static McpExchange start(
            McpGate gate, HttpRequest request, String scheme, Target target, String originForm) {
        LegacySession legacy = gate.legacy().at(scheme, target.host(), target.port(), originForm);
        McpServer server = legacy != null
                ? legacy.server()
                : gate.serverAt(scheme, target.host(), target.port(), stripQuery(originForm));
        boolean post = request.method().equals(HttpMethod.POST);
        if (server != null) {
            return new McpExchange(gate, server, legacy, scheme, target, originForm, request, post);
        }
        if (hasBody(request)) {
            // Whatever the method: a receiver may read the body of a PUT or a GET as a call just the same. Compressed
            // bodies too: the redaction step decodes them, so detection reads them decoded.
            return new McpExchange(gate, null, null, scheme, target, originForm, request, true);
        }
        return null;
    }

    private static String stripQuery(String originForm) {
        int q = originForm.indexOf('?');
        return q < 0 ? originForm : originForm.substring(0, q);
    }

    /**
     * Refuses, from its head alone, a request to an approved endpoint with malformed MCP headers, a session this proxy
     * did not see the server issue, a body the server could read in another charset than UTF-8 (the one the proxy
     * reads), or a body that could not be inspected (compressed, a WebSocket upgrade): true when
     * it did, and {@link #refusal} answers. A {@code DELETE} that passes ends its session for the proxy.
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
        String session = unknownSession(request);
        if (session != null) {
            // 404 is what the MCP transport says a gone session gets: the client starts a new one, through the proxy.
            refuse(
                    HttpResponseStatus.NOT_FOUND,
                    McpVerdict.refuse(McpErrors.SESSION_UNKNOWN, McpErrors.REASON_SESSION_UNKNOWN, session, rule()));
            return true;
        }
        if (refusedForCharset(request)) {
            return true;
        }
        String problem = null;
        if (websocket) {
            problem = "MCP over WebSocket is not inspected; use Streamable HTTP";
        } else if (encoded(request)) {
            problem = "a compressed MCP request body is not inspected";
        }
        if (problem == null) {
            if (delete && sessionHash != null) {
                // The client ends the session: whatever the server answers, it is not passed again.
                gate.sessions().forget(server.name(), sessionHash);
            }
            return false;
        }
        refuse(
                HttpResponseStatus.UNSUPPORTED_MEDIA_TYPE,
                McpVerdict.refuse(McpErrors.UNINSPECTABLE, McpErrors.REASON_UNINSPECTABLE, problem, rule()));
        return true;
    }

    /**
     * Refuses a request to an approved endpoint whose body the server could read as something other than UTF-8, the
     * one reading the proxy makes: a charset other than UTF-8, one named twice or where a quote-blind splitter finds
     * it, a malformed {@code Content-Type}. True when it did, and {@link #refusal} answers.
     */
    public boolean refusedForCharset(HttpRequest request) {
        if (server == null) {
            return false;
        }
        String charset =
                JsonCharset.utf8Problem(joined(request, HttpHeaderNames.CONTENT_TYPE), true, "the MCP request");
        if (charset == null) {
            return false;
        }
        // The server decodes the body by its charset (the TypeScript SDK hands it to iconv-lite): read as UTF-8 here,
        // it could be another message there.
        refuse(
                HttpResponseStatus.UNSUPPORTED_MEDIA_TYPE,
                McpVerdict.refuse(
                        McpErrors.UNINSPECTABLE,
                        McpErrors.REASON_CHARSET_REFUSED,
                        charset + "; send it as UTF-8, without a charset or with charset=utf-8",
                        rule()));
        return true;
    }

    /**
     * Why the request's session is not one to pass (corpus case 149), or null: its {@code Mcp-Session-Id} must be one
     * the server issued through this proxy and that has not ended; a {@code Last-Event-ID} (resuming a stream) needs
     * such a session. The message never contains the id.
     */
    private String unknownSession(HttpRequest request) {
        String session = request.headers().get(SESSION_HEADER);
        if (session == null) {
            return request.headers().contains(LAST_EVENT_ID)
                    ? "Last-Event-ID is accepted only with the Mcp-Session-Id of a session started through agentjail;"
                            + " reconnect without it, or initialize a new session"
                    : null;
        }
        sessionHash = SessionBinding.hash(session);
        if (gate.sessions().known(server.name(), sessionHash)) {
            return null;
        }
        return "MCP session unknown: this Mcp-Session-Id was not issued by server '" + server.name()
                + "' through agentjail, or it ended; initialize a new session";
    }

    /** What is wrong with the request's MCP headers, or null (corpus cases 149 and 150). */
    private static String badHeader(HttpRequest request) {
        List<String> sessions = request.headers().getAll(SESSION_HEADER);
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
        return dev.agentjail.proxy.inspect.OutboundRequest.hasBody(request);
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
        if (bodyLength >= 3 && (body[0] & 0xff) == 0xef && (body[1] & 0xff) == 0xbb && (body[2] & 0xff) == 0xbf) {
            // Servers strip it (iconv-lite, TextDecoder) and read on: refused, so that nothing the proxy did not
            // parse as JSON reaches them.
            return refuse(
                    HttpResponseStatus.BAD_REQUEST,
                    McpVerdict.refuse(
                            McpErrors.PARSE_ERROR,
                            McpErrors.REASON_PARSE_ERROR,
                            "the MCP request body starts with a byte order mark; send it without one",
                            rule()));
        }
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
        String ambiguous = McpNames.ambiguity(value);
        if (ambiguous != null) {
            // A server that matches member names ignoring case could read another call than the one decided on.
            noteId(value);
            return refuse(
                    HttpResponseStatus.BAD_REQUEST,
                    McpVerdict.refuse(
                            McpErrors.INVALID_REQUEST,
                            McpErrors.REASON_INVALID_REQUEST,
                            "the MCP request has " + ambiguous + "; a server that matches names ignoring case could"
                                    + " read another message",
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
            noteId(value);
            return refuse(
                    HttpResponseStatus.BAD_REQUEST,
                    McpVerdict.refuse(
                            McpErrors.INVALID_REQUEST, McpErrors.REASON_INVALID_REQUEST, e.getMessage(), rule()));
        }
        note(message);
        expectsAnswer = message.kind() == RpcMessage.Kind.REQUEST;
        verdict = gate.decide(server, message);
        if (!verdict.allowed()) {
            // A decision on a well-formed message: the agent gets it as the answer to its call.
            return refuse(expectsAnswer ? HttpResponseStatus.OK : HttpResponseStatus.FORBIDDEN, verdict);
        }
        if (legacy != null && expectsAnswer && ListFilter.filters(method) && !legacy.expectList(id, method)) {
            // Its answer will come on the stream, and only a remembered list request has its answer filtered there.
            return refuse(
                    HttpResponseStatus.OK,
                    McpVerdict.refuse(
                            McpErrors.UNINSPECTABLE,
                            McpErrors.REASON_UNINSPECTABLE,
                            "more than " + LegacySession.MAX_PENDING_LISTS
                                    + " list requests await their answer on this MCP session",
                            rule()));
        }
        return Step.FORWARD;
    }

    /** The id of a message refused before it could be read as one, so that the refusal answers it. */
    private void noteId(Json value) {
        if (value instanceof Json.Obj o && o.get("id") instanceof Json candidate) {
            id = candidate instanceof Json.Str || candidate instanceof Json.Num ? candidate : null;
            expectsAnswer = o.get("method") != null;
        }
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

    /** Another destination: is this MCP, in any way its receiver could read the body? */
    private Step sniffStep(boolean last) {
        if (!last && bodyLength < nextDecision) {
            // Decided again only each time the held start doubles: tiny body parts cost no quadratic re-reading.
            return Step.MORE;
        }
        nextDecision = Math.min(SNIFF_BYTES, Math.max(2 * bodyLength, JsonCharset.DETECTION_BYTES));
        return switch (detection.decide(body, bodyLength, last)) {
            case McpDetection.Verdict.More more -> Step.MORE;
            case McpDetection.Verdict.NotMcp not -> forwardUninspected();
            case McpDetection.Verdict.Mcp mcp -> refuseUnapproved(mcp.message(), mcp.reading());
        };
    }

    private Step forwardUninspected() {
        decided = true;
        if (!bodyComplete) {
            // Decided on its start: the rest is followed as it streams on, and the gate keeps its last part back.
            tail = detection.tail(body, bodyLength);
        }
        return Step.FORWARD;
    }

    /**
     * Whether the body goes on past a start that was decided not MCP, and the rest must be followed ({@link
     * #followTail}) with its last part kept back until the end is seen.
     */
    public boolean followsTail() {
        return tail != null && !refused();
    }

    /**
     * Reads the next (redacted) bytes of a body that streams on past its start, without releasing them: false when
     * they make it MCP, and then {@link #refusal} answers.
     */
    public boolean followTail(ByteBuf data) {
        if (tail == null) {
            return true;
        }
        int n = data.readableBytes();
        if (data.hasArray()) {
            tail.feed(data.array(), data.arrayOffset() + data.readerIndex(), n);
        } else {
            byte[] copy = new byte[n];
            data.getBytes(data.readerIndex(), copy);
            tail.feed(copy, 0, n);
        }
        if (tail.found() == null) {
            return true;
        }
        String reading = tail.found();
        tail = null;
        refuseUnapproved(null, reading + ", past the first " + SNIFF_BYTES + " bytes");
        return false;
    }

    private Step refuseUnapproved(Json value, String reading) {
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
                        "MCP to " + target.authority() + " is not approved: no mcp.servers entry has this url"
                                + (reading.equals("UTF-8") ? "" : " (body read as " + reading + ")"),
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

    /**
     * On a legacy session, also puts a refused request's JSON-RPC error on the session's stream: legacy clients read
     * every answer there, and ignore the body of the answer to their POST.
     */
    public void answerOnStream() {
        if (legacy != null && refused() && expectsAnswer && id != null) {
            legacy.send(McpErrors.errorBody(id, verdict.code(), verdict.message()));
        }
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
                answer.hidden(),
                answer.changed(),
                answer.flagged(),
                answer.dropped());
    }

    /**
     * Shapes the headers of a request that goes to an approved server: it is asked for an uncompressed answer, which
     * the proxy can filter (a compressed one is refused).
     */
    public void shapeOutbound(io.netty.handler.codec.http.HttpHeaders outbound) {
        if (server != null) {
            outbound.set(HttpHeaderNames.ACCEPT_ENCODING, HttpHeaderValues.IDENTITY);
        }
    }

    /** The response side of this exchange: how the server's answer is relayed and filtered. */
    public McpAnswer answer() {
        return answer;
    }

    /** The exchange ended (completed, failed or cut): a legacy session it opened ends with it. Idempotent. */
    public void end() {
        answer.end();
    }
}

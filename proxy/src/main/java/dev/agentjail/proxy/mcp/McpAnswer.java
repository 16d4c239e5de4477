package dev.agentjail.proxy.mcp;

import dev.agentjail.policy.McpServer;
import dev.agentjail.policy.Reasons;
import dev.agentjail.proxy.audit.AuditRecord;
import dev.agentjail.proxy.audit.McpDetails;
import dev.agentjail.proxy.json.Json;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpUtil;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Executor;
import java.util.function.Consumer;

/**
 * The response side of one MCP exchange ({@link McpExchange}): how the answer of an approved server is relayed
 * ({@link #onResponseHead}), a JSON answer collected and filtered, an event stream filtered event by event (list
 * results, server-to-client requests), the session the server issues bound, and the message endpoint a legacy stream
 * announces registered for as long as the stream lasts. Lives on the connection's event loop.
 */
public final class McpAnswer {
    /**
     * One MCP message of an event stream that has an audit record of its own ({@code kind} {@code mcp-message}): a
     * server-to-client request dropped, or a list answer filtered on a {@code GET} stream (whose request record was
     * written when its POST was answered).
     */
    public record StreamMessage(String decision, String reason, McpDetails details) {}

    /** How the response is relayed. */
    public enum ResponseMode {
        /** As is. */
        PASS,
        /** Collected whole, filtered, sent with a new length. */
        JSON,
        /** Event by event, filtered. */
        SSE,
        /** Refused with 502 ({@link #responseRefusal()}): a client could act on it, and it cannot be filtered. */
        REFUSE
    }

    private final McpExchange request;

    private ResponseMode responseMode = ResponseMode.PASS;
    /** The JSON answer being collected to be filtered, or null. */
    private JsonAnswer json;

    private SseFilter sse;
    private String streamReason;
    private String responseReason;
    private String responseProblem;
    private int hidden;
    private List<String> changed = List.of();
    private List<String> flagged = List.of();
    private final List<StreamMessage> streamMessages = new ArrayList<>();

    /** Where events for this response's stream go (set once its head is written); see {@link #streamTo}. */
    private Executor streamLoop;

    private Consumer<byte[]> streamWriter;
    /** The legacy session this GET stream opened by announcing its message endpoint, or null. */
    private LegacySession opened;

    private String streamProblem;

    McpAnswer(McpExchange request) {
        this.request = request;
    }

    int hidden() {
        return hidden;
    }

    List<String> changed() {
        return changed;
    }

    List<String> flagged() {
        return flagged;
    }

    int dropped() {
        return sse == null ? 0 : sse.dropped();
    }

    /** The exchange ended (completed, failed or cut): a legacy session it opened ends with it. Idempotent. */
    void end() {
        if (opened != null) {
            opened.close();
        }
    }

    /** Decides how the response whose head is {@code head} is relayed. */
    public ResponseMode onResponseHead(HttpResponse head) {
        if (request.server == null) {
            return ResponseMode.PASS;
        }
        bindSession(head);
        switch (McpResponseKind.of(asked(), head.status().code(), head.headers())) {
            case McpResponseKind.FilterSse sse -> {
                responseMode = ResponseMode.SSE;
                // Only a GET stream is a legacy session stream that may announce a message endpoint.
                this.sse = new SseFilter(this::rewrite, request.get ? this::endpoint : null);
                head.headers().remove(HttpHeaderNames.CONTENT_LENGTH);
                HttpUtil.setTransferEncodingChunked(head, true);
            }
            case McpResponseKind.FilterJson json -> {
                responseMode = ResponseMode.JSON;
                this.json = new JsonAnswer(head, McpExchange.MAX_RESPONSE_BYTES);
            }
            case McpResponseKind.Refuse refuse -> {
                responseMode = ResponseMode.REFUSE;
                responseReason = McpErrors.REASON_RESPONSE_REFUSED;
                responseProblem = refuse.detail();
            }
            case McpResponseKind.Pass pass -> responseMode = ResponseMode.PASS;
        }
        return responseMode;
    }

    /** What the request asked of the server, which decides what an MCP client reads from the answer. */
    private McpResponseKind.Asked asked() {
        if (request.get) {
            return McpResponseKind.Asked.STREAM;
        }
        if (!request.collecting) {
            return McpResponseKind.Asked.NOTHING;
        }
        // Legacy clients read every answer from the stream and ignore the body of the answer to their POST.
        return request.legacy == null && request.expectsAnswer
                ? McpResponseKind.Asked.ANSWER
                : McpResponseKind.Asked.NO_ANSWER;
    }

    /** Why the response was refused or could not be filtered (for the 502 and the record). */
    public String responseProblem() {
        return responseProblem;
    }

    /** The reason code recorded with {@link #responseProblem()}. */
    public String responseReason() {
        return responseReason == null ? McpErrors.REASON_UNINSPECTABLE : responseReason;
    }

    /**
     * Remembers the session the server issues in its answer to {@code initialize}, before the client sees it; forgets
     * the request's session when the server answers 404 (it has ended it).
     */
    private void bindSession(HttpResponse head) {
        int status = head.status().code();
        if (request.sessionHash != null && status == 404) {
            request.gate.sessions().forget(request.server.name(), request.sessionHash);
        }
        if ("initialize".equals(request.method) && status >= 200 && status < 300) {
            String issued = head.headers().get(McpExchange.SESSION_HEADER);
            if (issued != null) {
                request.gate.sessions().issued(request.server.name(), SessionBinding.hash(issued));
            }
        }
    }

    public ResponseMode responseMode() {
        return responseMode;
    }

    /** The response head held back while a JSON response is collected. */
    public HttpResponse heldHead() {
        return json.head();
    }

    /** Collects one part of a JSON response (and releases it); false when it is too large to filter. */
    public boolean collectResponse(HttpContent content) {
        if (json.collect(content)) {
            return true;
        }
        responseProblem = "the MCP server's JSON response is larger than " + McpExchange.MAX_RESPONSE_BYTES + " bytes";
        return false;
    }

    /**
     * The collected JSON response, filtered: one message or a batch, each message as on an event stream; null when it
     * is not JSON-RPC, or nothing is left ({@link #responseProblem()} says why).
     */
    public byte[] filteredResponse() {
        try {
            return json.filtered(this::rewrite);
        } catch (JsonAnswer.Unfilterable e) {
            responseReason = e.reason();
            responseProblem = e.getMessage();
            return null;
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

    /** The stream's messages with records of their own since the last call, in order; then forgotten. */
    public List<StreamMessage> takeStreamMessages() {
        List<StreamMessage> out = List.copyOf(streamMessages);
        streamMessages.clear();
        return out;
    }

    /** Why the event stream could not be followed. */
    public String streamProblem() {
        return streamProblem;
    }

    /** The decision recorded when the stream could not be followed: deny for a refused endpoint, else error. */
    public String streamDecision() {
        return streamReason == null ? AuditRecord.ERROR : AuditRecord.DENY;
    }

    /** The reason recorded when the stream could not be followed. */
    public String streamReason() {
        return streamReason == null ? McpErrors.REASON_UNINSPECTABLE : streamReason;
    }

    /**
     * Where events the proxy adds to this response's event stream go: {@code writer} runs on {@code loop}, between
     * the stream's own events. Set when the stream's head is written.
     */
    public void streamTo(Executor loop, Consumer<byte[]> writer) {
        this.streamLoop = loop;
        this.streamWriter = writer;
    }

    /**
     * The {@code endpoint} event of a legacy stream: the message URI, resolved against the stream's URL, must be on
     * the stream's own scheme, host and port; its exact path and query then become an approved message endpoint of
     * this server until the stream ends. Anything else ends the stream.
     */
    private void endpoint(String uri) throws SseFilter.StreamException {
        String origin = request.scheme + "://" + request.target.authority();
        if (opened != null) {
            throw refuseEndpoint("the MCP event stream announced a second message endpoint");
        }
        if (streamWriter == null) {
            throw refuseEndpoint("the MCP event stream announced a message endpoint the proxy cannot follow");
        }
        URI resolved;
        try {
            resolved = new URI(origin + request.originForm).resolve(new URI(uri));
        } catch (URISyntaxException | IllegalArgumentException e) {
            throw refuseEndpoint("the MCP event stream's message endpoint is not a URI reference");
        }
        String rawScheme =
                resolved.getScheme() == null ? "" : resolved.getScheme().toLowerCase(Locale.ROOT);
        String host = resolved.getHost() == null ? "" : McpGate.canonicalHost(resolved.getHost());
        int port = resolved.getPort() > 0 ? resolved.getPort() : McpGate.defaultPort(rawScheme);
        String path = resolved.getRawPath();
        if (!rawScheme.equals(request.scheme)
                || !host.equals(request.target.host())
                || port != request.target.port()
                || resolved.getRawUserInfo() != null
                || resolved.getRawFragment() != null
                || path == null
                || !path.startsWith("/")) {
            throw refuseEndpoint("the MCP event stream's message endpoint is not on " + origin + " (it names "
                    + McpGate.printable(rawScheme + "://" + host + ":" + port) + ")");
        }
        if (hasDotSegment(path)) {
            // Clients disagree on these (WHATWG URLs remove them, java.net keeps them): the URL the proxy approves
            // might not be the one the client posts to.
            throw refuseEndpoint("the MCP event stream's message endpoint has '.' or '..' path segments");
        }
        McpServer other = request.gate.serverAt(request.scheme, request.target.host(), request.target.port(), path);
        if (other != null && other != request.server) {
            throw refuseEndpoint("the MCP event stream's message endpoint is the url of another approved server");
        }
        String pathAndQuery = resolved.getRawQuery() == null ? path : path + "?" + resolved.getRawQuery();
        opened = request.gate
                .legacy()
                .register(
                        request.server,
                        LegacyEndpoints.key(request.scheme, request.target.host(), request.target.port(), pathAndQuery),
                        streamLoop,
                        streamWriter);
        if (opened == null) {
            throw refuseEndpoint("the MCP event stream's message endpoint is taken by another open session, or "
                    + LegacyEndpoints.MAX_SESSIONS + " sessions are open");
        }
    }

    private static boolean hasDotSegment(String path) {
        for (String segment : path.split("/", -1)) {
            String s = segment.toLowerCase(Locale.ROOT).replace("%2e", ".");
            if (s.equals(".") || s.equals("..")) {
                return true;
            }
        }
        return false;
    }

    private SseFilter.StreamException refuseEndpoint(String message) {
        streamReason = McpErrors.REASON_ENDPOINT_REFUSED;
        return new SseFilter.StreamException(message);
    }

    /** One server-to-client message: list results are filtered, sampling and elicitation dropped unless allowed. */
    private Json.Obj rewrite(RpcMessage message) {
        if (message.kind() == RpcMessage.Kind.RESPONSE) {
            if (request.get) {
                return rewriteOnStream(message);
            }
            // Whatever its id, every list-shaped array of a result is filtered by its own filter: the client may have
            // a list request of that id pending on another POST, and reads the array of the list it asked for.
            Json.Obj out = message.raw();
            for (String list : ListFilter.listMethodsOf(out)) {
                out = filterList(list, out).message();
            }
            return out;
        }
        String m = message.method();
        if (("sampling/createMessage".equals(m) && !request.server.sampling())
                || ("elicitation/create".equals(m) && !request.server.elicitation())) {
            streamMessages.add(new StreamMessage(
                    AuditRecord.DENY,
                    McpErrors.REASON_SERVER_REQUEST_DROPPED,
                    new McpDetails(request.server.name(), m, null, message.idText(), -1, 0, List.of(), List.of(), 0)));
            return null;
        }
        return message.raw();
    }

    /**
     * A response on a GET stream: the answer to a POST of the legacy session (or, on Streamable HTTP, one replayed
     * on resumption). A list request the session remembers is filtered as such; so is, whatever its id, every
     * list-shaped array of a result, so that no id mismatch between the proxy and the client lets a list through
     * unfiltered. Each filtered list has a record of its own.
     */
    private Json.Obj rewriteOnStream(RpcMessage message) {
        String answered = opened == null ? null : opened.answered(message.id());
        List<String> lists = new ArrayList<>(ListFilter.listMethodsOf(message.raw()));
        if (answered != null && !lists.contains(answered)) {
            lists.add(answered);
        }
        Json.Obj out = message.raw();
        for (String list : lists) {
            ListFilter.Filtered f = filterList(list, out);
            out = f.message();
            streamMessages.add(new StreamMessage(
                    AuditRecord.ALLOW,
                    Reasons.ALLOWED,
                    new McpDetails(
                            request.server.name(),
                            list,
                            null,
                            message.idText(),
                            -1,
                            f.hidden(),
                            f.changed(),
                            f.flagged(),
                            0)));
        }
        return out;
    }

    /** Filters the {@code list} array of the answer {@code message}; the exchange's totals count it. */
    private ListFilter.Filtered filterList(String list, Json.Obj message) {
        ListFilter.Filtered f = ListFilter.filter(request.gate, request.server, list, message);
        hidden += f.hidden();
        changed = concat(changed, f.changed());
        flagged = concat(flagged, f.flagged());
        return f;
    }

    private static List<String> concat(List<String> a, List<String> b) {
        return b.isEmpty()
                ? a
                : java.util.stream.Stream.concat(a.stream(), b.stream()).toList();
    }
}

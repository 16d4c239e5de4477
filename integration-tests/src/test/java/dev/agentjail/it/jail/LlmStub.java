package dev.agentjail.it.jail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.agentjail.it.support.TestTls;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContentDecompressor;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketServerHandshaker;
import io.netty.handler.codec.http.websocketx.WebSocketServerHandshakerFactory;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.KeyManagerFactory;

/**
 * Stub LLM APIs on one HTTPS port on loopback, for real agent CLIs in the jail: the Anthropic Messages API (JSON and
 * SSE), the OpenAI Responses API (SSE, and WebSocket: {@code response.create} messages on an upgraded {@code
 * /v1/responses}), Chat Completions (JSON and SSE) and the Gemini API ({@code generateContent}, {@code
 * streamGenerateContent}, {@code countTokens}). Its certificate names the real API hosts it stands in for; the proxy
 * trusts it through the policy's {@code tls.upstream_ca} and dials it through {@code network.resolve}. Every model
 * request is answered with {@link #answer()}; every HTTP request that reaches it is kept, with its headers.
 */
final class LlmStub implements AutoCloseable {
    /** The hosts the certificate names, and so the ones a policy may route here. */
    static final List<String> HOSTS = List.of(
            "api.anthropic.com",
            "api.openai.com",
            "generativelanguage.googleapis.com",
            "openrouter.ai",
            "chatgpt.com",
            "platform.claude.com");

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int MAX_BODY = 16 * 1024 * 1024;

    /**
     * One HTTP request as the stub received it: {@code host} from the Host header (without a port), header names in
     * lower case (the last value of each), the body as text, and for a WebSocket the text messages the client sent.
     */
    record Request(
            String host,
            String method,
            String uri,
            Map<String, String> headers,
            String body,
            boolean websocket,
            List<String> messages) {
        String path() {
            return new QueryStringDecoder(uri).path();
        }

        String header(String name) {
            return headers.get(name.toLowerCase(Locale.ROOT));
        }

        /** Whether this asked a model for an answer (any of the stubbed APIs), not for settings or a health check. */
        boolean model() {
            String path = path();
            return path.endsWith("/v1/messages")
                    || path.endsWith("/responses")
                    || path.endsWith("/chat/completions")
                    || path.contains(":generateContent")
                    || path.contains(":streamGenerateContent");
        }
    }

    private final String answer;
    private final TestTls tls;
    private final EventLoopGroup group = new MultiThreadIoEventLoopGroup(2, NioIoHandler.newFactory());
    private final List<Request> requests = new CopyOnWriteArrayList<>();
    private final AtomicInteger ids = new AtomicInteger();
    private Channel server;

    private LlmStub(String answer, TestTls tls) {
        this.answer = answer;
        this.tls = tls;
    }

    /** Starts the stub on 127.0.0.1, a free port, with a certificate for {@link #HOSTS} made under {@code dir}. */
    static LlmStub start(Path dir, String answer) throws Exception {
        TestTls tls = TestTls.create(Files.createDirectories(dir), HOSTS);
        LlmStub stub = new LlmStub(answer, tls);
        stub.bind();
        return stub;
    }

    private void bind() throws Exception {
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(tls.keystore())) {
            ks.load(in, TestTls.PASSWORD.toCharArray());
        }
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(ks, TestTls.PASSWORD.toCharArray());
        SslContext ssl =
                SslContextBuilder.forServer(kmf).sslProvider(SslProvider.JDK).build();
        server = new ServerBootstrap()
                .group(group)
                .channel(NioServerSocketChannel.class)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline()
                                .addLast("tls", ssl.newHandler(ch.alloc()))
                                .addLast("http", new HttpServerCodec())
                                .addLast("decompress", new HttpContentDecompressor())
                                .addLast("aggregate", new HttpObjectAggregator(MAX_BODY))
                                .addLast("api", new Api());
                    }
                })
                .bind(new InetSocketAddress("127.0.0.1", 0))
                .sync()
                .channel();
    }

    /** The text every model request is answered with. */
    String answer() {
        return answer;
    }

    int port() {
        return ((InetSocketAddress) server.localAddress()).getPort();
    }

    /** The stub's certificate, PEM (for {@code tls.upstream_ca}; never shown to the jail). */
    Path certificatePem() {
        return tls.certificatePem();
    }

    /** Every HTTP request that reached the stub so far, in order of arrival. */
    List<Request> requests() {
        return List.copyOf(requests);
    }

    /**
     * The policy lines that send {@code hosts} (each must be one of {@link #HOSTS}) to this stub and make the proxy
     * trust its certificate: a {@code network:} and a {@code tls:} section.
     */
    String routes(List<String> hosts) {
        StringBuilder resolve = new StringBuilder();
        for (String host : hosts) {
            if (!HOSTS.contains(host)) {
                throw new IllegalArgumentException(host + " is not a host the stub's certificate names");
            }
            resolve.append(resolve.isEmpty() ? "" : ", ")
                    .append('"')
                    .append(host)
                    .append("\": \"127.0.0.1:")
                    .append(port())
                    .append('"');
        }
        return """
                network:
                  resolve: {%s}
                tls:
                  upstream_ca: ["%s"]
                """.formatted(resolve, certificatePem());
    }

    @Override
    public void close() {
        if (server != null) {
            server.close().syncUninterruptibly();
        }
        group.shutdownGracefully(0, 1, java.util.concurrent.TimeUnit.SECONDS).syncUninterruptibly();
    }

    /** Routes one aggregated request to the API it belongs to. */
    private final class Api extends SimpleChannelInboundHandler<FullHttpRequest> {
        @Override
        protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest req) throws Exception {
            Map<String, String> headers = new LinkedHashMap<>();
            req.headers().forEach(e -> headers.put(e.getKey().toLowerCase(Locale.ROOT), e.getValue()));
            String host = headers.getOrDefault("host", "").replaceFirst(":\\d+$", "");
            String body = req.content().toString(StandardCharsets.UTF_8);
            boolean upgrade = "websocket"
                    .equalsIgnoreCase(headers.getOrDefault("upgrade", "").strip());
            List<String> messages = new CopyOnWriteArrayList<>();
            requests.add(new Request(host, req.method().name(), req.uri(), headers, body, upgrade, messages));
            String path = new QueryStringDecoder(req.uri()).path();
            if (upgrade && path.endsWith("/responses")) {
                webSocket(ctx, req, messages);
                return;
            }
            JsonNode json = body.isBlank() ? JSON.createObjectNode() : parse(body);
            boolean stream = json.path("stream").asBoolean(false);
            String model = json.path("model").asText("stub-model");
            if (path.equals("/api/hello") || path.equals("/v1/oauth/hello")) {
                // Claude Code's connectivity checks (API and sign-in host) before its first-run screens.
                json(ctx, req, "{\"message\":\"hello\"}");
            } else if (path.endsWith("/v1/messages/count_tokens")) {
                json(ctx, req, "{\"input_tokens\":12}");
            } else if (path.endsWith("/v1/messages")) {
                if (stream) {
                    sse(ctx, req, anthropicEvents(model));
                } else {
                    json(ctx, req, JSON.writeValueAsString(anthropicMessage(model)));
                }
            } else if (path.endsWith("/responses") && "POST".equals(req.method().name())) {
                List<ObjectNode> events = responsesEvents(model);
                if (stream) {
                    List<String> sse = new ArrayList<>();
                    for (ObjectNode e : events) {
                        sse.add("event: " + e.path("type").asText() + "\ndata: " + JSON.writeValueAsString(e) + "\n\n");
                    }
                    sse(ctx, req, sse);
                } else {
                    json(ctx, req, JSON.writeValueAsString(events.getLast().path("response")));
                }
            } else if (path.endsWith("/chat/completions")) {
                if (stream) {
                    sse(ctx, req, chatChunks(model));
                } else {
                    json(ctx, req, JSON.writeValueAsString(chatCompletion(model)));
                }
            } else if (path.contains(":streamGenerateContent")) {
                String chunk = JSON.writeValueAsString(geminiResponse(path, json));
                if ("sse".equals(param(req, "alt"))) {
                    sse(ctx, req, List.of("data: " + chunk + "\r\n\r\n"));
                } else {
                    json(ctx, req, "[" + chunk + "]");
                }
            } else if (path.contains(":generateContent")) {
                json(ctx, req, JSON.writeValueAsString(geminiResponse(path, json)));
            } else if (path.contains(":countTokens")) {
                json(ctx, req, "{\"totalTokens\":12}");
            } else {
                notFound(ctx, req);
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }

        private void webSocket(ChannelHandlerContext ctx, FullHttpRequest req, List<String> messages) {
            String url = "wss://" + req.headers().get(HttpHeaderNames.HOST) + req.uri();
            WebSocketServerHandshaker handshaker =
                    new WebSocketServerHandshakerFactory(url, null, true, MAX_BODY).newHandshaker(req);
            if (handshaker == null) {
                WebSocketServerHandshakerFactory.sendUnsupportedVersionResponse(ctx.channel());
                return;
            }
            ctx.pipeline().remove("aggregate");
            ctx.pipeline().remove("decompress");
            ctx.pipeline().replace(this, "responses-ws", new ResponsesSocket(handshaker, messages));
            handshaker.handshake(ctx.channel(), req);
        }

        private String param(FullHttpRequest req, String name) {
            List<String> values = new QueryStringDecoder(req.uri()).parameters().get(name);
            return values == null || values.isEmpty() ? null : values.get(0);
        }
    }

    /** The Responses API over WebSocket: each {@code response.create} message is answered with the event sequence. */
    private final class ResponsesSocket extends SimpleChannelInboundHandler<WebSocketFrame> {
        private final WebSocketServerHandshaker handshaker;
        private final List<String> messages;

        ResponsesSocket(WebSocketServerHandshaker handshaker, List<String> messages) {
            this.handshaker = handshaker;
            this.messages = messages;
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, WebSocketFrame frame) throws Exception {
            if (frame instanceof io.netty.handler.codec.http.websocketx.CloseWebSocketFrame close) {
                handshaker.close(ctx.channel(), close.retain());
                return;
            }
            if (frame instanceof io.netty.handler.codec.http.websocketx.PingWebSocketFrame ping) {
                ctx.writeAndFlush(new io.netty.handler.codec.http.websocketx.PongWebSocketFrame(
                        ping.content().retain()));
                return;
            }
            if (!(frame instanceof TextWebSocketFrame text)) {
                return;
            }
            String message = text.text();
            messages.add(message);
            JsonNode json = parse(message);
            if (!"response.create".equals(json.path("type").asText())) {
                return;
            }
            for (ObjectNode event : responsesEvents(json.path("model").asText("stub-model"))) {
                ctx.write(new TextWebSocketFrame(JSON.writeValueAsString(event)));
            }
            ctx.flush();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }

    private static JsonNode parse(String body) {
        try {
            return JSON.readTree(body);
        } catch (IOException e) {
            return JSON.createObjectNode();
        }
    }

    private static void json(ChannelHandlerContext ctx, FullHttpRequest req, String body) {
        respond(ctx, req, HttpResponseStatus.OK, body);
    }

    private static void notFound(ChannelHandlerContext ctx, FullHttpRequest req) {
        respond(
                ctx,
                req,
                HttpResponseStatus.NOT_FOUND,
                "{\"error\":{\"type\":\"not_found_error\",\"message\":\"the stub has no " + req.uri() + "\"}}");
    }

    private static void respond(
            ChannelHandlerContext ctx, FullHttpRequest req, HttpResponseStatus status, String body) {
        ByteBuf content = Unpooled.copiedBuffer(body, StandardCharsets.UTF_8);
        FullHttpResponse res = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, content);
        res.headers()
                .set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON)
                .setInt(HttpHeaderNames.CONTENT_LENGTH, content.readableBytes());
        boolean keepAlive = HttpUtil.isKeepAlive(req);
        HttpUtil.setKeepAlive(res, keepAlive);
        var done = ctx.writeAndFlush(res);
        if (!keepAlive) {
            done.addListener(ChannelFutureListener.CLOSE);
        }
    }

    /** An event stream, chunked, one write per event so the client sees them arrive one by one. */
    private static void sse(ChannelHandlerContext ctx, FullHttpRequest req, List<String> events) {
        HttpResponse res = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
        res.headers()
                .set(HttpHeaderNames.CONTENT_TYPE, "text/event-stream")
                .set(HttpHeaderNames.CACHE_CONTROL, "no-cache")
                .set(HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderValues.CHUNKED);
        boolean keepAlive = HttpUtil.isKeepAlive(req);
        HttpUtil.setKeepAlive(res, keepAlive);
        ctx.write(res);
        for (String event : events) {
            ctx.writeAndFlush(new DefaultHttpContent(Unpooled.copiedBuffer(event, StandardCharsets.UTF_8)));
        }
        var done = ctx.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT);
        if (!keepAlive) {
            done.addListener(ChannelFutureListener.CLOSE);
        }
    }

    private ObjectNode anthropicMessage(String model) {
        ObjectNode m = JSON.createObjectNode();
        m.put("id", "msg_stub" + ids.incrementAndGet());
        m.put("type", "message");
        m.put("role", "assistant");
        m.put("model", model);
        m.putArray("content").addObject().put("type", "text").put("text", answer);
        m.put("stop_reason", "end_turn");
        m.putNull("stop_sequence");
        m.putObject("usage").put("input_tokens", 12).put("output_tokens", 6);
        return m;
    }

    private List<String> anthropicEvents(String model) throws IOException {
        ObjectNode message = anthropicMessage(model);
        message.putArray("content");
        message.putNull("stop_reason");
        ((ObjectNode) message.path("usage")).put("output_tokens", 1);
        List<ObjectNode> events = new ArrayList<>();
        ObjectNode start = JSON.createObjectNode().put("type", "message_start");
        start.set("message", message);
        events.add(start);
        ObjectNode blockStart =
                JSON.createObjectNode().put("type", "content_block_start").put("index", 0);
        blockStart.putObject("content_block").put("type", "text").put("text", "");
        events.add(blockStart);
        events.add(JSON.createObjectNode().put("type", "ping"));
        ObjectNode delta =
                JSON.createObjectNode().put("type", "content_block_delta").put("index", 0);
        delta.putObject("delta").put("type", "text_delta").put("text", answer);
        events.add(delta);
        events.add(JSON.createObjectNode().put("type", "content_block_stop").put("index", 0));
        ObjectNode messageDelta = JSON.createObjectNode().put("type", "message_delta");
        messageDelta.putObject("delta").put("stop_reason", "end_turn").putNull("stop_sequence");
        messageDelta.putObject("usage").put("output_tokens", 6);
        events.add(messageDelta);
        events.add(JSON.createObjectNode().put("type", "message_stop"));
        List<String> sse = new ArrayList<>();
        for (ObjectNode e : events) {
            sse.add("event: " + e.path("type").asText() + "\ndata: " + JSON.writeValueAsString(e) + "\n\n");
        }
        return sse;
    }

    /** The Responses API's events for one answer, from {@code response.created} to {@code response.completed}. */
    private List<ObjectNode> responsesEvents(String model) {
        int n = ids.incrementAndGet();
        String responseId = "resp_stub" + n;
        String itemId = "msg_stub" + n;
        long now = System.currentTimeMillis() / 1000;
        List<ObjectNode> events = new ArrayList<>();
        ObjectNode created = JSON.createObjectNode().put("type", "response.created");
        created.set("response", response(responseId, model, now, "in_progress", null));
        events.add(created);
        ObjectNode added = JSON.createObjectNode()
                .put("type", "response.output_item.added")
                .put("output_index", 0);
        added.set("item", message(itemId, "in_progress", null));
        events.add(added);
        ObjectNode partAdded = JSON.createObjectNode()
                .put("type", "response.content_part.added")
                .put("item_id", itemId)
                .put("output_index", 0)
                .put("content_index", 0);
        partAdded.set("part", outputText(""));
        events.add(partAdded);
        events.add(JSON.createObjectNode()
                .put("type", "response.output_text.delta")
                .put("item_id", itemId)
                .put("output_index", 0)
                .put("content_index", 0)
                .put("delta", answer));
        events.add(JSON.createObjectNode()
                .put("type", "response.output_text.done")
                .put("item_id", itemId)
                .put("output_index", 0)
                .put("content_index", 0)
                .put("text", answer));
        ObjectNode partDone = JSON.createObjectNode()
                .put("type", "response.content_part.done")
                .put("item_id", itemId)
                .put("output_index", 0)
                .put("content_index", 0);
        partDone.set("part", outputText(answer));
        events.add(partDone);
        ObjectNode itemDone =
                JSON.createObjectNode().put("type", "response.output_item.done").put("output_index", 0);
        itemDone.set("item", message(itemId, "completed", answer));
        events.add(itemDone);
        ObjectNode completed = JSON.createObjectNode().put("type", "response.completed");
        completed.set("response", response(responseId, model, now, "completed", message(itemId, "completed", answer)));
        events.add(completed);
        for (int i = 0; i < events.size(); i++) {
            events.get(i).put("sequence_number", i);
        }
        return events;
    }

    private static ObjectNode response(String id, String model, long created, String status, ObjectNode item) {
        ObjectNode r = JSON.createObjectNode()
                .put("id", id)
                .put("object", "response")
                .put("created_at", created)
                .put("status", status)
                .put("model", model);
        ArrayNode output = r.putArray("output");
        if (item != null) {
            output.add(item);
            ObjectNode usage = r.putObject("usage")
                    .put("input_tokens", 12)
                    .put("output_tokens", 6)
                    .put("total_tokens", 18);
            usage.putObject("input_tokens_details").put("cached_tokens", 0);
            usage.putObject("output_tokens_details").put("reasoning_tokens", 0);
        }
        return r;
    }

    private static ObjectNode message(String id, String status, String text) {
        ObjectNode m = JSON.createObjectNode()
                .put("id", id)
                .put("type", "message")
                .put("status", status)
                .put("role", "assistant");
        ArrayNode content = m.putArray("content");
        if (text != null) {
            content.add(outputText(text));
        }
        return m;
    }

    private static ObjectNode outputText(String text) {
        ObjectNode part = JSON.createObjectNode().put("type", "output_text").put("text", text);
        part.putArray("annotations");
        return part;
    }

    private ObjectNode chatCompletion(String model) {
        ObjectNode c = JSON.createObjectNode()
                .put("id", "chatcmpl-stub" + ids.incrementAndGet())
                .put("object", "chat.completion")
                .put("created", System.currentTimeMillis() / 1000)
                .put("model", model);
        ObjectNode choice = c.putArray("choices").addObject().put("index", 0).put("finish_reason", "stop");
        choice.putObject("message").put("role", "assistant").put("content", answer);
        c.putObject("usage")
                .put("prompt_tokens", 12)
                .put("completion_tokens", 6)
                .put("total_tokens", 18);
        return c;
    }

    private List<String> chatChunks(String model) throws IOException {
        String id = "chatcmpl-stub" + ids.incrementAndGet();
        long created = System.currentTimeMillis() / 1000;
        List<String> sse = new ArrayList<>();
        String[][] deltas = {{"role", "assistant", "content", ""}, {"content", answer}, {}};
        for (String[] d : deltas) {
            ObjectNode chunk = JSON.createObjectNode()
                    .put("id", id)
                    .put("object", "chat.completion.chunk")
                    .put("created", created)
                    .put("model", model);
            ObjectNode choice = chunk.putArray("choices").addObject().put("index", 0);
            ObjectNode delta = choice.putObject("delta");
            for (int i = 0; i + 1 < d.length; i += 2) {
                delta.put(d[i], d[i + 1]);
            }
            if (d.length == 0) {
                choice.put("finish_reason", "stop");
                chunk.putObject("usage")
                        .put("prompt_tokens", 12)
                        .put("completion_tokens", 6)
                        .put("total_tokens", 18);
            } else {
                choice.putNull("finish_reason");
            }
            sse.add("data: " + JSON.writeValueAsString(chunk) + "\n\n");
        }
        sse.add("data: [DONE]\n\n");
        return sse;
    }

    /**
     * A Gemini answer: {@link #answer()}, or, for a request that asks for JSON by a schema (as Gemini CLI's model router
     * does), the smallest object that schema accepts.
     */
    private ObjectNode geminiResponse(String path, JsonNode request) throws IOException {
        JsonNode config = request.path("generationConfig");
        JsonNode schema =
                config.has("responseJsonSchema") ? config.path("responseJsonSchema") : config.path("responseSchema");
        String text = "application/json".equals(config.path("responseMimeType").asText()) && schema.isObject()
                ? JSON.writeValueAsString(sample(schema))
                : answer;
        ObjectNode r = JSON.createObjectNode();
        ObjectNode candidate = r.putArray("candidates").addObject();
        ObjectNode content = candidate.putObject("content").put("role", "model");
        content.putArray("parts").addObject().put("text", text);
        candidate.put("finishReason", "STOP").put("index", 0);
        r.putObject("usageMetadata")
                .put("promptTokenCount", 12)
                .put("candidatesTokenCount", 6)
                .put("totalTokenCount", 18);
        String model = path.replaceFirst("^.*/models/", "").replaceFirst(":.*$", "");
        r.put("modelVersion", model);
        return r;
    }

    /** A value {@code schema} (JSON Schema or Gemini's upper-case variant) accepts: enums' first, minimums, {@link #answer()}. */
    private JsonNode sample(JsonNode schema) {
        if (schema.path("enum").isArray() && !schema.path("enum").isEmpty()) {
            return schema.path("enum").get(0);
        }
        return switch (schema.path("type").asText("object").toLowerCase(Locale.ROOT)) {
            case "object" -> {
                ObjectNode o = JSON.createObjectNode();
                schema.path("properties").properties().forEach(p -> o.set(p.getKey(), sample(p.getValue())));
                yield o;
            }
            case "array" -> JSON.createArrayNode();
            case "boolean" -> JSON.getNodeFactory().booleanNode(false);
            case "number", "integer" ->
                JSON.getNodeFactory().numberNode(schema.path("minimum").asInt(1));
            default -> JSON.getNodeFactory().textNode(answer);
        };
    }
}

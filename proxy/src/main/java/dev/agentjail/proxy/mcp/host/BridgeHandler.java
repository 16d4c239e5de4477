package dev.agentjail.proxy.mcp.host;

import dev.agentjail.proxy.json.Json;
import dev.agentjail.proxy.json.JsonException;
import dev.agentjail.proxy.json.JsonReader;
import dev.agentjail.proxy.mcp.McpErrors;
import dev.agentjail.proxy.mcp.RpcMessage;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Map;

/**
 * Serves Streamable HTTP for the host-side servers on one bridge connection: POST carries one JSON-RPC message to the
 * session's process (an {@code initialize} without a session starts one), GET opens the server's event stream, DELETE
 * ends the session. The proxy in front has already inspected every request.
 */
final class BridgeHandler extends SimpleChannelInboundHandler<FullHttpRequest> {
    static final String NAME = "mcp-host-bridge";

    private final Map<String, HostServer> servers;

    BridgeHandler(Map<String, HostServer> servers) {
        this.servers = servers;
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) {
        HostServer server = server(request);
        String path = request.uri();
        if (server == null || !path.equals(HostEndpoints.PATH)) {
            reply(ctx, request, BridgeResponses.empty(HttpResponseStatus.NOT_FOUND));
            return;
        }
        HttpMethod method = request.method();
        if (method.equals(HttpMethod.POST)) {
            post(ctx, request, server);
        } else if (method.equals(HttpMethod.GET)) {
            get(ctx, request, server);
        } else if (method.equals(HttpMethod.DELETE)) {
            McpSession session = existing(ctx, request, server);
            if (session != null) {
                session.loop().execute(session::end);
                reply(ctx, request, BridgeResponses.empty(HttpResponseStatus.OK));
            }
        } else {
            FullHttpResponse r = BridgeResponses.empty(HttpResponseStatus.METHOD_NOT_ALLOWED);
            r.headers().set(HttpHeaderNames.ALLOW, "GET, POST, DELETE");
            reply(ctx, request, r);
        }
    }

    private HostServer server(FullHttpRequest request) {
        String host = request.headers().get(HttpHeaderNames.HOST);
        if (host == null) {
            return null;
        }
        host = host.toLowerCase(Locale.ROOT);
        int colon = host.indexOf(':');
        if (colon >= 0) {
            if (!host.substring(colon + 1).equals(Integer.toString(HostEndpoints.PORT))) {
                return null;
            }
            host = host.substring(0, colon);
        }
        return servers.get(host);
    }

    private void post(ChannelHandlerContext ctx, FullHttpRequest request, HostServer server) {
        Json value;
        RpcMessage message;
        try {
            value = JsonReader.parse(ByteBufUtil.getBytes(request.content()));
            message = RpcMessage.of(value);
        } catch (JsonException | RpcMessage.InvalidMessage e) {
            reply(
                    ctx,
                    request,
                    BridgeResponses.json(
                            ctx.alloc(),
                            HttpResponseStatus.BAD_REQUEST,
                            McpErrors.errorBody(null, McpErrors.INVALID_REQUEST, "not one JSON-RPC message"),
                            null));
            return;
        }
        // Re-written compact: the proxy inspected one message, so the process must read exactly one line.
        byte[] line = value.text().getBytes(StandardCharsets.UTF_8);
        boolean initialize = message.kind() == RpcMessage.Kind.REQUEST && "initialize".equals(message.method());
        String sessionId = request.headers().get(BridgeResponses.SESSION_HEADER);
        boolean close = !HttpUtil.isKeepAlive(request);
        if (sessionId == null) {
            if (!initialize) {
                rpcError(ctx, request, message, HttpResponseStatus.BAD_REQUEST, "no Mcp-Session-Id: initialize first");
                return;
            }
            start(ctx.channel(), message, line, server, close);
            return;
        }
        if (initialize) {
            rpcError(ctx, request, message, HttpResponseStatus.BAD_REQUEST, "initialize inside a session");
            return;
        }
        McpSession session = existing(ctx, request, server);
        if (session == null) {
            return;
        }
        if (message.kind() == RpcMessage.Kind.REQUEST) {
            PostAnswer answer = new PostAnswer(ctx.channel(), null, close);
            session.loop().execute(() -> session.request(message, line, answer));
            return;
        }
        Channel ch = ctx.channel();
        session.loop().execute(() -> {
            HttpResponseStatus status = session.send(line) ? HttpResponseStatus.ACCEPTED : HttpResponseStatus.NOT_FOUND;
            var write = ch.writeAndFlush(BridgeResponses.empty(status));
            if (close) {
                write.addListener(ChannelFutureListener.CLOSE);
            }
        });
    }

    /** An initialize without a session: a new process, then the request goes to it like any other. */
    private static void start(Channel ch, RpcMessage message, byte[] line, HostServer server, boolean close) {
        server.open(ch.eventLoop()).whenComplete((session, error) -> {
            if (error != null) {
                String why = error instanceof HostServerException ? error.getMessage() : "cannot be started";
                byte[] body =
                        McpErrors.errorBody(message.id(), HostErrors.UNAVAILABLE, "'" + server.name() + "': " + why);
                var write = ch.writeAndFlush(BridgeResponses.json(ch.alloc(), HttpResponseStatus.OK, body, null));
                if (close) {
                    write.addListener(ChannelFutureListener.CLOSE);
                }
                return;
            }
            PostAnswer answer = new PostAnswer(ch, session.id(), close);
            session.loop().execute(() -> session.request(message, line, answer));
        });
    }

    private void get(ChannelHandlerContext ctx, FullHttpRequest request, HostServer server) {
        String accept = request.headers().get(HttpHeaderNames.ACCEPT, "");
        if (!accept.contains("text/event-stream")) {
            FullHttpResponse r = BridgeResponses.empty(HttpResponseStatus.METHOD_NOT_ALLOWED);
            r.headers().set(HttpHeaderNames.ALLOW, "POST, DELETE");
            reply(ctx, request, r);
            return;
        }
        McpSession session = existing(ctx, request, server);
        if (session == null) {
            return;
        }
        Channel ch = ctx.channel();
        session.loop().execute(() -> {
            if (session.ended() || !session.openStream(new EventStream(ch))) {
                ch.writeAndFlush(BridgeResponses.empty(HttpResponseStatus.CONFLICT))
                        .addListener(ChannelFutureListener.CLOSE);
            }
        });
    }

    /** The request's session, or null after answering 400 (no id) or 404 (unknown or ended, as the spec says). */
    private McpSession existing(ChannelHandlerContext ctx, FullHttpRequest request, HostServer server) {
        String id = request.headers().get(BridgeResponses.SESSION_HEADER);
        if (id == null) {
            reply(ctx, request, BridgeResponses.empty(HttpResponseStatus.BAD_REQUEST));
            return null;
        }
        McpSession session = server.session(id);
        if (session == null) {
            reply(ctx, request, BridgeResponses.empty(HttpResponseStatus.NOT_FOUND));
        }
        return session;
    }

    private static void rpcError(
            ChannelHandlerContext ctx,
            FullHttpRequest request,
            RpcMessage message,
            HttpResponseStatus status,
            String why) {
        byte[] body = McpErrors.errorBody(message.id(), McpErrors.INVALID_REQUEST, why);
        reply(ctx, request, BridgeResponses.json(ctx.alloc(), status, body, null));
    }

    private static void reply(ChannelHandlerContext ctx, FullHttpRequest request, FullHttpResponse response) {
        var write = ctx.writeAndFlush(response);
        if (!HttpUtil.isKeepAlive(request)) {
            write.addListener(ChannelFutureListener.CLOSE);
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        ctx.close();
    }
}

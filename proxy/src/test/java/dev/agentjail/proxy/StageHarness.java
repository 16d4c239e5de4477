package dev.agentjail.proxy;

import dev.agentjail.policy.Policy;
import dev.agentjail.policy.PolicyLoader;
import dev.agentjail.proxy.audit.MemoryAuditSink;
import dev.agentjail.proxy.http.HttpLimits;
import dev.agentjail.proxy.inspect.InjectedCredential;
import dev.agentjail.proxy.inspect.Inspection;
import dev.agentjail.proxy.inspect.Inspector;
import dev.agentjail.proxy.route.RequestRouter;
import dev.agentjail.proxy.testing.StubResolver;
import dev.agentjail.proxy.upstream.Dialer;
import dev.agentjail.proxy.upstream.OwnListeners;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.ReferenceCountUtil;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What the stage tests share: a proxy's runtime built from a policy (nothing listens, nothing is dialled), requests
 * and body parts to feed an {@code EmbeddedChannel}, and a last handler that writes down what reached it.
 */
final class StageHarness {
    final MemoryAuditSink audit = new MemoryAuditSink();
    final ProxyRuntime runtime;

    StageHarness(String policyYaml) {
        this(policyYaml, List.of());
    }

    StageHarness(String policyYaml, List<InjectedCredential> credentials) {
        Policy policy;
        try {
            policy = PolicyLoader.parse(policyYaml, "stage-policy.yaml");
        } catch (dev.agentjail.policy.PolicyException e) {
            throw new IllegalArgumentException(e);
        }
        ProxyConfig config = new ProxyConfig(
                policy.network(),
                "stage-session",
                audit,
                new StubResolver(),
                HttpLimits.defaults(),
                Timeouts.defaults(),
                Clock.systemUTC(),
                1,
                null,
                new Inspection(policy.redaction(), Map.of(), credentials),
                policy.mcp(),
                Map.of());
        runtime = new ProxyRuntime(
                config,
                new RequestRouter(config.network(), null),
                new Dialer(
                        config.network(),
                        config.resolver(),
                        NioSocketChannel.class,
                        Duration.ofSeconds(1),
                        null,
                        new OwnListeners()),
                Inspector.of(config.inspection()));
    }

    RequestIntake intake() {
        return new RequestIntake(runtime, runtime.router());
    }

    /** The intake of a connection intercepted for {@code tunnel}: its requests are HTTPS, verified upstream. */
    RequestIntake interceptedIntake(dev.agentjail.policy.Target tunnel) {
        return new RequestIntake(
                runtime,
                new dev.agentjail.proxy.route.TunnelRouter(runtime.config().network(), tunnel));
    }

    static HttpRequest post(String url, String type) {
        HttpRequest r = new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST, url);
        r.headers().set("Host", url.replaceFirst("^https?://", "").replaceFirst("/.*", ""));
        r.headers().set("Content-Type", type);
        r.headers().set("Transfer-Encoding", "chunked");
        return r;
    }

    static HttpRequest get(String url) {
        HttpRequest r = new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET, url);
        r.headers().set("Host", url.replaceFirst("^https?://", "").replaceFirst("/.*", ""));
        return r;
    }

    static HttpContent part(String text) {
        return new DefaultHttpContent(Unpooled.copiedBuffer(text, StandardCharsets.UTF_8));
    }

    static HttpContent last(String text) {
        return new DefaultLastHttpContent(Unpooled.copiedBuffer(text, StandardCharsets.UTF_8));
    }

    /** Writes down what reaches the end of the pipeline: body parts as text, everything else as it is. */
    static final class Collector extends ChannelInboundHandlerAdapter {
        final List<Object> seen = new ArrayList<>();
        final List<Object> events = new ArrayList<>();

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (msg instanceof HttpContent c) {
                String text = c.content().toString(StandardCharsets.UTF_8);
                seen.add(c instanceof io.netty.handler.codec.http.LastHttpContent ? "last:" + text : "part:" + text);
                ReferenceCountUtil.release(msg);
                return;
            }
            seen.add(msg);
            ReferenceCountUtil.release(msg);
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            events.add(evt);
        }

        /** The body parts seen, as text, in order. */
        List<String> parts() {
            return seen.stream()
                    .filter(String.class::isInstance)
                    .map(String.class::cast)
                    .toList();
        }

        <T> List<T> of(Class<T> type) {
            return seen.stream().filter(type::isInstance).map(type::cast).toList();
        }
    }
}

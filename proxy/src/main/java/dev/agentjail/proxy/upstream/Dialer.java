package dev.agentjail.proxy.upstream;

import dev.agentjail.policy.HostKind;
import dev.agentjail.policy.NetworkPolicy;
import dev.agentjail.policy.Target;
import dev.agentjail.proxy.ProxyReasons;
import dev.agentjail.proxy.mcp.host.HostBridge;
import dev.agentjail.proxy.mcp.host.HostEndpoints;
import dev.agentjail.proxy.mcp.host.HostErrors;
import dev.agentjail.proxy.net.AddressClass;
import dev.agentjail.proxy.net.AddressClassifier;
import dev.agentjail.proxy.net.HostResolver;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelOption;
import io.netty.channel.ConnectTimeoutException;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.util.concurrent.Promise;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletionException;

/**
 * Resolves a canonical target once, classifies every address (the SSRF guard), and connects to
 * exactly an address that passed, on the caller's event loop.
 *
 * <p>Addresses come from, in order: the target itself when it is an IP literal, the policy's pinned
 * {@code resolve} entries, or DNS. An address that is not public is dialled only when the policy
 * allowed it explicitly. An address that would reach one of the proxy's own listeners ({@link OwnListeners}) is
 * never dialled, allowed or not.
 *
 * <p>Names under {@value HostEndpoints#DOMAIN} are never resolved: a configured host-side MCP server's name is
 * connected to the proxy's own bridge, any other is refused.
 */
public final class Dialer {
    private final NetworkPolicy network;
    private final HostResolver resolver;
    private final Class<? extends Channel> channelClass;
    private final Duration connectTimeout;
    private final HostBridge bridge;
    private final OwnListeners self;

    /**
     * {@code bridge}: where host-side MCP servers are reached (null: none are configured); {@code self}: the
     * proxy's own listeners, never dialled.
     */
    public Dialer(
            NetworkPolicy network,
            HostResolver resolver,
            Class<? extends Channel> channelClass,
            Duration connectTimeout,
            HostBridge bridge,
            OwnListeners self) {
        this.network = network;
        this.resolver = resolver;
        this.channelClass = channelClass;
        this.connectTimeout = connectTimeout;
        this.bridge = bridge;
        this.self = self;
    }

    /** Dials {@code target}; the promise always completes on {@code loop}. */
    public Promise<DialOutcome> dial(EventLoop loop, Target target, ChannelHandler initializer) {
        Promise<DialOutcome> promise = loop.newPromise();
        if (HostEndpoints.reserved(target.host())) {
            if (bridge != null && bridge.serves(target)) {
                bridge.connect(loop, initializer, promise);
            } else {
                promise.trySuccess(new DialOutcome.Failed(
                        HttpResponseStatus.BAD_GATEWAY,
                        HostErrors.REASON_UNKNOWN,
                        "no host-side MCP server at " + target.authority(),
                        null));
            }
            return promise;
        }
        Optional<NetworkPolicy.Pin> pin =
                target.kind() == HostKind.DNS ? network.pin(target.host(), target.port()) : Optional.empty();
        if (target.kind() != HostKind.DNS) {
            InetAddress literal = literal(target);
            checkAndConnect(loop, target, List.of(literal), target.port(), initializer, promise);
        } else if (pin.isPresent()) {
            // network.resolve: the pinned addresses, on the pinned port if the entry names one (like curl's
            // --connect-to).
            checkAndConnect(loop, target, pin.get().addresses(), pin.get().port(), initializer, promise);
        } else {
            resolver.resolve(target.host())
                    .whenComplete((addresses, error) -> loop.execute(() -> {
                        if (error != null) {
                            Throwable cause = error instanceof CompletionException ? error.getCause() : error;
                            String detail = cause instanceof UnknownHostException
                                    ? "failed to resolve " + target.host()
                                    : "failed to resolve " + target.host() + ": "
                                            + cause.getClass().getSimpleName();
                            promise.trySuccess(new DialOutcome.Failed(
                                    HttpResponseStatus.BAD_GATEWAY, ProxyReasons.DNS_FAILURE, detail, null));
                        } else {
                            checkAndConnect(loop, target, addresses, target.port(), initializer, promise);
                        }
                    }));
        }
        return promise;
    }

    private void checkAndConnect(
            EventLoop loop,
            Target target,
            List<InetAddress> addresses,
            int port,
            ChannelHandler initializer,
            Promise<DialOutcome> promise) {
        List<InetAddress> allowed = new ArrayList<>(addresses.size());
        DialOutcome.Refused firstRefusal = null;
        for (InetAddress address : addresses) {
            if (self.reaches(address, port)) {
                // Checked before the SSRF guard and its explicit allowances: no pin or allowed IP makes it dialable.
                if (firstRefusal == null) {
                    firstRefusal = new DialOutcome.Refused(
                            ProxyReasons.SELF_CONNECTION,
                            address,
                            target.host() + " would reach the proxy's own listener on port " + port);
                }
                continue;
            }
            AddressClass cls = AddressClassifier.classify(address);
            if (cls.dialable() || network.explicitlyAllows(target.host(), target.port(), address)) {
                allowed.add(address);
            } else if (firstRefusal == null) {
                firstRefusal = new DialOutcome.Refused(cls.reason(), address);
            }
        }
        if (allowed.isEmpty()) {
            promise.trySuccess(
                    firstRefusal != null
                            ? firstRefusal
                            : new DialOutcome.Failed(
                                    HttpResponseStatus.BAD_GATEWAY,
                                    ProxyReasons.DNS_FAILURE,
                                    "no address for " + target.host(),
                                    null));
            return;
        }
        connect(loop, target, allowed, port, 0, initializer, promise);
    }

    private void connect(
            EventLoop loop,
            Target target,
            List<InetAddress> candidates,
            int port,
            int index,
            ChannelHandler initializer,
            Promise<DialOutcome> promise) {
        InetAddress address = candidates.get(index);
        ChannelFuture f = new Bootstrap()
                .group(loop)
                .channel(channelClass)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) connectTimeout.toMillis())
                .option(ChannelOption.AUTO_READ, false)
                .handler(initializer)
                .connect(new InetSocketAddress(address, port));
        f.addListener(done -> {
            if (done.isSuccess()) {
                promise.trySuccess(new DialOutcome.Connected(f.channel(), address));
            } else if (index + 1 < candidates.size()) {
                connect(loop, target, candidates, port, index + 1, initializer, promise);
            } else {
                Throwable cause = done.cause();
                boolean timeout = cause instanceof ConnectTimeoutException;
                promise.trySuccess(new DialOutcome.Failed(
                        timeout ? HttpResponseStatus.GATEWAY_TIMEOUT : HttpResponseStatus.BAD_GATEWAY,
                        timeout ? ProxyReasons.UPSTREAM_TIMEOUT : ProxyReasons.UPSTREAM_CONNECT_FAILED,
                        "cannot connect to " + target.authority()
                                + (timeout ? ": timed out" : ": connection refused or unreachable"),
                        address));
            }
        });
    }

    private static InetAddress literal(Target target) {
        try {
            // The host is a canonical IP literal, so this parses without any lookup.
            return InetAddress.getByName(target.host());
        } catch (UnknownHostException e) {
            throw new IllegalStateException("canonical IP literal did not parse: " + target.host(), e);
        }
    }
}

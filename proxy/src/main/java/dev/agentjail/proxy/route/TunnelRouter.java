package dev.agentjail.proxy.route;

import dev.agentjail.policy.Authorities;
import dev.agentjail.policy.Decision;
import dev.agentjail.policy.MalformedTargetException;
import dev.agentjail.policy.NetworkPolicy;
import dev.agentjail.policy.Target;
import dev.agentjail.proxy.ProxyReasons;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.util.List;

/**
 * Routes the requests inside one intercepted CONNECT tunnel: each names the tunnel's origin in its
 * Host header (no domain fronting), and each is decided again on its own.
 */
public final class TunnelRouter implements Router {
    private static final String HTTPS_PREFIX = "https://";

    private final NetworkPolicy network;
    private final Target tunnel;

    public TunnelRouter(NetworkPolicy network, Target tunnel) {
        this.network = network;
        this.tunnel = tunnel;
    }

    @Override
    public Routing route(HttpRequest request) {
        if (request.method().equals(HttpMethod.CONNECT)) {
            return new Routing.Rejected(
                    HttpResponseStatus.BAD_REQUEST, ProxyReasons.BAD_TARGET, "CONNECT inside an intercepted tunnel");
        }
        String uri = request.uri();
        String originForm;
        if (uri.startsWith("/")) {
            originForm = uri;
        } else if (uri.regionMatches(true, 0, HTTPS_PREFIX, 0, HTTPS_PREFIX.length())) {
            int end = authorityEnd(uri, HTTPS_PREFIX.length());
            try {
                Target named = Authorities.parseAuthority(uri.substring(HTTPS_PREFIX.length(), end), 443);
                if (!named.equals(tunnel)) {
                    return mismatch(named, "request target names " + named.authority());
                }
            } catch (MalformedTargetException e) {
                return new Routing.Rejected(HttpResponseStatus.BAD_REQUEST, ProxyReasons.BAD_TARGET, e.getMessage());
            }
            originForm = end == uri.length() ? "/" : uri.substring(end);
            if (originForm.charAt(0) == '?') {
                originForm = "/" + originForm;
            }
        } else {
            return new Routing.Rejected(
                    HttpResponseStatus.BAD_REQUEST,
                    ProxyReasons.BAD_TARGET,
                    "inside a tunnel a request target is a path (origin-form)");
        }
        List<String> hosts = request.headers().getAll("host");
        if (hosts.size() != 1) {
            return new Routing.Rejected(
                    HttpResponseStatus.BAD_REQUEST,
                    ProxyReasons.BAD_HOST_HEADER,
                    hosts.isEmpty() ? "missing Host header" : "more than one Host header");
        }
        Target host;
        try {
            host = Authorities.parseAuthority(hosts.get(0), 443);
        } catch (MalformedTargetException e) {
            return new Routing.Rejected(
                    HttpResponseStatus.BAD_REQUEST,
                    ProxyReasons.BAD_HOST_HEADER,
                    "invalid Host header: " + e.getMessage());
        }
        if (!host.equals(tunnel)) {
            return mismatch(host, "Host " + host.authority() + " is not the tunnel's host " + tunnel.authority());
        }
        return new Routing.Routed(tunnel, "https", originForm, false, network.decide(tunnel, 443));
    }

    @Override
    public boolean closeOnDeny() {
        return true;
    }

    /** Another origin asked for through this tunnel: denied and recorded under the name it asked for. */
    private Routing mismatch(Target asked, String detail) {
        return new Routing.Routed(
                asked, "https", null, false, Decision.deny(ProxyReasons.TUNNEL_HOST_MISMATCH, "-"), detail);
    }

    private static int authorityEnd(String s, int from) {
        for (int i = from; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '/' || c == '?') {
                return i;
            }
        }
        return s.length();
    }
}

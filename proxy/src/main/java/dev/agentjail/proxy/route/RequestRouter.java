package dev.agentjail.proxy.route;

import dev.agentjail.policy.Authorities;
import dev.agentjail.policy.Decision;
import dev.agentjail.policy.MalformedTargetException;
import dev.agentjail.policy.NetworkPolicy;
import dev.agentjail.policy.Reasons;
import dev.agentjail.policy.Target;
import dev.agentjail.proxy.ProxyReasons;
import dev.agentjail.proxy.mcp.host.HostBridge;
import dev.agentjail.proxy.mcp.host.HostEndpoints;
import dev.agentjail.proxy.mcp.host.HostErrors;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import java.util.List;

/**
 * Reads a forward-proxy request's target (authority-form for CONNECT, absolute-form {@code http://}
 * otherwise), canonicalises it once, checks the Host header against it and asks the policy.
 *
 * <p>Names under {@value HostEndpoints#DOMAIN} are the proxy's own: a configured host-side MCP server's endpoint is
 * allowed as plain HTTP (unless a deny entry covers it), anything else there is refused.
 */
public final class RequestRouter implements Router {
    private static final String HTTP_PREFIX = "http://";

    private final NetworkPolicy network;
    private final HostBridge bridge;

    /** {@code bridge}: the host-side MCP servers (null: none are configured). */
    public RequestRouter(NetworkPolicy network, HostBridge bridge) {
        this.network = network;
        this.bridge = bridge;
    }

    @Override
    public Routing route(HttpRequest request) {
        try {
            boolean connect = request.method().equals(HttpMethod.CONNECT);
            Target target;
            String originForm;
            String scheme;
            int defaultPort;
            if (connect) {
                target = Authorities.parseConnectTarget(request.uri());
                originForm = null;
                scheme = "https";
                defaultPort = 443;
            } else {
                String uri = request.uri();
                if (!uri.regionMatches(true, 0, HTTP_PREFIX, 0, HTTP_PREFIX.length())) {
                    return rejectForm(uri);
                }
                int authorityEnd = indexOfAny(uri, HTTP_PREFIX.length());
                String authority = uri.substring(HTTP_PREFIX.length(), authorityEnd);
                target = Authorities.parseAuthority(authority, 80);
                originForm = authorityEnd == uri.length() ? "/" : uri.substring(authorityEnd);
                if (originForm.charAt(0) == '?') {
                    originForm = "/" + originForm;
                }
                scheme = "http";
                defaultPort = 80;
            }
            Routing.Rejected hostProblem = checkHostHeader(request, target, defaultPort);
            if (hostProblem != null) {
                return hostProblem;
            }
            if (HostEndpoints.reserved(target.host())) {
                return hostServer(target, scheme, originForm, connect);
            }
            return new Routing.Routed(target, scheme, originForm, connect, network.decide(target, defaultPort));
        } catch (MalformedTargetException e) {
            return new Routing.Rejected(HttpResponseStatus.BAD_REQUEST, ProxyReasons.BAD_TARGET, e.getMessage());
        }
    }

    /** A request for a host-side MCP server's endpoint: plain HTTP to a configured server only. */
    private Routing hostServer(Target target, String scheme, String originForm, boolean connect) {
        String name = bridge == null ? null : bridge.serverName(target.host());
        String problem = null;
        if (name == null) {
            problem = "no host-side MCP server is configured as " + target.host();
        } else if (connect || target.port() != HostEndpoints.PORT) {
            problem = "a host-side MCP server is reached as " + HostEndpoints.url(name) + " (plain HTTP, no CONNECT)";
        }
        if (problem != null) {
            return new Routing.Routed(
                    target, scheme, originForm, connect, Decision.deny(HostErrors.REASON_UNKNOWN, "-"), problem);
        }
        Decision network = this.network.decide(target, HostEndpoints.PORT);
        if (!network.allowed() && network.reason().equals(Reasons.DENIED_BY_RULE)) {
            // A deny entry covering the reserved names wins here too.
            return new Routing.Routed(target, scheme, originForm, false, network);
        }
        return new Routing.Routed(
                target, scheme, originForm, false, Decision.allow(Reasons.ALLOWED, "mcp.servers[" + name + "]"));
    }

    @Override
    public boolean closeOnDeny() {
        return false;
    }

    private static Routing rejectForm(String uri) {
        if (uri.startsWith("/") || uri.equals("*")) {
            return new Routing.Rejected(
                    HttpResponseStatus.BAD_REQUEST,
                    ProxyReasons.BAD_TARGET,
                    "origin-form request: this is a forward proxy, send absolute-form (http://host/path)");
        }
        if (uri.regionMatches(true, 0, "https://", 0, 8)) {
            return new Routing.Rejected(
                    HttpResponseStatus.BAD_REQUEST,
                    ProxyReasons.BAD_TARGET,
                    "absolute-form https:// is not supported: use CONNECT");
        }
        return new Routing.Rejected(
                HttpResponseStatus.BAD_REQUEST,
                ProxyReasons.BAD_TARGET,
                "only http:// targets and CONNECT are proxied");
    }

    /** The Host header must be present once (HTTP/1.1) and name the same canonical target. */
    static Routing.Rejected checkHostHeader(HttpRequest request, Target target, int defaultPort)
            throws MalformedTargetException {
        List<String> hosts = request.headers().getAll("host");
        if (hosts.isEmpty()) {
            if (request.protocolVersion().equals(HttpVersion.HTTP_1_0)) {
                return null;
            }
            return new Routing.Rejected(
                    HttpResponseStatus.BAD_REQUEST, ProxyReasons.BAD_HOST_HEADER, "missing Host header");
        }
        if (hosts.size() > 1) {
            return new Routing.Rejected(
                    HttpResponseStatus.BAD_REQUEST, ProxyReasons.BAD_HOST_HEADER, "more than one Host header");
        }
        Target host;
        try {
            host = Authorities.parseAuthority(hosts.get(0), defaultPort);
        } catch (MalformedTargetException e) {
            return new Routing.Rejected(
                    HttpResponseStatus.BAD_REQUEST,
                    ProxyReasons.BAD_HOST_HEADER,
                    "invalid Host header: " + e.getMessage());
        }
        if (!host.equals(target)) {
            return new Routing.Rejected(
                    HttpResponseStatus.BAD_REQUEST,
                    ProxyReasons.BAD_HOST_HEADER,
                    "Host header does not match the request target");
        }
        return null;
    }

    private static int indexOfAny(String s, int from) {
        for (int i = from; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '/' || c == '?') {
                return i;
            }
        }
        return s.length();
    }
}

package dev.agentjail.proxy;

import dev.agentjail.policy.Target;
import dev.agentjail.proxy.audit.AuditSink;
import dev.agentjail.proxy.inspect.Inspector;
import dev.agentjail.proxy.mcp.McpGate;
import dev.agentjail.proxy.route.RequestRouter;
import dev.agentjail.proxy.upstream.Dialer;
import java.time.Clock;

/** What every connection of one proxy shares: its configuration and the stateless helpers built from it. */
record ProxyRuntime(ProxyConfig config, RequestRouter router, Dialer dialer, Inspector inspector, McpGate mcp) {
    ProxyRuntime(ProxyConfig config, RequestRouter router, Dialer dialer, Inspector inspector) {
        this(config, router, dialer, inspector, McpGate.of(config.mcp()));
    }

    String session() {
        return config.session();
    }

    AuditSink audit() {
        return config.audit();
    }

    Clock clock() {
        return config.clock();
    }

    Timeouts timeouts() {
        return config.timeouts();
    }

    /** Whether an allowed CONNECT to {@code target} is opened and inspected rather than relayed as bytes. */
    boolean intercepts(Target target) {
        return config.interception() != null && !config.network().tunnelled(target, 443);
    }

    /** Whether the policy's {@code network.tunnel} relays {@code target} uninspected (then only TLS to its name). */
    boolean tunnelled(Target target) {
        return config.network().tunnelled(target, 443);
    }
}

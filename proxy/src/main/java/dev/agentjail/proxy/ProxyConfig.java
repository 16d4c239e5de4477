package dev.agentjail.proxy;

import dev.agentjail.policy.McpPolicy;
import dev.agentjail.policy.NetworkPolicy;
import dev.agentjail.proxy.audit.AuditSink;
import dev.agentjail.proxy.http.HttpLimits;
import dev.agentjail.proxy.inspect.Inspection;
import dev.agentjail.proxy.net.HostResolver;
import dev.agentjail.proxy.tls.Interception;
import java.time.Clock;
import java.util.Map;
import java.util.Objects;

/**
 * Everything one proxy instance needs, injected: the rules, the resolver, the audit sink and the clocks.
 * {@code interception} is null when CONNECT tunnels are relayed unopened; {@code inspection} says what
 * is looked for in the requests the proxy can read, and {@code mcp} which MCP servers and tools are approved.
 * {@code hostEnv} is the host environment that host-side MCP servers ({@code mcp.servers[].command}) take their
 * minimal environment and {@code ${NAME}} references from.
 */
public record ProxyConfig(
        NetworkPolicy network,
        String session,
        AuditSink audit,
        HostResolver resolver,
        HttpLimits limits,
        Timeouts timeouts,
        Clock clock,
        int ioThreads,
        Interception interception,
        Inspection inspection,
        McpPolicy mcp,
        Map<String, String> hostEnv) {
    /** A proxy that relays every allowed CONNECT as an opaque tunnel (no interception). */
    public ProxyConfig(
            NetworkPolicy network,
            String session,
            AuditSink audit,
            HostResolver resolver,
            HttpLimits limits,
            Timeouts timeouts,
            Clock clock,
            int ioThreads) {
        this(
                network,
                session,
                audit,
                resolver,
                limits,
                timeouts,
                clock,
                ioThreads,
                null,
                Inspection.defaults(),
                McpPolicy.none(),
                Map.of());
    }

    public ProxyConfig {
        Objects.requireNonNull(network, "network");
        Objects.requireNonNull(session, "session");
        Objects.requireNonNull(audit, "audit");
        Objects.requireNonNull(resolver, "resolver");
        Objects.requireNonNull(limits, "limits");
        Objects.requireNonNull(timeouts, "timeouts");
        Objects.requireNonNull(clock, "clock");
        Objects.requireNonNull(inspection, "inspection");
        Objects.requireNonNull(mcp, "mcp");
        hostEnv = Map.copyOf(hostEnv);
        if (ioThreads < 1) {
            throw new IllegalArgumentException("ioThreads must be >= 1");
        }
    }
}

package dev.agentjail.proxy;

import dev.agentjail.policy.NetworkPolicy;
import dev.agentjail.proxy.audit.AuditSink;
import dev.agentjail.proxy.http.HttpLimits;
import dev.agentjail.proxy.net.HostResolver;
import java.time.Clock;
import java.util.Objects;

/** Everything one proxy instance needs, injected: the rules, the resolver, the audit sink and the clocks. */
public record ProxyConfig(
        NetworkPolicy network,
        String session,
        AuditSink audit,
        HostResolver resolver,
        HttpLimits limits,
        Timeouts timeouts,
        Clock clock,
        int ioThreads) {
    public ProxyConfig {
        Objects.requireNonNull(network, "network");
        Objects.requireNonNull(session, "session");
        Objects.requireNonNull(audit, "audit");
        Objects.requireNonNull(resolver, "resolver");
        Objects.requireNonNull(limits, "limits");
        Objects.requireNonNull(timeouts, "timeouts");
        Objects.requireNonNull(clock, "clock");
        if (ioThreads < 1) {
            throw new IllegalArgumentException("ioThreads must be >= 1");
        }
    }
}

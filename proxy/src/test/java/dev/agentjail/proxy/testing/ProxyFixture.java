package dev.agentjail.proxy.testing;

import dev.agentjail.policy.Policy;
import dev.agentjail.policy.PolicyLoader;
import dev.agentjail.proxy.ProxyConfig;
import dev.agentjail.proxy.ProxyServer;
import dev.agentjail.proxy.Timeouts;
import dev.agentjail.proxy.audit.AuditRecord;
import dev.agentjail.proxy.audit.AuditSink;
import dev.agentjail.proxy.audit.MemoryAuditSink;
import dev.agentjail.proxy.http.HttpLimits;
import dev.agentjail.proxy.inspect.InjectedCredential;
import dev.agentjail.proxy.inspect.Inspection;
import dev.agentjail.proxy.net.HostResolver;
import dev.agentjail.proxy.net.SystemResolver;
import dev.agentjail.proxy.tls.Interception;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/** A proxy on a free loopback port with an in-memory audit sink, for tests over real sockets. */
public final class ProxyFixture implements AutoCloseable {
    private final ProxyServer server;
    private final InetSocketAddress address;
    private final AuditSink audit;
    private final ExecutorService dns;

    private ProxyFixture(ProxyServer server, InetSocketAddress address, AuditSink audit, ExecutorService dns) {
        this.server = server;
        this.address = address;
        this.audit = audit;
        this.dns = dns;
    }

    public static ProxyFixture start(String policyYaml) throws Exception {
        return start(policyYaml, new MemoryAuditSink(), null, Timeouts.defaults());
    }

    /** Starts a proxy; a null resolver means the system resolver. */
    public static ProxyFixture start(String policyYaml, AuditSink audit, HostResolver resolver, Timeouts timeouts)
            throws Exception {
        return start(policyYaml, audit, resolver, timeouts, null);
    }

    /** Starts a proxy that intercepts allowed CONNECTs with {@code interception} (null: tunnels only). */
    public static ProxyFixture start(
            String policyYaml, AuditSink audit, HostResolver resolver, Timeouts timeouts, Interception interception)
            throws Exception {
        return start(policyYaml, audit, resolver, timeouts, interception, Map.of(), List.of());
    }

    /**
     * Starts a proxy that intercepts with {@code interception} (null: tunnels only) and inspects with the policy's
     * redaction rules plus {@code knownValues} and {@code credentials}.
     */
    public static ProxyFixture start(
            String policyYaml,
            AuditSink audit,
            HostResolver resolver,
            Timeouts timeouts,
            Interception interception,
            Map<String, String> knownValues,
            List<InjectedCredential> credentials)
            throws Exception {
        return start(
                policyYaml,
                audit,
                resolver,
                timeouts,
                interception,
                knownValues,
                credentials,
                new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
    }

    /**
     * Starts a proxy on 127.0.0.1:{@code port}, a port the test picked so that its policy can name the proxy's own
     * listener (self-connection tests).
     */
    public static ProxyFixture startOn(int port, String policyYaml) throws Exception {
        return start(
                policyYaml,
                new MemoryAuditSink(),
                null,
                Timeouts.defaults(),
                null,
                Map.of(),
                List.of(),
                new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
    }

    private static ProxyFixture start(
            String policyYaml,
            AuditSink audit,
            HostResolver resolver,
            Timeouts timeouts,
            Interception interception,
            Map<String, String> knownValues,
            List<InjectedCredential> credentials,
            InetSocketAddress bind)
            throws Exception {
        Policy policy = PolicyLoader.parse(policyYaml, "test-policy.yaml");
        ExecutorService dns = Executors.newFixedThreadPool(2);
        ProxyConfig config = new ProxyConfig(
                policy.network(),
                "test-session",
                audit,
                resolver != null ? resolver : new SystemResolver(dns),
                HttpLimits.defaults(),
                timeouts,
                Clock.systemUTC(),
                2,
                interception,
                new Inspection(policy.redaction(), knownValues, credentials),
                policy.mcp(),
                Map.of());
        ProxyServer server = new ProxyServer(config);
        InetSocketAddress bound;
        try {
            bound = server.listen(bind);
        } catch (Exception e) {
            server.close();
            dns.shutdownNow();
            throw e;
        }
        return new ProxyFixture(server, bound, audit, dns);
    }

    /** Adds a listener on {@code address} to the running proxy and returns the bound address. */
    public InetSocketAddress listen(InetSocketAddress address) throws InterruptedException {
        return server.listen(address);
    }

    public int port() {
        return address.getPort();
    }

    public InetSocketAddress address() {
        return address;
    }

    public AuditSink audit() {
        return audit;
    }

    /** The records so far (the sink must be a {@link MemoryAuditSink}). */
    public List<AuditRecord> records() {
        return ((MemoryAuditSink) audit).records();
    }

    @Override
    public void close() {
        server.close();
        dns.shutdownNow();
    }
}

package dev.agentjail.proxy.testing;

import dev.agentjail.proxy.Timeouts;
import dev.agentjail.proxy.audit.AuditRecord;
import dev.agentjail.proxy.audit.MemoryAuditSink;
import java.io.IOException;
import java.time.Duration;
import java.util.List;

/**
 * The corpus test policy on a real proxy: {@code allowed.test}, {@code api.allowed.test} and {@code *.wild.test} as in
 * the corpus, plus names that lead to a {@link RecordingUpstream} so that an allowed request, or a refused one that
 * slipped through, is seen there:
 *
 * <ul>
 *   <li>{@code upstream.test:<port>}, pinned to 127.0.0.1 by {@code resolve}: the allowed way to the recorder;
 *   <li>{@code *.rebind.test:<port>}, resolved by the {@link StubResolver}: a name the policy allows whose address the
 *       SSRF guard must judge (the recorder listens on 127.0.0.1, so a broken guard would reach it);
 *   <li>{@code blocked.rebind.test:<port>}, denied by a rule but pinned to 127.0.0.1: a broken deny would reach it;
 *   <li>{@code internal.wild.test}, denied by a rule inside the allowed wildcard.
 * </ul>
 */
public final class CorpusProxy implements AutoCloseable {
    public static final Duration WAIT = Duration.ofSeconds(5);

    private static final String POLICY = """
            version: 1
            network:
              allow: [allowed.test, api.allowed.test, "*.wild.test", "upstream.test:%1$d", "*.rebind.test:%1$d"]
              deny: [internal.wild.test, "blocked.rebind.test:%1$d"]
              resolve: {upstream.test: 127.0.0.1, blocked.rebind.test: 127.0.0.1}
            """;

    public final RecordingUpstream upstream;
    public final StubResolver dns = new StubResolver();
    public final ProxyFixture proxy;

    private CorpusProxy(RecordingUpstream upstream, String policy, Timeouts timeouts) throws Exception {
        this.upstream = upstream;
        this.proxy = ProxyFixture.start(policy, new MemoryAuditSink(), dns, timeouts);
    }

    public static CorpusProxy start() throws Exception {
        return start(RecordingUpstream.start(), Timeouts.defaults());
    }

    public static CorpusProxy start(RecordingUpstream upstream) throws Exception {
        return start(upstream, Timeouts.defaults());
    }

    public static CorpusProxy start(RecordingUpstream upstream, Timeouts timeouts) throws Exception {
        return new CorpusProxy(upstream, POLICY.formatted(upstream.port()), timeouts);
    }

    /** A proxy with its own policy text; the recorder still listens but no policy name leads to it unless written. */
    public static CorpusProxy startWithPolicy(String policy) throws Exception {
        return new CorpusProxy(RecordingUpstream.start(), policy, Timeouts.defaults());
    }

    /** Timeouts with the given header, body and idle bounds and generous others. */
    public static Timeouts timeouts(Duration header, Duration body, Duration idle) {
        return new Timeouts(header, body, idle, Duration.ofSeconds(5), Duration.ofSeconds(10), Duration.ofSeconds(10));
    }

    /** {@code upstream.test:<recorder port>}, the allowed authority that reaches the recorder. */
    public String up() {
        return "upstream.test:" + upstream.port();
    }

    /** A plain GET for {@code http://<authority><path>} with a matching Host header. */
    public static String get(String authority, String path) {
        return "GET http://" + authority + path + " HTTP/1.1\r\nHost: " + authority + "\r\n\r\n";
    }

    /** A CONNECT for {@code authority} with a matching Host header. */
    public static String connect(String authority) {
        return "CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n\r\n";
    }

    public RawClient client() throws IOException {
        return RawClient.connect(proxy.address());
    }

    /** Sends {@code request} on a fresh connection and returns the first response. */
    public RawResponse exchange(String request) throws IOException {
        try (RawClient client = client()) {
            client.send(request);
            return client.readResponse(WAIT);
        }
    }

    /** The request records (one per request); tunnel-close records are left out, see {@link #tunnelCloses()}. */
    public List<AuditRecord> records() {
        return proxy.records().stream()
                .filter(r -> AuditRecord.KIND_REQUEST.equals(r.kind()))
                .toList();
    }

    /** The tunnel-close records: one per CONNECT tunnel that has ended, with its byte counts. */
    public List<AuditRecord> tunnelCloses() {
        return proxy.records().stream()
                .filter(r -> AuditRecord.KIND_TUNNEL_CLOSE.equals(r.kind()))
                .toList();
    }

    /**
     * Waits until {@code count} records exist (some are written when a connection or tunnel ends), then fails unless
     * there are exactly that many.
     */
    public List<AuditRecord> awaitRecords(int count) throws InterruptedException {
        RecordingUpstream.await(() -> records().size() >= count, WAIT);
        Thread.sleep(50);
        List<AuditRecord> records = records();
        if (records.size() != count) {
            throw new AssertionError("expected " + count + " audit record(s), got " + records.size() + ": " + records);
        }
        return records;
    }

    /** The one audit record this proxy wrote; fails if there is not exactly one. */
    public AuditRecord onlyRecord() throws InterruptedException {
        return awaitRecords(1).getFirst();
    }

    @Override
    public void close() throws IOException {
        proxy.close();
        upstream.close();
    }
}

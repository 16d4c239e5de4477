package dev.agentjail.it.support;

import dev.agentjail.proxy.audit.AuditRecord;
import java.util.Arrays;
import java.util.List;

/**
 * Picks records of one kind from a {@code ProxyFixture}'s in-memory log: an allowed CONNECT leaves a {@code request}
 * record before its 200 and a {@code tunnel-close} record (with the byte counts) when the tunnel ends, so "one record
 * per request" counts {@code request} records only.
 */
public final class AuditRecords {
    private AuditRecords() {}

    public static List<AuditRecord> ofKind(List<AuditRecord> records, String kind) {
        return records.stream().filter(r -> r.kind().equals(kind)).toList();
    }

    /** The {@code kind: request} records, one per request, in log order. */
    public static List<AuditRecord> requests(List<AuditRecord> records) {
        return ofKind(records, AuditRecord.KIND_REQUEST);
    }

    /**
     * Every field a {@code tunnel-close} record repeats from its CONNECT's request record: all but the kind, the byte
     * counts and the duration.
     */
    public static List<Object> requestFields(AuditRecord r) {
        return Arrays.asList(
                r.ts(),
                r.session(),
                r.decision(),
                r.reason(),
                r.rule(),
                r.method(),
                r.scheme(),
                r.host(),
                r.port(),
                r.path(),
                r.status(),
                r.tls(),
                r.client(),
                r.resolvedIp(),
                r.error());
    }

    /** The {@code kind: tunnel-close} records, one per CONNECT tunnel that has ended, in log order. */
    public static List<AuditRecord> tunnelCloses(List<AuditRecord> records) {
        return ofKind(records, AuditRecord.KIND_TUNNEL_CLOSE);
    }
}

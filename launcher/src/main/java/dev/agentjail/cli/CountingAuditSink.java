package dev.agentjail.cli;

import dev.agentjail.proxy.audit.AuditRecord;
import dev.agentjail.proxy.audit.AuditSink;
import dev.agentjail.proxy.audit.AuditUnavailableException;
import java.util.concurrent.atomic.AtomicLong;

/** Passes records on and counts a session's requests and denials for its end record and summary. */
final class CountingAuditSink implements AuditSink {
    private final AuditSink delegate;
    private final AtomicLong requests = new AtomicLong();
    private final AtomicLong denials = new AtomicLong();

    CountingAuditSink(AuditSink delegate) {
        this.delegate = delegate;
    }

    @Override
    public void append(AuditRecord record) throws AuditUnavailableException {
        delegate.append(record);
        if (AuditRecord.KIND_REQUEST.equals(record.kind())) {
            requests.incrementAndGet();
            if (AuditRecord.DENY.equals(record.decision())) {
                denials.incrementAndGet();
            }
        }
    }

    @Override
    public void appendAll(java.util.List<AuditRecord> records) throws AuditUnavailableException {
        delegate.appendAll(records);
        for (AuditRecord record : records) {
            if (AuditRecord.KIND_REQUEST.equals(record.kind())) {
                requests.incrementAndGet();
                if (AuditRecord.DENY.equals(record.decision())) {
                    denials.incrementAndGet();
                }
            }
        }
    }

    @Override
    public boolean healthy() {
        return delegate.healthy();
    }

    @Override
    public void close() {
        delegate.close();
    }

    long requests() {
        return requests.get();
    }

    long denials() {
        return denials.get();
    }
}

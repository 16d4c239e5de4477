package dev.agentjail.proxy.audit;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** An in-memory {@link AuditSink} for tests that can be switched into failing mode to exercise fail-closed paths. */
public final class MemoryAuditSink implements AuditSink {

    private final List<AuditRecord> records = new CopyOnWriteArrayList<>();
    private volatile boolean failing;
    private volatile boolean closed;

    @Override
    public void append(AuditRecord record) throws AuditUnavailableException {
        if (closed) {
            throw new AuditUnavailableException("memory audit sink is closed");
        }
        if (failing) {
            throw new AuditUnavailableException("memory audit sink is set to fail");
        }
        // Serialising catches a record the file sink could not write, which a bare list would hide.
        AuditJson.toLine(record);
        records.add(record);
    }

    @Override
    public boolean healthy() {
        return !failing && !closed;
    }

    @Override
    public void close() {
        closed = true;
    }

    /** While {@code true}, every append throws {@link AuditUnavailableException} and nothing is recorded. */
    public void failing(boolean value) {
        failing = value;
    }

    /** A snapshot of the records appended so far, in order. */
    public List<AuditRecord> records() {
        return List.copyOf(records);
    }

    /** The records as the file sink would write them, without the trailing newline. */
    public List<String> lines() {
        return records.stream().map(r -> AuditJson.toLine(r).stripTrailing()).toList();
    }
}

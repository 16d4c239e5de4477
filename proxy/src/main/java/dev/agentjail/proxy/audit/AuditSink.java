package dev.agentjail.proxy.audit;

/**
 * Where audit records go; an implementation that cannot store a record throws, and the proxy then fails closed.
 *
 * <p>Implementations are thread-safe: every connection appends from its own event loop.
 */
public interface AuditSink extends AutoCloseable {

    /**
     * Stores {@code record} before returning, so a response is never completed for a request that left no trace.
     *
     * @throws AuditUnavailableException if the record could not be stored; the request must be denied
     */
    void append(AuditRecord record) throws AuditUnavailableException;

    /**
     * Stores {@code records} in order before returning, as {@link #append} would one by one; a sink may write them
     * together. On a failure, the records before the one that failed may be stored.
     *
     * @throws AuditUnavailableException if a record could not be stored
     */
    default void appendAll(java.util.List<AuditRecord> records) throws AuditUnavailableException {
        for (AuditRecord record : records) {
            append(record);
        }
    }

    /** Whether the last attempt to store a record succeeded; the operator's health signal. */
    boolean healthy();

    /** Makes everything appended so far durable and releases the sink; later appends fail. */
    @Override
    void close();
}

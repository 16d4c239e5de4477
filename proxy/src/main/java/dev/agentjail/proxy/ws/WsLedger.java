package dev.agentjail.proxy.ws;

import dev.agentjail.proxy.redact.Findings;
import java.util.List;

/** What the relay tells the connection's audit record: messages each way, what was found, how it ended. */
public interface WsLedger {
    /** A message went on ({@code fromClient}: to the upstream), {@code bytes} of scanned payload. */
    void message(boolean fromClient, long bytes);

    /** Secrets found in a client message, under {@code location} ({@code websocket-text}, …). */
    void findings(String location, List<Findings.Finding> found);

    /** The connection is failed for {@code v}, found on the client's side or the upstream's: recorded now. */
    void failed(WsViolation v, boolean clientAtFault);

    /** The connection closed (recorded once, unless it failed). */
    void closed();
}

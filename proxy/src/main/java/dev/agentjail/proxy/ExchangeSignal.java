package dev.agentjail.proxy;

import io.netty.handler.codec.http.HttpResponseStatus;

/**
 * What an inspection stage tells the exchange handler in place of a message: a verdict on the exchange in flight.
 * Request stages pass these down the client's pipeline; response stages down the upstream connection's.
 */
sealed interface ExchangeSignal {
    Exchange exchange();

    /** The body scan refused the request ({@link dev.agentjail.proxy.inspect.OutboundRequest#refused()}). */
    record BodyRefused(Exchange exchange) implements ExchangeSignal {}

    /** The MCP gate let the collected body go: dial, then send it ({@code McpExchange#takeBody}) and the rest. */
    record McpReady(Exchange exchange) implements ExchangeSignal {}

    /** The MCP gate refused the request ({@code McpExchange#refusal} answers it). */
    record McpRefused(Exchange exchange) implements ExchangeSignal {}

    /**
     * A response stage refused the response in flight: nothing more of it reaches the client, which gets {@code
     * status} if the response has not started, and the exchange is recorded with {@code decision}.
     */
    record ResponseRefused(Exchange exchange, String decision, HttpResponseStatus status, String reason, String detail)
            implements ExchangeSignal {}
}

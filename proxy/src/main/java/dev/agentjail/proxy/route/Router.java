package dev.agentjail.proxy.route;

import io.netty.handler.codec.http.HttpRequest;

/** Reads where a request on one client connection goes and asks the policy about it. */
public interface Router {
    Routing route(HttpRequest request);

    /**
     * Whether a denied request ends its connection. Inside an intercepted tunnel it does: a client that
     * asked for another origin there is not one to keep talking to.
     */
    boolean closeOnDeny();
}

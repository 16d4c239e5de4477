package dev.agentjail.proxy.route;

import dev.agentjail.policy.Decision;
import dev.agentjail.policy.Target;
import io.netty.handler.codec.http.HttpResponseStatus;

/** Where a request goes, or why it goes nowhere: the outcome of reading its target and deciding on it. */
public sealed interface Routing {
    /** The request names a destination the policy has decided on (allowed or denied). */
    record Routed(Target target, String scheme, String originForm, boolean connect, Decision decision, String detail)
            implements Routing {
        public Routed(Target target, String scheme, String originForm, boolean connect, Decision decision) {
            this(target, scheme, originForm, connect, decision, null);
        }
    }

    /** The request is malformed as a proxy request (bad target, Host mismatch): answer and close. */
    record Rejected(HttpResponseStatus status, String reason, String detail) implements Routing {}
}

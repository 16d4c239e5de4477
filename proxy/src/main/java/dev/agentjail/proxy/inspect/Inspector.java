package dev.agentjail.proxy.inspect;

import dev.agentjail.policy.CustomPattern;
import dev.agentjail.policy.RedactionPolicy;
import dev.agentjail.policy.Target;
import dev.agentjail.proxy.redact.Redactor;
import io.netty.handler.codec.http.HttpRequest;
import java.util.Map;

/**
 * The proxy's look at outbound requests: builds the redactor once from the policy's rules, known
 * values and injected credentials' placeholders, and hands each request an {@link OutboundRequest}
 * that rewrites its target, headers and body.
 */
public final class Inspector {
    /** Kind id of a credential placeholder found where it must not go. */
    static final String PLACEHOLDER_KIND = "credential-placeholder";

    private final Redactor redactor;
    private final Inspection inspection;

    private Inspector(Redactor redactor, Inspection inspection) {
        this.redactor = redactor;
        this.inspection = inspection;
    }

    public static Inspector of(Inspection inspection) {
        Redactor.Builder b = Redactor.builder();
        RedactionPolicy policy = inspection.redaction();
        for (CustomPattern p : policy.patterns()) {
            b.customPattern(p.name(), p.regex(), p.literalPrefix());
        }
        for (Map.Entry<String, String> known : inspection.knownValues().entrySet()) {
            b.knownValue("known:" + known.getKey(), known.getValue());
        }
        for (InjectedCredential c : inspection.credentials()) {
            b.knownValue(PLACEHOLDER_KIND + ":" + c.rule().env(), c.placeholder());
            b.knownValue("known:" + c.rule().env(), c.value());
        }
        for (String allowed : policy.allow()) {
            b.allow(allowed);
        }
        return new Inspector(b.build(), inspection);
    }

    /**
     * Starts the inspection of one request to {@code target}; {@code verifiedTls} says whether it will
     * travel over TLS whose upstream certificate is verified (credentials are injected only then).
     */
    public OutboundRequest inspect(HttpRequest request, Target target, String originForm, boolean verifiedTls) {
        return OutboundRequest.start(this, request, target, originForm, verifiedTls);
    }

    /**
     * The host of {@code target} redacted, if the name carries a secret: as {@code written} in the request (its case
     * kept) or in its canonical form. Empty when it carries none, and for IP addresses.
     */
    public java.util.Optional<String> secretInHost(String written, Target target) {
        if (target.isIpLiteral()) {
            return java.util.Optional.empty();
        }
        dev.agentjail.proxy.redact.Findings findings = new dev.agentjail.proxy.redact.Findings();
        String raw = redactor.redactHost(written, findings);
        String canonical = redactor.redactHost(target.host(), findings);
        if (findings.total() == 0) {
            return java.util.Optional.empty();
        }
        // Markers keep the length and use unreserved characters: one of the two redacted spellings shows where.
        String redacted = !canonical.equals(target.host()) ? canonical : raw.toLowerCase(java.util.Locale.ROOT);
        return java.util.Optional.of(redacted);
    }

    /** The target redacted for the record of a request that goes nowhere (denied or refused). */
    public String redactedTarget(String originForm) {
        return redactor.redactTarget(originForm, new dev.agentjail.proxy.redact.Findings());
    }

    /** The redactor built from the policy: the jail's audit redacts program arguments with it. */
    public Redactor redactor() {
        return redactor;
    }

    Inspection inspection() {
        return inspection;
    }

    boolean blocks() {
        return inspection.redaction().action() == RedactionPolicy.Action.BLOCK;
    }
}

package dev.agentjail.proxy.redact;

import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/** Classifies a request whose payload cannot be rewritten, so a secret in it leads to a block. */
public final class RewriteCheck {
    private RewriteCheck() {}

    /**
     * @param target the request target (path and query, or absolute-form)
     * @param headers the request headers as name/value pairs (Netty's {@code HttpHeaders} is such an
     *     iterable)
     * @return why the request must not be rewritten, or empty when redacting in place is safe
     */
    public static Optional<NonRewritable> classify(
            String target, Iterable<? extends Map.Entry<String, String>> headers) {
        String path = target;
        String query = "";
        int q = target.indexOf('?');
        if (q >= 0) {
            path = target.substring(0, q);
            query = target.substring(q + 1);
        }
        String lowerPath = path.toLowerCase(Locale.ROOT);
        if (lowerPath.endsWith("/git-receive-pack") || lowerPath.endsWith("/git-upload-pack")) {
            return Optional.of(NonRewritable.GIT_PACK);
        }
        if (query.toLowerCase(Locale.ROOT).contains("x-amz-signature=")) {
            return Optional.of(NonRewritable.AWS_SIGV4);
        }
        NonRewritable found = null;
        for (Map.Entry<String, String> header : headers) {
            String name = header.getKey().toLowerCase(Locale.ROOT);
            String value = header.getValue() == null ? "" : header.getValue().strip();
            NonRewritable reason = switch (name) {
                case "content-type" ->
                    value.toLowerCase(Locale.ROOT).startsWith("application/x-git-") ? NonRewritable.GIT_PACK : null;
                case "x-amz-content-sha256" -> signedPayloadHash(value) ? NonRewritable.AWS_SIGV4 : null;
                case "authorization" -> value.regionMatches(true, 0, "AWS4-", 0, 5) ? NonRewritable.AWS_SIGV4 : null;
                case "content-md5", "digest", "content-digest", "repr-digest" -> NonRewritable.BODY_DIGEST;
                case "signature", "signature-input" -> NonRewritable.HTTP_SIGNATURE;
                default -> null;
            };
            if (reason != null && (found == null || reason.ordinal() < found.ordinal())) {
                found = reason;
            }
        }
        return Optional.ofNullable(found);
    }

    /** A real SHA-256 of the payload, or a signed streaming payload; {@code UNSIGNED-PAYLOAD} is not. */
    private static boolean signedPayloadHash(String value) {
        if (value.length() == 64) {
            for (int i = 0; i < 64; i++) {
                char c = value.charAt(i);
                if (!(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F')) {
                    return false;
                }
            }
            return true;
        }
        return value.startsWith("STREAMING-AWS4-") || value.startsWith("STREAMING-ECDSA-");
    }
}

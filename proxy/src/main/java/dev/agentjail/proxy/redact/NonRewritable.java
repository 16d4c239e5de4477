package dev.agentjail.proxy.redact;

/**
 * Why a request's payload must not be rewritten (a rewrite would corrupt object ids or break a signature):
 * when it carries a secret, the proxy blocks it instead. {@link #code()} is the stable reason code.
 */
public enum NonRewritable {
    /** Git smart-HTTP pack traffic: object ids are hashes of the content. */
    GIT_PACK("git-pack"),
    /** AWS Signature V4 over the payload or the query (presigned URL). */
    AWS_SIGV4("aws-sigv4-signed"),
    /** A digest of the body travels with it ({@code Content-MD5}, {@code Digest}, {@code Content-Digest}). */
    BODY_DIGEST("body-digest"),
    /** HTTP Message Signatures (RFC 9421). */
    HTTP_SIGNATURE("http-message-signature");

    private final String code;

    NonRewritable(String code) {
        this.code = code;
    }

    public String code() {
        return code;
    }
}

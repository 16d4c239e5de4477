package dev.agentjail.proxy.redact;

import java.util.Locale;

/** How a body's bytes are decoded before the scan, which also fixes the marker alphabet written back. */
public enum BodyKind {
    /** JSON: backslash escapes and percent-encoding are decoded; markers never cross an unescaped quote. */
    JSON,
    /** {@code application/x-www-form-urlencoded}: percent-encoding and {@code +} are decoded; URL-safe markers. */
    FORM,
    /**
     * {@code multipart/*}: scanned like text, and quoted-printable ({@code =XX}, soft line breaks) is decoded too
     * (parts are not split; a base64 part is read as an encoded run, like any other).
     */
    MULTIPART,
    /**
     * Anything else, including XML, HTML and binary: backslash escapes, percent-encoding and numeric character
     * references ({@code &#103;}, {@code &#x67;}) are decoded.
     */
    TEXT;

    /** Picks the kind from a {@code Content-Type} value; {@code null} or unknown types are {@link #TEXT}. */
    public static BodyKind fromContentType(String contentType) {
        if (contentType == null) {
            return TEXT;
        }
        String type = contentType.toLowerCase(Locale.ROOT);
        int semicolon = type.indexOf(';');
        if (semicolon >= 0) {
            type = type.substring(0, semicolon);
        }
        type = type.strip();
        if (type.equals("application/x-www-form-urlencoded")) {
            return FORM;
        }
        if (type.startsWith("multipart/")) {
            return MULTIPART;
        }
        if (type.endsWith("/json")
                || type.endsWith("+json")
                || type.equals("application/x-ndjson")
                || type.equals("application/jsonl")
                || type.equals("application/json-seq")) {
            return JSON;
        }
        return TEXT;
    }
}

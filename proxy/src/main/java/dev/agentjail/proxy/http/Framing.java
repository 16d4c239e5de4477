package dev.agentjail.proxy.http;

import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpVersion;
import java.util.List;

/**
 * How a request body is delimited, decided once from the headers; every ambiguous combination is
 * refused (RFC 9112 section 6 plus the smuggling corpus).
 */
record Framing(Kind kind, long length) {
    enum Kind {
        NONE,
        LENGTH,
        CHUNKED
    }

    private static final int MAX_LENGTH_DIGITS = 18;

    static Framing of(String method, HttpVersion version, HttpHeaders headers) throws RequestRejected {
        List<String> te = headers.getAll("transfer-encoding");
        List<String> cl = headers.getAll("content-length");
        for (String connection : headers.getAll("connection")) {
            for (String option : connection.split(",")) {
                String o = option.strip();
                if (o.equalsIgnoreCase("content-length") || o.equalsIgnoreCase("transfer-encoding")) {
                    throw RequestRejected.bad("ambiguous-framing", "Connection lists a framing header");
                }
            }
        }
        for (String name : headers.names()) {
            // Some upstreams (CGI-style environments) read '_' as '-': such a name would frame the body there.
            if (name.indexOf('_') >= 0 && isFramingName(name.replace('_', '-'))) {
                throw RequestRejected.bad("ambiguous-framing", "framing header name spelled with '_'");
            }
        }
        if (!te.isEmpty() && version.equals(HttpVersion.HTTP_1_0)) {
            // RFC 9112 6.1: a 1.0 recipient of Transfer-Encoding treats the framing as faulty, whatever else is
            // there; a 1.0 server behind the proxy would read the chunks as the body.
            throw RequestRejected.bad("ambiguous-framing", "Transfer-Encoding in an HTTP/1.0 request");
        }
        if (!te.isEmpty() && !cl.isEmpty()) {
            throw RequestRejected.bad("ambiguous-framing", "both Transfer-Encoding and Content-Length");
        }
        if (te.size() > 1) {
            throw RequestRejected.bad("ambiguous-framing", "more than one Transfer-Encoding header");
        }
        if (cl.size() > 1) {
            throw RequestRejected.bad("ambiguous-framing", "more than one Content-Length header");
        }
        boolean connect = method.equals("CONNECT");
        if (te.size() == 1) {
            if (!te.get(0).equalsIgnoreCase("chunked")) {
                throw RequestRejected.bad("bad-transfer-encoding", "Transfer-Encoding other than chunked");
            }
            if (connect) {
                throw RequestRejected.bad("ambiguous-framing", "CONNECT with a body");
            }
            return new Framing(Kind.CHUNKED, -1);
        }
        if (cl.size() == 1) {
            long length = parseLength(cl.get(0));
            if (connect && length != 0) {
                throw RequestRejected.bad("ambiguous-framing", "CONNECT with a body");
            }
            return length == 0 ? new Framing(Kind.NONE, 0) : new Framing(Kind.LENGTH, length);
        }
        return new Framing(Kind.NONE, 0);
    }

    private static boolean isFramingName(String name) {
        return name.equalsIgnoreCase("content-length") || name.equalsIgnoreCase("transfer-encoding");
    }

    private static long parseLength(String value) throws RequestRejected {
        if (value.isEmpty() || value.length() > MAX_LENGTH_DIGITS) {
            throw RequestRejected.bad("bad-content-length", "invalid Content-Length");
        }
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c < '0' || c > '9') {
                throw RequestRejected.bad("bad-content-length", "invalid Content-Length");
            }
        }
        if (value.length() > 1 && value.charAt(0) == '0') {
            // Leading zeros could be read as octal downstream; refuse rather than re-spell.
            throw RequestRejected.bad("bad-content-length", "Content-Length with leading zeros");
        }
        return Long.parseLong(value);
    }
}

package dev.agentjail.proxy.http;

import io.netty.handler.codec.http.HttpHeaders;
import java.util.List;
import java.util.Locale;

/**
 * Refuses a request head whose body could be read in more than one way through the headers that type or
 * encode it ({@link Framing} does the same for the ones that delimit it): one field line each, no {@code _}
 * spelling, not named in {@code Connection}, and a value every receiver parses alike.
 *
 * <p>The proxy scans a body as it reads these headers; a receiver that picks the other of two lines (or joins
 * them into a list, or strips one as hop-by-hop) would read bytes the proxy never scanned as what they are.
 */
final class BodyHeaders {
    /**
     * Headers whose second field line changes how a receiver reads the body: its coding, its type (and
     * charset), which part of a representation it is, and MIME's transfer coding that some servers honour.
     */
    static final List<String> NAMES =
            List.of("content-encoding", "content-type", "content-range", "content-transfer-encoding");

    /** The one coding that is no coding; unknown tokens are well-formed and refused later by the inspection. */
    private static final String IDENTITY = "identity";

    private BodyHeaders() {}

    static void check(HttpHeaders headers) throws RequestRejected {
        for (String name : NAMES) {
            if (headers.getAll(name).size() > 1) {
                throw ambiguous("more than one " + name + " field line");
            }
        }
        for (String name : headers.names()) {
            // Some upstreams (CGI-style environments) read '_' as '-': such a name would type the body there.
            if (name.indexOf('_') >= 0 && NAMES.contains(name.replace('_', '-').toLowerCase(Locale.ROOT))) {
                throw ambiguous("body header name spelled with '_'");
            }
        }
        for (String connection : headers.getAll("connection")) {
            for (String option : connection.split(",", -1)) {
                if (NAMES.contains(option.strip().toLowerCase(Locale.ROOT))) {
                    // Stripped as hop-by-hop by one receiver, honoured by the next: two readings.
                    throw ambiguous("Connection lists a body header");
                }
            }
        }
        String encoding = headers.get("content-encoding");
        if (encoding != null) {
            checkCodings(encoding);
        }
        String type = headers.get("content-type");
        if (type != null) {
            checkMediaType(type);
        }
    }

    /**
     * A list of tokens, none empty; {@code identity} only alone (inside a list one receiver drops it, another
     * refuses it, a third stops there).
     */
    private static void checkCodings(String value) throws RequestRejected {
        String[] parts = value.split(",", -1);
        for (String part : parts) {
            String coding = part.strip();
            if (!HeaderSyntax.isToken(coding)) {
                throw ambiguous("Content-Encoding is not a list of codings");
            }
            if (coding.equalsIgnoreCase(IDENTITY) && parts.length > 1) {
                throw ambiguous("identity inside a Content-Encoding list");
            }
        }
    }

    /**
     * RFC 9110 media-type ({@link MediaType}), each parameter name at most once (a second {@code charset} is a
     * second reading).
     */
    private static void checkMediaType(String value) throws RequestRejected {
        MediaType type;
        try {
            type = MediaType.parse(value);
        } catch (MediaType.Malformed e) {
            throw ambiguous("Content-Type is malformed: " + e.getMessage());
        }
        if (type.repeatsAParameter()) {
            throw ambiguous("Content-Type repeats a parameter");
        }
    }

    private static RequestRejected ambiguous(String detail) {
        return RequestRejected.bad(StrictRequestDecoder.AMBIGUOUS_BODY_HEADER, detail);
    }
}

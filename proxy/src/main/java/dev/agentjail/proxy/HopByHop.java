package dev.agentjail.proxy;

import io.netty.handler.codec.http.HttpHeaders;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Removes hop-by-hop headers (RFC 9110 section 7.6.1) and the proxy's own headers before forwarding. */
final class HopByHop {
    private static final List<String> ALWAYS = List.of(
            "connection",
            "proxy-connection",
            "keep-alive",
            "proxy-authorization",
            "proxy-authenticate",
            "te",
            "trailer",
            "upgrade",
            "http2-settings");

    private HopByHop() {}

    /**
     * Strips the headers that belong to one hop. Framing headers are kept: the decoder already refused
     * a Connection header naming them.
     */
    static void strip(HttpHeaders headers) {
        for (String connection : headers.getAll("connection")) {
            for (String option : connection.split(",")) {
                String name = option.strip();
                if (!name.isEmpty() && !isFraming(name)) {
                    headers.remove(name);
                }
            }
        }
        for (String name : ALWAYS) {
            headers.remove(name);
        }
        List<String> internal = new ArrayList<>();
        for (Map.Entry<String, String> e : headers) {
            if (e.getKey().regionMatches(true, 0, "x-agentjail-", 0, 12)) {
                internal.add(e.getKey());
            }
        }
        internal.forEach(headers::remove);
    }

    private static boolean isFraming(String name) {
        return name.equalsIgnoreCase("content-length") || name.equalsIgnoreCase("transfer-encoding");
    }
}

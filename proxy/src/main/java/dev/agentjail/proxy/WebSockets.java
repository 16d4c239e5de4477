package dev.agentjail.proxy;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpVersion;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * Recognises a WebSocket opening handshake (RFC 6455 section 4) and its acceptance. Only these
 * upgrades pass: any other {@code Upgrade} (h2c, unknown protocols) is stripped as a hop-by-hop
 * header (corpus cases 108, 109).
 */
final class WebSockets {
    private WebSockets() {}

    /** A GET over HTTP/1.1 asking for exactly {@code websocket}, version 13, with a key and Connection: upgrade. */
    static boolean isUpgradeRequest(HttpRequest request) {
        HttpHeaders h = request.headers();
        return request.method().equals(HttpMethod.GET)
                && request.protocolVersion().equals(HttpVersion.HTTP_1_1)
                && h.getAll(HttpHeaderNames.UPGRADE).size() == 1
                && "websocket".equalsIgnoreCase(h.get(HttpHeaderNames.UPGRADE).strip())
                && hasToken(h, HttpHeaderNames.CONNECTION.toString(), "upgrade")
                && "13".equals(h.get(HttpHeaderNames.SEC_WEBSOCKET_VERSION))
                && h.getAll(HttpHeaderNames.SEC_WEBSOCKET_KEY).size() == 1
                && !h.contains(HttpHeaderNames.CONTENT_LENGTH)
                && !h.contains(HttpHeaderNames.TRANSFER_ENCODING);
    }

    /** The upstream switched to the WebSocket protocol. */
    static boolean isAccepted(HttpResponse response) {
        HttpHeaders h = response.headers();
        return response.status().code() == 101
                && "websocket"
                        .equalsIgnoreCase(
                                String.valueOf(h.get(HttpHeaderNames.UPGRADE)).strip())
                && h.contains(HttpHeaderNames.SEC_WEBSOCKET_ACCEPT);
    }

    /** The 101 as bytes for the client: its own headers, with the upgrade's Connection and Upgrade. */
    static byte[] switchingProtocols(HttpResponse response) {
        StringBuilder out = new StringBuilder("HTTP/1.1 101 Switching Protocols\r\n");
        HttpHeaders headers = response.headers().copy();
        HopByHop.strip(headers);
        headers.remove(HttpHeaderNames.CONTENT_LENGTH);
        headers.remove(HttpHeaderNames.TRANSFER_ENCODING);
        headers.set(HttpHeaderNames.CONNECTION, "Upgrade");
        headers.set(HttpHeaderNames.UPGRADE, "websocket");
        for (Map.Entry<String, String> e : headers) {
            out.append(e.getKey()).append(": ").append(e.getValue()).append("\r\n");
        }
        return out.append("\r\n").toString().getBytes(StandardCharsets.ISO_8859_1);
    }

    private static boolean hasToken(HttpHeaders h, String name, String token) {
        for (String value : h.getAll(name)) {
            for (String part : value.split(",")) {
                if (part.strip().equalsIgnoreCase(token)) {
                    return true;
                }
            }
        }
        return false;
    }
}

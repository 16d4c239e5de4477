package dev.agentjail.proxy.ws;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.List;
import java.util.Optional;

/**
 * The proxy's side of the opening handshake (RFC 6455 section 4): the offer it forwards holds only what it can read,
 * and the upstream's 101 must answer that offer, the client's key and its subprotocols, or the upgrade is refused.
 */
public final class Handshake {
    private static final String GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

    private Handshake() {}

    /** What came of the upstream's 101. */
    public sealed interface Outcome permits Accepted, Refused {}

    /** The 101 answers what was sent; both connections speak {@code extensions}. */
    public record Accepted(Extensions extensions) implements Outcome {}

    /** The 101 does not answer what was sent ({@code detail} says how; never a header value). */
    public record Refused(String detail) implements Outcome {}

    /** Rewrites the forwarded request's extension offer to the permessage-deflate offers the proxy can read. */
    public static void filterOffer(HttpHeaders forwarded) {
        Optional<String> kept = Extensions.filterOffer(forwarded.getAll(HttpHeaderNames.SEC_WEBSOCKET_EXTENSIONS));
        forwarded.remove(HttpHeaderNames.SEC_WEBSOCKET_EXTENSIONS);
        kept.ifPresent(offer -> forwarded.set(HttpHeaderNames.SEC_WEBSOCKET_EXTENSIONS, offer));
    }

    /** Checks the upstream's 101 {@code response} headers against the request headers that were {@code sent}. */
    public static Outcome check(HttpHeaders sent, HttpHeaders response) {
        String key = sent.get(HttpHeaderNames.SEC_WEBSOCKET_KEY);
        List<String> accepts = response.getAll(HttpHeaderNames.SEC_WEBSOCKET_ACCEPT);
        if (key == null || accepts.size() != 1 || !accepts.get(0).strip().equals(accept(key.strip()))) {
            return new Refused("the upstream's 101 does not carry the Sec-WebSocket-Accept of the client's key");
        }
        List<String> protocols = response.getAll(HttpHeaderNames.SEC_WEBSOCKET_PROTOCOL);
        if (!protocols.isEmpty()) {
            List<String> offered = sent.getAll(HttpHeaderNames.SEC_WEBSOCKET_PROTOCOL).stream()
                    .flatMap(l -> java.util.Arrays.stream(l.split(",")))
                    .map(String::strip)
                    .toList();
            if (protocols.size() != 1 || !offered.contains(protocols.get(0).strip())) {
                return new Refused("the upstream's 101 chose a subprotocol the client did not offer");
            }
        }
        Optional<Extensions> ext = Extensions.negotiated(
                sent.get(HttpHeaderNames.SEC_WEBSOCKET_EXTENSIONS),
                response.getAll(HttpHeaderNames.SEC_WEBSOCKET_EXTENSIONS));
        if (ext.isEmpty()) {
            return new Refused("the upstream's 101 negotiated an extension or parameters that were not offered,"
                    + " or one the proxy cannot inspect");
        }
        return new Accepted(ext.get());
    }

    /** The Sec-WebSocket-Accept of {@code key}. */
    public static String accept(String key) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-1").digest((key + GUID).getBytes(StandardCharsets.US_ASCII));
            return Base64.getEncoder().encodeToString(digest);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-1 is part of every JDK", e);
        }
    }
}

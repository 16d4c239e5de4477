package dev.agentjail.proxy.ws;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The one WebSocket extension the proxy can read, permessage-deflate (RFC 7692), as negotiated: which sides drop their
 * compression context after each message, and the window sizes they agreed on (15 when not limited). The proxy
 * forwards only offers of it, with only its four parameters, so the upstream cannot choose anything the proxy could
 * not inspect; a response choosing anything else fails the handshake.
 */
public record Extensions(
        boolean deflate,
        boolean serverNoContextTakeover,
        boolean clientNoContextTakeover,
        int serverMaxWindowBits,
        int clientMaxWindowBits) {
    public static final String PERMESSAGE_DEFLATE = "permessage-deflate";
    public static final Extensions NONE = new Extensions(false, false, false, 15, 15);

    private static final String SERVER_NO_CONTEXT = "server_no_context_takeover";
    private static final String CLIENT_NO_CONTEXT = "client_no_context_takeover";
    private static final String SERVER_BITS = "server_max_window_bits";
    private static final String CLIENT_BITS = "client_max_window_bits";

    /**
     * The offer to forward, from the client's {@code Sec-WebSocket-Extensions} lines: its permessage-deflate offers
     * whose parameters are all known, valid and not repeated, in canonical form; empty when none is left.
     */
    public static Optional<String> filterOffer(List<String> lines) {
        List<String> kept = new ArrayList<>();
        for (String line : lines) {
            for (String offer : line.split(",")) {
                Map<String, String> params = parse(offer, true);
                if (params != null) {
                    kept.add(canonical(params));
                }
            }
        }
        return kept.isEmpty() ? Optional.empty() : Optional.of(String.join(", ", kept));
    }

    /**
     * What the upstream's response lines negotiated against the forwarded offer ({@code offered}, as
     * {@link #filterOffer} made it; null when none was sent), or empty when it chose something not offered, an unknown
     * extension, two extensions, or bad parameters.
     */
    public static Optional<Extensions> negotiated(String offered, List<String> responseLines) {
        List<String> chosen = new ArrayList<>();
        for (String line : responseLines) {
            for (String e : line.split(",")) {
                if (!e.isBlank()) {
                    chosen.add(e);
                }
            }
        }
        if (chosen.isEmpty()) {
            return Optional.of(NONE);
        }
        if (chosen.size() > 1 || offered == null) {
            return Optional.empty();
        }
        Map<String, String> p = parse(chosen.get(0), false);
        if (p == null) {
            return Optional.empty();
        }
        if (p.containsKey(CLIENT_BITS) && p.get(CLIENT_BITS).isEmpty()) {
            // A response names a value; the bare form belongs to offers.
            return Optional.empty();
        }
        if (p.containsKey(CLIENT_BITS) && !offersClientBits(offered)) {
            return Optional.empty();
        }
        return Optional.of(new Extensions(
                true,
                p.containsKey(SERVER_NO_CONTEXT),
                p.containsKey(CLIENT_NO_CONTEXT),
                bits(p.get(SERVER_BITS)),
                bits(p.get(CLIENT_BITS))));
    }

    /** RFC 7692 section 7.1.2.2: a response may name client_max_window_bits only if some offer did. */
    private static boolean offersClientBits(String offered) {
        for (String offer : offered.split(",")) {
            Map<String, String> p = parse(offer, true);
            if (p != null && p.containsKey(CLIENT_BITS)) {
                return true;
            }
        }
        return false;
    }

    private static int bits(String value) {
        return value == null || value.isEmpty() ? 15 : Integer.parseInt(value);
    }

    /** The parameters of one permessage-deflate element, or null when it is another extension or malformed. */
    private static Map<String, String> parse(String element, boolean offer) {
        String[] parts = element.split(";", -1);
        if (!parts[0].strip().equalsIgnoreCase(PERMESSAGE_DEFLATE)) {
            return null;
        }
        Map<String, String> params = new LinkedHashMap<>();
        for (int i = 1; i < parts.length; i++) {
            String part = parts[i].strip();
            int eq = part.indexOf('=');
            String name = (eq < 0 ? part : part.substring(0, eq)).strip().toLowerCase(Locale.ROOT);
            String value = eq < 0 ? null : unquote(part.substring(eq + 1).strip());
            if (params.containsKey(name)) {
                return null;
            }
            switch (name) {
                case SERVER_NO_CONTEXT, CLIENT_NO_CONTEXT -> {
                    if (value != null) {
                        return null;
                    }
                    params.put(name, "");
                }
                case SERVER_BITS, CLIENT_BITS -> {
                    boolean bare = value == null;
                    if (bare && !(offer && name.equals(CLIENT_BITS))) {
                        return null;
                    }
                    if (!bare && !value.matches("8|9|1[0-5]")) {
                        return null;
                    }
                    params.put(name, bare ? "" : value);
                }
                default -> {
                    return null;
                }
            }
        }
        return params;
    }

    private static String unquote(String v) {
        return v.length() >= 2 && v.startsWith("\"") && v.endsWith("\"") ? v.substring(1, v.length() - 1) : v;
    }

    private static String canonical(Map<String, String> params) {
        StringBuilder out = new StringBuilder(PERMESSAGE_DEFLATE);
        params.forEach((name, value) -> {
            out.append("; ").append(name);
            if (!value.isEmpty()) {
                out.append('=').append(value);
            }
        });
        return out.toString();
    }
}

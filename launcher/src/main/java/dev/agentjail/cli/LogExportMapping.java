package dev.agentjail.cli;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/** Helpers the ECS and OCSF mappings share: nested maps built from dotted names, addresses, URLs. */
final class LogExportMapping {
    private static final Pattern IPV4 =
            Pattern.compile("((25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)");
    private static final Pattern DNS_NAME = Pattern.compile("[A-Za-z0-9_]([A-Za-z0-9_.-]*[A-Za-z0-9_])?");
    /** RFC 3986 pchar and "/": unreserved, sub-delims, ":" and "@"; "%" is handled apart. */
    private static final String PATH_CHARS =
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@/";

    private static final String HEX_DIGITS = "0123456789ABCDEFabcdef";
    private static final String HEX_UPPER = "0123456789ABCDEF";
    private static final Pattern IPV6_CHARS = Pattern.compile("[0-9A-Fa-f:][0-9A-Fa-f:.]*");

    private LogExportMapping() {}

    /** Puts {@code value} at the dotted {@code path} of {@code root}, creating the objects between; skips nulls. */
    static void put(Map<String, Object> root, String path, Object value) {
        if (value == null) {
            return;
        }
        Map<String, Object> node = root;
        int start = 0;
        for (int dot = path.indexOf('.'); dot >= 0; dot = path.indexOf('.', start)) {
            String key = path.substring(start, dot);
            @SuppressWarnings("unchecked")
            Map<String, Object> child = (Map<String, Object>) node.computeIfAbsent(key, k -> new LinkedHashMap<>());
            node = child;
            start = dot + 1;
        }
        node.put(path.substring(start), value);
    }

    /**
     * {@code value} when it is an IPv4 or IPv6 literal (brackets removed), else {@code null}. Decided without any
     * name lookup: only strings of address characters that start with a hex digit or a colon and hold a colon reach
     * {@link InetAddress}, which parses those as IPv6 literals and never resolves them.
     */
    static String ipLiteral(String value) {
        if (value == null) {
            return null;
        }
        String v = value.startsWith("[") && value.endsWith("]") ? value.substring(1, value.length() - 1) : value;
        if (IPV4.matcher(v).matches()) {
            return v;
        }
        if (v.indexOf(':') < 0 || !IPV6_CHARS.matcher(v).matches()) {
            return null;
        }
        try {
            return InetAddress.getByName(v) != null ? v : null;
        } catch (UnknownHostException e) {
            return null;
        }
    }

    /** The address and port of a {@code client} value {@code ip:port} (IPv6 with or without brackets). */
    record Endpoint(String ip, Integer port) {
        static Endpoint parse(String client) {
            if (client == null) {
                return new Endpoint(null, null);
            }
            int colon = client.lastIndexOf(':');
            if (colon > 0) {
                String ip = ipLiteral(client.substring(0, colon));
                Integer port = port(client.substring(colon + 1));
                if (ip != null && port != null) {
                    return new Endpoint(ip, port);
                }
            }
            return new Endpoint(ipLiteral(client), null);
        }

        private static Integer port(String s) {
            if (s.isEmpty() || s.length() > 5 || !s.chars().allMatch(Character::isDigit)) {
                return null;
            }
            int p = Integer.parseInt(s);
            return p >= 1 && p <= 65_535 ? p : null;
        }
    }

    /**
     * {@code scheme://host[:port]path} (the port only when not the scheme's default), a valid URI: characters a URI
     * cannot hold (controls, spaces, quotes, non-ASCII, a stray {@code %}) are percent-encoded as UTF-8. {@code null}
     * without a scheme or a host, for a CONNECT, or for a host that is neither a DNS name nor an IP literal.
     */
    static String url(LogRecord r) {
        if (r.scheme() == null || r.host() == null || "CONNECT".equals(r.method())) {
            return null;
        }
        String host;
        if (r.host().indexOf(':') >= 0) {
            if (ipLiteral(r.host()) == null) {
                return null;
            }
            host = "[" + r.host() + "]";
        } else if (DNS_NAME.matcher(r.host()).matches()) {
            host = r.host();
        } else {
            return null;
        }
        int defaultPort = "https".equals(r.scheme()) ? 443 : 80;
        String port = r.port() > 0 && r.port() != defaultPort ? ":" + r.port() : "";
        return r.scheme() + "://" + host + port + (r.path() == null ? "" : encodePath(r.path()));
    }

    /** {@code path} with every character a URI path cannot hold percent-encoded as UTF-8. */
    static String encodePath(String path) {
        StringBuilder out = new StringBuilder(path.length() + 16);
        byte[] bytes = path.getBytes(StandardCharsets.UTF_8);
        for (int i = 0; i < bytes.length; i++) {
            int b = bytes[i] & 0xff;
            boolean escape = b == '%'
                    && i + 2 < bytes.length
                    && HEX_DIGITS.indexOf(bytes[i + 1]) >= 0
                    && HEX_DIGITS.indexOf(bytes[i + 2]) >= 0;
            if (escape || (b < 0x80 && PATH_CHARS.indexOf(b) >= 0)) {
                out.append((char) b);
            } else {
                out.append('%').append(HEX_UPPER.charAt(b >> 4)).append(HEX_UPPER.charAt(b & 0xf));
            }
        }
        return out.toString();
    }

    /** The redactions as plain objects: {@code {kind, location, count}}. */
    static List<Map<String, Object>> redactions(LogRecord r) {
        return r.redactions().stream()
                .map(x -> {
                    Map<String, Object> m = new LinkedHashMap<>();
                    m.put("kind", x.kind());
                    m.put("location", x.location());
                    m.put("count", x.count());
                    return m;
                })
                .toList();
    }

    /**
     * The last name of a path ({@code mv} of {@code /usr/bin/mv}, {@code build} of a folded {@code build/}); the path
     * itself when it has none ({@code *}, {@code /}).
     */
    static String baseName(String path) {
        String p = path.endsWith("/") && path.length() > 1 ? path.substring(0, path.length() - 1) : path;
        String name = p.substring(p.lastIndexOf('/') + 1);
        return name.isEmpty() ? path : name;
    }

    /** The rule, unless it is the "no rule applied" marker. */
    static String rule(LogRecord r) {
        return r.rule() == null || r.rule().equals("-") ? null : r.rule();
    }
}

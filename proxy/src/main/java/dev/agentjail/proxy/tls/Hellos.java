package dev.agentjail.proxy.tls;

import java.util.Arrays;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Set;

/**
 * Reads the two handshake messages that say which server a TLS connection reaches: the server name a ClientHello
 * asks for, and whether a ServerHello is a HelloRetryRequest and which version it picked. Strict: one reading or
 * none, so a name a lenient server could read otherwise is never accepted.
 */
public final class Hellos {
    /** TLS record content types (RFC 8446, 5.1). */
    public static final int CHANGE_CIPHER_SPEC = 20;

    public static final int ALERT = 21;
    public static final int HANDSHAKE = 22;
    public static final int APPLICATION_DATA = 23;

    /** Handshake message types. */
    public static final int CLIENT_HELLO = 1;

    public static final int SERVER_HELLO = 2;

    /** The largest plaintext record fragment (RFC 8446, 5.1), and a protected record's allowance above it. */
    public static final int MAX_PLAINTEXT = 1 << 14;

    public static final int MAX_CIPHERTEXT = MAX_PLAINTEXT + 2048;

    public static final int TLS12 = 0x0303;
    public static final int TLS13 = 0x0304;

    /** A HelloRetryRequest is a ServerHello with this random (RFC 8446, 4.1.3: SHA-256 of "HelloRetryRequest"). */
    private static final byte[] RETRY_RANDOM =
            HexFormat.of().parseHex("cf21ad74e59a6111be1d8c021e65b891c2a211167abb8c5e079e09e2c8a8339c");

    private static final int SERVER_NAME = 0;
    private static final int SUPPORTED_VERSIONS = 43;

    /**
     * Extensions that carry an encrypted inner ClientHello or name: ECH (RFC 9849, 0xfe0d, and its drafts' code points
     * 0xfe08 to 0xfe0c) and the draft ESNI (0xffce). The outer name is then only a front for the real one.
     */
    private static final Set<Integer> HIDDEN_NAME = Set.of(0xfe08, 0xfe09, 0xfe0a, 0xfe0b, 0xfe0c, 0xfe0d, 0xffce);

    private Hellos() {}

    /**
     * What a ClientHello says about its server: exactly one of {@code name} (the host_name, lower case; null when
     * the ClientHello has no server_name extension), {@code hidden} (it carries an encrypted inner name) or
     * {@code unreadable} (why its name cannot be read in one way) is meaningful.
     */
    public record ClientHelloName(String name, boolean hidden, String unreadable) {
        static ClientHelloName unreadable(String why) {
            return new ClientHelloName(null, false, why);
        }
    }

    /** A ServerHello: whether it is a HelloRetryRequest, and the version it selected (supported_versions, else legacy). */
    public record ServerHelloKind(boolean retry, int version, String unreadable) {
        static ServerHelloKind unreadable(String why) {
            return new ServerHelloKind(false, 0, why);
        }
    }

    /** Reads a ClientHello's body (the handshake message without its 4-byte header). */
    public static ClientHelloName clientHello(byte[] body) {
        Reader r = new Reader(body);
        if (!r.skip(2 + 32) || !r.skipVector(1, 32) || !r.skipVector(2, 0xfffe) || !r.skipVector(1, 255)) {
            return ClientHelloName.unreadable("the ClientHello does not parse");
        }
        if (r.at == body.length) {
            return new ClientHelloName(null, false, null); // No extensions at all, hence no server name.
        }
        Extensions ext = Extensions.read(r, "ClientHello");
        if (ext.problem != null) {
            return ClientHelloName.unreadable(ext.problem);
        }
        for (int type : ext.types) {
            if (HIDDEN_NAME.contains(type)) {
                return new ClientHelloName(null, true, null);
            }
        }
        if (ext.serverName == null) {
            return new ClientHelloName(null, false, null);
        }
        return serverName(ext.serverName);
    }

    /** Reads a ServerHello's body; a HelloRetryRequest is one too (RFC 8446, 4.1.4). */
    public static ServerHelloKind serverHello(byte[] body) {
        Reader r = new Reader(body);
        if (body.length < 2 + 32) {
            return ServerHelloKind.unreadable("the ServerHello does not parse");
        }
        int legacy = r.u16();
        boolean retry = Arrays.equals(body, 2, 2 + 32, RETRY_RANDOM, 0, 32);
        r.at += 32;
        if (!r.skipVector(1, 32) || !r.skip(2 + 1)) {
            return ServerHelloKind.unreadable("the ServerHello does not parse");
        }
        int version = legacy;
        if (r.at < body.length) {
            Extensions ext = Extensions.read(r, "ServerHello");
            if (ext.problem != null) {
                return ServerHelloKind.unreadable(ext.problem);
            }
            if (ext.supportedVersion >= 0) {
                version = ext.supportedVersion;
            }
        }
        if (retry && version != TLS13) {
            return ServerHelloKind.unreadable("a HelloRetryRequest that does not select TLS 1.3");
        }
        return new ServerHelloKind(retry, version, null);
    }

    /** The one host_name of a server_name extension (RFC 6066, 3), read strictly. */
    private static ClientHelloName serverName(byte[] data) {
        Reader r = new Reader(data);
        if (data.length < 2 || r.u16() != data.length - 2) {
            return ClientHelloName.unreadable("the ClientHello's server_name extension does not parse");
        }
        if (r.at == data.length) {
            return ClientHelloName.unreadable("the ClientHello's server_name list is empty");
        }
        if (r.at + 3 > data.length) {
            return ClientHelloName.unreadable("the ClientHello's server_name extension does not parse");
        }
        int type = data[r.at++] & 0xff;
        int length = r.u16();
        if (type != 0) {
            return ClientHelloName.unreadable("the ClientHello names its server with an unknown name type " + type);
        }
        if (r.at + length != data.length) {
            return ClientHelloName.unreadable(
                    r.at + length < data.length
                            ? "the ClientHello names more than one server"
                            : "the ClientHello's server_name extension does not parse");
        }
        String problem = hostNameProblem(data, r.at, length);
        if (problem != null) {
            return ClientHelloName.unreadable("the ClientHello's server name " + problem);
        }
        return new ClientHelloName(
                new String(data, r.at, length, java.nio.charset.StandardCharsets.US_ASCII).toLowerCase(Locale.ROOT),
                false,
                null);
    }

    /**
     * Why bytes are no host name as SNI carries it (ASCII letters, digits, '-' and '_' in dot-separated labels, no
     * trailing dot, at most 253 characters; RFC 6066 3 and RFC 5890), or null when they are one.
     */
    private static String hostNameProblem(byte[] b, int from, int length) {
        if (length == 0) {
            return "is empty";
        }
        if (length > 253) {
            return "is longer than 253 characters";
        }
        int label = 0;
        for (int i = from; i < from + length; i++) {
            int c = b[i] & 0xff;
            if (c == '.') {
                if (label == 0) {
                    return i == from + length - 1 ? "ends with a dot" : "has an empty label";
                }
                label = 0;
            } else if ((c >= 'a' && c <= 'z')
                    || (c >= 'A' && c <= 'Z')
                    || (c >= '0' && c <= '9')
                    || c == '-'
                    || c == '_') {
                if (++label > 63) {
                    return "has a label longer than 63 characters";
                }
            } else {
                return c >= 0x80
                        ? "is not ASCII (an internationalised name goes as its A-label, xn--…)"
                        : "has a character no host name has (0x" + Integer.toHexString(c) + ")";
            }
        }
        return label == 0 ? "ends with a dot" : null;
    }

    /**
     * Whether a server name (as a ClientHello carries it; null when it carries none) stands for the CONNECT target:
     * the one comparison of SNI and CONNECT host, for relayed tunnels and interception alike. The name must be a host
     * name as SNI spells it and equal the target's canonical host, ignoring ASCII case; no name stands for an IP
     * address only.
     */
    public static boolean names(String sni, dev.agentjail.policy.Target target) {
        if (sni == null) {
            return target.kind() != dev.agentjail.policy.HostKind.DNS;
        }
        // A character past Latin-1 becomes '?', which no host name has: what passes is ASCII.
        byte[] b = sni.getBytes(java.nio.charset.StandardCharsets.ISO_8859_1);
        return hostNameProblem(b, 0, b.length) == null && sni.equalsIgnoreCase(target.host());
    }

    /** A hello's extension block, read once: types in order, any repeat refused. */
    private static final class Extensions {
        final Set<Integer> types = new HashSet<>();
        byte[] serverName;
        int supportedVersion = -1;
        String problem;

        static Extensions read(Reader r, String hello) {
            Extensions e = new Extensions();
            String unparsed = "the " + hello + "'s extensions do not parse";
            if (r.at + 2 > r.b.length) {
                e.problem = unparsed;
                return e;
            }
            int end = r.at + 2 + r.u16();
            if (end != r.b.length) {
                e.problem = unparsed;
                return e;
            }
            while (r.at < end) {
                if (r.at + 4 > end) {
                    e.problem = unparsed;
                    return e;
                }
                int type = r.u16();
                int length = r.u16();
                if (r.at + length > end) {
                    e.problem = unparsed;
                    return e;
                }
                if (!e.types.add(type)) {
                    e.problem = "the " + hello + " carries extension " + type + " twice";
                    return e;
                }
                if (type == SERVER_NAME) {
                    e.serverName = Arrays.copyOfRange(r.b, r.at, r.at + length);
                } else if (type == SUPPORTED_VERSIONS && length == 2) {
                    e.supportedVersion = ((r.b[r.at] & 0xff) << 8) | (r.b[r.at + 1] & 0xff);
                }
                r.at += length;
            }
            return e;
        }
    }

    private static final class Reader {
        final byte[] b;
        int at;

        Reader(byte[] b) {
            this.b = b;
        }

        int u16() {
            int v = ((b[at] & 0xff) << 8) | (b[at + 1] & 0xff);
            at += 2;
            return v;
        }

        boolean skip(int n) {
            if (at + n > b.length) {
                return false;
            }
            at += n;
            return true;
        }

        /** Skips a vector with a {@code lengthBytes}-byte length of at most {@code max}. */
        boolean skipVector(int lengthBytes, int max) {
            if (at + lengthBytes > b.length) {
                return false;
            }
            int n = lengthBytes == 1 ? b[at] & 0xff : ((b[at] & 0xff) << 8) | (b[at + 1] & 0xff);
            at += lengthBytes;
            return n <= max && skip(n);
        }
    }
}

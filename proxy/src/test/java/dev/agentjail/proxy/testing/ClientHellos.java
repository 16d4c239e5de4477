package dev.agentjail.proxy.testing;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.KeyPairGenerator;
import java.security.interfaces.ECPublicKey;
import java.security.spec.ECGenParameterSpec;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;

/**
 * TLS ClientHellos for tests of what looks at a connection's first bytes: real ones, as a JDK client sends them, and
 * crafted ones whose every extension a test picks (several names, repeated extensions, a key share that forces a
 * HelloRetryRequest), written from RFC 8446 and RFC 6066.
 */
public final class ClientHellos {
    public static final int X25519 = 0x001d;
    public static final int SECP256R1 = 0x0017;
    public static final int SECP384R1 = 0x0018;

    /** The random of a HelloRetryRequest (RFC 8446, 4.1.3). */
    public static final byte[] RETRY_RANDOM =
            HexFormat.of().parseHex("cf21ad74e59a6111be1d8c021e65b891c2a211167abb8c5e079e09e2c8a8339c");

    private ClientHellos() {}

    /** The first TLS record a JDK client sends, with {@code sni} as its server name (none when null). */
    public static byte[] of(String sni) throws Exception {
        SSLEngine engine = SSLContext.getDefault().createSSLEngine("peer.invalid", 443);
        engine.setUseClientMode(true);
        SSLParameters parameters = engine.getSSLParameters();
        parameters.setServerNames(sni == null ? List.of() : List.of(new SNIHostName(sni)));
        engine.setSSLParameters(parameters);
        ByteBuffer out = ByteBuffer.allocate(engine.getSession().getPacketBufferSize());
        engine.wrap(ByteBuffer.allocate(0), out);
        out.flip();
        byte[] bytes = new byte[out.remaining()];
        out.get(bytes);
        return bytes;
    }

    /** A crafted TLS 1.3 ClientHello (also offering 1.2) naming {@code sni}, with an x25519 key share. */
    public static Crafted craft(String sni) {
        Crafted c = new Crafted();
        if (sni != null) {
            c.names(0, sni.getBytes(StandardCharsets.UTF_8));
        }
        return c;
    }

    /**
     * A ServerHello record (a HelloRetryRequest when {@code retry}) selecting {@code version} through supported_versions,
     * or through its legacy version alone when {@code version} is 0x0303 or older.
     */
    public static byte[] serverHello(boolean retry, int version) {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        u16(body, Math.min(version, 0x0303));
        byte[] random = retry ? RETRY_RANDOM : new byte[32];
        if (!retry) {
            new Random(5).nextBytes(random);
        }
        body.writeBytes(random);
        body.write(0);
        u16(body, version >= 0x0304 ? 0x1301 : 0xc02f);
        body.write(0);
        if (version >= 0x0304) {
            u16(body, 6);
            u16(body, 43);
            u16(body, 2);
            u16(body, version);
        }
        byte[] b = body.toByteArray();
        ByteArrayOutputStream m = new ByteArrayOutputStream();
        m.write(2);
        m.write(b.length >> 16);
        u16(m, b.length);
        m.writeBytes(b);
        return records(m.toByteArray(), 1 << 14);
    }

    /** Splits one handshake message into plaintext handshake records of at most {@code size} bytes each. */
    public static byte[] records(byte[] handshake, int size) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int at = 0; at < handshake.length; at += size) {
            int n = Math.min(size, handshake.length - at);
            out.write(22);
            out.write(3);
            out.write(1);
            out.write(n >> 8);
            out.write(n);
            out.write(handshake, at, n);
        }
        return out.toByteArray();
    }

    /** A ClientHello whose extensions a test sets one by one; extensions are written in the order they were set. */
    public static final class Crafted {
        private final List<int[]> types = new ArrayList<>();
        private final List<byte[]> data = new ArrayList<>();
        private byte[] keyShare;
        private int[] versions = {0x0304, 0x0303};
        private int[] groups = {X25519, SECP256R1, SECP384R1};
        private boolean noExtensions;

        private Crafted() {
            byte[] key = new byte[32];
            new Random(7).nextBytes(key);
            keyShare = share(X25519, key);
        }

        /** Adds a server_name extension with one entry per name, all of {@code type} (0: host_name). */
        public Crafted names(int type, byte[]... names) {
            ByteArrayOutputStream list = new ByteArrayOutputStream();
            for (byte[] n : names) {
                list.write(type);
                u16(list, n.length);
                list.writeBytes(n);
            }
            ByteArrayOutputStream ext = new ByteArrayOutputStream();
            u16(ext, list.size());
            ext.writeBytes(list.toByteArray());
            return extension(0, ext.toByteArray());
        }

        public Crafted extension(int type, byte[] body) {
            types.add(new int[] {type});
            data.add(body);
            return this;
        }

        /** No key share at all: a TLS 1.3 server must answer with a HelloRetryRequest naming a group. */
        public Crafted emptyKeyShare() {
            keyShare = new byte[0];
            return this;
        }

        /** A key share for secp256r1 or secp384r1 (a real point), or x25519 (random bytes). */
        public Crafted keyShare(int group) throws Exception {
            if (group == X25519) {
                byte[] key = new byte[32];
                new Random(11).nextBytes(key);
                keyShare = share(group, key);
                return this;
            }
            KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
            g.initialize(new ECGenParameterSpec(group == SECP256R1 ? "secp256r1" : "secp384r1"));
            ECPublicKey pub = (ECPublicKey) g.generateKeyPair().getPublic();
            int size = group == SECP256R1 ? 32 : 48;
            byte[] point = new byte[1 + 2 * size];
            point[0] = 4;
            copyUnsigned(pub.getW().getAffineX().toByteArray(), point, 1, size);
            copyUnsigned(pub.getW().getAffineY().toByteArray(), point, 1 + size, size);
            keyShare = share(group, point);
            return this;
        }

        /** Offers only TLS 1.2 (no supported_versions, no key share). */
        public Crafted tls12() {
            versions = null;
            keyShare = null;
            return this;
        }

        public Crafted groups(int... groups) {
            this.groups = groups;
            return this;
        }

        /** Echoes a HelloRetryRequest's cookie extension (its data as the server sent it). */
        public Crafted cookie(byte[] extensionData) {
            return extension(44, extensionData);
        }

        /** A ClientHello that ends after its compression methods, as SSL 3.0 allowed. */
        public Crafted withoutExtensions() {
            noExtensions = true;
            return this;
        }

        /** The handshake message: type, 24-bit length, body. */
        public byte[] message() {
            ByteArrayOutputStream body = new ByteArrayOutputStream();
            u16(body, 0x0303);
            byte[] random = new byte[32];
            new Random(3).nextBytes(random);
            body.writeBytes(random);
            body.write(32);
            body.writeBytes(Arrays.copyOf(random, 32));
            int[] suites = {0x1301, 0x1302, 0x1303, 0xc02b, 0xc02c, 0xc02f, 0xc030};
            u16(body, suites.length * 2);
            for (int s : suites) {
                u16(body, s);
            }
            body.write(1);
            body.write(0);
            if (!noExtensions) {
                ByteArrayOutputStream ext = new ByteArrayOutputStream();
                for (int i = 0; i < types.size(); i++) {
                    u16(ext, types.get(i)[0]);
                    u16(ext, data.get(i).length);
                    ext.writeBytes(data.get(i));
                }
                standard(ext);
                u16(body, ext.size());
                body.writeBytes(ext.toByteArray());
            }
            byte[] b = body.toByteArray();
            ByteArrayOutputStream m = new ByteArrayOutputStream();
            m.write(1);
            m.write(b.length >> 16);
            u16(m, b.length);
            m.writeBytes(b);
            return m.toByteArray();
        }

        /** The ClientHello in one record. */
        public byte[] record() {
            byte[] m = message();
            return records(m, m.length);
        }

        private void standard(ByteArrayOutputStream ext) {
            ByteArrayOutputStream g = new ByteArrayOutputStream();
            u16(g, groups.length * 2);
            for (int x : groups) {
                u16(g, x);
            }
            extension(ext, 10, g.toByteArray());
            extension(ext, 11, new byte[] {1, 0});
            int[] signatures = {0x0403, 0x0503, 0x0804, 0x0805, 0x0401, 0x0501};
            ByteArrayOutputStream s = new ByteArrayOutputStream();
            u16(s, signatures.length * 2);
            for (int x : signatures) {
                u16(s, x);
            }
            extension(ext, 13, s.toByteArray());
            if (versions != null) {
                ByteArrayOutputStream v = new ByteArrayOutputStream();
                v.write(versions.length * 2);
                for (int x : versions) {
                    u16(v, x);
                }
                extension(ext, 43, v.toByteArray());
                extension(ext, 45, new byte[] {1, 1});
            }
            if (keyShare != null) {
                ByteArrayOutputStream k = new ByteArrayOutputStream();
                u16(k, keyShare.length);
                k.writeBytes(keyShare);
                extension(ext, 51, k.toByteArray());
            }
        }

        private static void extension(ByteArrayOutputStream out, int type, byte[] body) {
            u16(out, type);
            u16(out, body.length);
            out.writeBytes(body);
        }

        private static byte[] share(int group, byte[] key) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            u16(out, group);
            u16(out, key.length);
            out.writeBytes(key);
            return out.toByteArray();
        }

        private static void copyUnsigned(byte[] from, byte[] to, int at, int size) {
            int skip = Math.max(0, from.length - size);
            int n = from.length - skip;
            System.arraycopy(from, skip, to, at + size - n, n);
        }
    }

    private static void u16(ByteArrayOutputStream out, int v) {
        out.write(v >> 8);
        out.write(v);
    }
}

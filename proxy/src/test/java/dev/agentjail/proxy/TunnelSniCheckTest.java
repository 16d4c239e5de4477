package dev.agentjail.proxy;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.policy.Authorities;
import dev.agentjail.policy.Target;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** A relayed tunnel goes on only when the client's first bytes are a ClientHello naming the CONNECT host. */
class TunnelSniCheckTest {
    private final List<String> refusals = new ArrayList<>();

    private static byte[] clientHello(String sni) throws Exception {
        return dev.agentjail.proxy.testing.ClientHellos.of(sni);
    }

    private EmbeddedChannel channel(String connect) throws Exception {
        Target target = Authorities.parseAuthority(connect, 443);
        return new EmbeddedChannel(new TunnelSniCheck(
                target, (reason, detail) -> refusals.add(reason + ": " + detail), 16 * 1024, 10_000));
    }

    /** Everything the relay after the check received, as bytes. */
    private static byte[] relayed(EmbeddedChannel channel) {
        ByteBuf all = Unpooled.buffer();
        ByteBuf b;
        while ((b = channel.readInbound()) != null) {
            all.writeBytes(b);
            b.release();
        }
        byte[] bytes = ByteBufUtil.getBytes(all);
        all.release();
        return bytes;
    }

    @ParameterizedTest
    @CsvSource({
        "cdn.example.com:443, cdn.example.com",
        "cdn.example.com:443, CDN.Example.COM",
        "cdn.example.com:8443, cdn.example.com",
    })
    void aClientHelloNamingTheConnectHostGoesOnWhole(String connect, String sni) throws Exception {
        EmbeddedChannel channel = channel(connect);
        byte[] hello = clientHello(sni);

        // In two pieces: the check waits for the whole ClientHello.
        channel.writeInbound(Unpooled.wrappedBuffer(hello, 0, 10));
        assertNull(channel.readInbound());
        channel.writeInbound(Unpooled.wrappedBuffer(hello, 10, hello.length - 10));
        channel.writeInbound(Unpooled.copiedBuffer("after", StandardCharsets.US_ASCII));

        byte[] expected = new byte[hello.length + 5];
        System.arraycopy(hello, 0, expected, 0, hello.length);
        System.arraycopy("after".getBytes(StandardCharsets.US_ASCII), 0, expected, hello.length, 5);
        assertArrayEquals(expected, relayed(channel));
        assertEquals(List.of(), refusals);
        assertTrue(channel.isOpen());
        assertNull(channel.pipeline().get(TunnelSniCheck.class), "the check leaves once it has decided");
        assertFalse(channel.finishAndReleaseAll());
    }

    @ParameterizedTest
    @CsvSource(
            value = {
                "cdn.example.com:443, other.example.net, TLS server name does not match the CONNECT host cdn.example.com",
                "cdn.example.com:443, cdn.example.com.evil.test, TLS server name does not match the CONNECT host"
                        + " cdn.example.com",
                "cdn.example.com:443, NONE, the ClientHello names no server",
            },
            nullValues = "NONE")
    void aClientHelloNamingAnotherServerOrNoneClosesTheTunnel(String connect, String sni, String detail)
            throws Exception {
        EmbeddedChannel channel = channel(connect);

        channel.writeInbound(Unpooled.wrappedBuffer(clientHello(sni)));

        assertArrayEquals(new byte[0], relayed(channel), "a byte reached the relay");
        assertFalse(channel.isOpen());
        assertEquals(1, refusals.size(), refusals::toString);
        assertTrue(refusals.get(0).startsWith(ProxyReasons.SNI_MISMATCH + ": " + detail), refusals::toString);
        assertFalse(channel.finishAndReleaseAll());
    }

    /** {@code hello} (one TLS record) with an empty extension of {@code type} added after its others. */
    private static byte[] withExtension(byte[] hello, int type) {
        int at = 5 + 4 + 2 + 32;
        at += 1 + (hello[at] & 0xff);
        at += 2 + (((hello[at] & 0xff) << 8) | (hello[at + 1] & 0xff));
        at += 1 + (hello[at] & 0xff);
        int extensionsLength = ((hello[at] & 0xff) << 8) | (hello[at + 1] & 0xff);
        byte[] out = java.util.Arrays.copyOf(hello, hello.length + 4);
        out[hello.length] = (byte) (type >> 8);
        out[hello.length + 1] = (byte) type;
        out[at] = (byte) ((extensionsLength + 4) >> 8);
        out[at + 1] = (byte) (extensionsLength + 4);
        int record = (((hello[3] & 0xff) << 8) | (hello[4] & 0xff)) + 4;
        out[3] = (byte) (record >> 8);
        out[4] = (byte) record;
        int handshake = (((hello[6] & 0xff) << 16) | ((hello[7] & 0xff) << 8) | (hello[8] & 0xff)) + 4;
        out[6] = (byte) (handshake >> 16);
        out[7] = (byte) (handshake >> 8);
        out[8] = (byte) handshake;
        return out;
    }

    @ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(ints = {0xfe0d, 0xffce})
    void aClientHelloThatHidesItsRealServerNameClosesTheTunnel(int extension) throws Exception {
        EmbeddedChannel channel = channel("cdn.example.com:443");

        // The outer name is the allowed one; the encrypted inner one picks any origin the CDN serves.
        channel.writeInbound(Unpooled.wrappedBuffer(withExtension(clientHello("cdn.example.com"), extension)));

        assertArrayEquals(new byte[0], relayed(channel));
        assertFalse(channel.isOpen());
        assertTrue(refusals.get(0).contains("hides its server name"), refusals::toString);
        assertFalse(channel.finishAndReleaseAll());
    }

    @Test
    void anotherUnknownExtensionChangesNothing() throws Exception {
        EmbeddedChannel channel = channel("cdn.example.com:443");
        byte[] hello = withExtension(clientHello("cdn.example.com"), 0x7a7a);

        channel.writeInbound(Unpooled.wrappedBuffer(hello));

        assertArrayEquals(hello, relayed(channel));
        assertEquals(List.of(), refusals);
        assertFalse(channel.finishAndReleaseAll());
    }

    @Test
    void noServerNameIsWhatAClientSendsForAnIpAddress() throws Exception {
        EmbeddedChannel channel = channel("203.0.113.7:443");
        byte[] hello = clientHello(null);

        channel.writeInbound(Unpooled.wrappedBuffer(hello));

        assertArrayEquals(hello, relayed(channel));
        assertEquals(List.of(), refusals);
        assertFalse(channel.finishAndReleaseAll());
    }

    @ParameterizedTest
    @CsvSource({"cdn.example.com:443", "203.0.113.7:443"})
    void bytesThatAreNoTlsAtAllCloseTheTunnel(String connect) throws Exception {
        EmbeddedChannel channel = channel(connect);

        channel.writeInbound(Unpooled.copiedBuffer("GET / HTTP/1.1\r\nHost: x\r\n\r\n", StandardCharsets.US_ASCII));

        assertArrayEquals(new byte[0], relayed(channel));
        assertFalse(channel.isOpen());
        assertEquals(1, refusals.size(), refusals::toString);
        assertTrue(refusals.get(0).contains("no TLS ClientHello"), refusals::toString);
        assertFalse(channel.finishAndReleaseAll());
    }

    @Test
    void theHostIsComparedAsTheConnectNamedIt() {
        Target target = new Target("cdn.example.com", dev.agentjail.policy.HostKind.DNS, 443);
        assertTrue(TunnelSniCheck.matches("cdn.example.com.", target));
        assertFalse(TunnelSniCheck.matches("cdn.example.co", target));
        assertFalse(TunnelSniCheck.matches(null, target));
    }
}

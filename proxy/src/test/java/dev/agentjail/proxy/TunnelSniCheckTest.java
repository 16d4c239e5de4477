package dev.agentjail.proxy;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.policy.Authorities;
import dev.agentjail.policy.Target;
import dev.agentjail.proxy.testing.ClientHellos;
import dev.agentjail.proxy.tls.Hellos;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A relayed tunnel goes on only while every ClientHello in it names the CONNECT host: the first, the one after a
 * HelloRetryRequest, and none later (a TLS 1.2 renegotiation's is encrypted, so it is refused unread).
 */
class TunnelSniCheckTest {
    private static final String HOST = "cdn.example.com";
    private final List<String> refusals = new ArrayList<>();
    private TunnelSniCheck gate;

    private EmbeddedChannel channel(String connect) throws Exception {
        return channel(connect, true);
    }

    private EmbeddedChannel channel(String connect, boolean relayed) throws Exception {
        Target target = Authorities.parseAuthority(connect, 443);
        gate = new TunnelSniCheck(
                target, (reason, detail) -> refusals.add(reason + ": " + detail), 16 * 1024, 10_000, relayed);
        return new EmbeddedChannel(gate);
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

    private static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            out.writeBytes(p);
        }
        return out.toByteArray();
    }

    private void assertRefused(EmbeddedChannel channel, String reason, String detail) {
        assertFalse(channel.isOpen(), "the connection stays open");
        assertEquals(1, refusals.size(), refusals::toString);
        assertTrue(refusals.get(0).startsWith(reason + ": "), refusals::toString);
        assertTrue(refusals.get(0).contains(detail), refusals::toString);
    }

    @ParameterizedTest
    @CsvSource({
        "cdn.example.com:443, cdn.example.com",
        "cdn.example.com:443, CDN.Example.COM",
        "cdn.example.com:8443, cdn.example.com",
    })
    void aClientHelloNamingTheConnectHostGoesOnWhole(String connect, String sni) throws Exception {
        EmbeddedChannel channel = channel(connect);
        byte[] hello = ClientHellos.of(sni);

        // In two pieces: the check waits for the whole ClientHello.
        channel.writeInbound(Unpooled.wrappedBuffer(hello, 0, 10));
        assertNull(channel.readInbound());
        channel.writeInbound(Unpooled.wrappedBuffer(hello, 10, hello.length - 10));

        assertArrayEquals(hello, relayed(channel));
        assertEquals(List.of(), refusals);
        assertTrue(channel.isOpen());
        assertInstanceOf(ClientHandshake.Phase.AwaitingServerHello.class, gate.phase());
        assertFalse(channel.finishAndReleaseAll());
    }

    /** Every way to name a server in a ClientHello that a server could read as another name than the gate did. */
    static Stream<Arguments> namesThatAreRefused() {
        byte[] host = HOST.getBytes(StandardCharsets.US_ASCII);
        byte[] other = "other.example.net".getBytes(StandardCharsets.US_ASCII);
        return Stream.of(
                Arguments.of("another name", ClientHellos.craft("other.example.net"), "does not match"),
                Arguments.of("a longer name", ClientHellos.craft("cdn.example.com.evil.test"), "does not match"),
                Arguments.of("no name", ClientHellos.craft(null), "names no server"),
                Arguments.of("a trailing dot", ClientHellos.craft("cdn.example.com."), "ends with a dot"),
                Arguments.of("an empty label", ClientHellos.craft("cdn..example.com"), "empty label"),
                Arguments.of("a leading dot", ClientHellos.craft(".cdn.example.com"), "empty label"),
                Arguments.of("a zero-length name", ClientHellos.craft(""), "is empty"),
                Arguments.of("a port", ClientHellos.craft("cdn.example.com:443"), "has a character"),
                Arguments.of("a NUL", ClientHellos.craft("cdn.example.com\0.evil.test"), "has a character"),
                Arguments.of("a unicode name", ClientHellos.craft("cdn.exämple.com"), "not ASCII"),
                Arguments.of("a Kelvin sign", ClientHellos.craft("cdn.example.\u212aom"), "not ASCII"),
                Arguments.of("a percent escape", ClientHellos.craft("cdn%2eexample.com"), "has a character"),
                Arguments.of(
                        "two names, the checked one first",
                        ClientHellos.craft(null).names(0, host, other),
                        "more than one server"),
                Arguments.of(
                        "two names, the checked one last",
                        ClientHellos.craft(null).names(0, other, host),
                        "more than one server"),
                Arguments.of(
                        "two server_name extensions", ClientHellos.craft(HOST).names(0, other), "extension 0 twice"),
                Arguments.of(
                        "a name of an unknown type", ClientHellos.craft(null).names(1, host), "unknown name type"),
                Arguments.of(
                        "an empty server_name list",
                        ClientHellos.craft(null).extension(0, new byte[] {0, 0}),
                        "list is empty"),
                Arguments.of(
                        "an empty server_name extension",
                        ClientHellos.craft(null).extension(0, new byte[0]),
                        "does not parse"),
                Arguments.of(
                        "a repeated other extension",
                        ClientHellos.craft(HOST).extension(0x7a7a, new byte[0]).extension(0x7a7a, new byte[0]),
                        "twice"),
                Arguments.of(
                        "ECH", ClientHellos.craft(HOST).extension(0xfe0d, new byte[] {1}), "hides its server name"),
                Arguments.of(
                        "a draft ECH",
                        ClientHellos.craft(HOST).extension(0xfe0a, new byte[] {1}),
                        "hides its server name"),
                Arguments.of(
                        "draft ESNI",
                        ClientHellos.craft(HOST).extension(0xffce, new byte[] {1}),
                        "hides its server name"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("namesThatAreRefused")
    void aFirstClientHelloThatNamesAnotherServerOrNoneReadablyIsRefused(
            String name, ClientHellos.Crafted hello, String detail) throws Exception {
        EmbeddedChannel channel = channel(HOST + ":443");

        channel.writeInbound(Unpooled.wrappedBuffer(hello.record()));

        assertArrayEquals(new byte[0], relayed(channel), "a byte reached the relay");
        assertRefused(channel, ProxyReasons.SNI_MISMATCH, detail);
        assertFalse(channel.finishAndReleaseAll());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("namesThatAreRefused")
    void aSecondClientHelloAfterAHelloRetryRequestIsJudgedTheSameWay(
            String name, ClientHellos.Crafted second, String detail) throws Exception {
        EmbeddedChannel channel = channel(HOST + ":443");
        byte[] first = ClientHellos.craft(HOST).emptyKeyShare().record();
        channel.writeInbound(Unpooled.wrappedBuffer(first));
        assertArrayEquals(first, relayed(channel));

        gate.serverHello(Hellos.serverHello(retryBody()));
        // The compatibility ChangeCipherSpec (RFC 8446, D.4) goes on; the second ClientHello waits for its verdict.
        byte[] ccs = {20, 3, 3, 0, 1, 1};
        channel.writeInbound(Unpooled.wrappedBuffer(concat(ccs, second.record())));

        assertArrayEquals(ccs, relayed(channel), "the second ClientHello reached the relay");
        assertRefused(channel, ProxyReasons.SNI_MISMATCH, detail);
        assertFalse(channel.finishAndReleaseAll());
    }

    private static byte[] retryBody() {
        byte[] record = ClientHellos.serverHello(true, Hellos.TLS13);
        return java.util.Arrays.copyOfRange(record, 5 + 4, record.length);
    }

    @Test
    void aSecondClientHelloNamingTheConnectHostGoesOnAndSettlesTheHandshake() throws Exception {
        EmbeddedChannel channel = channel(HOST + ":443");
        channel.writeInbound(
                Unpooled.wrappedBuffer(ClientHellos.craft(HOST).emptyKeyShare().record()));
        relayed(channel);
        gate.serverHello(Hellos.serverHello(retryBody()));
        assertInstanceOf(ClientHandshake.Phase.RetryRequested.class, gate.phase());

        byte[] second = ClientHellos.records(ClientHellos.craft(HOST).message(), 7);
        channel.writeInbound(Unpooled.wrappedBuffer(second));
        assertArrayEquals(second, relayed(channel));

        byte[] real = ClientHellos.serverHello(false, Hellos.TLS13);
        gate.serverHello(Hellos.serverHello(java.util.Arrays.copyOfRange(real, 9, real.length)));
        assertEquals(new ClientHandshake.Phase.Settled(Hellos.TLS13), gate.phase());
        // Encrypted records pass, split anywhere; a handshake record in the clear no longer does.
        byte[] data = {23, 3, 3, 0, 4, 9, 9, 9, 9, 23, 3, 3, 0, 2, 8, 8};
        channel.writeInbound(Unpooled.wrappedBuffer(data, 0, 3));
        channel.writeInbound(Unpooled.wrappedBuffer(data, 3, 8));
        channel.writeInbound(Unpooled.wrappedBuffer(data, 11, data.length - 11));
        assertArrayEquals(data, relayed(channel));
        channel.writeInbound(Unpooled.wrappedBuffer(ClientHellos.craft(HOST).record()));
        assertArrayEquals(new byte[0], relayed(channel));
        assertRefused(channel, ProxyReasons.TUNNEL_TLS_UNREADABLE, "after the TLS 1.3 ServerHello");
        assertFalse(channel.finishAndReleaseAll());
    }

    @Test
    void onceSettledTheRecordsOfOneReadGoOnAsOneBuffer() throws Exception {
        EmbeddedChannel channel = channel(HOST + ":443");
        channel.writeInbound(Unpooled.wrappedBuffer(ClientHellos.craft(HOST).record()));
        relayed(channel);
        byte[] real = ClientHellos.serverHello(false, Hellos.TLS13);
        gate.serverHello(Hellos.serverHello(java.util.Arrays.copyOfRange(real, 9, real.length)));
        ByteArrayOutputStream records = new ByteArrayOutputStream();
        for (int i = 0; i < 50; i++) {
            records.writeBytes(new byte[] {23, 3, 3, 0, 3, 1, 2, 3});
        }

        channel.writeInbound(Unpooled.wrappedBuffer(records.toByteArray()));

        ByteBuf one = channel.readInbound();
        assertArrayEquals(records.toByteArray(), ByteBufUtil.getBytes(one));
        one.release();
        assertNull(channel.readInbound(), "one slice per read, not one per record");
        assertFalse(channel.finishAndReleaseAll());
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 5, 100})
    void aClientHelloSplitAcrossManyRecordsIsReadWhole(int size) throws Exception {
        EmbeddedChannel channel = channel(HOST + ":443");
        byte[] good = ClientHellos.records(ClientHellos.craft(HOST).message(), size);
        for (byte b : good) {
            channel.writeInbound(Unpooled.wrappedBuffer(new byte[] {b}));
        }
        assertArrayEquals(good, relayed(channel));
        assertEquals(List.of(), refusals);

        EmbeddedChannel bad = channel(HOST + ":443");
        bad.writeInbound(Unpooled.wrappedBuffer(
                ClientHellos.records(ClientHellos.craft("x.test").message(), size)));
        assertArrayEquals(new byte[0], relayed(bad));
        assertRefused(bad, ProxyReasons.SNI_MISMATCH, "does not match");
        assertFalse(channel.finishAndReleaseAll());
        assertFalse(bad.finishAndReleaseAll());
    }

    @Test
    void twoClientHellosBeforeTheServerAnsweredAreRefused() throws Exception {
        EmbeddedChannel channel = channel(HOST + ":443");
        byte[] first = ClientHellos.craft(HOST).record();

        channel.writeInbound(Unpooled.wrappedBuffer(
                concat(first, ClientHellos.craft("other.test").record())));

        assertArrayEquals(first, relayed(channel));
        assertRefused(channel, ProxyReasons.TUNNEL_TLS_UNREADABLE, "did not ask for");
        assertFalse(channel.finishAndReleaseAll());
    }

    @Test
    void aClientHelloWithAnotherMessageInItsRecordIsRefused() throws Exception {
        EmbeddedChannel channel = channel(HOST + ":443");
        byte[] both = concat(
                ClientHellos.craft(HOST).message(),
                ClientHellos.craft("other.test").message());

        channel.writeInbound(Unpooled.wrappedBuffer(ClientHellos.records(both, both.length)));

        assertArrayEquals(new byte[0], relayed(channel), "the record holding both was relayed");
        assertRefused(channel, ProxyReasons.TUNNEL_TLS_UNREADABLE, "did not ask for");
        assertFalse(channel.finishAndReleaseAll());
    }

    @Test
    void anotherRecordInTheMiddleOfAClientHelloIsRefused() throws Exception {
        EmbeddedChannel channel = channel(HOST + ":443");
        byte[] m = ClientHellos.craft(HOST).message();
        byte[] head = ClientHellos.records(java.util.Arrays.copyOf(m, 20), 20);

        channel.writeInbound(Unpooled.wrappedBuffer(concat(head, new byte[] {21, 3, 3, 0, 2, 1, 0})));

        assertArrayEquals(new byte[0], relayed(channel));
        assertRefused(channel, ProxyReasons.SNI_MISMATCH, "interleaved");
        assertFalse(channel.finishAndReleaseAll());
    }

    @Test
    void aTls12HandshakeGoesOnAndARenegotiationAfterItIsRefused() throws Exception {
        EmbeddedChannel channel = channel(HOST + ":443");
        byte[] hello = ClientHellos.craft(HOST).tls12().record();
        channel.writeInbound(Unpooled.wrappedBuffer(hello));
        assertArrayEquals(hello, relayed(channel));
        byte[] sh = ClientHellos.serverHello(false, Hellos.TLS12);
        gate.serverHello(Hellos.serverHello(java.util.Arrays.copyOfRange(sh, 9, sh.length)));
        assertEquals(new ClientHandshake.Phase.Tls12(false), gate.phase());

        // ClientKeyExchange in the clear, ChangeCipherSpec, the encrypted Finished, then application data.
        byte[] flight = concat(
                ClientHellos.records(new byte[] {16, 0, 0, 2, 1, 7}, 100),
                new byte[] {20, 3, 3, 0, 1, 1},
                new byte[] {22, 3, 3, 0, 3, 5, 5, 5},
                new byte[] {23, 3, 3, 0, 2, 6, 6});
        channel.writeInbound(Unpooled.wrappedBuffer(flight));
        assertArrayEquals(flight, relayed(channel));
        assertEquals(new ClientHandshake.Phase.Settled(Hellos.TLS12), gate.phase());

        // A renegotiation: a handshake record again, its ClientHello encrypted.
        channel.writeInbound(Unpooled.wrappedBuffer(new byte[] {22, 3, 3, 0, 3, 4, 4, 4}));
        assertArrayEquals(new byte[0], relayed(channel));
        assertRefused(channel, ProxyReasons.TUNNEL_TLS_UNREADABLE, "renegotiation");
        assertFalse(channel.finishAndReleaseAll());
    }

    @Test
    void aClientHelloInTheMiddleOfATls12HandshakeIsRefused() throws Exception {
        EmbeddedChannel channel = channel(HOST + ":443");
        channel.writeInbound(
                Unpooled.wrappedBuffer(ClientHellos.craft(HOST).tls12().record()));
        relayed(channel);
        byte[] sh = ClientHellos.serverHello(false, Hellos.TLS12);
        gate.serverHello(Hellos.serverHello(java.util.Arrays.copyOfRange(sh, 9, sh.length)));

        channel.writeInbound(
                Unpooled.wrappedBuffer(ClientHellos.craft(HOST).tls12().record()));

        assertArrayEquals(new byte[0], relayed(channel));
        assertRefused(channel, ProxyReasons.TUNNEL_TLS_UNREADABLE, "did not ask for");
        assertFalse(channel.finishAndReleaseAll());
    }

    @Test
    void anUnreadableServerHelloClosesTheTunnel() throws Exception {
        EmbeddedChannel channel = channel(HOST + ":443");
        channel.writeInbound(Unpooled.wrappedBuffer(ClientHellos.craft(HOST).record()));
        relayed(channel);

        gate.serverHello(Hellos.serverHello(new byte[] {3, 3, 1}));

        assertRefused(channel, ProxyReasons.TUNNEL_TLS_UNREADABLE, "ServerHello does not parse");
        assertFalse(channel.finishAndReleaseAll());
    }

    @Test
    void earlyDataAfterTheFirstClientHelloGoesOn() throws Exception {
        EmbeddedChannel channel = channel(HOST + ":443");
        byte[] flight = concat(ClientHellos.craft(HOST).record(), new byte[] {23, 3, 3, 0, 2, 1, 2});

        channel.writeInbound(Unpooled.wrappedBuffer(flight));

        assertArrayEquals(flight, relayed(channel));
        assertEquals(List.of(), refusals);
        assertFalse(channel.finishAndReleaseAll());
    }

    @Test
    void anotherUnknownExtensionChangesNothing() throws Exception {
        EmbeddedChannel channel = channel(HOST + ":443");
        byte[] hello = ClientHellos.craft(HOST).extension(0x7a7a, new byte[0]).record();

        channel.writeInbound(Unpooled.wrappedBuffer(hello));

        assertArrayEquals(hello, relayed(channel));
        assertEquals(List.of(), refusals);
        assertFalse(channel.finishAndReleaseAll());
    }

    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void noServerNameIsWhatAClientSendsForAnIpAddress(boolean extensions) throws Exception {
        EmbeddedChannel channel = channel("203.0.113.7:443");
        ClientHellos.Crafted crafted = ClientHellos.craft(null);
        byte[] hello =
                extensions ? ClientHellos.of(null) : crafted.withoutExtensions().record();

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
        assertRefused(channel, ProxyReasons.SNI_MISMATCH, "no TLS ClientHello");
        assertFalse(channel.finishAndReleaseAll());
    }

    @Test
    void aRecordLongerThanTlsAllowsIsRefused() throws Exception {
        EmbeddedChannel channel = channel(HOST + ":443");

        channel.writeInbound(Unpooled.wrappedBuffer(new byte[] {22, 3, 1, 0x40, 1}));

        assertRefused(channel, ProxyReasons.SNI_MISMATCH, "longer than TLS allows");
        assertFalse(channel.finishAndReleaseAll());
    }

    @Test
    void noClientHelloInTimeClosesTheTunnel() throws Exception {
        Target target = Authorities.parseAuthority(HOST + ":443", 443);
        EmbeddedChannel channel = new EmbeddedChannel(
                new TunnelSniCheck(target, (reason, detail) -> refusals.add(reason + ": " + detail), 16384, 1, true));
        Thread.sleep(5);
        channel.runPendingTasks();
        channel.runScheduledPendingTasks();

        assertRefused(channel, ProxyReasons.SNI_MISMATCH, "no TLS ClientHello");
        assertFalse(channel.finishAndReleaseAll());
    }

    @Test
    void inFrontOfTheProxysOwnTlsServerWhatIsNoTlsGoesToTheTlsHandler() throws Exception {
        EmbeddedChannel channel = channel(HOST + ":443", false);
        byte[] http = "GET / HTTP/1.1\r\n\r\n".getBytes(StandardCharsets.US_ASCII);

        channel.writeInbound(Unpooled.wrappedBuffer(http));

        assertArrayEquals(http, relayed(channel));
        assertEquals(List.of(), refusals);
        assertNull(channel.pipeline().get(TunnelSniCheck.class), "the check leaves once it handed over");
        assertFalse(channel.finishAndReleaseAll());
    }

    @Test
    void inFrontOfTheProxysOwnTlsServerNoNameOrEchStandForTheConnectHostButASecondNameDoesNot() throws Exception {
        EmbeddedChannel channel = channel(HOST + ":443", false);
        byte[] first = ClientHellos.craft(null)
                .extension(0xfe0d, new byte[] {1})
                .emptyKeyShare()
                .record();
        channel.writeInbound(Unpooled.wrappedBuffer(first));
        assertArrayEquals(first, relayed(channel));
        gate.serverHello(Hellos.serverHello(retryBody()));

        channel.writeInbound(
                Unpooled.wrappedBuffer(ClientHellos.craft("other.test").record()));

        assertArrayEquals(new byte[0], relayed(channel));
        assertRefused(channel, ProxyReasons.SNI_MISMATCH, "does not match the CONNECT host cdn.example.com");
        assertFalse(channel.finishAndReleaseAll());
    }

    @Test
    void theHostIsComparedAsTheConnectNamedIt() {
        Target target = new Target(HOST, dev.agentjail.policy.HostKind.DNS, 443);
        assertTrue(Hellos.names("CDN.example.com", target));
        assertFalse(Hellos.names("cdn.example.com.", target), "SNI carries no trailing dot (RFC 6066, 3)");
        assertFalse(Hellos.names("cdn.example.co", target));
        assertFalse(Hellos.names("cdn.example.com:443", target));
        assertFalse(Hellos.names("cdn.example.\u212aom", target));
        assertFalse(Hellos.names(null, target));
        assertTrue(Hellos.names(null, new Target("203.0.113.7", dev.agentjail.policy.HostKind.IPV4, 443)));
    }
}

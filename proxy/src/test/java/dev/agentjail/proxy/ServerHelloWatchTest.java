package dev.agentjail.proxy;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.policy.Authorities;
import dev.agentjail.proxy.testing.ClientHellos;
import dev.agentjail.proxy.tls.Hellos;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The server's side of a tunnel's handshake is read as far as its ServerHello and passed on unchanged. */
class ServerHelloWatchTest {
    private final List<String> refusals = new ArrayList<>();
    private EmbeddedChannel client;
    private TunnelSniCheck gate;

    private EmbeddedChannel upstream() throws Exception {
        gate = new TunnelSniCheck(
                Authorities.parseAuthority("cdn.example.com:443", 443),
                (reason, detail) -> refusals.add(reason + ": " + detail),
                16384,
                0,
                true);
        client = new EmbeddedChannel(gate);
        client.writeInbound(
                Unpooled.wrappedBuffer(ClientHellos.craft("cdn.example.com").record()));
        releaseAll(client);
        return new EmbeddedChannel(new ServerHelloWatch(gate, false));
    }

    private static byte[] passed(EmbeddedChannel channel) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteBuf b;
        while ((b = channel.readInbound()) != null) {
            out.writeBytes(ByteBufUtil.getBytes(b));
            b.release();
        }
        return out.toByteArray();
    }

    private static void releaseAll(EmbeddedChannel channel) {
        passed(channel);
    }

    @Test
    void aRetryThenTheRealServerHelloAreReadByteByByteAndPassedOnUnchanged() throws Exception {
        EmbeddedChannel up = upstream();
        ByteArrayOutputStream flight = new ByteArrayOutputStream();
        flight.writeBytes(ClientHellos.serverHello(true, Hellos.TLS13));
        flight.writeBytes(new byte[] {20, 3, 3, 0, 1, 1});
        byte[] first = flight.toByteArray();

        for (byte b : first) {
            up.writeInbound(Unpooled.wrappedBuffer(new byte[] {b}));
        }
        assertArrayEquals(first, passed(up));
        assertInstanceOf(ClientHandshake.Phase.RetryRequested.class, gate.phase());

        client.writeInbound(
                Unpooled.wrappedBuffer(ClientHellos.craft("cdn.example.com").record()));
        releaseAll(client);
        byte[] hello = ClientHellos.serverHello(false, Hellos.TLS13);
        byte[] encrypted = {23, 3, 3, 0, 2, 7, 7};
        up.writeInbound(Unpooled.wrappedBuffer(hello), Unpooled.wrappedBuffer(encrypted));

        assertEquals(new ClientHandshake.Phase.Settled(Hellos.TLS13), gate.phase());
        ByteArrayOutputStream expected = new ByteArrayOutputStream();
        expected.writeBytes(hello);
        expected.writeBytes(encrypted);
        assertArrayEquals(expected.toByteArray(), passed(up));
        assertNull(up.pipeline().get(ServerHelloWatch.class), "the watch leaves after the ServerHello");
        assertEquals(List.of(), refusals);
        assertFalse(up.finishAndReleaseAll());
        assertFalse(client.finishAndReleaseAll());
    }

    @Test
    void aTls12ServerHelloSharingItsRecordWithTheCertificateIsRead() throws Exception {
        EmbeddedChannel up = upstream();
        byte[] sh = ClientHellos.serverHello(false, Hellos.TLS12);
        ByteArrayOutputStream messages = new ByteArrayOutputStream();
        messages.write(sh, 5, sh.length - 5);
        messages.writeBytes(new byte[] {11, 0, 0, 3, 0, 0, 0}); // An empty Certificate message.
        byte[] record = ClientHellos.records(messages.toByteArray(), 1 << 14);

        up.writeInbound(Unpooled.wrappedBuffer(record));

        assertEquals(new ClientHandshake.Phase.Tls12(false), gate.phase());
        assertArrayEquals(record, passed(up));
        assertFalse(up.finishAndReleaseAll());
        assertFalse(client.finishAndReleaseAll());
    }

    @Test
    void aServerThatSendsSomethingElseFirstClosesTheTunnel() throws Exception {
        EmbeddedChannel up = upstream();

        up.writeInbound(Unpooled.wrappedBuffer(new byte[] {23, 3, 3, 0, 2, 7, 7}));

        assertArrayEquals(new byte[0], passed(up), "the client got what the proxy could not read");
        assertFalse(up.isOpen());
        assertFalse(client.isOpen());
        assertEquals(1, refusals.size());
        assertTrue(refusals.get(0).startsWith(ProxyReasons.TUNNEL_TLS_UNREADABLE + ": "), refusals::toString);
        assertFalse(up.finishAndReleaseAll());
        assertFalse(client.finishAndReleaseAll());
    }

    @Test
    void inFrontOfTheProxysOwnTlsServerItReadsWhatTheChannelWrites() throws Exception {
        upstream();
        EmbeddedChannel own = new EmbeddedChannel(new ServerHelloWatch(gate, true));
        byte[] retry = ClientHellos.serverHello(true, Hellos.TLS13);

        own.writeOutbound(Unpooled.wrappedBuffer(retry));

        assertInstanceOf(ClientHandshake.Phase.RetryRequested.class, gate.phase());
        ByteBuf written = own.readOutbound();
        assertArrayEquals(retry, ByteBufUtil.getBytes(written));
        written.release();
        assertFalse(own.finishAndReleaseAll());
        assertFalse(client.finishAndReleaseAll());
    }
}

package dev.agentjail.proxy.ws;

import static dev.agentjail.proxy.testing.WsFrames.BINARY;
import static dev.agentjail.proxy.testing.WsFrames.CLOSE;
import static dev.agentjail.proxy.testing.WsFrames.CONTINUATION;
import static dev.agentjail.proxy.testing.WsFrames.PING;
import static dev.agentjail.proxy.testing.WsFrames.PONG;
import static dev.agentjail.proxy.testing.WsFrames.TEXT;
import static dev.agentjail.proxy.testing.WsFrames.client;
import static dev.agentjail.proxy.testing.WsFrames.clientText;
import static dev.agentjail.proxy.testing.WsFrames.closePayload;
import static dev.agentjail.proxy.testing.WsFrames.concat;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.agentjail.policy.HostKind;
import dev.agentjail.policy.RedactionPolicy;
import dev.agentjail.policy.Target;
import dev.agentjail.proxy.inspect.Inspection;
import dev.agentjail.proxy.inspect.Inspector;
import dev.agentjail.proxy.redact.BodyKind;
import dev.agentjail.proxy.redact.Findings;
import dev.agentjail.proxy.redact.Redactor;
import dev.agentjail.proxy.testing.NettyLeakGuard;
import dev.agentjail.proxy.testing.WsFrames;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import java.util.zip.Deflater;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The client-to-server chain (frames, messages, inflating, payload checks, redaction) on an EmbeddedChannel: one row
 * per frame variant, each fed whole and again one byte per read, with what comes out (messages, or the violation that
 * fails the connection).
 */
@ExtendWith(NettyLeakGuard.class)
class ClientPipelineTest {
    static final String PAT = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";
    static final String MARK = new String(
            Redactor.builtIn().redactBody(PAT.getBytes(StandardCharsets.UTF_8), BodyKind.JSON, "body", new Findings()),
            StandardCharsets.UTF_8);
    private static final Target TARGET = new Target("api.example.com", HostKind.DNS, 443);
    private static final int MAX = 128 * 1024;

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] bytes(int n, char c) {
        byte[] b = new byte[n];
        Arrays.fill(b, (byte) c);
        return b;
    }

    static Stream<Arguments> variants() {
        String half1 = PAT.substring(0, 17);
        String half2 = PAT.substring(17);
        Deflater ctx = new Deflater(Deflater.DEFAULT_COMPRESSION, true);
        byte[] first = WsFrames.deflate(ctx, utf8("{\"a\":\"" + PAT + "\"}"));
        byte[] second = WsFrames.deflate(ctx, utf8("{\"b\":\"" + PAT + "\"}")); // refers back into the first
        Deflater fresh = new Deflater(Deflater.DEFAULT_COMPRESSION, true);
        byte[] split = WsFrames.deflate(fresh, utf8("say " + PAT + " twice " + PAT));
        Deflater bomb = new Deflater(Deflater.BEST_COMPRESSION, true);
        byte[] huge = WsFrames.deflate(bomb, new byte[MAX + 1]);
        String long16 = "x".repeat(300) + " " + PAT;
        String long64 = "y".repeat(70_000) + " " + PAT;
        return Stream.of(
                row(
                        "text with a secret is redacted",
                        false,
                        List.of(clientText("key " + PAT + " end")),
                        "TEXT:key " + MARK + " end"),
                row(
                        "secret split across fragments",
                        false,
                        List.of(
                                client(false, 0, TEXT, utf8("key " + half1)),
                                client(true, 0, CONTINUATION, utf8(half2 + " end"))),
                        "TEXT:key " + MARK + " end"),
                row(
                        "ping and pong between fragments go first",
                        false,
                        List.of(
                                client(false, 0, TEXT, utf8("a " + half1)),
                                client(true, 0, PING, utf8("p")),
                                client(true, 0, PONG, utf8("q")),
                                client(false, 0, CONTINUATION, utf8(half2.substring(0, 3))),
                                client(true, 0, CONTINUATION, utf8(half2.substring(3) + " b"))),
                        "PING:p",
                        "PONG:q",
                        "TEXT:a " + MARK + " b"),
                row(
                        "a secret in a ping is redacted",
                        false,
                        List.of(client(true, 0, PING, utf8(" " + PAT))),
                        "PING: " + MARK),
                row(
                        "a secret in a close reason is redacted, the code kept",
                        false,
                        List.of(client(true, 0, CLOSE, closePayload(1000, " " + PAT))),
                        "CLOSE:1000: " + MARK),
                row("16-bit length", false, List.of(clientText(long16)), "TEXT:" + long16.replace(PAT, MARK)),
                row("64-bit length", false, List.of(clientText(long64)), "TEXT:" + long64.replace(PAT, MARK)),
                row(
                        "a binary message with a secret is blocked",
                        false,
                        List.of(client(true, 0, BINARY, utf8("\u0001\u0002 " + PAT))),
                        "FAIL:1008:websocket-secret-blocked"),
                row(
                        "a binary message without one goes on",
                        false,
                        List.of(client(true, 0, BINARY, new byte[] {1, 2, 3})),
                        "BINARY:\u0001\u0002\u0003"),
                row(
                        "an unmasked client frame",
                        false,
                        List.of(WsFrames.server(true, 0, TEXT, utf8("hi"))),
                        "FAIL:1002:websocket-protocol-error"),
                row(
                        "RSV1 with no extension",
                        false,
                        List.of(client(true, 4, TEXT, utf8("hi"))),
                        "FAIL:1002:websocket-protocol-error"),
                row("RSV2", true, List.of(client(true, 2, TEXT, utf8("hi"))), "FAIL:1002:websocket-protocol-error"),
                row("RSV3", true, List.of(client(true, 1, TEXT, utf8("hi"))), "FAIL:1002:websocket-protocol-error"),
                row(
                        "reserved opcode",
                        false,
                        List.of(client(true, 0, 3, utf8("hi"))),
                        "FAIL:1002:websocket-protocol-error"),
                row(
                        "a fragmented ping",
                        false,
                        List.of(client(false, 0, PING, utf8("hi"))),
                        "FAIL:1002:websocket-protocol-error"),
                row(
                        "a ping of 126 bytes",
                        false,
                        List.of(client(true, 0, PING, bytes(126, 'p'))),
                        "FAIL:1002:websocket-protocol-error"),
                row(
                        "a continuation with no message",
                        false,
                        List.of(client(true, 0, CONTINUATION, utf8("hi"))),
                        "FAIL:1002:websocket-protocol-error"),
                row(
                        "a new message inside a fragmented one",
                        false,
                        List.of(client(false, 0, TEXT, utf8("a")), client(true, 0, TEXT, utf8("b"))),
                        "FAIL:1002:websocket-protocol-error"),
                row(
                        "a 64-bit length that fits 16 bits",
                        false,
                        List.of(WsFrames.frame(true, 0, TEXT, utf8("hi"), WsFrames.MASK, true)),
                        "FAIL:1002:websocket-protocol-error"),
                row(
                        "a 64-bit length with its top bit set",
                        false,
                        List.of(new byte[] {(byte) 0x81, (byte) 0xff, (byte) 0x80, 0, 0, 0, 0, 0, 0, 1, 1, 2, 3, 4}),
                        "FAIL:1002:websocket-protocol-error"),
                row(
                        "a frame longer than the bound",
                        false,
                        List.of(new byte[] {(byte) 0x82, (byte) 0xff, 0, 0, 0, 0, 0x10, 0, 0, 0, 1, 2, 3, 4}),
                        "FAIL:1009:websocket-message-too-big"),
                row(
                        "fragments longer than the bound together",
                        false,
                        List.of(
                                client(false, 0, BINARY, new byte[MAX / 2 + 1]),
                                client(true, 0, CONTINUATION, new byte[MAX / 2 + 1])),
                        "FAIL:1009:websocket-message-too-big"),
                row(
                        "invalid UTF-8 text",
                        false,
                        List.of(client(true, 0, TEXT, new byte[] {'a', (byte) 0xc0, (byte) 0xaf})),
                        "FAIL:1007:websocket-invalid-utf8"),
                row(
                        "a surrogate in UTF-8",
                        false,
                        List.of(client(true, 0, TEXT, new byte[] {(byte) 0xed, (byte) 0xa0, (byte) 0x80})),
                        "FAIL:1007:websocket-invalid-utf8"),
                row(
                        "a close frame of one byte",
                        false,
                        List.of(client(true, 0, CLOSE, new byte[] {3})),
                        "FAIL:1002:websocket-protocol-error"),
                row(
                        "a close frame with code 1005",
                        false,
                        List.of(client(true, 0, CLOSE, closePayload(1005, ""))),
                        "FAIL:1002:websocket-protocol-error"),
                row(
                        "compressed, context kept across messages",
                        true,
                        List.of(client(true, 4, TEXT, first), client(true, 4, TEXT, second)),
                        "TEXT:{\"a\":\"" + MARK + "\"}",
                        "TEXT:{\"b\":\"" + MARK + "\"}"),
                row(
                        "compressed and fragmented, RSV1 on the first frame only",
                        true,
                        List.of(
                                client(false, 4, TEXT, Arrays.copyOfRange(split, 0, 9)),
                                client(true, 0, PING, utf8("x")),
                                client(true, 0, CONTINUATION, Arrays.copyOfRange(split, 9, split.length))),
                        "PING:x",
                        "TEXT:say " + MARK + " twice " + MARK),
                row(
                        "RSV1 on a continuation frame",
                        true,
                        List.of(
                                client(false, 4, TEXT, Arrays.copyOfRange(split, 0, 9)),
                                client(true, 4, CONTINUATION, Arrays.copyOfRange(split, 9, split.length))),
                        "FAIL:1002:websocket-protocol-error"),
                row(
                        "RSV1 on a control frame",
                        true,
                        List.of(client(true, 4, PING, utf8("x"))),
                        "FAIL:1002:websocket-protocol-error"),
                row(
                        "inflating past the bound",
                        true,
                        List.of(client(true, 4, BINARY, huge)),
                        "FAIL:1009:websocket-message-too-big"),
                row(
                        "corrupt compressed data",
                        true,
                        List.of(client(true, 4, TEXT, new byte[] {(byte) 0xff, (byte) 0xff, 7})),
                        "FAIL:1002:websocket-protocol-error"));
    }

    private static Arguments row(String name, boolean deflate, List<byte[]> frames, String... expected) {
        return Arguments.of(name, deflate, frames, List.of(expected));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    void eachVariantComesOutAsExpectedWholeOrOneBytePerRead(
            String name, boolean deflate, List<byte[]> frames, List<String> expected) {
        assertEquals(expected, run(deflate, frames, false, RedactionPolicy.Action.REDACT), name + " (whole)");
        assertEquals(expected, run(deflate, frames, true, RedactionPolicy.Action.REDACT), name + " (byte by byte)");
    }

    @Test
    void inBlockModeATextMessageWithASecretFailsTheConnection() {
        assertEquals(
                List.of("FAIL:1008:websocket-secret-blocked"),
                run(false, List.of(clientText("key " + PAT)), false, RedactionPolicy.Action.BLOCK));
        assertEquals(
                List.of("TEXT:clean"), run(false, List.of(clientText("clean")), false, RedactionPolicy.Action.BLOCK));
    }

    @Test
    void findingsReachTheLedgerUnderTheMessagesLocation() {
        Ledger ledger = new Ledger();
        EmbeddedChannel ch = channel(false, RedactionPolicy.Action.REDACT, ledger, new ArrayList<>());
        ch.writeInbound(Unpooled.wrappedBuffer(clientText(PAT + " and " + PAT)));
        ch.writeInbound(Unpooled.wrappedBuffer(client(true, 0, PING, utf8(PAT))));
        assertEquals(
                List.of("github-pat@websocket-text=2", "github-pat@websocket-control=1"),
                ledger.found,
                ledger.found.toString());
        assertFalse(ch.finishAndReleaseAll());
    }

    /** What the chain emits for {@code frames}: messages as {@code OPCODE:payload}, a violation as FAIL:code:reason. */
    static List<String> run(boolean deflate, List<byte[]> frames, boolean byteByByte, RedactionPolicy.Action action) {
        List<String> out = new ArrayList<>();
        EmbeddedChannel ch = channel(deflate, action, new Ledger(), out);
        byte[] all = concat(frames.toArray(byte[][]::new));
        if (byteByByte) {
            for (byte b : all) {
                ch.writeInbound(Unpooled.wrappedBuffer(new byte[] {b}));
            }
        } else {
            ch.writeInbound(Unpooled.wrappedBuffer(all));
        }
        assertFalse(ch.finishAndReleaseAll());
        return out;
    }

    private static EmbeddedChannel channel(
            boolean deflate, RedactionPolicy.Action action, WsLedger ledger, List<String> out) {
        Inspection inspection =
                new Inspection(new RedactionPolicy(action, List.of(), List.of(), List.of()), Map.of(), List.of());
        return new EmbeddedChannel(
                new FrameDecoder(true, deflate, MAX),
                new MessageAssembler(MAX),
                new MessageInflater(MAX, false),
                new PayloadCheck(),
                new ClientMessageInspector(new MessageRedaction(Inspector.of(inspection), TARGET), ledger),
                new Collector(out));
    }

    /** Writes down what reaches the end of the chain, and releases it. */
    static final class Collector extends ChannelInboundHandlerAdapter {
        private final List<String> out;
        private boolean failed;

        Collector(List<String> out) {
            this.out = out;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            WsMessage m = (WsMessage) msg;
            try {
                out.add(describe(m));
            } finally {
                m.release();
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            WsViolation v = cause instanceof WsViolation w ? w : (WsViolation) cause.getCause();
            if (!failed) {
                out.add("FAIL:" + v.code() + ":" + v.reason());
            }
            failed = true;
        }
    }

    static String describe(WsMessage m) {
        byte[] p = new byte[m.content().readableBytes()];
        m.content().getBytes(m.content().readerIndex(), p);
        String name = switch (m.opcode()) {
            case WsMessage.TEXT -> "TEXT";
            case WsMessage.BINARY -> "BINARY";
            case WsMessage.PING -> "PING";
            case WsMessage.PONG -> "PONG";
            case WsMessage.CLOSE -> "CLOSE";
            default -> "OP" + m.opcode();
        };
        if (m.opcode() == WsMessage.CLOSE && p.length >= 2) {
            return name + ":" + (((p[0] & 0xff) << 8) | (p[1] & 0xff)) + ":"
                    + new String(p, 2, p.length - 2, StandardCharsets.UTF_8);
        }
        return name + ":" + new String(p, StandardCharsets.UTF_8);
    }

    static final class Ledger implements WsLedger {
        final List<String> found = new ArrayList<>();

        @Override
        public void message(boolean fromClient, long bytes) {}

        @Override
        public void findings(String location, List<Findings.Finding> list) {
            list.forEach(f -> found.add(f.kind() + "@" + location + "=" + f.count()));
        }

        @Override
        public void failed(WsViolation v, boolean clientAtFault) {}

        @Override
        public void closed() {}
    }
}

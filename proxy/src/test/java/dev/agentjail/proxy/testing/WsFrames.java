package dev.agentjail.proxy.testing;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.zip.Deflater;
import java.util.zip.Inflater;

/** WebSocket frames built and read by hand (RFC 6455 section 5.2), for tests that send what no library would. */
public final class WsFrames {
    public static final int TEXT = 1;
    public static final int BINARY = 2;
    public static final int CONTINUATION = 0;
    public static final int CLOSE = 8;
    public static final int PING = 9;
    public static final int PONG = 10;
    public static final byte[] MASK = {0x37, (byte) 0xfa, 0x21, 0x3d};

    private WsFrames() {}

    /** A masked client frame; {@code rsv} is the three RSV bits (4 = RSV1). */
    public static byte[] client(boolean fin, int rsv, int opcode, byte[] payload) {
        return frame(fin, rsv, opcode, payload, MASK, false);
    }

    /** An unmasked frame, as a server sends it. */
    public static byte[] server(boolean fin, int rsv, int opcode, byte[] payload) {
        return frame(fin, rsv, opcode, payload, null, false);
    }

    public static byte[] clientText(String text) {
        return client(true, 0, TEXT, text.getBytes(StandardCharsets.UTF_8));
    }

    /** A frame; {@code longLength} writes a short payload's length in the 64-bit form (not the shortest). */
    public static byte[] frame(boolean fin, int rsv, int opcode, byte[] payload, byte[] mask, boolean longLength) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write((fin ? 0x80 : 0) | (rsv << 4) | opcode);
        int maskBit = mask != null ? 0x80 : 0;
        int n = payload.length;
        if (longLength || n > 0xffff) {
            out.write(maskBit | 127);
            out.writeBytes(ByteBuffer.allocate(8).putLong(n).array());
        } else if (n >= 126) {
            out.write(maskBit | 126);
            out.write(n >>> 8);
            out.write(n & 0xff);
        } else {
            out.write(maskBit | n);
        }
        byte[] body = payload.clone();
        if (mask != null) {
            out.writeBytes(mask);
            for (int i = 0; i < body.length; i++) {
                body[i] ^= mask[i % 4];
            }
        }
        out.writeBytes(body);
        return out.toByteArray();
    }

    public static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            out.writeBytes(p);
        }
        return out.toByteArray();
    }

    /** A close payload: the status code and its reason. */
    public static byte[] closePayload(int code, String reason) {
        return concat(new byte[] {(byte) (code >>> 8), (byte) code}, reason.getBytes(StandardCharsets.UTF_8));
    }

    /** One message as permessage-deflate sends it (sync flush, the trailing 00 00 ff ff removed). */
    public static byte[] deflate(Deflater deflater, byte[] plain) {
        deflater.setInput(plain);
        byte[] buf = new byte[plain.length + 1024];
        int n = deflater.deflate(buf, 0, buf.length, Deflater.SYNC_FLUSH);
        return Arrays.copyOf(buf, n - 4);
    }

    /** Inflates one permessage-deflate message with {@code inflater} (context kept by the caller). */
    public static byte[] inflate(Inflater inflater, byte[] compressed) throws Exception {
        inflater.setInput(concat(compressed, new byte[] {0, 0, (byte) 0xff, (byte) 0xff}));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] buf = new byte[64 * 1024];
        int n;
        while ((n = inflater.inflate(buf)) > 0) {
            out.write(buf, 0, n);
        }
        return out.toByteArray();
    }

    /** A frame as read from a stream. */
    public record Frame(boolean fin, int rsv, int opcode, boolean masked, byte[] payload) {
        public String text() {
            return new String(payload, StandardCharsets.UTF_8);
        }

        /** A close frame's status code. */
        public int closeCode() {
            return ((payload[0] & 0xff) << 8) | (payload[1] & 0xff);
        }

        public String closeReason() {
            return new String(payload, 2, payload.length - 2, StandardCharsets.UTF_8);
        }
    }

    /** Reads one frame, unmasking it; null at the end of the stream. */
    public static Frame read(InputStream stream) throws IOException {
        DataInputStream in = new DataInputStream(stream);
        int b0 = in.read();
        if (b0 < 0) {
            return null;
        }
        int b1 = in.readUnsignedByte();
        long n = b1 & 0x7f;
        if (n == 126) {
            n = in.readUnsignedShort();
        } else if (n == 127) {
            n = in.readLong();
        }
        byte[] mask = (b1 & 0x80) != 0 ? in.readNBytes(4) : null;
        byte[] payload = in.readNBytes((int) n);
        if (mask != null) {
            for (int i = 0; i < payload.length; i++) {
                payload[i] ^= mask[i % 4];
            }
        }
        return new Frame((b0 & 0x80) != 0, (b0 >> 4) & 7, b0 & 0x0f, mask != null, payload);
    }
}

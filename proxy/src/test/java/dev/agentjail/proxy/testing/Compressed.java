package dev.agentjail.proxy.testing;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.Arrays;
import java.util.zip.CRC32;
import java.util.zip.Deflater;
import java.util.zip.DeflaterOutputStream;

/**
 * Compressed bodies built from their parts (RFC 1952 gzip members with chosen header fields, RFC 1950 zlib and
 * RFC 1951 raw deflate streams), so that tests can make every variant a decoder might read differently: extra
 * members, trailing bytes, bad checksums, truncation.
 */
public final class Compressed {
    public static final int FTEXT = 0x01;
    public static final int FHCRC = 0x02;
    public static final int FEXTRA = 0x04;
    public static final int FNAME = 0x08;
    public static final int FCOMMENT = 0x10;

    private Compressed() {}

    /**
     * One gzip member with the optional header fields {@code flags} asks for: a 3-byte extra field, the name
     * {@code f.txt}, the comment {@code hi!}, a header CRC. {@code java.util.zip.GZIPOutputStream} writes none of
     * them, so a member with a name is never byte-identical to what the proxy encodes.
     */
    public static byte[] gzip(byte[] plain, int flags) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(new byte[] {0x1f, (byte) 0x8b, 8, (byte) flags, 0, 0, 0, 0, 0, (byte) 0xff});
        if ((flags & FEXTRA) != 0) {
            out.writeBytes(new byte[] {3, 0, 'a', 'b', 'c'});
        }
        if ((flags & FNAME) != 0) {
            out.writeBytes(new byte[] {'f', '.', 't', 'x', 't', 0});
        }
        if ((flags & FCOMMENT) != 0) {
            out.writeBytes(new byte[] {'h', 'i', '!', 0});
        }
        if ((flags & FHCRC) != 0) {
            CRC32 crc = new CRC32();
            crc.update(out.toByteArray());
            long v = crc.getValue();
            out.writeBytes(new byte[] {(byte) v, (byte) (v >>> 8)});
        }
        out.writeBytes(raw(plain));
        CRC32 crc = new CRC32();
        crc.update(plain);
        out.writeBytes(le32(crc.getValue()));
        out.writeBytes(le32(plain.length));
        return out.toByteArray();
    }

    /** The length of the header {@link #gzip} writes for {@code flags}. */
    public static int gzipHeaderLength(int flags) {
        int n = 10;
        n += (flags & FEXTRA) != 0 ? 5 : 0;
        n += (flags & FNAME) != 0 ? 6 : 0;
        n += (flags & FCOMMENT) != 0 ? 4 : 0;
        n += (flags & FHCRC) != 0 ? 2 : 0;
        return n;
    }

    /** A zlib stream (HTTP's {@code deflate}) at {@code level}. */
    public static byte[] zlib(byte[] plain, int level) {
        return deflate(plain, new Deflater(level, false));
    }

    /** A raw deflate stream, as some senders use for {@code deflate}. */
    public static byte[] raw(byte[] plain) {
        return deflate(plain, new Deflater(Deflater.DEFAULT_COMPRESSION, true));
    }

    public static byte[] concat(byte[] a, byte[] b) {
        byte[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    /** A copy with the lowest bit of byte {@code index} flipped. */
    public static byte[] flip(byte[] in, int index) {
        byte[] out = in.clone();
        out[index] ^= 0x01;
        return out;
    }

    private static byte[] deflate(byte[] plain, Deflater deflater) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (var stream = new DeflaterOutputStream(out, deflater)) {
            stream.write(plain);
        } catch (IOException impossible) {
            throw new IllegalStateException(impossible);
        } finally {
            deflater.end();
        }
        return out.toByteArray();
    }

    private static byte[] le32(long v) {
        return new byte[] {(byte) v, (byte) (v >>> 8), (byte) (v >>> 16), (byte) (v >>> 24)};
    }
}

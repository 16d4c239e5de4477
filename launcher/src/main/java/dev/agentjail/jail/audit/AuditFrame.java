package dev.agentjail.jail.audit;

import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.CorruptedFrameException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * One frame from agentjail-init's supervisor (launcher/src/main/c/audit.c): a type byte, then fields of a one-byte tag,
 * a two-byte little-endian length and that many bytes. Texts are taken as UTF-8. When any text of a frame is not
 * UTF-8, the frame is {@link #escaped()} and every text of it is written byte by byte: printable ASCII as is, a
 * backslash as {@code \\}, every other byte as {@code \xNN}; so a file name of any bytes gets a record that tells it
 * apart from every other name, and the record's {@code escaped} says to read it so.
 */
record AuditFrame(char type, List<Field> fields, boolean escaped) {
    static final char HELLO = 'H';
    static final char EXEC = 'E';
    static final char FILE = 'F';
    static final char UNRECORDED = 'D';
    /** The frame just before stands for nothing: its caller was interrupted before the call ran (audit.c). */
    static final char RETRACT = 'R';

    // Tags, kept in sync with enum tag in audit.c.
    static final int TID = 1;
    static final int PID = 2;
    static final int PPID = 3;
    static final int UID = 4;
    static final int OP = 5;
    static final int PATH = 6;
    static final int TARGET = 7;
    static final int CWD = 8;
    static final int ARG = 9;
    static final int FLAGS = 10;
    static final int RACY = 11;
    static final int ARGV_CUT = 12;
    static final int BASE = 13;
    static final int COUNT = 14;
    static final int TIME = 15;
    static final int BASE2 = 16;
    static final int SYSCALL = 17;
    static final int RENAME = 18;
    static final int VERSION = 19;
    static final int MISSING = 20;
    static final int REFUSED = 21;

    /** The frame format this launcher reads ('H' frame, VERSION field). */
    static final String FORMAT_VERSION = "1";

    record Field(int tag, byte[] value) {}

    AuditFrame {
        fields = List.copyOf(fields);
    }

    /** Parses a frame's body (after its length); throws on a field that runs past the end or an unknown type. */
    static AuditFrame parse(ByteBuf body) {
        if (!body.isReadable()) {
            throw new CorruptedFrameException("empty audit frame");
        }
        char type = (char) body.readUnsignedByte();
        if (type != HELLO && type != EXEC && type != FILE && type != UNRECORDED && type != RETRACT) {
            throw new CorruptedFrameException("unknown audit frame type " + (int) type);
        }
        List<Field> fields = new ArrayList<>();
        while (body.isReadable()) {
            if (body.readableBytes() < 3) {
                throw new CorruptedFrameException("audit frame field header cut short");
            }
            int tag = body.readUnsignedByte();
            int length = body.readUnsignedShortLE();
            if (body.readableBytes() < length) {
                throw new CorruptedFrameException("audit frame field " + tag + " runs past the frame");
            }
            byte[] value = new byte[length];
            body.readBytes(value);
            fields.add(new Field(tag, value));
        }
        boolean escaped = false;
        for (Field f : fields) {
            escaped |= f.tag() != TIME && !isUtf8(f.value());
        }
        return new AuditFrame(type, fields, escaped);
    }

    /**
     * A frame's bytes but its time, and the time: two exec or file frames of one identity make the same record but
     * for its time, so a repeat is counted without parsing, decoding or redacting it again ({@link
     * JailActivity#frame(ByteBuf)}). Null for another type, a frame that does not parse, or a time that is not
     * ASCII (which {@link #number} might still read) or
     * comes twice.
     */
    record Identity(ByteBuffer bytes, long time) {}

    static Identity identity(ByteBuf body) {
        int start = body.readerIndex();
        int end = body.writerIndex();
        if (start >= end) {
            return null;
        }
        byte type = body.getByte(start);
        if (type != EXEC && type != FILE) {
            return null;
        }
        byte[] out = new byte[end - start];
        int length = 0;
        long time = -1;
        boolean timed = false;
        int at = start;
        out[length++] = type;
        at++;
        while (at < end) {
            if (end - at < 3) {
                return null;
            }
            int tag = body.getUnsignedByte(at);
            int size = body.getUnsignedShortLE(at + 1);
            if (end - at - 3 < size) {
                return null;
            }
            if (tag == TIME) {
                long value = asciiNumber(body, at + 3, size);
                if (value == Long.MIN_VALUE || timed) {
                    // Not ASCII, or a second time: the frame is parsed as it is.
                    return null;
                }
                time = value;
                timed = true;
            } else {
                body.getBytes(at, out, length, 3 + size);
                length += 3 + size;
            }
            at += 3 + size;
        }
        return new Identity(ByteBuffer.wrap(out, 0, length), time);
    }

    /** As {@link #number} reads an ASCII field (-1 when it is no number); Long.MIN_VALUE when a byte is not ASCII. */
    private static long asciiNumber(ByteBuf body, int at, int size) {
        byte[] digits = new byte[size];
        body.getBytes(at, digits);
        for (byte b : digits) {
            if (b < 0) {
                return Long.MIN_VALUE;
            }
        }
        try {
            return Long.parseLong(new String(digits, StandardCharsets.US_ASCII));
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    boolean has(int tag) {
        for (Field f : fields) {
            if (f.tag() == tag) {
                return true;
            }
        }
        return false;
    }

    /** The first field of {@code tag} as text; null when absent. */
    String text(int tag) {
        for (Field f : fields) {
            if (f.tag() == tag) {
                return escaped ? escape(f.value()) : decode(f.value());
            }
        }
        return null;
    }

    /** Every field of {@code tag}, in order, as text. */
    List<String> texts(int tag) {
        List<String> out = new ArrayList<>();
        for (Field f : fields) {
            if (f.tag() == tag) {
                out.add(escaped ? escape(f.value()) : decode(f.value()));
            }
        }
        return out;
    }

    /** The first field of {@code tag} as a decimal number; {@code fallback} when absent or not a number. */
    long number(int tag, long fallback) {
        String text = text(tag);
        if (text == null) {
            return fallback;
        }
        try {
            return Long.parseLong(text);
        } catch (NumberFormatException e) {
            return fallback;
        }
    }

    private static boolean isUtf8(byte[] bytes) {
        // Nearly every path and argument is ASCII: no decoder for those, on a path every frame takes.
        boolean ascii = true;
        for (byte b : bytes) {
            ascii &= b >= 0;
        }
        if (ascii) {
            return true;
        }
        try {
            StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes));
            return true;
        } catch (CharacterCodingException e) {
            return false;
        }
    }

    /** UTF-8 text as it is; bytes that are not UTF-8 mark the whole frame {@link #escaped()} instead. */
    static String decode(byte[] bytes) {
        return new String(bytes, StandardCharsets.UTF_8);
    }

    /** Byte by byte: printable ASCII as is, {@code \} as {@code \\}, any other byte as {@code \xNN}. */
    static String escape(byte[] bytes) {
        StringBuilder out = new StringBuilder(bytes.length * 2);
        for (byte b : bytes) {
            int v = b & 0xff;
            if (v == '\\') {
                out.append("\\\\");
            } else if (v >= 0x20 && v < 0x7f) {
                out.append((char) v);
            } else {
                out.append(String.format("\\x%02x", v));
            }
        }
        return out.toString();
    }
}

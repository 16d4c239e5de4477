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
final class AuditFrame {
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

    /** The highest tag looked up by number; fields of other tags are kept but never looked up. */
    private static final int TAGS = 32;

    private final char type;
    private final byte[] data;
    /** Per field, in order: its tag, and where its value starts in {@link #data} and how long it is. */
    private final int[] tags;

    private final int[] starts;
    private final int[] lengths;
    private final int count;
    /** The first field of each tag (below {@link #TAGS}), -1 for none. */
    private final int[] first = new int[TAGS];

    private final boolean escaped;

    private AuditFrame(char type, byte[] data, int[] tags, int[] starts, int[] lengths, int count) {
        this.type = type;
        this.data = data;
        this.tags = tags;
        this.starts = starts;
        this.lengths = lengths;
        this.count = count;
        java.util.Arrays.fill(first, -1);
        boolean anyEscaped = false;
        for (int i = count - 1; i >= 0; i--) {
            if (tags[i] < TAGS) {
                first[tags[i]] = i;
            }
        }
        for (int i = 0; i < count; i++) {
            anyEscaped |= tags[i] != TIME && !isUtf8(data, starts[i], lengths[i]);
        }
        this.escaped = anyEscaped;
    }

    char type() {
        return type;
    }

    /** Whether any text of the frame is not UTF-8: then every text of it is {@link #escape}d. */
    boolean escaped() {
        return escaped;
    }

    /** Every field, in order (for tests). */
    List<Field> fields() {
        List<Field> out = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            out.add(new Field(tags[i], java.util.Arrays.copyOfRange(data, starts[i], starts[i] + lengths[i])));
        }
        return out;
    }

    /** Parses a frame's body (after its length); throws on a field that runs past the end or an unknown type. */
    static AuditFrame parse(ByteBuf body) {
        byte[] bytes = new byte[body.readableBytes()];
        body.readBytes(bytes);
        return parse(bytes);
    }

    /** {@link #parse(ByteBuf)} of a body already copied out of its buffer (the frame keeps the array). */
    static AuditFrame parse(byte[] body) {
        if (body.length == 0) {
            throw new CorruptedFrameException("empty audit frame");
        }
        char type = (char) (body[0] & 0xff);
        if (type != HELLO && type != EXEC && type != FILE && type != UNRECORDED && type != RETRACT) {
            throw new CorruptedFrameException("unknown audit frame type " + (int) type);
        }
        // A field takes at least its three-byte header.
        int most = (body.length - 1) / 3;
        int[] tags = new int[most];
        int[] starts = new int[most];
        int[] lengths = new int[most];
        int count = 0;
        int at = 1;
        while (at < body.length) {
            if (body.length - at < 3) {
                throw new CorruptedFrameException("audit frame field header cut short");
            }
            int tag = body[at] & 0xff;
            int length = (body[at + 1] & 0xff) | (body[at + 2] & 0xff) << 8;
            if (body.length - at - 3 < length) {
                throw new CorruptedFrameException("audit frame field " + tag + " runs past the frame");
            }
            tags[count] = tag;
            starts[count] = at + 3;
            lengths[count] = length;
            count++;
            at += 3 + length;
        }
        return new AuditFrame(type, body, tags, starts, lengths, count);
    }

    /**
     * A frame's bytes but its time, and the time: two exec or file frames of one identity make the same record but
     * for its time, so a repeat is counted without parsing, decoding or redacting it again ({@link
     * JailActivity#frame(ByteBuf)}). Null for another type, a frame that does not parse, or a time that is not
     * ASCII (which {@link #number} might still read) or comes twice.
     */
    record Identity(Key bytes, long time) {}

    /** Bytes compared by content, with their hash computed once. */
    static final class Key {
        private final byte[] bytes;
        private final int hash;

        Key(byte[] bytes) {
            this.bytes = bytes;
            this.hash = java.util.Arrays.hashCode(bytes);
        }

        int length() {
            return bytes.length;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Key k && k.hash == hash && java.util.Arrays.equals(k.bytes, bytes);
        }

        @Override
        public int hashCode() {
            return hash;
        }
    }

    static Identity identity(ByteBuf body) {
        byte[] bytes = new byte[body.readableBytes()];
        body.getBytes(body.readerIndex(), bytes);
        return identity(bytes);
    }

    static Identity identity(byte[] body) {
        int end = body.length;
        if (end == 0) {
            return null;
        }
        byte type = body[0];
        if (type != EXEC && type != FILE) {
            return null;
        }
        byte[] out = new byte[end];
        int length = 0;
        long time = -1;
        boolean timed = false;
        int at = 1;
        out[length++] = type;
        while (at < end) {
            if (end - at < 3) {
                return null;
            }
            int tag = body[at] & 0xff;
            int size = (body[at + 1] & 0xff) | (body[at + 2] & 0xff) << 8;
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
                System.arraycopy(body, at, out, length, 3 + size);
                length += 3 + size;
            }
            at += 3 + size;
        }
        return new Identity(new Key(java.util.Arrays.copyOf(out, length)), time);
    }

    /** As {@link #number} reads an ASCII field (-1 when it is no number); Long.MIN_VALUE when a byte is not ASCII. */
    private static long asciiNumber(byte[] body, int at, int size) {
        for (int i = at; i < at + size; i++) {
            if (body[i] < 0) {
                return Long.MIN_VALUE;
            }
        }
        try {
            return Long.parseLong(new String(body, at, size, StandardCharsets.US_ASCII));
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    boolean has(int tag) {
        if (tag >= 0 && tag < TAGS) {
            return first[tag] >= 0;
        }
        for (int i = 0; i < count; i++) {
            if (tags[i] == tag) {
                return true;
            }
        }
        return false;
    }

    /** The first field of {@code tag} as text; null when absent. */
    String text(int tag) {
        int i = index(tag);
        return i < 0 ? null : fieldText(i);
    }

    private int index(int tag) {
        if (tag >= 0 && tag < TAGS) {
            return first[tag];
        }
        for (int i = 0; i < count; i++) {
            if (tags[i] == tag) {
                return i;
            }
        }
        return -1;
    }

    /** UTF-8 text as it is; bytes that are not UTF-8 mark the whole frame {@link #escaped()} instead. */
    private String fieldText(int i) {
        return escaped
                ? escape(data, starts[i], lengths[i])
                : new String(data, starts[i], lengths[i], StandardCharsets.UTF_8);
    }

    /** Every field of {@code tag}, in order, as text. */
    List<String> texts(int tag) {
        List<String> out = new ArrayList<>();
        int from = Math.max(0, index(tag));
        for (int i = from; i < count; i++) {
            if (tags[i] == tag) {
                out.add(fieldText(i));
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

    private static boolean isUtf8(byte[] data, int start, int length) {
        // Nearly every path and argument is ASCII: no decoder for those, on a path every frame takes.
        boolean ascii = true;
        for (int i = start; i < start + length; i++) {
            ascii &= data[i] >= 0;
        }
        if (ascii) {
            return true;
        }
        try {
            StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(data, start, length));
            return true;
        } catch (CharacterCodingException e) {
            return false;
        }
    }

    /** Byte by byte: printable ASCII as is, {@code \} as {@code \\}, any other byte as {@code \xNN}. */
    static String escape(byte[] bytes) {
        return escape(bytes, 0, bytes.length);
    }

    private static final char[] HEX_DIGITS = "0123456789abcdef".toCharArray();

    private static String escape(byte[] bytes, int start, int length) {
        StringBuilder out = new StringBuilder(length * 2);
        for (int i = start; i < start + length; i++) {
            int v = bytes[i] & 0xff;
            if (v == '\\') {
                out.append("\\\\");
            } else if (v >= 0x20 && v < 0x7f) {
                out.append((char) v);
            } else {
                out.append('\\').append('x').append(HEX_DIGITS[v >> 4]).append(HEX_DIGITS[v & 0xf]);
            }
        }
        return out.toString();
    }
}

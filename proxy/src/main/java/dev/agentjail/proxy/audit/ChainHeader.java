package dev.agentjail.proxy.audit;

import dev.agentjail.proxy.json.Json;
import dev.agentjail.proxy.json.JsonException;
import dev.agentjail.proxy.json.JsonReader;
import java.nio.charset.StandardCharsets;

/**
 * The chain fields at the start of an audit line, read from the exact bytes without re-serialising anything:
 * {@code {"v":N,"seq":S,"prev_hash":"<64 hex>"} and, on a log written with a key, {@code ,"hmac":"<64 hex>"}.
 *
 * @param seq the record's sequence number, 1 for the first record of a chain
 * @param prevHash lower-case hex SHA-256 of the previous line, or {@link AuditChain#GENESIS}
 * @param hmac lower-case hex HMAC-SHA256 of the line without its {@code hmac} member, or null when the line has none
 * @param hmacStart offset of the {@code ,"hmac":"…"} member in the line (equal to {@code hmacEnd} when absent)
 * @param hmacEnd offset just past that member
 */
public record ChainHeader(long seq, String prevHash, String hmac, int hmacStart, int hmacEnd) {

    private static final byte[] VERSION = "{\"v\":".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] SEQ = ",\"seq\":".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] PREV_HASH = ",\"prev_hash\":\"".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] HMAC = ",\"hmac\":\"".getBytes(StandardCharsets.US_ASCII);
    private static final int MAX_SEQ_DIGITS = 18;

    /**
     * The header of {@code line} (without its newline) if the line is a chain record: the header is exactly in the
     * documented form and the whole line is one valid JSON object. Null for anything else (a fragment of a torn write,
     * a line from before the chain, garbage).
     */
    public static ChainHeader parseRecord(byte[] line, int length) {
        ChainHeader header = parse(line, length);
        return header != null && isJsonObject(line, 0, length) ? header : null;
    }

    /** Audit records nest two or three levels; anything much deeper is not one. */
    private static final int MAX_RECORD_DEPTH = 32;

    /** Whether {@code in[offset, offset + length)} is exactly one strict JSON object (RFC 8259, unique names). */
    static boolean isJsonObject(byte[] in, int offset, int length) {
        try {
            return JsonReader.parse(in, offset, length, MAX_RECORD_DEPTH) instanceof Json.Obj;
        } catch (JsonException e) {
            return false;
        }
    }

    /** The header alone, without checking the rest of the line; null when the prefix is not a chain header. */
    static ChainHeader parse(byte[] line, int length) {
        int p = expect(line, length, 0, VERSION);
        if (p < 0) {
            return null;
        }
        int digits = p;
        while (p < length && isDigit(line[p])) {
            p++;
        }
        if (p == digits) {
            return null;
        }
        p = expect(line, length, p, SEQ);
        if (p < 0 || p >= length || line[p] < '1' || line[p] > '9') {
            return null;
        }
        long seq = 0;
        int seqStart = p;
        while (p < length && isDigit(line[p])) {
            if (p - seqStart >= MAX_SEQ_DIGITS) {
                return null;
            }
            seq = seq * 10 + (line[p] - '0');
            p++;
        }
        p = expect(line, length, p, PREV_HASH);
        if (p < 0 || !isHex(line, length, p) || p + 64 >= length || line[p + 64] != '"') {
            return null;
        }
        String prevHash = new String(line, p, 64, StandardCharsets.US_ASCII);
        p += 65;
        int hmacStart = p;
        String hmac = null;
        int afterHmac = expect(line, length, p, HMAC);
        if (afterHmac >= 0) {
            if (!isHex(line, length, afterHmac) || afterHmac + 64 >= length || line[afterHmac + 64] != '"') {
                return null;
            }
            hmac = new String(line, afterHmac, 64, StandardCharsets.US_ASCII);
            p = afterHmac + 65;
        }
        if (p >= length || (line[p] != ',' && line[p] != '}')) {
            return null;
        }
        return new ChainHeader(seq, prevHash, hmac, hmacStart, p);
    }

    /** The offset after {@code token} if the line has it at {@code at}, else -1. */
    private static int expect(byte[] line, int length, int at, byte[] token) {
        if (at + token.length > length) {
            return -1;
        }
        for (int i = 0; i < token.length; i++) {
            if (line[at + i] != token[i]) {
                return -1;
            }
        }
        return at + token.length;
    }

    private static boolean isDigit(byte b) {
        return b >= '0' && b <= '9';
    }

    /** Whether 64 lower-case hex digits start at {@code at}. */
    private static boolean isHex(byte[] line, int length, int at) {
        if (at < 0 || at + 64 > length) {
            return false;
        }
        for (int i = at; i < at + 64; i++) {
            byte b = line[i];
            if (!isDigit(b) && (b < 'a' || b > 'f')) {
                return false;
            }
        }
        return true;
    }
}

package dev.agentjail.proxy.audit;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Map;

/**
 * Where the chain of an existing log stands, found from the end of its files only: the next {@code seq}, the hash the
 * next line links to, and whether the file ends in a torn line that the next write must terminate first.
 *
 * @param nextSeq the seq the next record gets
 * @param prevHash SHA-256 of the last line (or 32 zero bytes for a new chain)
 * @param torn whether the live file's last line has no newline (a write cut short), so the next write starts with one
 */
record ChainTail(long nextSeq, byte[] prevHash, boolean torn) {

    /** How far back a search for the last record goes before giving up. */
    static final int MAX_SCAN = 4 << 20;

    private static final int FIRST_READ = 8 << 10;

    static ChainTail genesis() {
        return new ChainTail(1, new byte[ChainEncoder.HASH_BYTES], false);
    }

    /**
     * The state of the log whose live file is {@code live}: from the live file's end, or, when it is empty or missing
     * (it was just rotated), from the end of the newest non-empty rotated file; genesis when there is nothing at all.
     *
     * @throws IOException if a file cannot be read, or its last line is longer than {@value #MAX_SCAN} bytes
     */
    static ChainTail read(Path live) throws IOException {
        ChainTail tail = readFile(live, true);
        if (tail != null) {
            return tail;
        }
        for (Map.Entry<Long, Path> rotated :
                AuditChain.rotated(live).descendingMap().entrySet()) {
            tail = readFile(rotated.getValue(), false);
            if (tail != null) {
                return tail;
            }
        }
        return genesis();
    }

    /** The state at the end of {@code file}, or null if it is empty or missing. */
    private static ChainTail readFile(Path file, boolean live) throws IOException {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
            long size = channel.size();
            if (size == 0) {
                return null;
            }
            long want = Math.min(size, FIRST_READ);
            while (true) {
                byte[] buffer = readAt(channel, size - want, (int) want);
                boolean lastChance = want == size || want >= MAX_SCAN;
                ChainTail tail = scan(buffer, want == size, lastChance, live);
                if (tail != null) {
                    return tail;
                }
                if (lastChance) {
                    throw new IOException("the last line of " + file + " is longer than " + MAX_SCAN
                            + " bytes; move the file aside to start a new chain");
                }
                want = Math.min(size, Math.min(MAX_SCAN, want * 2));
            }
        } catch (NoSuchFileException e) {
            return null;
        }
    }

    /**
     * Works backwards through the lines in {@code buffer} (the end of a file) to the last record. Null when the buffer
     * does not reach far enough back to decide and {@code lastChance} is false.
     *
     * @param fromStart whether the buffer starts at the beginning of the file
     * @param lastChance whether the buffer will not grow: if it holds the whole last line but no record, the chain
     *     starts over at seq 1 linked to that line (the verifier then judges what came before)
     */
    static ChainTail scan(byte[] buffer, boolean fromStart, boolean lastChance, boolean live) {
        int end = buffer.length;
        boolean torn = buffer[end - 1] != '\n';
        if (!torn) {
            end--;
        }
        byte[] prevHash = null;
        while (true) {
            int start = lastIndexOf(buffer, (byte) '\n', end - 1) + 1;
            if (start == 0 && !fromStart) {
                // This line may begin before the buffer.
                return lastChance && prevHash != null ? new ChainTail(1, prevHash, torn && live) : null;
            }
            byte[] line = Arrays.copyOfRange(buffer, start, end);
            if (prevHash == null) {
                prevHash = ChainEncoder.sha256().digest(line);
            }
            ChainHeader header = ChainHeader.parseRecord(line, line.length);
            if (header != null) {
                return new ChainTail(header.seq() + 1, prevHash, torn && live);
            }
            if (start == 0) {
                // No record at all: whatever is here predates the chain, which starts now and links to it.
                return new ChainTail(1, prevHash, torn && live);
            }
            end = start - 1;
        }
    }

    private static int lastIndexOf(byte[] buffer, byte b, int from) {
        for (int i = from; i >= 0; i--) {
            if (buffer[i] == b) {
                return i;
            }
        }
        return -1;
    }

    private static byte[] readAt(FileChannel channel, long position, int length) throws IOException {
        ByteBuffer buffer = ByteBuffer.allocate(length);
        while (buffer.hasRemaining()) {
            if (channel.read(buffer, position + buffer.position()) < 0) {
                throw new IOException("file shrank while its end was read");
            }
        }
        return buffer.array();
    }

    @Override
    public String toString() {
        return "ChainTail[nextSeq=" + nextSeq + ", prevHash=" + HexFormat.of().formatHex(prevHash) + ", torn=" + torn
                + "]";
    }
}

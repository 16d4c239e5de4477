package dev.agentjail.proxy.audit;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The hash chain's constants and the names of rotated files, shared by the writer ({@link FileAuditLog}) and the
 * verifier ({@link ChainVerifier}); the format is documented in docs/audit-log.md ("Tamper evidence").
 *
 * <p>A log is its live file {@code audit.jsonl} plus the files rotated out of it, {@code audit.jsonl.1} (the oldest),
 * {@code audit.jsonl.2}, … Numbers only grow and rotated files are never renamed again.
 */
public final class AuditChain {

    /** The {@code prev_hash} of the very first record: 64 zeros. */
    public static final String GENESIS = "0".repeat(64);

    public static final String FIELD_SEQ = "seq";
    public static final String FIELD_PREV_HASH = "prev_hash";
    public static final String FIELD_HMAC = "hmac";

    private AuditChain() {}

    /** The name the {@code index}-th rotation gives to {@code live}: {@code audit.jsonl.<index>}. */
    public static Path rotatedPath(Path live, long index) {
        if (index < 1) {
            throw new IllegalArgumentException("rotation index must be positive: " + index);
        }
        return live.resolveSibling(live.getFileName() + "." + index);
    }

    /** The live file a member of a rotation set belongs to: {@code audit.jsonl.3} gives {@code audit.jsonl}. */
    public static Path liveFile(Path member) {
        String name = member.getFileName().toString();
        int dot = name.lastIndexOf('.');
        if (dot > 0 && index(name.substring(dot + 1)) > 0) {
            return member.resolveSibling(name.substring(0, dot));
        }
        return member;
    }

    /**
     * Every file of the log {@code live} belongs to, in chain order: the rotated files by number, then the live file
     * if it exists.
     */
    public static List<Path> rotationSet(Path live) throws IOException {
        List<Path> set = new ArrayList<>(rotated(live).values());
        if (Files.exists(live, LinkOption.NOFOLLOW_LINKS)) {
            set.add(live);
        }
        return set;
    }

    /** The rotated files of {@code live} by their number, oldest first. */
    static TreeMap<Long, Path> rotated(Path live) throws IOException {
        Path dir = live.toAbsolutePath().getParent();
        String prefix = live.getFileName() + ".";
        TreeMap<Long, Path> found = new TreeMap<>(Comparator.naturalOrder());
        try (DirectoryStream<Path> entries =
                Files.newDirectoryStream(dir, e -> e.getFileName().toString().startsWith(prefix))) {
            for (Path entry : entries) {
                long index = index(entry.getFileName().toString().substring(prefix.length()));
                if (index > 0) {
                    found.put(index, live.resolveSibling(entry.getFileName()));
                }
            }
        } catch (NoSuchFileException e) {
            return found;
        }
        return found;
    }

    /** The number the next rotation of {@code live} uses: one more than the highest existing one. */
    static long nextRotationIndex(Path live) throws IOException {
        Map.Entry<Long, Path> last = rotated(live).lastEntry();
        return last == null ? 1 : last.getKey() + 1;
    }

    /** A positive decimal without leading zeros, or -1. */
    private static long index(String text) {
        if (text.isEmpty() || text.length() > 18 || text.charAt(0) == '0') {
            return -1;
        }
        for (int i = 0; i < text.length(); i++) {
            if (text.charAt(i) < '0' || text.charAt(i) > '9') {
                return -1;
            }
        }
        return Long.parseLong(text);
    }
}

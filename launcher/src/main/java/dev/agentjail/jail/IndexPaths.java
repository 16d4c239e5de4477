package dev.agentjail.jail;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Optional;

/**
 * Reads a git index file (gitformat-index(5), versions 2 to 4, SHA-1 or SHA-256) only far enough to check each entry's
 * path, and the paths of the resolve-undo extension, as git's own {@code verify_path} would before it writes a path
 * into the working tree: git 2.39 does not check what it reads from an index, so an index the agent crafted with an
 * entry {@code .git/config} makes the user's {@code git restore .} on the host write the repository's config. The
 * staged metadata directory mirrors only an index that passes.
 */
final class IndexPaths {
    private static final int MAX_PATH = 4096;
    private static final int MAX_ENTRIES = 50_000_000;

    private IndexPaths() {}

    /**
     * The first problem with {@code index}, or empty when every path is one git would write. {@code hashSize} is 20
     * (SHA-1) or 32 (SHA-256). A file that is not a well-formed index is a problem too.
     */
    static Optional<String> check(InputStream index, long size, int hashSize) throws IOException {
        Counting counted = new Counting(new BufferedInputStream(index, 64 * 1024));
        DataInputStream in = new DataInputStream(counted);
        try {
            byte[] signature = in.readNBytes(4);
            if (signature.length == 4 && new String(signature, StandardCharsets.US_ASCII).equals("DIRC")) {
                Optional<String> problem = entries(in, hashSize);
                return problem.isPresent() ? problem : extensions(in, counted, size, hashSize);
            }
            return Optional.of("not an index (no DIRC signature)");
        } catch (EOFException truncated) {
            return Optional.of("a truncated index");
        }
    }

    /** Counts what was read, so that extensions are looked for exactly where git looks (before the checksum). */
    private static final class Counting extends java.io.FilterInputStream {
        long count;

        Counting(InputStream in) {
            super(in);
        }

        @Override
        public int read() throws IOException {
            int b = super.read();
            if (b >= 0) {
                count++;
            }
            return b;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            int n = super.read(b, off, len);
            if (n > 0) {
                count += n;
            }
            return n;
        }

        @Override
        public long skip(long n) throws IOException {
            long skipped = super.skip(n);
            count += skipped;
            return skipped;
        }
    }

    private static Optional<String> entries(DataInputStream in, int hashSize) throws IOException {
        int version = in.readInt();
        if (version < 2 || version > 4) {
            return Optional.of("index version " + version);
        }
        long count = Integer.toUnsignedLong(in.readInt());
        if (count > MAX_ENTRIES) {
            return Optional.of(count + " entries");
        }
        byte[] previous = new byte[0];
        for (long i = 0; i < count; i++) {
            // ctime, mtime (8 each), dev, ino, mode, uid, gid, size (4 each): 40 bytes, then the object id.
            in.skipNBytes(40 + hashSize);
            int flags = in.readUnsignedShort();
            int fixed = 40 + hashSize + 2;
            if ((flags & 0x4000) != 0) {
                if (version < 3) {
                    return Optional.of("an extended entry in a version 2 index");
                }
                in.readUnsignedShort();
                fixed += 2;
            }
            byte[] path;
            if (version == 4) {
                long strip = varint(in);
                if (strip > previous.length) {
                    return Optional.of("an entry that strips more than the previous path");
                }
                byte[] suffix = nulTerminated(in);
                path = new byte[(int) (previous.length - strip) + suffix.length];
                System.arraycopy(previous, 0, path, 0, (int) (previous.length - strip));
                System.arraycopy(suffix, 0, path, (int) (previous.length - strip), suffix.length);
            } else {
                path = nulTerminated(in);
                // Entries are padded with 1 to 8 NULs to a multiple of 8 bytes; one NUL was the terminator.
                int length = fixed + path.length;
                int padded = (length + 8) & ~7;
                in.skipNBytes(padded - length - 1);
            }
            Optional<String> problem = pathProblem(path);
            if (problem.isPresent()) {
                return problem;
            }
            previous = path;
        }
        return Optional.empty();
    }

    /**
     * The extensions, where git reads them (a header of 8 bytes that ends before the trailing checksum): the
     * resolve-undo entries' paths are checked (git checkout -m writes them back), the others skipped.
     */
    private static Optional<String> extensions(DataInputStream in, Counting counted, long size, int hashSize)
            throws IOException {
        while (counted.count + 8 <= size - hashSize) {
            byte[] name = in.readNBytes(4);
            long length = Integer.toUnsignedLong(in.readInt());
            if (!new String(name, StandardCharsets.ISO_8859_1).equals("REUC")) {
                in.skipNBytes(length);
                continue;
            }
            long end = counted.count + length;
            while (counted.count < end) {
                byte[] path = nulTerminated(in);
                Optional<String> problem = pathProblem(path);
                if (problem.isPresent()) {
                    return problem.map(p -> p + " (resolve-undo)");
                }
                int present = 0;
                for (int stage = 0; stage < 3; stage++) {
                    if (!new String(nulTerminated(in), StandardCharsets.US_ASCII).equals("0")) {
                        present++;
                    }
                }
                in.skipNBytes((long) present * hashSize);
            }
        }
        return Optional.empty();
    }

    /**
     * What git's verify_path refuses: an absolute path, an empty, "." or ".." component, and a component that is
     * ".git" in any case (also as NTFS and HFS+ would read it: trailing dots or spaces, the short name "git~1").
     */
    static Optional<String> pathProblem(byte[] path) {
        if (path.length == 0 || path.length > MAX_PATH) {
            return Optional.of("an entry with a path of " + path.length + " bytes");
        }
        String p = new String(path, StandardCharsets.UTF_8);
        if (p.startsWith("/") || p.endsWith("/") || p.contains("//") || p.indexOf('\\') >= 0) {
            return Optional.of("the entry path " + printable(p));
        }
        for (String component : p.split("/")) {
            String c = component
                    .replaceAll("[\\u200b-\\u200f\\u202a-\\u202e\\u206a-\\u206f\\ufeff]", "")
                    .toLowerCase(Locale.ROOT);
            String trimmed = c.replaceAll("[. ]+$", "");
            if (c.equals(".") || c.equals("..") || trimmed.equals(".git") || c.equals("git~1")) {
                return Optional.of(
                        "the entry path " + printable(p) + ", which git would write into a repository's" + " metadata");
            }
        }
        return Optional.empty();
    }

    private static String printable(String s) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < s.length() && i < 200; i++) {
            char c = s.charAt(i);
            out.append(c < 0x20 || c == 0x7f ? '?' : c);
        }
        return out.toString();
    }

    private static byte[] nulTerminated(DataInputStream in) throws IOException {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream(64);
        int b;
        while ((b = in.read()) != 0) {
            if (b < 0) {
                throw new EOFException();
            }
            if (out.size() >= MAX_PATH) {
                return new byte[MAX_PATH + 1];
            }
            out.write(b);
        }
        return out.toByteArray();
    }

    /** git's offset varint (varint.c): 7 bits a byte, each continuation adding one. */
    private static long varint(DataInputStream in) throws IOException {
        int b = in.readUnsignedByte();
        long value = b & 0x7f;
        while ((b & 0x80) != 0) {
            b = in.readUnsignedByte();
            value = ((value + 1) << 7) | (b & 0x7f);
            if (value > Integer.MAX_VALUE) {
                return Long.MAX_VALUE;
            }
        }
        return value;
    }
}

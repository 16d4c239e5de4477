package dev.agentjail.proxy.audit;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import javax.crypto.Mac;

/**
 * Checks the hash chain (and, with the key, the HMAC) of one audit log, given as its files in chain order, and names
 * the first broken link: where it is and what kind of change explains it.
 *
 * <p>The rules, documented in docs/audit-log.md ("Tamper evidence"): each record's {@code prev_hash} is the SHA-256 of
 * the line before it in the log (across files), or {@link AuditChain#GENESIS} for the first line; {@code seq} starts at
 * 1 and goes up by one per record. A line that is not a record (the fragment a torn write leaves) is accepted only when
 * the record right after it links to it (to the last of several in a row), which the writer does only for fragments
 * it found, and carries on the seq. Lines before the first
 * record (written before the chain existed) are reported as not covered.
 */
public final class ChainVerifier {

    /** Lines longer than this are never records (the writer bounds its fields far below); they are hashed only. */
    static final int MAX_RECORD_BYTES = 1 << 20;

    private static final HexFormat HEX = HexFormat.of();

    /** What was found at a place in the log. The first six break the chain; the others are notes. */
    public enum Kind {
        /** A seq gap that no later record fills: records were removed. */
        DELETED("deleted", true),
        /** A line's bytes no longer hash to what the next record recorded, or its seq was altered. */
        MODIFIED("modified", true),
        /** A record appears out of seq order (moved, swapped, or repeated). */
        REORDERED("reordered", true),
        /** A line that is not a record, with nothing linking to it. */
        INSERTED("inserted", true),
        /** A file ends in an incomplete line, or the log ends in a line that is not a record. */
        TRUNCATED("truncated", true),
        /** A record's HMAC is missing or wrong for the key given. */
        BAD_HMAC("bad-hmac", true),
        /** A fragment of a failed or interrupted write that the next record links to: no acknowledged record lost. */
        TORN_LINE("torn-line", false),
        /** Lines before the first record (written before the chain existed) that the chain does not cover. */
        UNCHAINED("unchained", false),
        /** The chain does not start at seq 1 and was accepted as given (earlier files were archived or removed). */
        PARTIAL_START("partial-start", false),
        /** Records carry an HMAC that was not checked because no key was given. */
        HMAC_UNCHECKED("hmac-unchecked", false);

        private final String label;
        private final boolean breaksChain;

        Kind(String label, boolean breaksChain) {
            this.label = label;
            this.breaksChain = breaksChain;
        }

        /** The stable, lower-case name printed in reports. */
        public String label() {
            return label;
        }

        public boolean breaksChain() {
            return breaksChain;
        }
    }

    /**
     * One finding at {@code file:line} (1-based; 0 when it concerns the whole log).
     *
     * @param detail one sentence for a person
     */
    public record Finding(Kind kind, Path file, long line, String detail) {
        public Finding {
            Objects.requireNonNull(kind, "kind");
            Objects.requireNonNull(detail, "detail");
        }

        @Override
        public String toString() {
            return (file == null ? "" : file + ":" + line + ": ") + kind.label() + ": " + detail;
        }
    }

    /**
     * The outcome for one log.
     *
     * @param files the files read, in chain order
     * @param records how many records were verified (up to the break, if any)
     * @param firstSeq the seq of the first record, 0 when there was none
     * @param lastSeq the seq of the last verified record, 0 when there was none
     * @param hmacChecked how many records had their HMAC verified
     * @param notes findings that do not break the chain
     * @param broken the first broken link, empty when the chain is intact
     */
    public record Report(
            List<Path> files,
            long records,
            long firstSeq,
            long lastSeq,
            long hmacChecked,
            List<Finding> notes,
            Optional<Finding> broken) {
        public Report {
            files = List.copyOf(files);
            notes = List.copyOf(notes);
            Objects.requireNonNull(broken, "broken");
        }

        public boolean intact() {
            return broken.isEmpty();
        }
    }

    private final AuditHmacKey key;
    private final boolean allowPartialStart;

    /**
     * @param key the key the log was written with, or null to check the hash chain only
     * @param allowPartialStart accept a chain whose first record is not seq 1 (older files archived or removed), with a
     *     note instead of a break
     */
    public ChainVerifier(AuditHmacKey key, boolean allowPartialStart) {
        this.key = key;
        this.allowPartialStart = allowPartialStart;
    }

    /** Verifies {@code files}, read in the order given, as one chain. */
    public Report verify(List<Path> files) throws IOException {
        return new Run(List.copyOf(files)).verify();
    }

    /** Where a line is: its file, its 1-based number there, and the file's index in the log. */
    private record Location(int fileIndex, Path file, long line) {}

    /** Lines that are not records, from {@code at} on, waiting for the next record to link to the last of them. */
    private record Pending(Location at, byte[] hashBefore, long lines) {}

    /** One verification: the walk through the lines with its state. */
    private final class Run {
        private final List<Path> files;
        private final Mac mac = key == null ? null : key.newMac();
        private final List<Finding> notes = new ArrayList<>();
        private byte[] prevLineHash; // null before the first line of the log
        private Location prevLine;
        private boolean started;
        private long lastSeq;
        private long firstSeq;
        private long records;
        private long hmacChecked;
        private long hmacUnchecked;
        private Location firstUnchained;
        private long unchainedLines;
        private Pending pending;

        Run(List<Path> files) {
            this.files = files;
        }

        Report verify() throws IOException {
            for (int i = 0; i < files.size(); i++) {
                try (LineReader lines = new LineReader(files.get(i))) {
                    LineReader.Line line;
                    while ((line = lines.next()) != null) {
                        Location at = new Location(i, files.get(i), line.number());
                        Finding broken = check(at, line);
                        if (broken != null) {
                            return report(broken);
                        }
                        prevLineHash = line.hash();
                        prevLine = at;
                    }
                }
            }
            if (pending != null) {
                return report(new Finding(
                        Kind.TRUNCATED,
                        pending.at().file(),
                        pending.at().line(),
                        "the log ends in a line that is not a record: a write that was cut short and never"
                                + " followed, or a line added at the end"));
            }
            if (hmacUnchecked > 0) {
                notes.add(new Finding(
                        Kind.HMAC_UNCHECKED,
                        null,
                        0,
                        hmacUnchecked + " records carry an HMAC that was not checked; give the key to check them"));
            }
            return report(null);
        }

        private Report report(Finding broken) {
            return new Report(files, records, firstSeq, lastSeq, hmacChecked, notes, Optional.ofNullable(broken));
        }

        /** Checks one line; returns the broken link it reveals, or null. */
        private Finding check(Location at, LineReader.Line line) throws IOException {
            if (!line.complete()) {
                return new Finding(
                        Kind.TRUNCATED,
                        at.file(),
                        at.line(),
                        "the file ends in an incomplete line (" + line.length() + " bytes without a newline): a"
                                + " write cut short by a crash, or the file was cut");
            }
            ChainHeader header =
                    line.bytes() == null ? null : ChainHeader.parseRecord(line.bytes(), line.bytes().length);
            if (header == null) {
                return notARecord(at, line);
            }
            Finding hmacProblem = checkHmac(at, line, header);
            if (hmacProblem != null) {
                return hmacProblem;
            }
            Finding broken = started ? checkLink(at, header) : checkStart(at, header);
            if (broken != null) {
                return broken;
            }
            if (!started) {
                started = true;
                firstSeq = header.seq();
            }
            lastSeq = header.seq();
            records++;
            pending = null;
            return null;
        }

        private Finding notARecord(Location at, LineReader.Line line) {
            if (!started) {
                if (firstUnchained == null) {
                    firstUnchained = at;
                }
                unchainedLines++;
                return null;
            }
            // Failures in a row can leave several fragments; the record after them links to the last one.
            pending = pending == null
                    ? new Pending(at, prevLineHash, 1)
                    : new Pending(pending.at(), pending.hashBefore(), pending.lines() + 1);
            return null;
        }

        private Finding checkHmac(Location at, LineReader.Line line, ChainHeader header) {
            if (mac == null) {
                if (header.hmac() != null) {
                    hmacUnchecked++;
                }
                return null;
            }
            if (header.hmac() == null) {
                return new Finding(
                        Kind.BAD_HMAC,
                        at.file(),
                        at.line(),
                        "the record has no HMAC, but a key was given: it was written without the key, or by"
                                + " someone who does not have it");
            }
            byte[] bytes = line.bytes();
            mac.update(bytes, 0, header.hmacStart());
            mac.update(bytes, header.hmacEnd(), bytes.length - header.hmacEnd());
            byte[] expected = mac.doFinal();
            if (!MessageDigest.isEqual(expected, HEX.parseHex(header.hmac()))) {
                return new Finding(
                        Kind.BAD_HMAC,
                        at.file(),
                        at.line(),
                        "the record's HMAC does not match its content for this key: the record was changed or"
                                + " forged (or the key is not the one the log was written with)");
            }
            hmacChecked++;
            return null;
        }

        /** The first record of the log: seq 1, linked to the line before it or to genesis. */
        private Finding checkStart(Location at, ChainHeader header) {
            String expectedPrev = prevLineHash == null ? AuditChain.GENESIS : HEX.formatHex(prevLineHash);
            if (header.seq() != 1) {
                if (!allowPartialStart) {
                    return new Finding(
                            Kind.DELETED,
                            at.file(),
                            at.line(),
                            "the chain starts at seq " + header.seq() + ", not 1: records 1–" + (header.seq() - 1)
                                    + " are missing (an earlier file of the rotation set, or the start of this file,"
                                    + " was removed; if older files were archived on purpose, verify with"
                                    + " --partial)");
                }
                notes.add(new Finding(
                        Kind.PARTIAL_START,
                        at.file(),
                        at.line(),
                        "the chain starts at seq " + header.seq() + " linked to " + header.prevHash()
                                + "; the records before it were not checked"));
            } else if (!header.prevHash().equals(expectedPrev)) {
                if (firstUnchained != null && header.prevHash().equals(AuditChain.GENESIS)) {
                    return new Finding(
                            Kind.INSERTED,
                            firstUnchained.file(),
                            firstUnchained.line(),
                            unchainedLines + " line(s) that are not records were added before the first record");
                }
                if (prevLine == null) {
                    return new Finding(
                            Kind.DELETED,
                            at.file(),
                            at.line(),
                            "the first record links to a line that is not there: lines before it were removed");
                }
                return new Finding(
                        Kind.MODIFIED,
                        prevLine.file(),
                        prevLine.line(),
                        "this line does not hash to the prev_hash of the first record, at " + describe(at)
                                + ": it was modified");
            }
            if (firstUnchained != null) {
                notes.add(new Finding(
                        Kind.UNCHAINED,
                        firstUnchained.file(),
                        firstUnchained.line(),
                        unchainedLines + " line(s) before the first record are not records and are not covered"
                                + " by the chain (written before it existed?)"));
            }
            return null;
        }

        /** Every record after the first: seq one more than the last, linked to the line right before it. */
        private Finding checkLink(Location at, ChainHeader header) throws IOException {
            long expectedSeq = lastSeq + 1;
            boolean linked = header.prevHash().equals(HEX.formatHex(prevLineHash));
            boolean inSequence = header.seq() == expectedSeq;
            if (pending != null) {
                if (linked && inSequence) {
                    notes.add(new Finding(
                            Kind.TORN_LINE,
                            pending.at().file(),
                            pending.at().line(),
                            (pending.lines() == 1 ? "a fragment" : pending.lines() + " fragments")
                                    + " of writes that failed or were cut short; the next record links to them and"
                                    + " its seq follows on, so no acknowledged record is missing here"));
                    return null;
                }
                boolean linkedBefore =
                        pending.hashBefore() != null && header.prevHash().equals(HEX.formatHex(pending.hashBefore()));
                if (linkedBefore && inSequence) {
                    return new Finding(
                            Kind.INSERTED,
                            pending.at().file(),
                            pending.at().line(),
                            "this line is not a record and the next record links to the line before it: it was"
                                    + " inserted (" + pending.lines() + " line(s))");
                }
                if (!linked
                        && !linkedBefore
                        && header.seq() > lastSeq
                        && header.seq() <= expectedSeq + pending.lines()) {
                    return new Finding(
                            Kind.MODIFIED,
                            pending.at().file(),
                            pending.at().line(),
                            "this line is not a valid record, and the next record, at " + describe(at) + ", links"
                                    + " neither to it nor to the line before it: a record here was garbled");
                }
            }
            if (linked && inSequence) {
                return null;
            }
            if (linked) {
                return new Finding(
                        Kind.MODIFIED,
                        at.file(),
                        at.line(),
                        "seq is " + header.seq() + " where " + expectedSeq
                                + " was expected, yet the record links to the line before it: its seq was altered");
            }
            if (inSequence) {
                return new Finding(
                        Kind.MODIFIED,
                        prevLine.file(),
                        prevLine.line(),
                        "this line does not hash to the prev_hash recorded by the next record, at " + describe(at)
                                + ": it was modified (or that record's prev_hash was)");
            }
            if (header.seq() < expectedSeq) {
                return new Finding(
                        Kind.REORDERED,
                        at.file(),
                        at.line(),
                        "record seq " + header.seq() + " comes after seq " + lastSeq
                                + ": records were moved or repeated");
            }
            Optional<Location> later = findSeq(at, expectedSeq, header.seq() - 1);
            if (later.isPresent()) {
                return new Finding(
                        Kind.REORDERED,
                        at.file(),
                        at.line(),
                        "record seq " + header.seq() + " comes where seq " + expectedSeq + " belongs; a record"
                                + " that belongs here is later, at " + describe(later.get())
                                + ": records were moved");
            }
            long missing = header.seq() - expectedSeq;
            return new Finding(
                    Kind.DELETED,
                    at.file(),
                    at.line(),
                    "seq jumps from " + lastSeq + " to " + header.seq() + ": " + missing + " record"
                            + (missing == 1 ? " was" : "s were") + " removed before this line");
        }

        /** The first record after {@code from} whose seq is in [{@code low}, {@code high}]. */
        private Optional<Location> findSeq(Location from, long low, long high) throws IOException {
            for (int i = from.fileIndex(); i < files.size(); i++) {
                try (LineReader lines = new LineReader(files.get(i))) {
                    LineReader.Line line;
                    while ((line = lines.next()) != null) {
                        if (i == from.fileIndex() && line.number() <= from.line()) {
                            continue;
                        }
                        ChainHeader h =
                                line.bytes() == null ? null : ChainHeader.parse(line.bytes(), line.bytes().length);
                        if (h != null && h.seq() >= low && h.seq() <= high) {
                            return Optional.of(new Location(i, files.get(i), line.number()));
                        }
                    }
                }
            }
            return Optional.empty();
        }

        private static String describe(Location at) {
            return at.file() + ":" + at.line();
        }
    }

    /** Reads a file line by line, hashing each whole line and keeping its bytes when it is short enough to parse. */
    static final class LineReader implements AutoCloseable {
        /**
         * One line.
         *
         * @param number 1-based line number
         * @param bytes the line without its newline, or null when longer than {@link #MAX_RECORD_BYTES}
         * @param length the line's length in bytes
         * @param hash SHA-256 of the line without its newline
         * @param complete whether a newline ended it
         */
        record Line(long number, byte[] bytes, long length, byte[] hash, boolean complete) {}

        private final InputStream in;
        private final MessageDigest sha = ChainEncoder.sha256();
        private final byte[] buffer = new byte[64 << 10];
        private int pos;
        private int limit;
        private long number;
        private boolean eof;

        LineReader(Path file) throws IOException {
            this.in = Files.newInputStream(file, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS);
        }

        /** The next line, or null at the end of the file. */
        Line next() throws IOException {
            byte[] kept = new byte[256];
            int keptLength = 0;
            long length = 0;
            boolean any = false;
            while (true) {
                if (pos == limit) {
                    if (eof || !fill()) {
                        if (!any) {
                            return null;
                        }
                        return line(kept, keptLength, length, false);
                    }
                }
                any = true;
                int newline = indexOf(buffer, pos, limit);
                int end = newline < 0 ? limit : newline;
                int chunk = end - pos;
                sha.update(buffer, pos, chunk);
                if (kept != null) {
                    if (length + chunk > MAX_RECORD_BYTES) {
                        kept = null;
                    } else {
                        if (keptLength + chunk > kept.length) {
                            kept = Arrays.copyOf(kept, Math.max(kept.length * 2, keptLength + chunk));
                        }
                        System.arraycopy(buffer, pos, kept, keptLength, chunk);
                        keptLength += chunk;
                    }
                }
                length += chunk;
                pos = end;
                if (newline >= 0) {
                    pos++;
                    return line(kept, keptLength, length, true);
                }
            }
        }

        private Line line(byte[] kept, int keptLength, long length, boolean complete) {
            number++;
            byte[] bytes = kept == null ? null : Arrays.copyOf(kept, keptLength);
            return new Line(number, bytes, length, sha.digest(), complete);
        }

        private boolean fill() throws IOException {
            int n = in.read(buffer);
            if (n < 0) {
                eof = true;
                return false;
            }
            pos = 0;
            limit = n;
            return true;
        }

        private static int indexOf(byte[] buffer, int from, int to) {
            for (int i = from; i < to; i++) {
                if (buffer[i] == '\n') {
                    return i;
                }
            }
            return -1;
        }

        @Override
        public void close() throws IOException {
            in.close();
        }
    }
}

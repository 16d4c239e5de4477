package dev.agentjail.proxy.audit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.proxy.audit.ChainVerifier.Finding;
import dev.agentjail.proxy.audit.ChainVerifier.Kind;
import dev.agentjail.proxy.audit.ChainVerifier.Report;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Each kind of tampering, done to a real log written by {@link FileAuditLog}, is caught and placed. */
class ChainVerifierTest {

    private static final int RECORDS = 10;

    @TempDir
    Path dir;

    private static AuditHmacKey key(String text) throws IOException {
        return AuditHmacKey.fromBytes(text.getBytes(StandardCharsets.US_ASCII), "test");
    }

    /** A log of {@link #RECORDS} records with paths /1 … /10, written with {@code key} (or none). */
    private Path log(AuditHmacKey key) throws Exception {
        Path file = dir.resolve("audit.jsonl");
        try (FileAuditLog log = FileAuditLog.open(
                file, FileAuditLog.Options.defaults().withHmacKey(key).withSyncInterval(Duration.ofHours(1)))) {
            for (int i = 1; i <= RECORDS; i++) {
                log.append(FileAuditLogChainTest.record("s", "/" + i));
            }
        }
        return file;
    }

    private static List<String> lines(Path file) throws IOException {
        return new ArrayList<>(Files.readAllLines(file, StandardCharsets.UTF_8));
    }

    private static void write(Path file, List<String> lines) throws IOException {
        Files.writeString(file, String.join("\n", lines) + "\n", StandardCharsets.UTF_8);
    }

    private static Report verify(AuditHmacKey key, Path... files) throws IOException {
        return new ChainVerifier(key, false).verify(List.of(files));
    }

    /** Asserts the chain is broken at {@code file:line} by {@code kind}, and returns the finding. */
    private static Finding assertBroken(Report report, Kind kind, Path file, long line) {
        assertFalse(report.intact(), () -> "tampering went unnoticed: " + report);
        Finding broken = report.broken().orElseThrow();
        assertEquals(kind, broken.kind(), broken::toString);
        assertEquals(file, broken.file(), broken::toString);
        assertEquals(line, broken.line(), broken::toString);
        assertTrue(broken.kind().breaksChain());
        return broken;
    }

    /** What someone without the key can do: recompute every prev_hash after editing the lines. */
    private static List<String> rechain(List<String> lines) {
        List<String> out = new ArrayList<>();
        String previous = null;
        for (String line : lines) {
            String prev = previous == null ? AuditChain.GENESIS : Sha256.hex(previous);
            String relinked = line.replaceFirst("\"prev_hash\":\"[0-9a-f]{64}\"", "\"prev_hash\":\"" + prev + "\"");
            out.add(relinked);
            previous = relinked;
        }
        return out;
    }

    @Test
    void anUntouchedLogIsIntact() throws Exception {
        Path file = log(null);

        Report report = verify(null, file);

        assertTrue(report.intact(), report::toString);
        assertEquals(RECORDS, report.records());
        assertEquals(1, report.firstSeq());
        assertEquals(RECORDS, report.lastSeq());
        assertEquals(List.of(), report.notes());
    }

    @Test
    void aDeletedRecordIsASeqGapAtTheLineAfterIt() throws Exception {
        Path file = log(null);
        List<String> lines = lines(file);
        lines.remove(4); // seq 5
        write(file, lines);

        Finding broken = assertBroken(verify(null, file), Kind.DELETED, file, 5);

        assertTrue(broken.detail().contains("seq jumps from 4 to 6: 1 record was removed"), broken::toString);
    }

    @Test
    void deletingTheFirstRecordsIsCaughtAtTheStart() throws Exception {
        Path file = log(null);
        List<String> lines = lines(file);
        write(file, lines.subList(3, lines.size()));

        Finding broken = assertBroken(verify(null, file), Kind.DELETED, file, 1);

        assertTrue(broken.detail().contains("starts at seq 4"), broken::toString);
    }

    @Test
    void oneModifiedByteIsCaughtAtTheModifiedLine() throws Exception {
        Path file = log(null);
        byte[] bytes = Files.readAllBytes(file);
        int at = indexOf(bytes, "\"path\":\"/4\"") + 9; // the '4' of line 4
        bytes[at] = '5';
        Files.write(file, bytes);

        Finding broken = assertBroken(verify(null, file), Kind.MODIFIED, file, 4);

        assertTrue(broken.detail().contains("was modified"), broken::toString);
    }

    @Test
    void aModifiedByteThatBreaksTheJsonIsCaughtAtTheGarbledLine() throws Exception {
        Path file = log(null);
        List<String> lines = lines(file);
        String line = lines.get(3);
        lines.set(3, line.substring(0, line.length() - 1) + "]");
        write(file, lines);

        assertBroken(verify(null, file), Kind.MODIFIED, file, 4);
    }

    @Test
    void anEditedSeqIsAModificationOfThatLine() throws Exception {
        Path file = log(null);
        List<String> lines = lines(file);
        lines.set(3, lines.get(3).replace("\"seq\":4,", "\"seq\":9,"));
        write(file, lines);

        Finding broken = assertBroken(verify(null, file), Kind.MODIFIED, file, 4);

        assertTrue(broken.detail().contains("its seq was altered"), broken::toString);
    }

    @Test
    void twoSwappedLinesAreReordered() throws Exception {
        Path file = log(null);
        List<String> lines = lines(file);
        String fourth = lines.get(3);
        lines.set(3, lines.get(4));
        lines.set(4, fourth);
        write(file, lines);

        Finding broken = assertBroken(verify(null, file), Kind.REORDERED, file, 4);

        assertTrue(broken.detail().contains("later, at " + file + ":5"), broken::toString);
    }

    @Test
    void aRecordMovedToTheEndIsReorderedNotDeleted() throws Exception {
        Path file = log(null);
        List<String> lines = lines(file);
        lines.add(lines.remove(2));
        write(file, lines);

        assertBroken(verify(null, file), Kind.REORDERED, file, 3);
    }

    @Test
    void aRepeatedRecordIsReordered() throws Exception {
        Path file = log(null);
        List<String> lines = lines(file);
        lines.add(3, lines.get(2));
        write(file, lines);

        assertBroken(verify(null, file), Kind.REORDERED, file, 4);
    }

    @Test
    void aFileCutInTheMiddleOfALineIsTruncated() throws Exception {
        Path file = log(null);
        byte[] bytes = Files.readAllBytes(file);
        Files.write(file, Arrays.copyOf(bytes, bytes.length - 40));

        Finding broken = assertBroken(verify(null, file), Kind.TRUNCATED, file, RECORDS);

        assertTrue(broken.detail().contains("incomplete line"), broken::toString);
    }

    @Test
    void aLineThatIsNotARecordAtTheEndIsTruncated() throws Exception {
        Path file = log(null);
        List<String> lines = lines(file);
        lines.add("{\"v\":1,\"seq\":11,\"prev_hash\":\"00");
        write(file, lines);

        assertBroken(verify(null, file), Kind.TRUNCATED, file, RECORDS + 1);
    }

    @Test
    void anInsertedLineIsCaught() throws Exception {
        Path file = log(null);
        List<String> lines = lines(file);
        lines.add(5, "{\"note\":\"nothing to see here\"}");
        write(file, lines);

        assertBroken(verify(null, file), Kind.INSERTED, file, 6);
    }

    @Test
    void linesAddedBeforeTheFirstRecordAreInserted() throws Exception {
        Path file = log(null);
        List<String> lines = lines(file);
        lines.add(0, "{\"v\":1,\"kind\":\"request\"}");
        write(file, lines);

        assertBroken(verify(null, file), Kind.INSERTED, file, 1);
    }

    @Test
    void droppingTheFirstFileOfARotationSetIsCaught() throws Exception {
        Path file = dir.resolve("audit.jsonl");
        try (FileAuditLog log = FileAuditLog.open(
                file, FileAuditLog.Options.defaults().withMaxFileBytes(2048).withSyncInterval(Duration.ofHours(1)))) {
            for (int i = 0; i < 30; i++) {
                log.append(FileAuditLogChainTest.record("s", "/" + i));
            }
        }
        List<Path> set = AuditChain.rotationSet(file);
        assertTrue(set.size() >= 3, set::toString);
        assertTrue(verify(null, set.toArray(Path[]::new)).intact());
        Files.delete(set.get(0));
        List<Path> rest = AuditChain.rotationSet(file);

        Report report = new ChainVerifier(null, false).verify(rest);

        Finding broken = assertBroken(report, Kind.DELETED, set.get(1), 1);
        assertTrue(broken.detail().contains("--partial"), broken::toString);
        Report partial = new ChainVerifier(null, true).verify(rest);
        assertTrue(partial.intact(), partial::toString);
        assertEquals(Kind.PARTIAL_START, partial.notes().get(0).kind());
    }

    @Test
    void droppingAFileInTheMiddleOfARotationSetIsADeletion() throws Exception {
        Path file = dir.resolve("audit.jsonl");
        try (FileAuditLog log = FileAuditLog.open(
                file, FileAuditLog.Options.defaults().withMaxFileBytes(2048).withSyncInterval(Duration.ofHours(1)))) {
            for (int i = 0; i < 30; i++) {
                log.append(FileAuditLogChainTest.record("s", "/" + i));
            }
        }
        List<Path> set = AuditChain.rotationSet(file);
        Files.delete(set.get(1));

        assertBroken(verify(null, AuditChain.rotationSet(file).toArray(Path[]::new)), Kind.DELETED, set.get(2), 1);
    }

    @Test
    void aLineForgedWithoutTheKeyPassesTheHashChainButNotTheHmac() throws Exception {
        AuditHmacKey key = key("the key that stays outside the jail, 32+ bytes");
        Path file = log(key);
        List<String> lines = lines(file);
        lines.set(3, lines.get(3).replace("\"decision\":\"allow\"", "\"decision\":\"deny\""));
        write(file, rechain(lines));

        assertTrue(verify(null, file).intact(), "whoever can rewrite the file can recompute the hash chain");
        Finding broken = assertBroken(verify(key, file), Kind.BAD_HMAC, file, 4);
        assertTrue(broken.detail().contains("changed or forged"), broken::toString);
    }

    @Test
    void aLogRewrittenWithoutHmacsFailsWhenTheKeyIsGiven() throws Exception {
        AuditHmacKey key = key("the key that stays outside the jail, 32+ bytes");
        Path file = log(key);
        List<String> stripped = lines(file).stream()
                .map(l -> l.replaceFirst(",\"hmac\":\"[0-9a-f]{64}\"", ""))
                .toList();
        write(file, rechain(stripped));

        assertTrue(verify(null, file).intact());
        Finding broken = assertBroken(verify(key, file), Kind.BAD_HMAC, file, 1);
        assertTrue(broken.detail().contains("no HMAC"), broken::toString);
    }

    @Test
    void reorderingIsCaughtEvenWhenEveryHmacIsValid() throws Exception {
        AuditHmacKey key = key("the key that stays outside the jail, 32+ bytes");
        Path file = log(key);
        List<String> lines = lines(file);
        lines.add(7, lines.remove(2));
        write(file, lines);

        assertBroken(verify(key, file), Kind.REORDERED, file, 3);
    }

    @Test
    void anEmptyLogHasNoRecordsAndNothingBroken() throws Exception {
        Path file = Files.createFile(dir.resolve("audit.jsonl"));

        Report report = verify(null, file);

        assertTrue(report.intact());
        assertEquals(0, report.records());
    }

    @Test
    void findingsReadAsFileLineKindAndDetail() {
        Finding f = new Finding(Kind.DELETED, Path.of("/x/audit.jsonl"), 7, "seq jumps");

        assertEquals("/x/audit.jsonl:7: deleted: seq jumps", f.toString());
    }

    private static int indexOf(byte[] haystack, String needle) {
        byte[] n = needle.getBytes(StandardCharsets.UTF_8);
        outer:
        for (int i = 0; i + n.length <= haystack.length; i++) {
            for (int j = 0; j < n.length; j++) {
                if (haystack[i + j] != n[j]) {
                    continue outer;
                }
            }
            return i;
        }
        throw new AssertionError(needle + " not found");
    }
}

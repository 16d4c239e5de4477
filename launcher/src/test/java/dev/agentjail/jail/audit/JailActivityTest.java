package dev.agentjail.jail.audit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.proxy.audit.AuditRecord;
import dev.agentjail.proxy.redact.Redactor;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The coalescing rule of docs/audit-log.md "Inside the jail", on frames as the supervisor writes them. */
class JailActivityTest {
    private final List<AuditRecord> written = new ArrayList<>();
    private final JailActivity activity = new JailActivity(
            "s1", new PathView(Path.of("/home/u/proj"), Path.of("/home/u")), Redactor.builtIn(), written::add);

    private static AuditFrame frame(char type, Object... tagsAndValues) {
        ByteBuf b = Unpooled.buffer();
        try {
            b.writeByte(type);
            for (int i = 0; i < tagsAndValues.length; i += 2) {
                byte[] v = tagsAndValues[i + 1].toString().getBytes(StandardCharsets.UTF_8);
                b.writeByte((Integer) tagsAndValues[i]);
                b.writeShortLE(v.length);
                b.writeBytes(v);
            }
            return AuditFrame.parse(b);
        } finally {
            b.release();
        }
    }

    private static AuditFrame write(int pid, String path) {
        return frame(
                AuditFrame.FILE,
                AuditFrame.PID,
                pid,
                AuditFrame.OP,
                "write",
                AuditFrame.PATH,
                path,
                AuditFrame.BASE,
                "/home/u/proj",
                AuditFrame.FLAGS,
                0101);
    }

    private long fileCount() {
        return written.stream()
                .filter(r -> r.file() != null)
                .mapToLong(r -> r.file().count())
                .sum();
    }

    @Test
    void theFirstEventOfAKeyIsWrittenAtOnceAndTheRestWithTheirCountAtTheWindowsEnd() {
        for (int i = 0; i < 5; i++) {
            activity.frame(write(7, "src/a.c"));
        }
        assertEquals(1, written.size(), written::toString);
        assertEquals("src/a.c", written.get(0).file().path());
        assertEquals(1, written.get(0).file().count());
        assertEquals(List.of("create"), written.get(0).file().flags());
        activity.tick();
        assertEquals(2, written.size(), written::toString);
        assertEquals(4, written.get(1).file().count());
        activity.tick();
        assertEquals(2, written.size(), "an empty window writes nothing");
    }

    @Test
    void pastThirtyTwoPathsOfADirectoryTheWindowFoldsThemIntoOneDirectoryRecord() {
        for (int round = 0; round < 3; round++) {
            for (int i = 0; i < 100; i++) {
                activity.frame(write(7, "out/f" + i));
            }
        }
        activity.tick();
        assertEquals(300, fileCount());
        List<AuditRecord> folded =
                written.stream().filter(r -> r.file().path().equals("out/")).toList();
        assertEquals(1, folded.size(), written::toString);
        assertEquals(68, folded.get(0).file().paths());
        assertEquals(3 * 68, folded.get(0).file().count());
        assertEquals(32 + 32 + 1, written.size(), "32 first events, 32 window-end counts, one fold");
        // The next window starts afresh.
        activity.frame(write(7, "out/f99"));
        assertEquals("out/f99", written.get(written.size() - 1).file().path());
    }

    @Test
    void pastAThousandFileRecordsAWindowFoldsPerOperation() {
        for (int i = 0; i < 5_000; i++) {
            activity.frame(write(7, "d" + (i % 2_000) + "/f"));
        }
        activity.tick();
        assertEquals(5_000, fileCount());
        assertTrue(written.size() <= 2 * JailActivity.FILE_RECORDS_PER_WINDOW + 1, "records: " + written.size());
        AuditRecord anywhere = written.stream()
                .filter(r -> r.file().path().equals("*"))
                .findFirst()
                .orElseThrow();
        assertEquals(1_000, anywhere.file().paths(), anywhere::toString);
    }

    @Test
    void pathsAreNamedRelativeToTheProjectOrTheHomeOrAbsolute() {
        activity.frame(write(1, "../notes.txt"));
        activity.frame(write(1, "/home/u/proj/./x/../y"));
        activity.frame(write(1, "/tmp/t"));
        activity.frame(write(1, "/home/u/.bashrc"));
        assertEquals(
                List.of("~/notes.txt", "y", "/tmp/t", "~/.bashrc"),
                written.stream().map(r -> r.file().path()).toList());
    }

    @Test
    void argumentsAreRedactedAndBounded() {
        String key = "sk-ant-api03-" + "a".repeat(93) + "AA";
        List<Object> fields = new ArrayList<>(List.of(
                AuditFrame.PATH,
                "/usr/bin/curl",
                AuditFrame.CWD,
                "/home/u/proj",
                AuditFrame.PID,
                3,
                AuditFrame.PPID,
                1,
                AuditFrame.UID,
                1000,
                AuditFrame.ARG,
                "curl",
                AuditFrame.ARG,
                "-H",
                AuditFrame.ARG,
                "x-api-key: " + key));
        for (int i = 0; i < 300; i++) {
            fields.add(AuditFrame.ARG);
            fields.add("arg" + i);
        }
        activity.frame(frame(AuditFrame.EXEC, fields.toArray()));
        AuditRecord r = written.get(0);
        assertEquals(AuditRecord.KIND_EXEC, r.kind());
        assertTrue(r.exec().argv().stream().noneMatch(a -> a.contains(key)), r::toString);
        assertEquals(256, r.exec().argv().size());
        assertTrue(r.exec().argvTruncated());
        assertEquals(1, activity.programs());
        assertTrue(!r.redactions().isEmpty(), r::toString);
    }

    @Test
    void aSecretInAPathIsRedactedToo() {
        String token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";
        activity.frame(write(1, "cache/" + token + ".json"));
        AuditRecord r = written.get(0);
        assertTrue(!r.file().path().contains(token), r::toString);
        assertEquals("path", r.redactions().get(0).location(), r::toString);
    }

    @Test
    void aCountOfUnrecordedEventsIsAGapRecord() {
        activity.frame(frame(AuditFrame.UNRECORDED, AuditFrame.COUNT, 17));
        assertEquals(AuditRecord.KIND_AUDIT_GAP, written.get(0).kind());
        assertEquals("audit-events-dropped", written.get(0).reason());
        assertEquals(17, written.get(0).gap().missed());
    }

    @Test
    void aFileNameThatIsNotUtf8IsShownByteByByte() {
        assertEquals("a\\xff", AuditFrame.decode(new byte[] {'a', (byte) 0xff}));
    }
}

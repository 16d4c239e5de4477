package dev.agentjail.proxy.audit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class AuditRecordTest {

    private static AuditRecord.Builder valid() {
        return AuditRecord.builder()
                .ts(Instant.EPOCH)
                .session("s")
                .decision("deny")
                .reason("malformed");
    }

    @Test
    void builderDefaultsToARequestWithoutTls() {
        AuditRecord record = valid().build();

        assertEquals("request", record.kind());
        assertEquals("none", record.tls());
        assertEquals(0, record.port());
        assertEquals(0, record.status());
        assertNull(record.rule());
    }

    static Stream<Arguments> invalid() {
        return Stream.of(
                bad("unknown decision", b -> b.decision("maybe")),
                bad("unknown tls mode", b -> b.tls("mitm")),
                bad("unknown scheme", b -> b.scheme("ftp")),
                bad("port too large", b -> b.port(65_536)),
                bad("negative port", b -> b.port(-1)),
                bad("status below 100", b -> b.status(42)),
                bad("status above 999", b -> b.status(1000)),
                bad("negative bytes out", b -> b.bytesOut(-1)),
                bad("negative bytes in", b -> b.bytesIn(-1)),
                bad("negative duration", b -> b.durationMs(-1)),
                bad("request without decision", b -> b.decision(null)),
                bad("request without reason", b -> b.reason(null)),
                bad("request without tls", b -> b.tls(null)),
                bad("no session", b -> b.session(null)),
                bad("no timestamp", b -> b.ts(null)),
                bad("no kind", b -> b.kind(null)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("invalid")
    void rejectsInvalidFields(String label, UnaryOperator<AuditRecord.Builder> change) {
        AuditRecord.Builder builder = change.apply(valid());
        RuntimeException e = assertThrows(RuntimeException.class, builder::build, label);
        assertTrue(e instanceof IllegalArgumentException || e instanceof NullPointerException, label);
    }

    @Test
    void otherKindsNeedNoDecision() {
        AuditRecord start = AuditRecord.builder()
                .kind("session-start")
                .ts(Instant.EPOCH)
                .session("s")
                .tls(null)
                .build();

        assertEquals(
                "{\"v\":1,\"kind\":\"session-start\",\"ts\":\"1970-01-01T00:00:00.000Z\",\"session\":\"s\","
                        + "\"bytes_out\":0,\"bytes_in\":0,\"duration_ms\":0}\n",
                AuditJson.toLine(start));
    }

    @Test
    void longPathKeepsItsPrefixAndGainsAMarkerWithTheFullHash() {
        String path = "/" + "a".repeat(4999);

        String stored = valid().path(path).build().path();

        String expectedMarker = "…[truncated sha256=" + Sha256.hex(path).substring(0, 16) + "]";
        assertEquals(path.substring(0, AuditRecord.MAX_PATH_CHARS) + expectedMarker, stored);
    }

    @Test
    void pathAtTheLimitIsUntouched() {
        String path = "/" + "b".repeat(AuditRecord.MAX_PATH_CHARS - 1);
        assertEquals(path, valid().path(path).build().path());
    }

    @Test
    void truncationNeverSplitsASurrogatePair() {
        String path = "/".repeat(AuditRecord.MAX_PATH_CHARS - 1) + "😀" + "tail";

        String stored = valid().path(path).build().path();

        assertTrue(stored.startsWith("/".repeat(AuditRecord.MAX_PATH_CHARS - 1) + "…[truncated"), stored);
    }

    @Test
    void otherFieldsAreBoundedToo() {
        String error = "e".repeat(10_000);

        String stored = valid().error(error).host(error).build().error();

        assertTrue(stored.startsWith("e".repeat(AuditRecord.MAX_FIELD_CHARS) + "…[truncated sha256="), stored);
        assertEquals(AuditRecord.MAX_FIELD_CHARS + "…[truncated sha256=]".length() + 16, stored.length());
    }

    @Test
    void firstBytesAreHashedNotKept() {
        byte[] bytes = "xxabcxx".getBytes(StandardCharsets.US_ASCII);

        AuditRecord record = valid().firstBytes(bytes, 2, 3).build();

        // SHA-256("abc"), FIPS 180-2 test vector.
        assertEquals("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", record.firstBytesSha256());
    }

    private static Arguments bad(String label, UnaryOperator<AuditRecord.Builder> change) {
        return Arguments.of(label, change);
    }
}

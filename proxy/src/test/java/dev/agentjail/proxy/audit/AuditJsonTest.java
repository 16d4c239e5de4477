package dev.agentjail.proxy.audit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class AuditJsonTest {

    private static final Instant TS = Instant.parse("2026-11-30T09:44:07.123456789Z");

    private static AuditRecord.Builder base() {
        return AuditRecord.builder().ts(TS).session("s-1").decision("deny").reason("blocked-by-allowlist");
    }

    @Test
    void writesEveryFieldInTheDocumentedOrder() {
        AuditRecord record = AuditRecord.builder()
                .ts(TS)
                .session("s-1")
                .decision("allow")
                .reason("allowlisted")
                .rule("project:api.allowed.test")
                .method("POST")
                .scheme("https")
                .host("api.allowed.test")
                .port(443)
                .path("/v1/messages")
                .status(200)
                .bytesOut(12)
                .bytesIn(3456)
                .durationMs(78)
                .tls("intercept")
                .client("127.0.0.1:51234")
                .resolvedIp("203.0.113.7")
                .error("none really")
                .firstBytesSha256("ab")
                .build();

        assertEquals(
                "{\"v\":1,\"kind\":\"request\",\"ts\":\"2026-11-30T09:44:07.123Z\",\"session\":\"s-1\","
                        + "\"decision\":\"allow\",\"reason\":\"allowlisted\",\"rule\":\"project:api.allowed.test\","
                        + "\"method\":\"POST\",\"scheme\":\"https\",\"host\":\"api.allowed.test\",\"port\":443,"
                        + "\"path\":\"/v1/messages\",\"status\":200,\"bytes_out\":12,\"bytes_in\":3456,"
                        + "\"duration_ms\":78,\"tls\":\"intercept\",\"client\":\"127.0.0.1:51234\","
                        + "\"resolved_ip\":\"203.0.113.7\",\"error\":\"none really\",\"first_bytes_sha256\":\"ab\"}\n",
                AuditJson.toLine(record));
    }

    @Test
    void omitsNullFieldsAndZeroPortAndStatus() {
        assertEquals(
                "{\"v\":1,\"kind\":\"request\",\"ts\":\"2026-11-30T09:44:07.123Z\",\"session\":\"s-1\","
                        + "\"decision\":\"deny\",\"reason\":\"blocked-by-allowlist\","
                        + "\"bytes_out\":0,\"bytes_in\":0,\"duration_ms\":0,\"tls\":\"none\"}\n",
                AuditJson.toLine(base().build()));
    }

    @Test
    void parsesBackWithTheSameValues() {
        String line = AuditJson.toLine(
                base().host("h.test").port(8080).bytesIn(Long.MAX_VALUE).build());

        assertEquals(line.length() - 1, line.indexOf('\n'), "exactly one newline, at the end");
        Map<String, Object> parsed = MiniJson.parseObject(line.stripTrailing());
        assertEquals(
                List.of(
                        "v",
                        "kind",
                        "ts",
                        "session",
                        "decision",
                        "reason",
                        "host",
                        "port",
                        "bytes_out",
                        "bytes_in",
                        "duration_ms",
                        "tls"),
                List.copyOf(parsed.keySet()));
        assertEquals(new BigDecimal(1), parsed.get("v"));
        assertEquals(new BigDecimal(8080), parsed.get("port"));
        assertEquals(new BigDecimal(Long.MAX_VALUE), parsed.get("bytes_in"));
        assertEquals("h.test", parsed.get("host"));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = '|',
            value = {
                "epoch | 1970-01-01T00:00:00Z | 1970-01-01T00:00:00.000Z",
                "whole second keeps millis | 2026-01-02T03:04:05Z | 2026-01-02T03:04:05.000Z",
                "truncates, never rounds | 2026-01-02T03:04:05.999999Z | 2026-01-02T03:04:05.999Z",
                "offset normalised to UTC | 2026-01-02T01:04:05.010-02:00 | 2026-01-02T03:04:05.010Z"
            })
    void formatsTimestampsAsRfc3339UtcMillis(String label, String input, String expected) {
        Instant ts = java.time.OffsetDateTime.parse(input).toInstant();
        assertEquals(expected, AuditJson.formatTs(ts), label);
    }

    @Test
    void timestampsOfInterleavedSecondsAreEachTheFormattersOwn() {
        // formatTs keeps the last second's text: instants that hop between seconds, years and the epoch's two sides
        // must each read as the formatter alone would write them.
        java.time.format.DateTimeFormatter reference = java.time.format.DateTimeFormatter.ofPattern(
                        "uuuu-MM-dd'T'HH:mm:ss.SSS'Z'")
                .withZone(java.time.ZoneOffset.UTC);
        java.util.Random random = new java.util.Random(28);
        long[] seconds = {-1, 0, 1, 1_764_842_400L, 1_764_842_401L, 253_402_300_799L};
        for (int i = 0; i < 5_000; i++) {
            long second = i % 3 == 0
                    ? seconds[random.nextInt(seconds.length)]
                    : 1_764_842_400L + random.nextInt(3) - random.nextInt(100_000) * (i % 7 == 0 ? 1L : 0L);
            Instant ts = Instant.ofEpochSecond(second, random.nextInt(1_000_000_000));
            assertEquals(
                    reference.format(ts.truncatedTo(java.time.temporal.ChronoUnit.MILLIS)),
                    AuditJson.formatTs(ts),
                    ts.toString());
        }
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = '|',
            quoteCharacter = '\'',
            value = {
                "quote after plain text | ab\"cd | ab\\\"cd",
                "backslash after plain text | ab\\cd | ab\\\\cd",
                "pair after plain text | ab\uD83D\uDE00 | ab\uD83D\uDE00",
                "lone surrogate after plain text | ab\uD83Dcd | ab\\ufffdcd",
                "line separator after plain text | ab\u2028 | ab\\u2028",
                "C1 control after plain text | ab\u0085 | ab\\u0085",
            })
    void escapesWhatFollowsAPlainStart(String label, String input, String expected) {
        assertEquals(expected, escaped(input), label);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = '|',
            quoteCharacter = '\'',
            value = {
                "quote | \" | \\\"",
                "backslash | \\ | \\\\",
                "slash is left alone | / | /",
                "plain ASCII | GET /a?b | GET /a?b",
            })
    void escapesJsonSpecials(String label, String input, String expected) {
        assertEquals(expected, escaped(input), label);
    }

    @Test
    void escapesEveryControlCharacterAsUnicode() {
        for (char c = 0; c < 0x20; c++) {
            assertEquals(String.format("\\u%04x", (int) c), escaped(String.valueOf(c)), "char " + (int) c);
        }
        assertEquals("\\u001b[31m", escaped("\u001b[31m"), "ANSI escape from a hostile path");
        assertEquals("\\u007f", escaped("\u007f"));
        assertEquals("\\u0080\\u009b\\u009f", escaped("\u0080\u009b\u009f"), "C1 controls incl. CSI");
        assertEquals("\\u2028\\u2029", escaped("\u2028\u2029"));
    }

    @Test
    void passesValidNonAsciiThroughAndReplacesLoneSurrogates() {
        assertEquals("é中😀\u00a0", escaped("é中😀\u00a0"));
        assertEquals("a\\ufffdb", escaped("a\ud83db"), "lone high surrogate");
        assertEquals("a\\ufffdb", escaped("a\ude00b"), "lone low surrogate");
        assertEquals("\\ufffd", escaped("\ud83d"), "high surrogate at the end");
        assertEquals("\\ufffd\\ufffd", escaped("\ude00\ud83d"), "reversed pair");
    }

    @Test
    void everyLineIsValidUtf8JsonThatRoundTrips() throws CharacterCodingException {
        StringBuilder hostile = new StringBuilder();
        for (char c = 0; c < 0x100; c++) {
            hostile.append(c);
        }
        hostile.append("\"\\中😀\u2028\ud800x\udfff");
        String expected = hostile.toString().replace("\ud800", "\ufffd").replace("\udfff", "\ufffd");

        String line = AuditJson.toLine(
                base().path(hostile.toString()).error(hostile.toString()).build());
        byte[] bytes = line.getBytes(StandardCharsets.UTF_8);
        String decoded = StandardCharsets.UTF_8
                .newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT)
                .decode(ByteBuffer.wrap(bytes))
                .toString();

        String body = decoded.substring(0, decoded.length() - 1);
        assertFalse(body.chars().anyMatch(c -> c < 0x20), "no raw control character before the final newline");
        Map<String, Object> parsed = MiniJson.parseObject(body);
        assertEquals(expected, parsed.get("path"));
        assertEquals(expected, parsed.get("error"));
    }

    private static String escaped(String value) {
        StringBuilder out = new StringBuilder();
        AuditJson.escape(out, value);
        return out.toString();
    }
}

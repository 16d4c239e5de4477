package dev.agentjail.proxy.redact;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.agentjail.proxy.redact.Canaries.Canary;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Old result == new result: random bodies with planted secrets, raw and in every encoding the scan reads (JSON escapes,
 * percent, base64 both alphabets and wrapped, hex, nested), redacted by {@link BodyRedactor} and by the engine as it
 * was before the faster scan ({@link LegacyBodyRedactor}), in every mode, both fed the same chunks (whole, byte by byte,
 * random sizes: where a chunk ends can matter by design, see docs/redaction.md). The bytes written and the findings
 * (kinds, locations, counts, refusal) must be the same.
 */
class BodyRedactorDifferentialTest {
    private static final Redactor REDACTOR = Redactor.builder()
            .knownValue("known:ANTHROPIC_API_KEY", "sk-ant-api03-placeholder-" + "q".repeat(80))
            .knownValue("known:DB_PASSWORD", "hunter2-but-longer")
            .knownValue("known:HOST_TOKEN", "host-secret/with\"quote+plus")
            .customPattern("acme-token", java.util.regex.Pattern.compile("acme_[a-z0-9]{16}"), "acme_")
            .allow("AKIAALLOWEDALLOWED23")
            .build();

    private static final List<Canary> CANARIES = Canaries.all();

    private static final String[] WORDS = ("the of and key they eye eyes monkey-patch keyed sk-learn AKIA? SK Q~x dapi "
                    + "ghost gl glance npm pypi aws token secret api_key config IllegalArgumentException parseInt "
                    + "https://example.test/docs?key=value&x=1 a+b %zz \\q \\x4 \\u00 {\"k\":\"v\"} [1,2] ===== ---- "
                    + "AKIAALLOWEDALLOWED23 0123456789abcdef DEADBEEFCAFE0123 dGhlIHF1aWNrIGJyb3du Zm9vYmFy")
            .split(" ");

    private static final Mode[] MODES = Mode.values();

    static Stream<Integer> seeds() {
        return IntStream.range(0, 160).boxed();
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void sameResultAsTheEngineBefore(int seed) {
        Random random = new Random(seed * 7919L + 17);
        byte[] body = body(random, seed % 16 == 0 ? 40_000 : 200 + random.nextInt(3000));
        for (Mode mode : MODES) {
            for (int[] chunks : List.of(new int[] {body.length}, new int[] {1}, randomChunks(random))) {
                Findings expectedFindings = new Findings();
                byte[] expected = legacy(body, mode, expectedFindings, chunks);
                Findings findings = new Findings();
                byte[] got = current(body, mode, findings, chunks);
                String where = "seed " + seed + ", mode " + mode + ", chunks " + chunks[0] + "...: "
                        + new String(body, StandardCharsets.ISO_8859_1);
                assertArrayEquals(expected, got, where);
                assertEquals(expectedFindings.list(), findings.list(), where);
                assertEquals(expectedFindings.refusal(), findings.refusal(), where);
            }
        }
    }

    private static byte[] legacy(byte[] in, Mode mode, Findings findings, int[] chunks) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        LegacyBodyRedactor redactor = new LegacyBodyRedactor(REDACTOR.compiled(), mode, "body", findings);
        int pos = 0;
        for (int i = 0; pos < in.length; i++) {
            int n = Math.min(in.length - pos, chunks[i % chunks.length]);
            redactor.feed(in, pos, n, out::write);
            pos += n;
        }
        redactor.finish(out::write);
        return out.toByteArray();
    }

    private static byte[] current(byte[] in, Mode mode, Findings findings, int[] chunks) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        BodyRedactor redactor = new BodyRedactor(REDACTOR.compiled(), mode, "body", findings);
        int pos = 0;
        for (int i = 0; pos < in.length; i++) {
            int n = Math.min(in.length - pos, chunks[i % chunks.length]);
            redactor.feed(in, pos, n, out::write);
            pos += n;
        }
        redactor.finish(out::write);
        return out.toByteArray();
    }

    private static int[] randomChunks(Random random) {
        int[] sizes = new int[7];
        for (int k = 0; k < sizes.length; k++) {
            sizes[k] = 1 + random.nextInt(random.nextBoolean() ? 9 : 5000);
        }
        return sizes;
    }

    /** Prose, code, escapes and noise runs, with a planted secret about every tenth piece. */
    static byte[] body(Random random, int size) {
        StringBuilder s = new StringBuilder(size + 1024);
        while (s.length() < size) {
            int pick = random.nextInt(20);
            if (pick < 8) {
                s.append(WORDS[random.nextInt(WORDS.length)]).append(random.nextInt(6) == 0 ? "\\n" : " ");
            } else if (pick < 10) {
                s.append(escapes(random));
            } else if (pick < 12) {
                s.append(noise(random));
            } else if (pick == 12) {
                s.append((char) (0x80 + random.nextInt(0x780)));
            } else {
                s.append(random.nextInt(8) == 0 ? ' ' : "");
                if (random.nextInt(7) == 0) {
                    Canary canary = CANARIES.get(random.nextInt(CANARIES.size()));
                    s.append(encoded(random, canary.before() + canary.secret(), 0));
                    s.append(' ');
                }
            }
        }
        if (random.nextInt(4) == 0) {
            s.append(List.of("\\", "%", "%2", "\\u00", "\\x", "%5C", "%5Cu00", "%u00", "&#", "&#x6")
                    .get(random.nextInt(10)));
        }
        return s.toString().getBytes(StandardCharsets.UTF_8);
    }

    private static String escapes(Random random) {
        return switch (random.nextInt(10)) {
            case 0 -> "\\\"";
            case 1 -> "\\\\";
            case 2 -> "\\/";
            case 3 -> "\\t\\r\\b\\f";
            case 4 -> String.format("\\u%04x", random.nextInt(0x3000));
            case 5 ->
                random.nextBoolean()
                        ? String.format("%%%02X", random.nextInt(256))
                        : String.format("=%02x", random.nextInt(256)) + (random.nextBoolean() ? "=\r\n" : "=");
            case 6 -> "%25" + String.format("%02x", random.nextInt(256));
            case 7 -> random.nextBoolean() ? "%5Cu0067hp_" : String.format("%%u%04X", random.nextInt(0x3000));
            case 8 ->
                switch (random.nextInt(3)) {
                    case 0 -> "\\x" + String.format("%02x", random.nextInt(256));
                    case 1 -> String.format("&#x%X;", random.nextInt(0x3000));
                    default -> String.format("&#%d", random.nextInt(0x3000)) + (random.nextBoolean() ? ";" : "");
                };
            default -> "+" + (random.nextBoolean() ? "?" : "&");
        };
    }

    private static String noise(Random random) {
        String alphabet = random.nextBoolean() ? Canaries.ALNUM + "+/-_=" : Canaries.HEX + "ABCDEF";
        StringBuilder s = new StringBuilder();
        int n = 5 + random.nextInt(random.nextInt(8) == 0 ? 600 : 40);
        for (int k = 0; k < n; k++) {
            s.append(alphabet.charAt(random.nextInt(alphabet.length())));
            if (random.nextInt(90) == 0) {
                s.append(random.nextBoolean() ? "\\n" : "\n");
            }
        }
        return s.toString();
    }

    /** The text written the way one receiver reads it, up to three layers deep. */
    private static String encoded(Random random, String text, int depth) {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        int how = random.nextInt(depth < 3 ? 10 : 4);
        return switch (how) {
            case 0 -> text;
            case 1 -> JsonCheck.escape(text, random.nextBoolean());
            case 2 ->
                switch (random.nextInt(4)) {
                    case 0 -> percentU(text);
                    case 1 -> random.nextBoolean() ? quotedPrintable(bytes, random.nextBoolean()) : charRefs(text);
                    default -> percent(bytes, random.nextBoolean());
                };
            case 3 -> JsonCheck.escape(text, false).replace("\n", "\\n");
            case 4 -> Base64.getEncoder().encodeToString(bytes);
            case 5 -> Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
            case 6 ->
                Base64.getMimeEncoder().encodeToString(bytes).replace("\r\n", random.nextBoolean() ? "\n" : "\\n");
            case 7 ->
                random.nextBoolean()
                        ? HexFormat.of().formatHex(bytes)
                        : HexFormat.of().withUpperCase().formatHex(bytes);
            default -> {
                String inner = encoded(random, text, depth + 1);
                yield depth + 1 < 3 && random.nextBoolean()
                        ? Base64.getEncoder().encodeToString(inner.getBytes(StandardCharsets.UTF_8))
                        : percent(inner.getBytes(StandardCharsets.UTF_8), true);
            }
        };
    }

    /** Every other character as {@code %uXXXX} (ASP.NET's HttpUtility.UrlDecode, JavaScript's unescape). */
    private static String percentU(String text) {
        StringBuilder s = new StringBuilder();
        for (int k = 0; k < text.length(); k++) {
            char c = text.charAt(k);
            s.append(k % 2 == 0 ? String.format("%%u%04x", (int) c) : String.valueOf(c));
        }
        return s.toString();
    }

    /** Every third character as a character reference, decimal or hex. */
    private static String charRefs(String text) {
        StringBuilder s = new StringBuilder();
        for (int k = 0; k < text.length(); k++) {
            char c = text.charAt(k);
            s.append(
                    k % 3 != 0
                            ? String.valueOf(c)
                            : k % 2 == 0 ? "&#" + (int) c + ";" : String.format("&#x%x;", (int) c));
        }
        return s.toString();
    }

    /** Quoted-printable: every other byte as {@code =XX}, a soft line break after every fifth. */
    private static String quotedPrintable(byte[] bytes, boolean crlf) {
        StringBuilder s = new StringBuilder();
        for (int k = 0; k < bytes.length; k++) {
            int c = bytes[k] & 0xff;
            s.append(k % 2 == 0 || c == '=' || c >= 0x80 ? String.format("=%02X", c) : String.valueOf((char) c));
            if (k % 5 == 4) {
                s.append(crlf ? "=\r\n" : "=\n");
            }
        }
        return s.toString();
    }

    private static String percent(byte[] bytes, boolean all) {
        StringBuilder s = new StringBuilder();
        for (byte b : bytes) {
            int c = b & 0xff;
            if (all || !Character.isLetterOrDigit(c)) {
                s.append(String.format("%%%02X", c));
            } else {
                s.append((char) c);
            }
        }
        return s.toString();
    }
}

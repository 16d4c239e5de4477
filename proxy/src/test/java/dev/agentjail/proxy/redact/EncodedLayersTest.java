package dev.agentjail.proxy.redact;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * "Scan as every receiver could read": a secret written through any decoding a receiver might apply (base64 in both
 * alphabets, with or without padding, line-wrapped; hex in either case; percent, JSON and double escapes) is found,
 * and overwritten so that the same decoding now yields a marker, at the same length.
 */
class EncodedLayersTest {
    private static final String GHP = "ghp_" + "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0UvWxYz";
    private static final String ENV = envFile();

    private static String envFile() {
        StringBuilder env = new StringBuilder();
        for (int k = 0; k < 40; k++) {
            env.append("SETTING_")
                    .append(k)
                    .append("=some ordinary value number ")
                    .append(k)
                    .append('\n');
        }
        env.append("GITHUB_TOKEN=").append(GHP).append('\n');
        for (int k = 40; k < 80; k++) {
            env.append("OTHER_")
                    .append(k)
                    .append("=more plain configuration ")
                    .append(k)
                    .append('\n');
        }
        return env.toString();
    }

    private static String b64(String s) {
        return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8));
    }

    private static String b64url(String s) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(s.getBytes(StandardCharsets.UTF_8));
    }

    private static String unb64(String s) {
        String clean = s.replaceAll("[\\r\\n=]", "").replace('-', '+').replace('_', '/');
        byte[] bytes = Base64.getDecoder().decode(clean + "==".substring(0, (4 - clean.length() % 4) % 4));
        return new String(bytes, StandardCharsets.ISO_8859_1);
    }

    private static String hex(String s) {
        return HexFormat.of().formatHex(s.getBytes(StandardCharsets.UTF_8));
    }

    private static String unhex(String s) {
        return new String(HexFormat.of().parseHex(s.toLowerCase()), StandardCharsets.ISO_8859_1);
    }

    private static String wrap(String s, int width, String newline) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < s.length(); i += width) {
            out.append(s, i, Math.min(s.length(), i + width)).append(newline);
        }
        return out.toString();
    }

    private static String percentAll(String s) {
        StringBuilder out = new StringBuilder();
        for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
            out.append('%').append(HexFormat.of().withUpperCase().toHexDigits(b));
        }
        return out.toString();
    }

    private static String jsonUnicode(String s) {
        StringBuilder out = new StringBuilder();
        for (char c : s.toCharArray()) {
            out.append(String.format("\\u%04x", (int) c));
        }
        return out.toString();
    }

    private static String unjson(String s) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\\' && s.charAt(i + 1) == 'u') {
                out.append((char) Integer.parseInt(s.substring(i + 2, i + 6), 16));
                i += 5;
            } else if (c == '\\' && s.charAt(i + 1) == 'n') {
                out.append('\n');
                i++;
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }

    private static String unpercent(String s) {
        return URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.ISO_8859_1);
    }

    /** One carrier: how the secret is written, the body kind, and how a receiver reads the result back. */
    record Variant(String name, BodyKind kind, String written, UnaryOperator<String> read, String location) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Arguments> variants() {
        List<Variant> v = new ArrayList<>();
        String json = "{\"content\":\"%s\"}";
        v.add(new Variant("base64 padded", BodyKind.JSON, b64(GHP), EncodedLayersTest::unb64, "body/base64"));
        v.add(new Variant(
                "base64 no padding",
                BodyKind.JSON,
                b64(GHP).replace("=", ""),
                EncodedLayersTest::unb64,
                "body/base64"));
        v.add(new Variant(
                "base64 url-safe", BodyKind.FORM, b64url("x?" + GHP + "~~"), EncodedLayersTest::unb64, "body/base64"));
        v.add(new Variant(
                "base64 of .env",
                BodyKind.JSON,
                String.format(json, b64(ENV)),
                s -> unb64(s.substring(12, s.length() - 2)),
                "body/base64"));
        v.add(new Variant(
                "base64 of .env, MIME \\r\\n",
                BodyKind.MULTIPART,
                "Content-Transfer-Encoding: base64\r\n\r\n" + wrap(b64(ENV), 76, "\r\n"),
                s -> unb64(s.substring(s.indexOf("\r\n\r\n") + 4)),
                "body/base64"));
        v.add(new Variant(
                "base64 of .env, wrapped with \\n",
                BodyKind.TEXT,
                wrap(b64(ENV), 76, "\n"),
                EncodedLayersTest::unb64,
                "body/base64"));
        v.add(new Variant(
                "base64 of .env, wrapped at 50",
                BodyKind.TEXT,
                wrap(b64(ENV), 50, "\n"),
                EncodedLayersTest::unb64,
                "body/base64"));
        v.add(new Variant(
                "base64 of .env, JSON \\n escapes",
                BodyKind.JSON,
                String.format(json, wrap(b64(ENV), 60, "\\n")),
                s -> unb64(unjson(s.substring(12, s.length() - 2))),
                "body/base64"));
        v.add(new Variant(
                "base64 in JSON \\u escapes",
                BodyKind.JSON,
                String.format(json, jsonUnicode(b64(GHP))),
                s -> unb64(unjson(s.substring(12, s.length() - 2))),
                "body/base64"));
        v.add(new Variant(
                "base64 percent-encoded",
                BodyKind.FORM,
                "content=" + percentAll(b64(GHP)),
                s -> unb64(unpercent(s.substring(8))),
                "body/base64"));
        v.add(new Variant("hex lower", BodyKind.TEXT, hex(GHP), EncodedLayersTest::unhex, "body/hex"));
        v.add(new Variant("hex upper", BodyKind.JSON, hex(GHP).toUpperCase(), EncodedLayersTest::unhex, "body/hex"));
        v.add(new Variant("hex of .env", BodyKind.TEXT, hex(ENV), EncodedLayersTest::unhex, "body/hex"));
        v.add(new Variant(
                "hex percent-encoded",
                BodyKind.FORM,
                "x=" + percentAll(hex(GHP)),
                s -> unhex(unpercent(s.substring(2))),
                "body/hex"));
        v.add(new Variant(
                "base64 of base64", BodyKind.JSON, b64(b64(GHP)), s -> unb64(unb64(s)), "body/base64/base64"));
        v.add(new Variant("hex of base64", BodyKind.TEXT, hex(b64(GHP)), s -> unb64(unhex(s)), "body/hex/base64"));
        v.add(new Variant(
                "base64 of JSON with \\u escapes",
                BodyKind.JSON,
                b64("{\"t\":\"" + jsonUnicode(GHP) + "\"}"),
                s -> unjson(unb64(s)),
                "body/base64"));
        v.add(new Variant(
                "double percent",
                BodyKind.FORM,
                "t=" + percentAll(percentAll(GHP)).substring(0, 30)
                        + percentAll(GHP).substring(10) + "&x=1",
                s -> unpercent(unpercent(s)),
                "body"));
        v.add(new Variant(
                "percent-encoded JSON escape",
                BodyKind.JSON,
                "%5Cu0067hp_" + GHP.substring(4),
                s -> unjson(unpercent(s)),
                "body"));
        v.add(new Variant(
                "JSON escape of percent",
                BodyKind.TEXT,
                "\\u002567hp_" + GHP.substring(4),
                s -> unpercent(unjson(s)),
                "body"));
        v.add(new Variant(
                "JSON \\u escape in a form",
                BodyKind.FORM,
                "token=\\u0067hp_" + GHP.substring(4),
                s -> unjson(unpercent(s)),
                "body"));
        return v.stream().map(Arguments::of);
    }

    /** The redacted output, or null when the stream was refused (a run whose first characters were already sent). */
    private static String redact(Variant v, int chunk) {
        Findings findings = new Findings();
        byte[] in = v.written().getBytes(StandardCharsets.ISO_8859_1);
        BodyRedactor body = Redactor.builtIn().bodyRedactor(v.kind(), findings);
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        for (int i = 0; i < in.length; i += chunk) {
            body.feed(in, i, Math.min(chunk, in.length - i), out::write);
        }
        body.finish(out::write);
        assertEquals(List.of(new Findings.Finding("github-pat", v.location(), 1)), findings.list(), v.name());
        assertEquals(in.length, out.size(), "same length");
        if (findings.refusal().isPresent()) {
            assertEquals(Findings.NOT_REWRITABLE, findings.refusal().get().reason());
            return null;
        }
        return out.toString(StandardCharsets.ISO_8859_1);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    void theReceiversReadingNoLongerHoldsTheSecret(Variant v) {
        assertTrue(v.read().apply(v.written()).contains(GHP), "the receiver reads the secret: " + v.name());

        String out = redact(v, Integer.MAX_VALUE);
        assertTrue(out != null, "refused as one buffer: " + v.name());

        String read = v.read().apply(out);
        assertFalse(read.contains(GHP), read);
        assertFalse(read.contains(GHP.substring(4, 20)), read);
        assertTrue(read.contains("REDACTED") || read.contains("*****"), read);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    void smallChunksGiveTheSameResultOrRefuse(Variant v) {
        // A run whose first characters (fewer than a run's minimum) were released before it grew cannot be rewritten
        // there: the stream is refused instead, never forwarded with the secret.
        String whole = redact(v, Integer.MAX_VALUE);
        for (int chunk : new int[] {1, 77, 4096}) {
            String split = redact(v, chunk);
            if (split != null) {
                assertEquals(whole, split, "chunk " + chunk);
            }
        }
    }

    @org.junit.jupiter.api.Test
    void theTargetIsReadThroughEveryLayer() {
        Redactor redactor = Redactor.builtIn();
        for (String target : List.of(
                "/x?t=" + b64url(GHP),
                "/x?t=" + percentAll(b64(GHP)),
                "/x?t=%5Cu0067hp_" + GHP.substring(4),
                "/x?t=\\u0067hp_" + GHP.substring(4),
                "/x?t=%2567hp_" + GHP.substring(4),
                "/x/" + hex(GHP).toUpperCase() + "/y")) {
            Findings findings = new Findings();
            String out = redactor.redactTarget(target, findings);
            assertEquals(1, findings.total(), target);
            assertEquals(target.length(), out.length());
            assertFalse(out.contains(GHP.substring(4)), out);
            assertTrue(out.matches("[A-Za-z0-9._~%/?=\\\\-]*"), "still a valid target: " + out);
        }
    }

    @org.junit.jupiter.api.Test
    void headerValuesAndNamesAreReadThroughEveryLayer() {
        Redactor redactor = Redactor.builtIn();
        for (String value :
                List.of(b64(GHP), hex(GHP), "\\u0067hp_" + GHP.substring(4), "%2567hp_" + GHP.substring(4))) {
            Findings findings = new Findings();
            String out = redactor.redactHeader("X-Data", value, findings);
            assertEquals(1, findings.total(), value);
            assertEquals(value.length(), out.length());
            assertFalse(out.equals(value));
            Findings names = new Findings();
            assertTrue(redactor.headerNameCarriesSecret("X-" + hex(GHP), names));
        }
        Findings findings = new Findings();
        redactor.redactHeader("X-Data", b64(GHP), findings);
        assertEquals(List.of(new Findings.Finding("github-pat", "header:x-data/base64", 1)), findings.list());
    }

    @org.junit.jupiter.api.Test
    void aShortKnownValueIsFoundInBase64AndHex() {
        Redactor redactor =
                Redactor.builder().knownValue("known:PW", "hunter22").build();
        for (String body : List.of(b64("hunter22"), b64("pw=hunter22\n"), hex("hunter22"), "pass=hunter22")) {
            Findings findings = new Findings();
            redactor.redactBody(body.getBytes(StandardCharsets.US_ASCII), BodyKind.TEXT, "body", findings);
            assertEquals(1, findings.total(), body);
        }
    }

    @org.junit.jupiter.api.Test
    void aKnownValueWithSpacesIsFoundWrittenAsAForm() {
        Redactor redactor = Redactor.builder()
                .knownValue("known:PW", "correct horse battery")
                .build();
        Findings findings = new Findings();
        byte[] out = redactor.redactBody(
                "{\"q\":\"correct+horse+battery\"}".getBytes(StandardCharsets.US_ASCII),
                BodyKind.JSON,
                "body",
                findings);
        assertEquals(1, findings.total());
        assertFalse(new String(out, StandardCharsets.US_ASCII).contains("horse"));
    }

    @org.junit.jupiter.api.Test
    void aSecretWhoseEncodingCannotBeRewrittenAtTheSameLengthRefusesTheRequest() {
        // Each base64 character written as \xHH: a same-length rewrite of a \x escape is not attempted.
        StringBuilder written = new StringBuilder();
        for (char c : b64(GHP).toCharArray()) {
            written.append(String.format("\\x%02x", (int) c));
        }
        Findings findings = new Findings();
        Redactor.builtIn()
                .scanBody(written.toString().getBytes(StandardCharsets.US_ASCII), BodyKind.TEXT, "body", findings);
        assertEquals(1, findings.total());
        assertEquals(Findings.NOT_REWRITABLE, findings.refusal().orElseThrow().reason());
    }

    @org.junit.jupiter.api.Test
    void nestingDeeperThanTheBoundIsRefusedNeverPassedUnread() {
        String three = b64(b64(b64(GHP)));
        Findings found = new Findings();
        Redactor.builtIn().scanBody(three.getBytes(StandardCharsets.US_ASCII), BodyKind.JSON, "body", found);
        assertEquals(List.of(new Findings.Finding("github-pat", "body/base64/base64/base64", 1)), found.list());
        assertTrue(found.refusal().isEmpty());

        Findings deeper = new Findings();
        Redactor.builtIn().scanBody(b64(three).getBytes(StandardCharsets.US_ASCII), BodyKind.JSON, "body", deeper);
        assertEquals(Findings.DECODE_DEPTH, deeper.refusal().orElseThrow().reason());
    }

    @org.junit.jupiter.api.Test
    void ordinaryEncodedDataIsLeftAlone() {
        java.util.Random random = new java.util.Random(7);
        byte[] image = new byte[300_000];
        random.nextBytes(image);
        String code = "public static void getElementById(documentElement, querySelectorAll) {}\n".repeat(200);
        for (String body : List.of(
                "{\"image\":\"" + Base64.getEncoder().encodeToString(image) + "\"}",
                wrap(Base64.getMimeEncoder().encodeToString(image), 76, "\r\n"),
                "{\"sha\":\"" + HexFormat.of().formatHex(image, 0, 4096) + "\"}",
                b64(code),
                code)) {
            Findings findings = new Findings();
            byte[] in = body.getBytes(StandardCharsets.US_ASCII);
            byte[] out = Redactor.builtIn().redactBody(in, BodyKind.JSON, "body", findings);
            assertTrue(findings.isEmpty(), findings.toString());
            assertTrue(findings.refusal().isEmpty());
            assertTrue(java.util.Arrays.equals(in, out));
        }
    }

    @org.junit.jupiter.api.Test
    void aLongEncodedRunIsHeldBackOnlyAsFarAsItsNestedScanNeeds() {
        StringBuilder env = new StringBuilder();
        while (env.length() < 2_000_000) {
            env.append("PLAIN_SETTING=an ordinary value\n");
        }
        byte[] body = ("{\"content\":\"" + b64(env.toString()) + "\"}").getBytes(StandardCharsets.US_ASCII);
        Findings findings = new Findings();
        BodyRedactor stream = Redactor.builtIn().bodyRedactor(BodyKind.JSON, findings);
        int most = 0;
        for (int i = 0; i < body.length; i += 16384) {
            stream.feed(body, i, Math.min(16384, body.length - i), ByteSink.DISCARD);
            most = Math.max(most, stream.heldBack());
        }
        stream.finish(ByteSink.DISCARD);
        assertTrue(most < 64 * 1024, "held back " + most);
        assertTrue(findings.isEmpty());
    }
}

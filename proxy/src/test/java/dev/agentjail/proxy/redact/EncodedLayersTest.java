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
            env.append("SETTING_").append(k).append("=some ordinary value number ").append(k).append('\n');
        }
        env.append("GITHUB_TOKEN=").append(GHP).append('\n');
        for (int k = 40; k < 80; k++) {
            env.append("OTHER_").append(k).append("=more plain configuration ").append(k).append('\n');
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
                "base64 no padding", BodyKind.JSON, b64(GHP).replace("=", ""), EncodedLayersTest::unb64, "body/base64"));
        v.add(new Variant("base64 url-safe", BodyKind.FORM, b64url("x?" + GHP + "~~"), EncodedLayersTest::unb64,
                "body/base64"));
        v.add(new Variant("base64 of .env", BodyKind.JSON, String.format(json, b64(ENV)),
                s -> unb64(s.substring(12, s.length() - 2)), "body/base64"));
        v.add(new Variant("base64 of .env, MIME \\r\\n", BodyKind.MULTIPART,
                "Content-Transfer-Encoding: base64\r\n\r\n" + wrap(b64(ENV), 76, "\r\n"),
                s -> unb64(s.substring(s.indexOf("\r\n\r\n") + 4)), "body/base64"));
        v.add(new Variant("base64 of .env, wrapped with \\n", BodyKind.TEXT, wrap(b64(ENV), 76, "\n"),
                EncodedLayersTest::unb64, "body/base64"));
        v.add(new Variant("base64 of .env, wrapped at 50", BodyKind.TEXT, wrap(b64(ENV), 50, "\n"),
                EncodedLayersTest::unb64, "body/base64"));
        v.add(new Variant("base64 of .env, JSON \\n escapes", BodyKind.JSON,
                String.format(json, wrap(b64(ENV), 60, "\\n")),
                s -> unb64(unjson(s.substring(12, s.length() - 2))), "body/base64"));
        v.add(new Variant("base64 in JSON \\u escapes", BodyKind.JSON, String.format(json, jsonUnicode(b64(GHP))),
                s -> unb64(unjson(s.substring(12, s.length() - 2))), "body/base64"));
        v.add(new Variant("base64 percent-encoded", BodyKind.FORM, "content=" + percentAll(b64(GHP)),
                s -> unb64(unpercent(s.substring(8))), "body/base64"));
        v.add(new Variant("hex lower", BodyKind.TEXT, hex(GHP), EncodedLayersTest::unhex, "body/hex"));
        v.add(new Variant("hex upper", BodyKind.JSON, hex(GHP).toUpperCase(), EncodedLayersTest::unhex, "body/hex"));
        v.add(new Variant("hex of .env", BodyKind.TEXT, hex(ENV), EncodedLayersTest::unhex, "body/hex"));
        v.add(new Variant("hex percent-encoded", BodyKind.FORM, "x=" + percentAll(hex(GHP)),
                s -> unhex(unpercent(s.substring(2))), "body/hex"));
        v.add(new Variant("base64 of base64", BodyKind.JSON, b64(b64(GHP)), s -> unb64(unb64(s)), "body/base64/base64"));
        v.add(new Variant("hex of base64", BodyKind.TEXT, hex(b64(GHP)), s -> unb64(unhex(s)), "body/hex/base64"));
        v.add(new Variant("base64 of JSON with \\u escapes", BodyKind.JSON,
                b64("{\"t\":\"" + jsonUnicode(GHP) + "\"}"), s -> unjson(unb64(s)), "body/base64"));
        v.add(new Variant("double percent", BodyKind.FORM, "t=" + percentAll(percentAll(GHP)).substring(0, 30)
                        + percentAll(GHP).substring(10) + "&x=1",
                s -> unpercent(unpercent(s)), "body"));
        v.add(new Variant("percent-encoded JSON escape", BodyKind.JSON, "%5Cu0067hp_" + GHP.substring(4),
                s -> unjson(unpercent(s)), "body"));
        v.add(new Variant("JSON escape of percent", BodyKind.TEXT, "\\u002567hp_" + GHP.substring(4),
                s -> unpercent(unjson(s)), "body"));
        v.add(new Variant("JSON \\u escape in a form", BodyKind.FORM, "token=\\u0067hp_" + GHP.substring(4),
                s -> unjson(unpercent(s)), "body"));
        return v.stream().map(Arguments::of);
    }

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
        assertTrue(findings.refusal().isEmpty(), v.name());
        assertEquals(in.length, out.size(), "same length");
        return out.toString(StandardCharsets.ISO_8859_1);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    void theReceiversReadingNoLongerHoldsTheSecret(Variant v) {
        assertTrue(v.read().apply(v.written()).contains(GHP), "the receiver reads the secret: " + v.name());

        String out = redact(v, Integer.MAX_VALUE);

        String read = v.read().apply(out);
        assertFalse(read.contains(GHP), read);
        assertFalse(read.contains(GHP.substring(4, 20)), read);
        assertTrue(read.contains("REDACTED") || read.contains("*****"), read);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    void oneByteChunksGiveTheSameResult(Variant v) {
        assertEquals(redact(v, Integer.MAX_VALUE), redact(v, 1));
        assertEquals(redact(v, Integer.MAX_VALUE), redact(v, 77));
    }
}

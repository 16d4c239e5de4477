package dev.agentjail.proxy.redact;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.proxy.redact.Canaries.Canary;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Every catalog entry, through every carrier: found, right kind, same-length marker, nothing left. */
class RedactorCatalogTest {
    private static final Redactor REDACTOR = Redactor.builtIn();
    private static final Pattern TARGET_CHARS = Pattern.compile("[A-Za-z0-9\\-._~:/?@!$&'()*+,;=%]*");

    static Stream<Canary> canaries() {
        return Canaries.all().stream();
    }

    static Stream<Canary> singleLineCanaries() {
        return canaries().filter(c -> !c.multiLine());
    }

    @Test
    void everyCatalogKindHasACanary() {
        Set<String> covered = new TreeSet<>();
        Canaries.all().forEach(c -> covered.add(c.kind()));
        assertEquals(new TreeSet<>(Catalog.kinds()), covered);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("canaries")
    void jsonBody(Canary canary) {
        String json = "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"Use this: "
                + JsonCheck.escape(canary.before() + canary.secret(), false)
                + " thanks\"}],\"n\":1}";
        byte[] in = json.getBytes(StandardCharsets.UTF_8);
        Findings findings = new Findings();
        byte[] out = REDACTOR.redactBody(in, BodyKind.JSON, "body", findings);

        assertEquals(in.length, out.length);
        String result = new String(out, StandardCharsets.UTF_8);
        JsonCheck.validate(result);
        assertGone(canary, result);
        assertTrue(result.contains("[REDACTED"), result);
        assertEquals(List.of(new Findings.Finding(canary.kind(), "body", 1)), findings.list());
        assertTrue(result.contains(JsonCheck.escape(canary.before(), false)), "context kept");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("canaries")
    void textBody(Canary canary) {
        String text = "line one\nexport TOKEN " + canary.before() + canary.secret() + "\nline three\n";
        Findings findings = new Findings();
        byte[] out = REDACTOR.redactBody(text.getBytes(StandardCharsets.UTF_8), BodyKind.TEXT, "body", findings);

        assertEquals(text.length(), out.length);
        String result = new String(out, StandardCharsets.UTF_8);
        assertGone(canary, result);
        assertEquals(List.of(new Findings.Finding(canary.kind(), "body", 1)), findings.list());
        assertTrue(result.startsWith("line one\nexport TOKEN ") && result.endsWith("\nline three\n"), result);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("canaries")
    void formBodyPercentEncoded(Canary canary) {
        String form = "a=1&note=" + encodeAll(canary.before() + canary.secret()) + "&b=two+words";
        Findings findings = new Findings();
        byte[] out = REDACTOR.redactBody(form.getBytes(StandardCharsets.US_ASCII), BodyKind.FORM, "body", findings);

        assertEquals(form.length(), out.length);
        String result = new String(out, StandardCharsets.US_ASCII);
        assertTrue(TARGET_CHARS.matcher(result).matches(), result);
        assertTrue(result.startsWith("a=1&note=") && result.endsWith("&b=two+words"), result);
        assertGone(canary, URLDecoder.decode(result, StandardCharsets.UTF_8));
        assertEquals(List.of(new Findings.Finding(canary.kind(), "body", 1)), findings.list());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("singleLineCanaries")
    void requestTarget(Canary canary) {
        String target = "/v1/x?q=a+b&key=" + encodeAll(canary.before() + canary.secret()) + "&z=1";
        Findings findings = new Findings();
        String result = REDACTOR.redactTarget(target, findings);

        assertEquals(target.length(), result.length());
        assertTrue(TARGET_CHARS.matcher(result).matches(), result);
        assertTrue(result.startsWith("/v1/x?q=a+b&key=") && result.endsWith("&z=1"), result);
        assertGone(canary, URLDecoder.decode(result, StandardCharsets.UTF_8));
        assertEquals(List.of(new Findings.Finding(canary.kind(), "target", 1)), findings.list());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("singleLineCanaries")
    void headerValue(Canary canary) {
        Findings findings = new Findings();
        String result = REDACTOR.redactHeader("X-Api-Key", canary.before() + canary.secret(), findings);

        assertGone(canary, result);
        assertTrue(result.chars().allMatch(c -> c >= 0x20 && c < 0x7f), result);
        assertEquals(List.of(new Findings.Finding(canary.kind(), "header:x-api-key", 1)), findings.list());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("canaries")
    void jsonEscapedEveryCharacter(Canary canary) {
        StringBuilder escaped = new StringBuilder();
        for (char c : (canary.before() + canary.secret()).toCharArray()) {
            escaped.append(c == '"' ? "\\\"" : String.format("\\u%04X", (int) c));
        }
        String json = "[\"" + escaped + "\"]";
        Findings findings = new Findings();
        byte[] out = REDACTOR.redactBody(json.getBytes(StandardCharsets.US_ASCII), BodyKind.JSON, "body", findings);

        String result = new String(out, StandardCharsets.US_ASCII);
        JsonCheck.validate(result);
        assertEquals(json.length(), result.length());
        assertEquals(1, findings.total(), findings.toString());
        assertFalse(result.contains(escapedTail(canary.secret())), "escaped tail left: " + result);
    }

    private static String escapedTail(String secret) {
        StringBuilder s = new StringBuilder();
        for (char c : secret.substring(secret.length() - 4).toCharArray()) {
            s.append(String.format("\\u%04X", (int) c));
        }
        return s.toString();
    }

    /** Percent-encodes every byte, so that even the trigger is hidden behind escapes. */
    static String encodeAll(String s) {
        StringBuilder out = new StringBuilder();
        for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
            out.append(String.format("%%%02X", b & 0xff));
        }
        return out.toString();
    }

    static void assertGone(Canary canary, String output) {
        for (String window : Canaries.windows(canary.secret(), 10)) {
            if (!canary.kind().contains(window)) {
                assertFalse(output.contains(window), () -> "left a piece of the secret in: " + output);
            }
        }
    }
}

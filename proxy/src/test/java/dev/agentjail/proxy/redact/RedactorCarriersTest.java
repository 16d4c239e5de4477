package dev.agentjail.proxy.redact;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.proxy.redact.Findings.Finding;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** Where secrets hide (corpus §8.2): headers, cookies, Basic credentials, targets, known values, policy rules. */
class RedactorCarriersTest {
    private static final String GHP = "ghp_" + "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0UvWxYz";
    private static final String ANT = "sk-ant-api03-" + "aB3-_x".repeat(15) + "zzzAA";
    private static final String STRIPE = "sk_live_" + "a1B2c3D4e5F6g7H8i9J0k1L2";
    private static final String XOXP = "xoxp-12345678901-12345678901-1234567890123-" + "0123456789abcdef".repeat(2);

    private static String json(byte[] bytes) {
        String s = new String(bytes, StandardCharsets.UTF_8);
        JsonCheck.validate(s);
        return s;
    }

    @Test
    void aTokenJoinedToANameByAnUnderscoreIsRedactedInPathsAndArgumentsButNotOneInsideAWord() {
        Redactor redactor = Redactor.builtIn();
        String ghp = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";
        Findings findings = new Findings();

        String path = redactor.redactPath("/home/u/proj/backup_" + ghp + ".txt", findings);
        String argument = redactor.redactArgument("--key_" + ANT, findings);
        String inWord = redactor.redactArgument("xghp_" + ghp.substring(4), new Findings());

        assertFalse(path.contains(ghp), path);
        assertTrue(path.startsWith("/home/u/proj/backup_"), path);
        assertFalse(argument.contains(ANT), argument);
        assertEquals(2, findings.list().stream().mapToLong(Finding::count).sum(), findings.list()::toString);
        assertEquals("xghp_" + ghp.substring(4), inWord, "a letter before the prefix: another word, not a token");
    }

    @Test
    void basicCredentialsAreDecodedRedactedAndReEncoded() {
        String value = "Basic " + Base64.getEncoder().encodeToString(("user:" + ANT).getBytes(StandardCharsets.UTF_8));
        Findings findings = new Findings();
        String result = Redactor.builtIn().redactHeader("Authorization", value, findings);

        assertEquals(value.length(), result.length());
        assertTrue(result.startsWith("Basic "));
        String decoded = new String(Base64.getDecoder().decode(result.substring(6)), StandardCharsets.UTF_8);
        assertTrue(decoded.startsWith("user:[REDACTED:anthropic-api-key*"), decoded);
        assertFalse(decoded.contains("aB3-_x"));
        assertEquals(List.of(new Finding("anthropic-api-key", "header:authorization", 1)), findings.list());
    }

    @Test
    void proxyAuthorizationBasicWithKnownPasswordIsRedacted() {
        Redactor redactor = Redactor.builder()
                .knownValue("known:PROXY_PASS", "correct horse battery staple")
                .build();
        String value = "basic " + Base64.getEncoder().encodeToString("me:correct horse battery staple".getBytes());
        Findings findings = new Findings();
        String result = redactor.redactHeader("Proxy-Authorization", value, findings);
        String decoded = new String(Base64.getDecoder().decode(result.substring(6)), StandardCharsets.UTF_8);
        assertEquals("me:[REDACTED:known:PROXY_PASS]", decoded.replace("*", ""));
        assertEquals(1, findings.total());
    }

    @Test
    void bearerAndTokenSchemesAndOtherHeaders() {
        Redactor redactor = Redactor.builtIn();
        Findings findings = new Findings();
        assertEquals(
                "Bearer " + marker("github-pat", GHP.length()),
                redactor.redactHeader("Authorization", "Bearer " + GHP, findings));
        String referer =
                redactor.redactHeader("Referer", "https://x.test/?t=sk%5Flive%5Fa1B2c3D4e5F6g7H8i9J0k1L2", findings);
        assertFalse(referer.contains("a1B2c3D4"), referer);
        assertTrue(referer.startsWith("https://x.test/?t=[REDACTED"), referer);
        String session = redactor.redactHeader("X-Amz-Security-Token", "IQoJb3JpZ2luX2Vj" + "x".repeat(40), findings);
        assertTrue(session.startsWith("[REDACTED:aws-session-token"), session);
        assertEquals(
                List.of(
                        new Finding("github-pat", "header:authorization", 1),
                        new Finding("stripe-secret-key", "header:referer", 1),
                        new Finding("aws-session-token", "header:x-amz-security-token", 1)),
                findings.list());
    }

    @Test
    void cookieKeepsItsStructureAndValidOctets() {
        Findings findings = new Findings();
        String cookie = "session=abc123; token=" + XOXP + "; theme=dark";
        String result = Redactor.builtIn().redactHeader("Cookie", cookie, findings);

        assertEquals(cookie.length(), result.length());
        assertTrue(result.startsWith("session=abc123; token=[REDACTED:slack-user-token"), result);
        assertTrue(result.endsWith("; theme=dark"), result);
        String value = result.substring("session=abc123; token=".length(), result.indexOf("; theme"));
        assertTrue(value.chars().allMatch(c -> c > 0x20 && c < 0x7f && c != '"' && c != ',' && c != ';' && c != '\\'));
        assertEquals(List.of(new Finding("slack-user-token", "header:cookie", 1)), findings.list());
    }

    @Test
    void targetWithPercentEncodedPlusAndPathSecrets() {
        Redactor redactor = Redactor.builtIn();
        Findings findings = new Findings();
        String target = "/services/T01234567/B0123456789/aBcDeFgHiJkLmNoPqRsTuVwX" + "?q=my+key+"
                + "sk%5Flive%5Fa1B2c3D4e5F6g7H8i9J0k1L2&k=AIza" + "x".repeat(35);
        String result = redactor.redactTarget(target, findings);
        assertEquals(target.length(), result.length());
        assertFalse(
                result.contains("a1B2c3D4") || result.contains("aBcDeFgH") || result.contains("xxxxxxxxxx"), result);
        assertTrue(result.matches("[A-Za-z0-9\\-._~/?&=+%]*"), result);
        assertTrue(result.contains("?q=my+key+_REDACTED."), result);
        assertEquals(3, findings.total(), findings.toString());
        String absolute = redactor.redactTarget(
                "https://hooks.slack.com/services/T01234567/B0123456789/aBcDeFgHiJkLmNoPqRsTuVwX", findings);
        assertEquals(
                "https://hooks.slack.com/services/"
                        + urlMarker("slack-webhook-url", "T01234567/B0123456789/aBcDeFgHiJkLmNoPqRsTuVwX".length()),
                absolute);
    }

    @Test
    void escapedPemInJsonIsRedactedFromBeginToEnd() {
        String pem = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n".repeat(8)
                + "-----END OPENSSH PRIVATE KEY-----\n";
        String body = "{\"file\":\"id_ed25519\",\"content\":\"" + JsonCheck.escape(pem, true) + "\",\"mode\":384}";
        Findings findings = new Findings();
        String result = json(
                Redactor.builtIn().redactBody(body.getBytes(StandardCharsets.UTF_8), BodyKind.JSON, "body", findings));
        assertEquals(body.length(), result.length());
        assertFalse(result.contains("BEGIN") || result.contains("b3BlbnNz") || result.contains("END OPENSSH"), result);
        assertTrue(result.endsWith("******]\\n\",\"mode\":384}"), result);
        assertEquals(List.of(new Finding("private-key", "body", 1)), findings.list());
    }

    @Test
    void escapedSlashesInAWebhookUrl() {
        String body =
                "{\"url\":\"https:\\/\\/hooks.slack.com\\/services\\/T01234567\\/B0123456789\\/aBcDeFgHiJkLmNoPqRsTuVwX\"}";
        Findings findings = new Findings();
        String result = json(
                Redactor.builtIn().redactBody(body.getBytes(StandardCharsets.UTF_8), BodyKind.JSON, "body", findings));
        assertTrue(
                result.startsWith("{\"url\":\"https:\\/\\/hooks.slack.com\\/services\\/[REDACTED:slack-webhook-url"),
                result);
        assertFalse(result.contains("aBcDeFgH"));
        assertEquals(1, findings.total());
    }

    @Test
    void markerNeverEatsTheClosingQuote() {
        Redactor redactor = Redactor.builder()
                .customPattern("greedy", Pattern.compile("tok_[^,]*"), "tok_")
                .build();
        String body = "{\"a\":\"tok_abcdef\",\"b\":\"" + GHP + "\"}";
        Findings findings = new Findings();
        String result =
                json(redactor.redactBody(body.getBytes(StandardCharsets.UTF_8), BodyKind.JSON, "body", findings));
        assertEquals("{\"a\":\"[REDACTED]\",\"b\":\"" + marker("github-pat", GHP.length()) + "\"}", result);
        assertEquals(2, findings.total());
    }

    @Test
    void knownValuesRawPercentEncodedAndJsonEscaped() {
        String secret = "p@ss/word \"quoted\" +more";
        Redactor redactor =
                Redactor.builder().knownValue("known:DB_PASSWORD", secret).build();
        String json =
                "{\"raw\":\"" + JsonCheck.escape(secret, true) + "\",\"u\":\"\\u0070@ss/word \\\"quoted\\\" +more\"}";
        Findings findings = new Findings();
        String result =
                json(redactor.redactBody(json.getBytes(StandardCharsets.UTF_8), BodyKind.JSON, "body", findings));
        assertFalse(result.contains("word"), result);
        assertEquals(List.of(new Finding("known:DB_PASSWORD", "body", 2)), findings.list());

        String form = "a=" + java.net.URLEncoder.encode(secret, StandardCharsets.UTF_8) + "&b="
                + RedactorCatalogTest.encodeAll(secret);
        Findings formFindings = new Findings();
        String formResult = new String(
                redactor.redactBody(form.getBytes(StandardCharsets.US_ASCII), BodyKind.FORM, "body", formFindings),
                StandardCharsets.US_ASCII);
        assertEquals(form.length(), formResult.length());
        assertFalse(formResult.contains("word"), formResult);
        assertEquals(2, formFindings.total());

        Findings textFindings = new Findings();
        byte[] text = ("cat <<EOF\n" + secret + "\nEOF").getBytes(StandardCharsets.UTF_8);
        assertFalse(new String(redactor.redactBody(text, BodyKind.TEXT, "body", textFindings), StandardCharsets.UTF_8)
                .contains("word"));
        assertEquals(1, textFindings.total());
    }

    @Test
    void knownValueNamesTheSecretEvenWhenItAlsoMatchesTheCatalog() {
        Redactor redactor =
                Redactor.builder().knownValue("known:GITHUB_TOKEN", GHP).build();
        Findings findings = new Findings();
        redactor.redactBody(("token " + GHP).getBytes(StandardCharsets.UTF_8), BodyKind.TEXT, "body", findings);
        assertEquals(List.of(new Finding("known:GITHUB_TOKEN", "body", 1)), findings.list());
    }

    @Test
    void allowListedValueIsUntouched() {
        Redactor redactor = Redactor.builder().allow(GHP).build();
        byte[] body = ("{\"a\":\"" + GHP + "\",\"b\":\"" + STRIPE + "\"}").getBytes(StandardCharsets.UTF_8);
        Findings findings = new Findings();
        String result = new String(redactor.redactBody(body, BodyKind.JSON, "body", findings), StandardCharsets.UTF_8);
        assertTrue(result.contains(GHP));
        assertFalse(result.contains(STRIPE));
        assertEquals(List.of(new Finding("stripe-secret-key", "body", 1)), findings.list());
    }

    @Test
    void customPatternFromThePolicy() {
        Redactor redactor = Redactor.builder()
                .customPattern("acme-key", Pattern.compile("ACME-[0-9A-F]{8}-[0-9A-F]{8}"), "ACME-")
                .build();
        Findings findings = new Findings();
        String result = redactor.redactTarget("/x?k=ACME-0123ABCD-4567EF01&ACME-nothex", findings);
        assertEquals("/x?k=_REDACTED.acme-key~~~_&ACME-nothex", result);
        assertEquals(List.of(new Finding("acme-key", "target", 1)), findings.list());
    }

    @Test
    void customPatternWithASecretGroupRedactsOnlyTheGroup() {
        Redactor redactor = Redactor.builder()
                .customPattern(
                        "acme-password", Pattern.compile("acme_password=(?<secret>[^&\\s]{8,64})"), "acme_password=")
                .build();
        Findings findings = new Findings();
        assertEquals(
                "/login?acme_password=" + urlMarker("acme-password", "correct-horse-battery".length()) + "&x=1",
                redactor.redactTarget("/login?acme_password=correct-horse-battery&x=1", findings));
        assertEquals(1, findings.total());
    }

    private static String urlMarker(String kind, int length) {
        byte[] bytes = new byte[length];
        Markers.fill(bytes, 0, length, kind, true);
        return new String(bytes, StandardCharsets.US_ASCII);
    }

    private static String marker(String kind, int length) {
        byte[] bytes = new byte[length];
        Markers.fill(bytes, 0, length, kind, false);
        return new String(bytes, StandardCharsets.US_ASCII);
    }

    @Test
    void builderRefusesWeakInputs() {
        assertThrows(IllegalArgumentException.class, () -> Redactor.builder().knownValue("known:X", "short"));
        assertThrows(
                IllegalArgumentException.class,
                () -> Redactor.builder().customPattern("c", Pattern.compile("ab.*"), "ab"));
        assertThrows(IllegalArgumentException.class, () -> Redactor.builder().knownValue("bad kind", "long enough"));
    }

    @Test
    void nestedSlackPrefixIsCountedOnce() {
        Findings findings = new Findings();
        Redactor.builtIn().redactBody(("t=xoxe.xoxb-1-" + "a".repeat(150)).getBytes(), BodyKind.TEXT, "body", findings);
        assertEquals(List.of(new Finding("slack-config-token", "body", 1)), findings.list());
    }

    @Test
    void findingsNeverPrintAValue() {
        Findings findings = new Findings();
        Redactor.builtIn().redactHeader("Authorization", "Bearer " + GHP, findings);
        Redactor.builtIn().redactBody(STRIPE.getBytes(), BodyKind.TEXT, "body", findings);
        assertEquals(
                "Findings[github-pat@header:authorization x1, stripe-secret-key@body x1]",
                findings.toString().replace("x1", " x1").replace("  ", " "));
        assertFalse(
                findings.toString().contains("Ab1Cd2") || findings.toString().contains("a1B2c3"));
    }

    @Test
    void scanOnlyReportsWithoutOutput() {
        Findings findings = new Findings();
        assertTrue(Redactor.builtIn().scanBody(("x " + GHP).getBytes(), BodyKind.TEXT, "body", findings));
        assertFalse(Redactor.builtIn().scanBody("nothing here".getBytes(), BodyKind.TEXT, "body", new Findings()));
        assertEquals(1, findings.total());
    }

    @Test
    void markersShrinkToFitShortSpans() {
        byte[] b = new byte[30];
        Markers.fill(b, 0, 30, "github-pat", false);
        assertEquals("[REDACTED:github-pat*********]", new String(b, StandardCharsets.US_ASCII));
        Markers.fill(b, 0, 12, "github-pat", false);
        assertEquals("[REDACTED**]", new String(b, 0, 12, StandardCharsets.US_ASCII));
        Markers.fill(b, 0, 5, "github-pat", true);
        assertEquals("~~~~~", new String(b, 0, 5, StandardCharsets.US_ASCII));
        Markers.fill(b, 0, 25, "known:X", true);
        assertEquals("_REDACTED.known.X~~~~~~~_", new String(b, 0, 25, StandardCharsets.US_ASCII));
        assertArrayEquals(new byte[0], new byte[0]);
    }
}

package dev.agentjail.proxy.redact;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Look-alikes that must pass untouched: too short, too long, embedded in identifiers, public keys. */
class RedactorNegativeTest {
    private static final Redactor REDACTOR = Redactor.builtIn();

    private static String rep(String s, int n) {
        return s.repeat(n);
    }

    static Stream<Arguments> lookAlikes() {
        String hex32 = rep("0123456789abcdef", 2);
        return Stream.of(
                Arguments.of("github token one char short", "ghp_" + rep("aB3", 11) + "aB"),
                Arguments.of("github token inside an identifier", "xghp_" + rep("aB3", 12)),
                Arguments.of("aws key id too long", "AKIA" + rep("ABCD", 4) + "Z"),
                Arguments.of("aws key id too short", "AKIA" + rep("ABC", 5)),
                Arguments.of("aws key id inside a word", "XAKIA" + rep("ABCD", 4)),
                Arguments.of("stripe publishable key", "pk_live_" + rep("aB3x", 6)),
                Arguments.of("stripe publishable test key", "pk_test_" + rep("aB3x", 6)),
                Arguments.of("sk- without the OpenAI marker", "sk-" + rep("aB3x", 12)),
                Arguments.of("sk-learn and prose", "we used sk-learn and skip the rest"),
                Arguments.of("google key too short", "AIza" + rep("x", 34)),
                Arguments.of("google key too long", "AIza" + rep("x", 36)),
                Arguments.of("twilio too short", "SK" + hex32.substring(1)),
                Arguments.of("twilio inside a word", "MSK" + hex32),
                Arguments.of("mailgun inside a word", "monkey-" + hex32),
                Arguments.of("mailgun not hex", "key-" + rep("xyz", 11)),
                Arguments.of("databricks inside a word", "xdapi" + hex32),
                Arguments.of(
                        "certificate", "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----"),
                Arguments.of(
                        "public key", "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYI\n-----END PUBLIC KEY-----"),
                Arguments.of("one base64 segment", "eyJhbGciOiJIUzI1NiJ9 alone"),
                Arguments.of("two segments, second not ey", "eyJhbGciOiJIUzI1NiJ9.abcdefghijkl.xyz"),
                Arguments.of("they.eyJ", "they.eyJhbGciOiJIUzI1NiJ9.eyJhbGciOiJIUzI1NiJ9"),
                Arguments.of("aws secret one short", "AWS_SECRET_ACCESS_KEY=" + rep("aB3/", 9) + "aB3"),
                Arguments.of("aws key name in prose", "the aws_secret_access_key is kept in " + rep("vault", 8)),
                Arguments.of("slack token too short", "xoxb-123"),
                Arguments.of("azure secret too short", "abc8Q~" + rep("x", 20)),
                Arguments.of("huggingface too short", "hf_" + rep("abc", 11)),
                Arguments.of("npm too short", "npm_" + rep("a1", 17) + "a"),
                Arguments.of("slack webhook without secret", "https://hooks.slack.com/services/short"),
                Arguments.of("openshift too short", "sha256~abc"),
                Arguments.of("prose", "The key-value store they keyed by eye: a skip list, AKIA? no. ghp_ only."),
                Arguments.of("an EXAMPLE-free sentence with Q~", "use the Q~ operator and 1Q~x"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("lookAlikes")
    void passesUntouched(String name, String text) {
        for (BodyKind kind : List.of(BodyKind.TEXT, BodyKind.JSON, BodyKind.FORM)) {
            byte[] in = ("x " + text + " y").getBytes(StandardCharsets.UTF_8);
            Findings findings = new Findings();
            byte[] out = REDACTOR.redactBody(in, kind, "body", findings);
            assertEquals(List.of(), findings.list(), kind + ": " + findings);
            assertArrayEquals(in, out, kind.toString());
        }
    }
}

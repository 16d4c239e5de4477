package dev.agentjail.proxy.redact;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class RewriteCheckTest {
    private static final String SHA = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

    static Stream<Arguments> cases() {
        return Stream.of(
                Arguments.of("/org/repo.git/git-receive-pack", List.of(), NonRewritable.GIT_PACK),
                Arguments.of("/org/repo.git/git-upload-pack", List.of(), NonRewritable.GIT_PACK),
                Arguments.of(
                        "/push",
                        List.of(Map.entry("Content-Type", "application/x-git-receive-pack-request")),
                        NonRewritable.GIT_PACK),
                Arguments.of("/bucket/key", List.of(Map.entry("x-amz-content-sha256", SHA)), NonRewritable.AWS_SIGV4),
                Arguments.of(
                        "/bucket/key",
                        List.of(Map.entry("X-Amz-Content-Sha256", "STREAMING-AWS4-HMAC-SHA256-PAYLOAD")),
                        NonRewritable.AWS_SIGV4),
                Arguments.of(
                        "/x",
                        List.of(Map.entry("Authorization", "AWS4-HMAC-SHA256 Credential=AKIA/x, Signature=ab")),
                        NonRewritable.AWS_SIGV4),
                Arguments.of("/bucket/key?X-Amz-Signature=abc&X-Amz-Date=1", List.of(), NonRewritable.AWS_SIGV4),
                Arguments.of(
                        "/x", List.of(Map.entry("Content-MD5", "1B2M2Y8AsgTpgAmY7PhCfg==")), NonRewritable.BODY_DIGEST),
                Arguments.of("/x", List.of(Map.entry("Content-Digest", "sha-256=:abc=:")), NonRewritable.BODY_DIGEST),
                Arguments.of("/x", List.of(Map.entry("Digest", "SHA-256=abc=")), NonRewritable.BODY_DIGEST),
                Arguments.of("/x", List.of(Map.entry("Signature-Input", "sig1=()")), NonRewritable.HTTP_SIGNATURE),
                Arguments.of("/bucket/key", List.of(Map.entry("x-amz-content-sha256", "UNSIGNED-PAYLOAD")), null),
                Arguments.of("/v1/messages", List.of(Map.entry("Content-Type", "application/json")), null),
                Arguments.of("/git-receive-pack-docs/readme", List.of(), null));
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("cases")
    void classifies(String target, List<Map.Entry<String, String>> headers, NonRewritable expected) {
        assertEquals(Optional.ofNullable(expected), RewriteCheck.classify(target, headers));
    }
}

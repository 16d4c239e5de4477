package dev.agentjail.proxy.inspect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The wide encodings a JSON parser detects from a body's first bytes, and the binary types exempt from the check. */
class WideTextTest {
    static Stream<Arguments> starts() {
        return Stream.of(
                Arguments.of("{\"a\":1}", "UTF-16LE", "UTF-16LE"),
                Arguments.of("{\"a\":1}", "UTF-16BE", "UTF-16BE"),
                Arguments.of("{\"a\":1}", "UTF-32LE", "UTF-32LE"),
                Arguments.of("{\"a\":1}", "UTF-32BE", "UTF-32BE"),
                Arguments.of("\uFEFF{}", "UTF-16LE", "UTF-16LE"),
                Arguments.of("\uFEFF{}", "UTF-16BE", "UTF-16BE"),
                Arguments.of("\uFEFF{}", "UTF-32LE", "UTF-32LE"),
                Arguments.of("\uFEFF{}", "UTF-32BE", "UTF-32BE"),
                Arguments.of("a=1&b=2", "UTF-16LE", "UTF-16LE"),
                Arguments.of("{\"a\":1}", "UTF-8", null),
                Arguments.of("\uFEFF{\"a\":1}", "UTF-8", null),
                Arguments.of("héllo wörld", "ISO-8859-1", null));
    }

    @ParameterizedTest(name = "{0} in {1}")
    @MethodSource("starts")
    void theEncodingIsToldFromTheFirstBytes(String text, String charset, String expected) {
        byte[] b = text.getBytes(Charset.forName(charset));
        assertEquals(expected, WideText.encoding(b, Math.min(b.length, WideText.LEAD_BYTES)));
    }

    @org.junit.jupiter.api.Test
    void binaryTypesAreExemptTextTypesAreNot() {
        assertTrue(WideText.binaryType("image/png"));
        assertTrue(WideText.binaryType("Application/Octet-Stream; x=y"));
        assertTrue(WideText.binaryType("application/x-git-receive-pack-request"));
        assertFalse(WideText.binaryType("application/json"));
        assertFalse(WideText.binaryType("text/plain; charset=utf-8"));
        assertFalse(WideText.binaryType(null));
        assertEquals(null, WideText.encoding("ab".getBytes(StandardCharsets.UTF_8), 2));
    }
}

package dev.agentjail.proxy.mcp;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** JSON text in each encoding a JSON parser detects is read back as the same text. */
class JsonCharsetTest {
    private static final String TEXT = " {\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"params\":{\"q\":\"é€😀\"}}";

    static Stream<Arguments> encodings() {
        return Stream.of(
                Arguments.of("UTF-8", "", 0),
                Arguments.of("UTF-8", "\uFEFF", 3),
                Arguments.of("UTF-16BE", "", 0),
                Arguments.of("UTF-16BE", "\uFEFF", 2),
                Arguments.of("UTF-16LE", "", 0),
                Arguments.of("UTF-16LE", "\uFEFF", 2),
                Arguments.of("UTF-32BE", "", 0),
                Arguments.of("UTF-32BE", "\uFEFF", 4),
                Arguments.of("UTF-32LE", "", 0),
                Arguments.of("UTF-32LE", "\uFEFF", 4));
    }

    @ParameterizedTest(name = "{0} bom={2}")
    @MethodSource("encodings")
    void detectsAndTranscodes(String charset, String bom, int bomLength) {
        Charset cs = Charset.forName(charset);
        byte[] bytes = (bom + TEXT).getBytes(cs);

        JsonCharset.Detected detected = JsonCharset.detect(bytes, bytes.length);

        assertEquals(cs, detected.charset());
        assertEquals(bomLength, detected.bomLength());
        assertEquals(TEXT, new String(JsonCharset.toUtf8(bytes, bytes.length, detected), StandardCharsets.UTF_8));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("encodings")
    void aPrefixLosesOnlyItsIncompleteLastCharacter(String charset, String bom, int bomLength) {
        Charset cs = Charset.forName(charset);
        byte[] bytes = (bom + TEXT).getBytes(cs);
        int cut = bytes.length - 1;

        JsonCharset.Detected detected = JsonCharset.detect(bytes, cut);
        String prefix = new String(JsonCharset.toUtf8(bytes, cut, detected), StandardCharsets.UTF_8);

        assertEquals(TEXT.substring(0, prefix.length()), prefix);
        assertEquals(true, prefix.length() >= TEXT.length() - 2, prefix);
    }

    static Stream<Arguments> declared() {
        Charset ebcdic = Charset.forName("IBM037");
        return Stream.of(
                Arguments.of(null, List.of()),
                Arguments.of("application/json", List.of()),
                Arguments.of("application/json; charset=utf-16le", List.of(StandardCharsets.UTF_16LE)),
                Arguments.of("application/json;CHARSET=\"UTF-16\"", List.of(StandardCharsets.UTF_16)),
                Arguments.of("text/plain; format=x; charset=ISO-8859-1", List.of(StandardCharsets.ISO_8859_1)),
                Arguments.of("application/json; charset=not-a-charset", List.of()),
                Arguments.of("application/json; x=\"a;charset=bogus\"; charset=IBM037", List.of(ebcdic)),
                // A splitter that ignores quotes reads the first, RFC 9110 the second.
                Arguments.of(
                        "application/json; x=\"a;charset=IBM037;\"; charset=utf-8",
                        List.of(StandardCharsets.UTF_8, ebcdic)),
                Arguments.of(
                        "application/json; charset=utf-8; charset=IBM037", List.of(StandardCharsets.UTF_8, ebcdic)),
                Arguments.of("application/json; charset=\"IBM037", List.of(ebcdic)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("declared")
    void readsEveryCharsetTheTypeCouldDeclare(String type, List<Charset> expected) {
        assertEquals(expected, JsonCharset.declared(type));
    }
}

package dev.agentjail.proxy.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/** RFC 9110 media types: quoted strings hide ';' and '=', escapes are undone, names are case-insensitive. */
class MediaTypeTest {
    static Stream<Arguments> charsets() {
        return Stream.of(
                Arguments.of("application/json", List.of()),
                Arguments.of("application/json;charset=utf-8", List.of("utf-8")),
                Arguments.of("Application/JSON ; CHARSET=\"UTF-8\"", List.of("UTF-8")),
                Arguments.of("application/json; x=\"a;charset=bogus\"; charset=IBM037", List.of("IBM037")),
                Arguments.of("application/json; x=\"a\\\"; charset=utf-7\"; charset=utf-8", List.of("utf-8")),
                Arguments.of("application/json; charset=\"ut\\f-8\"", List.of("utf-8")),
                Arguments.of("application/json;;  ; charset=utf-16 ;", List.of("utf-16")),
                Arguments.of("application/json; charset=utf-8; Charset=utf-7", List.of("utf-8", "utf-7")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("charsets")
    void readsEveryCharsetParameter(String value, List<String> expected) throws Exception {
        assertEquals(expected, MediaType.parse(value).values("charset"));
    }

    @ParameterizedTest(name = "[{0}]")
    @ValueSource(
            strings = {
                "",
                "json",
                "application/",
                "application/json x",
                "application/json, text/plain",
                "application/json; charset",
                "application/json; charset=",
                "application/json; charset =utf-8",
                "application/json; charset= utf-8",
                "application/json; charset=\"utf-8",
                "application/json; charset=\"utf-8\"x",
                "application/json; charset=utf-8 x",
                "application/json; charset=utf-8, text/plain",
                "application/json; x=\"a\u0001\"",
                "application/json; x=\"a\\",
                "application/json; chä=x"
            })
    void refusesWhatIsNotOneMediaType(String value) {
        assertThrows(MediaType.Malformed.class, () -> MediaType.parse(value));
    }

    @org.junit.jupiter.api.Test
    void seesARepeatedParameter() throws Exception {
        assertEquals(true, MediaType.parse("text/plain; a=1; A=2").repeatsAParameter());
        assertEquals(false, MediaType.parse("text/plain; a=1; b=2").repeatsAParameter());
    }
}

package dev.agentjail.proxy.mcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.proxy.mcp.McpResponseKind.Asked;
import dev.agentjail.proxy.mcp.McpResponseKind.Reading;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaders;
import java.util.EnumSet;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Status codes and content types as the official SDK clients read them, against what the proxy does with the
 * response: each row names the kind and, for a refusal, a word of its reason.
 */
class McpResponseKindTest {
    static Stream<Arguments> types() {
        return Stream.of(
                Arguments.of("application/json", EnumSet.of(Reading.JSON)),
                Arguments.of("application/json; charset=utf-8", EnumSet.of(Reading.JSON)),
                Arguments.of("Application/JSON", EnumSet.of(Reading.JSON)),
                Arguments.of("application/json-x", EnumSet.of(Reading.JSON)),
                Arguments.of("text/plain; a=application/json", EnumSet.of(Reading.JSON)),
                Arguments.of("text/event-stream", EnumSet.of(Reading.SSE)),
                Arguments.of("text/event-stream;charset=utf-8", EnumSet.of(Reading.SSE)),
                Arguments.of("TEXT/Event-Stream", EnumSet.of(Reading.SSE)),
                Arguments.of("application/json, text/event-stream", EnumSet.of(Reading.JSON, Reading.SSE)),
                Arguments.of("application/json; x=text/event-stream", EnumSet.of(Reading.JSON, Reading.SSE)),
                Arguments.of("text/event-stream; x=application/json", EnumSet.of(Reading.SSE)),
                Arguments.of("application/problem+json", EnumSet.noneOf(Reading.class)),
                Arguments.of("application/vnd.api+json", EnumSet.noneOf(Reading.class)),
                Arguments.of("text/plain", EnumSet.noneOf(Reading.class)),
                Arguments.of("", EnumSet.noneOf(Reading.class)));
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("types")
    void clientsReadTypesThisWay(String type, Set<Reading> expected) {
        assertEquals(expected, McpResponseKind.readings(type));
    }

    static Stream<Arguments> kinds() {
        return Stream.of(
                row(Asked.ANSWER, 200, "application/json", "json"),
                row(Asked.ANSWER, 201, "application/json", "json"),
                row(Asked.ANSWER, 206, "application/json", "json"),
                row(Asked.ANSWER, 299, "application/json", "json"),
                row(Asked.ANSWER, 202, "application/json", "json"),
                row(Asked.ANSWER, 201, "application/json-x", "json"),
                row(Asked.ANSWER, 200, "application/json; charset=utf-8", "json"),
                row(Asked.ANSWER, 200, "application/json; charset=\"UTF-8\"", "json"),
                row(Asked.ANSWER, 200, "Application/JSON", "json"),
                row(Asked.ANSWER, 200, "text/event-stream", "sse"),
                row(Asked.ANSWER, 201, "text/event-stream;charset=utf-8", "sse"),
                row(Asked.ANSWER, 299, "Text/Event-Stream", "sse"),
                row(Asked.NO_ANSWER, 200, "text/event-stream", "sse"),
                row(Asked.NO_ANSWER, 200, "application/json", "json"),
                row(Asked.STREAM, 200, "text/event-stream", "sse"),
                row(Asked.STREAM, 203, "text/event-stream", "sse"),
                // Refused: clients act on these, the proxy cannot filter them as they read them.
                row(Asked.ANSWER, 200, "application/json, text/event-stream", "refuse:disagree"),
                row(Asked.ANSWER, 200, "application/json; x=text/event-stream", "refuse:disagree"),
                row(Asked.ANSWER, 200, "application/json; charset=utf-16", "refuse:charset"),
                row(Asked.STREAM, 200, "text/event-stream; charset=utf-16le", "refuse:charset"),
                row(Asked.ANSWER, 200, "application/json; charset=utf-8; charset=utf-8", "refuse:more than once"),
                // Every reading of the parameters counts: quoted, escaped, hidden where a quote-blind splitter sees it.
                row(Asked.STREAM, 200, "text/event-stream; x=\"charset=utf-16\"", "refuse:charset"),
                row(Asked.ANSWER, 200, "application/json; x=\"a;charset=utf-16\"", "refuse:charset"),
                row(Asked.ANSWER, 200, "application/json; charset=\"utf-16\"", "refuse:charset"),
                row(Asked.ANSWER, 200, "application/json; CHARSET=latin1", "refuse:charset"),
                row(Asked.ANSWER, 200, "application/json; x=\"charset=utf-8\"; charset=utf-8", "refuse:more than once"),
                row(Asked.ANSWER, 200, "application/problem+json", "refuse:neither"),
                row(Asked.ANSWER, 200, "text/plain", "refuse:neither"),
                row(Asked.ANSWER, 200, null, "refuse:neither"),
                row(Asked.STREAM, 200, "application/json", "refuse:GET"),
                row(Asked.STREAM, 200, "text/plain", "refuse:neither"),
                row(Asked.STREAM, 202, null, "refuse:neither"),
                row(Asked.ANSWER, 300, "application/json", "refuse:redirect"),
                row(Asked.ANSWER, 302, "application/json", "refuse:redirect"),
                row(Asked.ANSWER, 303, null, "refuse:redirect"),
                row(Asked.ANSWER, 304, null, "refuse:redirect"),
                row(Asked.STREAM, 307, "text/event-stream", "refuse:redirect"),
                row(Asked.NO_ANSWER, 308, null, "refuse:redirect"),
                // Passed: no client reads an MCP message from these.
                row(Asked.ANSWER, 202, "text/plain", "pass"),
                row(Asked.ANSWER, 202, null, "pass"),
                row(Asked.ANSWER, 204, null, "pass"),
                row(Asked.NO_ANSWER, 200, "text/plain", "pass"),
                row(Asked.NO_ANSWER, 202, null, "pass"),
                row(Asked.ANSWER, 400, "application/json", "pass"),
                row(Asked.ANSWER, 401, "text/html", "pass"),
                row(Asked.ANSWER, 404, "application/json", "pass"),
                row(Asked.STREAM, 405, null, "pass"),
                row(Asked.ANSWER, 500, "text/event-stream", "pass"),
                row(Asked.NOTHING, 200, "application/json", "pass"),
                row(Asked.NOTHING, 302, null, "pass"));
    }

    private static Arguments row(Asked asked, int status, String type, String expected) {
        return Arguments.of(asked, status, type, expected);
    }

    @ParameterizedTest(name = "{0} {1} {2} -> {3}")
    @MethodSource("kinds")
    void statusAndTypeDecide(Asked asked, int status, String type, String expected) {
        HttpHeaders headers = new DefaultHttpHeaders();
        if (type != null) {
            headers.add("Content-Type", type);
        }
        headers.add("Content-Length", "10");
        assertKind(expected, McpResponseKind.of(asked, status, headers));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("twoTypes")
    void twoContentTypeHeadersAreRefused(String first, String second) {
        HttpHeaders headers =
                new DefaultHttpHeaders().add("Content-Type", first).add("content-type", second);
        assertKind("refuse:2 Content-Type", McpResponseKind.of(Asked.ANSWER, 200, headers));
        assertKind("refuse:2 Content-Type", McpResponseKind.of(Asked.STREAM, 200, headers));
    }

    static Stream<Arguments> twoTypes() {
        return Stream.of(
                Arguments.of("application/json", "text/event-stream"),
                Arguments.of("text/event-stream", "application/json"),
                Arguments.of("application/json", "application/json"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("codings")
    void compressedResponsesAreRefused(String coding, String expected) {
        HttpHeaders json =
                new DefaultHttpHeaders().add("Content-Type", "application/json").add("Content-Encoding", coding);
        assertKind(expected, McpResponseKind.of(Asked.ANSWER, 200, json));
        HttpHeaders sse = new DefaultHttpHeaders()
                .add("Content-Type", "text/event-stream")
                .add("Content-Encoding", coding);
        assertKind(expected.equals("json") ? "sse" : expected, McpResponseKind.of(Asked.STREAM, 200, sse));
    }

    static Stream<Arguments> codings() {
        return Stream.of(
                Arguments.of("identity", "json"),
                Arguments.of("gzip", "refuse:compressed"),
                Arguments.of("GZIP", "refuse:compressed"),
                Arguments.of("identity, gzip", "refuse:compressed"),
                Arguments.of("br", "refuse:compressed"),
                Arguments.of("deflate", "refuse:compressed"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("emptyBodies")
    void anEmptyBodyOfAnyTypeIsNothingToAct(String header, String value) {
        HttpHeaders headers = new DefaultHttpHeaders().add("Content-Type", "text/plain");
        headers.add(header, value);
        assertKind("pass", McpResponseKind.of(Asked.ANSWER, 200, headers));
        assertKind("pass", McpResponseKind.of(Asked.STREAM, 200, headers));
    }

    static Stream<Arguments> emptyBodies() {
        return Stream.of(Arguments.of("Content-Length", "0"));
    }

    private static void assertKind(String expected, McpResponseKind kind) {
        switch (expected) {
            case "json" -> assertInstanceOf(McpResponseKind.FilterJson.class, kind);
            case "sse" -> assertInstanceOf(McpResponseKind.FilterSse.class, kind);
            case "pass" -> assertInstanceOf(McpResponseKind.Pass.class, kind);
            default -> {
                McpResponseKind.Refuse r = assertInstanceOf(McpResponseKind.Refuse.class, kind);
                String word = expected.substring("refuse:".length());
                assertTrue(r.detail().contains(word), r.detail());
            }
        }
    }
}

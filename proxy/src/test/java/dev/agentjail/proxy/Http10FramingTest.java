package dev.agentjail.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class Http10FramingTest {
    static Stream<Arguments> cases() {
        // request version, response Transfer-Encoding (null: none), closeAfter in; closeAfter out, TE out, Connection
        return Stream.of(
                Arguments.of(HttpVersion.HTTP_1_0, "chunked", false, true, null, null),
                Arguments.of(HttpVersion.HTTP_1_0, "chunked", true, true, null, null),
                Arguments.of(HttpVersion.HTTP_1_0, null, false, false, null, "keep-alive"),
                Arguments.of(HttpVersion.HTTP_1_0, null, true, true, null, null),
                Arguments.of(HttpVersion.HTTP_1_1, "chunked", false, false, "chunked", null),
                Arguments.of(HttpVersion.HTTP_1_1, null, true, true, null, null));
    }

    @ParameterizedTest
    @MethodSource("cases")
    void framesForTheClientsVersion(
            HttpVersion version, String te, boolean closeIn, boolean closeOut, String teOut, String connection) {
        HttpResponse response = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
        if (te != null) {
            response.headers().set("Transfer-Encoding", te);
        }
        boolean close = Http10Framing.adapt(new DefaultHttpRequest(version, HttpMethod.GET, "/"), response, closeIn);

        assertEquals(closeOut, close);
        assertEquals(teOut, response.headers().get("Transfer-Encoding"));
        assertEquals(connection, response.headers().get("Connection"));
    }
}

package dev.agentjail.proxy.inspect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Optional;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** A body is scanned as bytes: it goes out only in a charset where those bytes are the text a receiver reads. */
class OutboundRequestCharsetTest {
    @ParameterizedTest
    @ValueSource(
            strings = {
                "application/json",
                "application/json; charset=utf-8",
                "application/json; charset=UTF-8",
                "application/json;charset=\"utf-8\"",
                "text/plain; format=flowed; charset=us-ascii",
                "application/x-www-form-urlencoded; charset=ISO-8859-1",
            })
    void aCharsetWhoseBytesAreItsTextIsScanned(String contentType) {
        assertEquals(Optional.empty(), OutboundRequest.charsetProblem(contentType));
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "application/json; charset=utf-16",
                "application/json; charset=UTF-16LE",
                "application/json; charset=utf-32",
                "application/json; charset=utf-7",
                "application/json; charset=\"utf-7\"",
                "text/plain; charset=IBM037",
                "text/plain; x=\"a;charset=utf-8\"; charset=utf-16",
                "application/json; charset=utf-8; charset=utf-16",
                "application/json; charset=bogus",
                "text/plain; x=\"a;charset=utf-16\"; charset=utf-8",
                "text/plain; x=\"charset=utf-16\"",
            })
    void anyOtherCharsetIsRefused(String contentType) {
        Optional<String> problem = OutboundRequest.charsetProblem(contentType);
        assertTrue(problem.isPresent(), contentType);
        assertTrue(problem.get().contains("charset"), problem.get());
    }
}

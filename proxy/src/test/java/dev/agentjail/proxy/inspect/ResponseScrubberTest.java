package dev.agentjail.proxy.inspect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.agentjail.policy.CredentialRule;
import dev.agentjail.policy.HostKind;
import dev.agentjail.policy.Target;
import dev.agentjail.proxy.testing.NettyLeakGuard;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaders;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** A response to a request with an injected credential carries the placeholder where the upstream echoed the value. */
@ExtendWith(NettyLeakGuard.class)
class ResponseScrubberTest {
    private static final String VALUE = "sk-ant-" + "api03-realvalue-0123456789";
    private static final String PLACEHOLDER = "agentjail-placeholder-" + "0123456789abcdef0123456789abcdef";

    private static ResponseScrubber scrubber(String value, String placeholder) {
        CredentialRule rule =
                new CredentialRule("KEY", null, List.of(new Target("api.example.com", HostKind.DNS, 443)), "x-api-key");
        return new ResponseScrubber(List.of(new InjectedCredential(rule, placeholder, value)));
    }

    private static String feed(ResponseScrubber s, List<String> parts) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < parts.size(); i++) {
            ByteBuf b = s.scrub(
                    Unpooled.copiedBuffer(parts.get(i), StandardCharsets.UTF_8),
                    i == parts.size() - 1,
                    ByteBufAllocator.DEFAULT);
            out.append(b.toString(StandardCharsets.UTF_8));
            b.release();
        }
        return out.toString();
    }

    @Test
    void aValueSplitAtAnyPointIsSwappedWhole() {
        String body = "{\"echo\":\"" + VALUE + "\",\"twice\":\"" + VALUE + "\"}";
        String expected = body.replace(VALUE, ResponseScrubber.sameLength(PLACEHOLDER, VALUE.length()));
        for (int cut = 0; cut <= body.length(); cut++) {
            ResponseScrubber s = scrubber(VALUE, PLACEHOLDER);
            String out = feed(s, List.of(body.substring(0, cut), body.substring(cut)));
            assertEquals(expected, out, "cut at " + cut);
            assertEquals(2, s.swapped());
        }
    }

    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(
            strings = {"plain", "upper", "percent", "json", "base64", "base64url"})
    void theValueAsAnEchoMayRespellItIsSwappedToo(String how) {
        String value = "real-api-key-0f9e8d7c6b5a/+x";
        String spelled = switch (how) {
            case "plain" -> value;
            case "upper" -> value.toUpperCase(java.util.Locale.ROOT);
            case "percent" -> java.net.URLEncoder.encode(value, StandardCharsets.UTF_8);
            case "json" -> value.replace("/", "\\/");
            case "base64" -> java.util.Base64.getEncoder().encodeToString(value.getBytes(StandardCharsets.UTF_8));
            default ->
                java.util.Base64.getUrlEncoder()
                        .withoutPadding()
                        .encodeToString(value.getBytes(StandardCharsets.UTF_8));
        };
        ResponseScrubber s = scrubber(value, PLACEHOLDER);

        String out = feed(s, List.of("{\"k\":\"" + spelled + "\"}"));

        assertFalse(out.contains(spelled), out);
        HttpHeaders headers = new DefaultHttpHeaders().add("Location", "/x?k=" + spelled);
        s.scrub(headers);
        assertFalse(headers.get("Location").contains(spelled), headers.toString());
    }

    @Test
    void aHeaderNamedAfterTheValueOrFoldedAroundItIsDropped() {
        ResponseScrubber s = scrubber(VALUE, PLACEHOLDER);
        HttpHeaders headers = new DefaultHttpHeaders()
                .add("X-" + VALUE.replace("/", ""), "1")
                .add("X-Fold", VALUE.substring(0, 5) + " " + VALUE.substring(5))
                .add("X-Kept", "yes");

        s.scrub(headers);

        assertEquals(List.of("X-Kept"), List.copyOf(headers.names()));
    }

    @Test
    void oneByteAtATimeToo() {
        String body = "data: " + VALUE + "\n\n";
        ResponseScrubber s = scrubber(VALUE, PLACEHOLDER);
        List<String> bytes =
                body.chars().mapToObj(c -> String.valueOf((char) c)).toList();
        assertFalse(feed(s, bytes).contains(VALUE));
    }

    @Test
    void onlyWhatCouldBeginAValueIsHeldBack() {
        ResponseScrubber s = scrubber(VALUE, PLACEHOLDER);
        ByteBuf first = s.scrub(
                Unpooled.copiedBuffer("data: {\"t\":1}\n\n", StandardCharsets.UTF_8), false, ByteBufAllocator.DEFAULT);
        // An event stream's event goes on at once: nothing in it can begin the value.
        assertEquals("data: {\"t\":1}\n\n", first.toString(StandardCharsets.UTF_8));
        first.release();
        ByteBuf second =
                s.scrub(Unpooled.copiedBuffer("x sk-ant", StandardCharsets.UTF_8), false, ByteBufAllocator.DEFAULT);
        assertEquals("x ", second.toString(StandardCharsets.UTF_8));
        second.release();
        ByteBuf end = s.scrub(Unpooled.EMPTY_BUFFER, true, ByteBufAllocator.DEFAULT);
        assertEquals("sk-ant", end.toString(StandardCharsets.UTF_8));
        end.release();
    }

    @Test
    void headersAreSwappedAndAPlaceholderOfTheValuesLengthKeepsTheirLength() {
        ResponseScrubber s = scrubber(VALUE, PLACEHOLDER);
        HttpHeaders headers =
                new DefaultHttpHeaders().add("X-Echo", "Bearer " + VALUE).add("X-Other", "fine");

        s.scrub(headers);

        String swapped = headers.get("X-Echo");
        assertEquals(("Bearer " + VALUE).length(), swapped.length());
        assertFalse(swapped.contains(VALUE));
        assertEquals("fine", headers.get("X-Other"));
        assertEquals(
                PLACEHOLDER.substring(0, VALUE.length()), ResponseScrubber.sameLength(PLACEHOLDER, VALUE.length()));
        assertEquals(PLACEHOLDER, ResponseScrubber.sameLength(PLACEHOLDER, PLACEHOLDER.length()));
    }
}

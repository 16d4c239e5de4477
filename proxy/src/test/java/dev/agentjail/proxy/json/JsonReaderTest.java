package dev.agentjail.proxy.json;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class JsonReaderTest {
    private static Json parse(String s) throws JsonException {
        return JsonReader.parse(s.getBytes(StandardCharsets.UTF_8));
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "",
                " ",
                "{",
                "{\"a\":1,}",
                "[1,]",
                "{\"a\":1,\"a\":2}",
                "{\"o\":{\"a\":1,\"a\":1}}",
                "{'a':1}",
                "{\"a\":01}",
                "{\"a\":1.}",
                "{\"a\":.5}",
                "{\"a\":+1}",
                "{\"a\":NaN}",
                "{\"a\":\"\u0001\"}",
                "{\"a\":\"\\x41\"}",
                "{\"a\":\"\\ud800\"}",
                "{\"a\":\"\\udc00\\ud800\"}",
                "{\"a\":tru}",
                "{} {}",
                "\uFEFF{}",
                "// c\n{}",
            })
    void refuses(String text) {
        assertThrows(JsonException.class, () -> parse(text));
    }

    @Test
    void refusesMalformedUtf8() {
        byte[][] bad = {
            {'"', (byte) 0xc0, (byte) 0xaf, '"'}, // overlong '/'
            {'"', (byte) 0xed, (byte) 0xa0, (byte) 0x80, '"'}, // encoded surrogate
            {'"', (byte) 0xf4, (byte) 0x90, (byte) 0x80, (byte) 0x80, '"'}, // above U+10FFFF
            {'"', (byte) 0x80, '"'}, // lone continuation byte
            {'"', (byte) 0xe2, (byte) 0x82, '"'}, // truncated sequence
            {'"', (byte) 0xff, '"'},
        };
        for (byte[] b : bad) {
            assertThrows(JsonException.class, () -> JsonReader.parse(b));
        }
    }

    @Test
    void refusesDeepNesting() {
        String deep = "[".repeat(JsonReader.MAX_DEPTH + 1) + "]".repeat(JsonReader.MAX_DEPTH + 1);
        assertThrows(JsonException.class, () -> parse(deep));
        String ok = "[".repeat(JsonReader.MAX_DEPTH) + "]".repeat(JsonReader.MAX_DEPTH);
        assertTrue(assertDoesNotThrowParse(ok) instanceof Json.Arr);
    }

    private static Json assertDoesNotThrowParse(String s) {
        try {
            return parse(s);
        } catch (JsonException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void decodesEscapesAndKeepsNumbersAndOrder() throws Exception {
        Json.Obj o = (Json.Obj)
                parse("{\"z\":\"s\\u0435arch\\n\",\"a\":[1.50e+3,-0,true,null],\"e\":\"\\ud83d\\ude00\",\"u\":\"é\"}");
        assertEquals("s\u0435arch\n", o.string("z"));
        assertEquals("[1.50e+3,-0,true,null]", o.get("a").text());
        assertEquals("\uD83D\uDE00", o.string("e"));
        assertEquals("é", o.string("u"));
        assertEquals(
                "{\"z\":\"s\u0435arch\\n\",\"a\":[1.50e+3,-0,true,null],\"e\":\"\uD83D\uDE00\",\"u\":\"é\"}", o.text());
        assertEquals(
                "{\"a\":[1.50e+3,-0,true,null],\"e\":\"\uD83D\uDE00\",\"u\":\"é\",\"z\":\"s\u0435arch\\n\"}",
                o.canonical());
    }

    @Test
    void controlCharactersAreEscapedOnTheWayOut() throws Exception {
        assertEquals("\"a\\u0000b\\u001f\"", parse("\"a\\u0000b\\u001f\"").text());
    }

    @Test
    void prefixMembersReadsWhatIsCompleteSoFar() {
        byte[] body = "{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"params\":{\"name\":\"x\",\"argu"
                .getBytes(StandardCharsets.UTF_8);
        Json.Obj start = JsonReader.prefixMembers(body, body.length);
        assertEquals("2.0", start.string("jsonrpc"));
        assertEquals("tools/call", start.string("method"));
        assertFalse(start.members().containsKey("params"));

        byte[] batch = "[{\"method\":\"initialize\",\"id\":1".getBytes(StandardCharsets.UTF_8);
        assertEquals("initialize", JsonReader.prefixMembers(batch, batch.length).string("method"));

        byte[] broken = "{\"a\":1 \"b\"".getBytes(StandardCharsets.UTF_8);
        assertNull(JsonReader.prefixMembers(broken, broken.length));
        byte[] text = "hello".getBytes(StandardCharsets.UTF_8);
        assertNull(JsonReader.prefixMembers(text, text.length));
    }
}

package dev.agentjail.proxy.audit;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ChainHeaderJsonTest {

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            quoteCharacter = '`',
            value = {
                "true  | {}",
                "true  | {\"a\":1}",
                "true  | { \"a\" : [1, -2.5e+3, \"x\", true, false, null, {\"b\":{}}] }",
                "true  | {\"s\":\"\\u00e9\\n\\\"\\\\\\/\"}",
                "true  | {\"s\":\"é ☃\"}",
                "false | ``",
                "false | []",
                "false | {\"a\":1",
                "false | {\"a\":1}}",
                "false | {\"a\":1} x",
                "false | {\"a\":01}",
                "false | {\"a\":1.}",
                "false | {\"a\":-}",
                "false | {\"a\":+1}",
                "false | {\"a\":tru}",
                "false | {\"a\":\"x}",
                "false | {\"a\":\"\\x\"}",
                "false | {\"a\":\"\\u12g4\"}",
                "false | {a:1}",
                "false | {\"a\" 1}",
                "false | {\"a\":1,}",
                "false | {\"a\":[1,]}",
                "false | {,}",
            })
    void acceptsExactlyOneJsonObject(boolean valid, String text) {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);

        assertEquals(valid, ChainHeader.isJsonObject(bytes, 0, bytes.length), text);
    }

    @ParameterizedTest
    @CsvSource({"0", "1", "31"})
    void rejectsRawControlCharactersInStrings(int c) {
        byte[] bytes = ("{\"a\":\"x" + (char) c + "\"}").getBytes(StandardCharsets.UTF_8);

        assertEquals(false, ChainHeader.isJsonObject(bytes, 0, bytes.length));
    }

    @ParameterizedTest
    @CsvSource({"30, true", "40, false"})
    void boundsNesting(int depth, boolean valid) {
        String text = "{\"a\":" + "[".repeat(depth) + "]".repeat(depth) + "}";
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);

        assertEquals(valid, ChainHeader.isJsonObject(bytes, 0, bytes.length));
    }
}

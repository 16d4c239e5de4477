package dev.agentjail.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class LogRecordTextTest {
    @Test
    void charactersThatShowAsNothingOrAsASpaceAreEscapedAndTheWordQuoted() {
        // A Hangul filler is a letter to Unicode and a blank on screen: "rm\u3164-rf" would pass for two arguments.
        assertEquals("'rm\\u3164-rf'", LogRecordText.word("rm\u3164-rf"));
        assertEquals("'a\\u200bb'", LogRecordText.word("a\u200bb"), "zero-width space");
        assertEquals("'a\\u00a0b'", LogRecordText.word("a\u00a0b"), "no-break space");
        assertEquals("'x\\u115f'", LogRecordText.word("x\u115f"), "Hangul choseong filler");
        assertEquals("'x\\ufe0f'", LogRecordText.word("x\ufe0f"), "variation selector");
        assertEquals("'x\\udb40\\udc01'", LogRecordText.word("x\udb40\udc01"), "a tag character, outside the BMP");
        assertEquals("'evil\\u202etxt.exe'", LogRecordText.word("evil\u202etxt.exe"), "bidi override");
    }

    @Test
    void visibleTextOfAnyScriptStaysAsItIs() {
        assertEquals("café/日本/файл.txt", LogRecordText.word("café/日本/файл.txt"));
        assertEquals("'a b'", LogRecordText.word("a b"), "an ASCII space only quotes");
        assertEquals("emoji-\ud83d\ude00", LogRecordText.printable("emoji-\ud83d\ude00"));
    }
}

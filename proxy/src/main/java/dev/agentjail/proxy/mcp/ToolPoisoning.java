package dev.agentjail.proxy.mcp;

import dev.agentjail.proxy.json.Json;
import java.util.Locale;

/**
 * Recognises the marks of tool poisoning in a listed tool's text (description and input schema): an
 * {@code <IMPORTANT>} block, invisible characters (zero-width, bidirectional controls, Unicode tag characters), or a
 * long run of whitespace that pushes text out of view. Flagged tools are recorded, not hidden: the marks are
 * evidence, not proof.
 */
final class ToolPoisoning {
    /** A run of this many whitespace characters hides what follows in most viewers. */
    static final int WHITESPACE_RUN = 32;

    private ToolPoisoning() {}

    /** Whether {@code tool}'s text carries a mark of poisoning. */
    static boolean flagged(Json.Obj tool) {
        Json description = tool.get("description");
        Json schema = tool.get("inputSchema");
        return (description instanceof Json.Str s && suspicious(s.value()))
                || (schema != null && suspicious(schema.text()));
    }

    static boolean suspicious(String text) {
        if (text.toLowerCase(Locale.ROOT).contains("<important>")) {
            return true;
        }
        int run = 0;
        for (int i = 0; i < text.length(); ) {
            int cp = text.codePointAt(i);
            i += Character.charCount(cp);
            if (invisible(cp)) {
                return true;
            }
            run = Character.isWhitespace(cp) ? run + 1 : 0;
            if (run >= WHITESPACE_RUN) {
                return true;
            }
        }
        return false;
    }

    private static boolean invisible(int cp) {
        return (cp >= 0x200b && cp <= 0x200f)
                || (cp >= 0x202a && cp <= 0x202e)
                || (cp >= 0x2060 && cp <= 0x2064)
                || (cp >= 0x2066 && cp <= 0x2069)
                || cp == 0xfeff
                || (cp >= 0xe0000 && cp <= 0xe007f);
    }
}

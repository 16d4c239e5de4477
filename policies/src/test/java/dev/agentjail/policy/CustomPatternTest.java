package dev.agentjail.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class CustomPatternTest {
    private static final String TOO_SHORT_HINT = ", so the scanner can look for them first; write the fixed prefix"
            + " of the token, as in 'itk_[A-Za-z0-9]{32}'";

    /** Regex (as Java sees it) and the literal prefix every match starts with. */
    static Stream<Arguments> prefixes() {
        return Stream.of(
                arguments("itk_[a-z]+", "itk_"),
                arguments("itk_[A-Za-z0-9]{32}", "itk_"),
                arguments("sk-ant-api03-[A-Za-z0-9_-]{93}", "sk-ant-api03-"),
                arguments("ghp_\\w{36}", "ghp_"),
                // escaped punctuation is literal
                arguments("\\$tok_x+", "$tok_"),
                arguments("a\\.b\\.c", "a.b.c"),
                arguments("\\[abc\\]", "[abc]"),
                arguments("\\-\\-\\-x", "---x"),
                // a character made optional or repeatable does not count
                arguments("ab?c", "a"),
                arguments("abc*", "ab"),
                arguments("abcd{2}", "abc"),
                arguments("abcd+", "abc"),
                arguments("abc\\$?x", "abc"),
                // the first metacharacter ends the prefix
                arguments("abc.", "abc"),
                arguments("abc(d|e)", "abc"),
                arguments("xyz[|]", "xyz"),
                arguments("abc$", "abc"),
                arguments("(abc)", ""),
                arguments("^abc", ""),
                arguments("[a]bc", ""),
                // letters and digits after '\' are classes, escapes or back-references
                arguments("ab\\dcd", "ab"),
                arguments("\\Qabc\\E", ""),
                arguments("abc\\tdef", "abc"),
                arguments("abc\\1", "abc"),
                // code points, not chars
                arguments("\u00e4\u00f6\u00fc_x", "\u00e4\u00f6\u00fc_x"),
                arguments("\uD83D\uDD11ab*", "\uD83D\uDD11a"),
                arguments("abc\\", "abc"));
    }

    @ParameterizedTest(name = "[{index}] {0} -> {1}")
    @MethodSource("prefixes")
    void literalPrefixIsTheLeadingLiteralText(String regex, String prefix) {
        assertEquals(prefix, CustomPattern.literalPrefix(regex));
    }

    /** Every prefix in the table really starts every match it is tested on. */
    @Test
    void compiledPatternsMatchOnlyAfterTheirPrefix() throws Exception {
        CustomPattern token = CustomPattern.of("dollar-token", "\\$tok_x+");
        assertEquals("$tok_", token.literalPrefix());
        assertTrue(token.regex().matcher("$tok_xxx").matches());
        CustomPattern internal = CustomPattern.of("internal-token", "itk_[A-Za-z0-9]{32}");
        assertEquals("itk_", internal.literalPrefix());
        assertTrue(
                internal.regex().matcher("send itk_" + "a".repeat(32) + " now").find());
    }

    static Stream<Arguments> refusals() {
        return Stream.of(
                arguments(
                        "internal",
                        "ab?c",
                        "must start with at least 3 literal characters (found 'a')" + TOO_SHORT_HINT),
                arguments(
                        "internal",
                        "(abc)",
                        "must start with at least 3 literal characters (found '')" + TOO_SHORT_HINT),
                arguments(
                        "internal",
                        "^abc",
                        "must start with at least 3 literal characters (found '')" + TOO_SHORT_HINT),
                arguments(
                        "internal",
                        "\\Qabc\\E",
                        "must start with at least 3 literal characters (found '')" + TOO_SHORT_HINT),
                arguments(
                        "internal",
                        "abc|x",
                        "a top-level '|' means matches need not start with the prefix; group the alternatives after"
                                + " it, as in 'tok_(a|b)'"),
                arguments(
                        "internal",
                        "abc[|]x(y)|z",
                        "a top-level '|' means matches need not start with the prefix; group the alternatives after"
                                + " it, as in 'tok_(a|b)'"),
                arguments("internal", "abc[", "invalid regex: Unclosed character class near index 3"),
                arguments("internal", "abc(", "invalid regex: Unclosed group near index 4"),
                arguments("internal", "", "empty regex"),
                arguments("internal", "a".repeat(1025), "regex longer than 1024 characters"),
                arguments("Internal", "abc", "invalid name 'Internal': must match [a-z0-9][a-z0-9-]{0,39}"),
                arguments("-x", "abc", "invalid name '-x': must match [a-z0-9][a-z0-9-]{0,39}"),
                arguments(
                        "a".repeat(41),
                        "abc",
                        "invalid name '" + "a".repeat(41) + "': must match [a-z0-9][a-z0-9-]{0,39}"));
    }

    @ParameterizedTest(name = "[{index}] {1}: {2}")
    @MethodSource("refusals")
    void refusedWithAReason(String name, String regex, String reason) {
        MalformedEntryException e = assertThrows(MalformedEntryException.class, () -> CustomPattern.of(name, regex));
        assertEquals(reason, e.getMessage());
    }

    @Test
    void alternationInsideGroupsAndClassesIsFine() throws Exception {
        assertEquals("tok_", CustomPattern.of("t", "tok_(a|b)[|\\]]").literalPrefix());
        assertEquals("tok_", CustomPattern.of("t", "tok_[]|](x)").literalPrefix());
        assertEquals("tok_|x", CustomPattern.of("t", "tok_\\|x").literalPrefix());
        assertEquals("tok_", CustomPattern.of("t", "tok_\\Q|\\E").literalPrefix());
    }

    @Test
    void equalityComparesTheRegexText() throws Exception {
        assertEquals(CustomPattern.of("a-b", "itk_[a-z]+"), CustomPattern.of("a-b", "itk_[a-z]+"));
        assertEquals(
                CustomPattern.of("a-b", "itk_[a-z]+").hashCode(),
                CustomPattern.of("a-b", "itk_[a-z]+").hashCode());
        assertNotEquals(CustomPattern.of("a-b", "itk_[a-z]+"), CustomPattern.of("a-b", "itk_[a-z]*"));
        assertNotEquals(CustomPattern.of("a-b", "itk_[a-z]+"), CustomPattern.of("a-c", "itk_[a-z]+"));
    }

    @Test
    void constructorChecksItsFields() {
        assertThrows(IllegalArgumentException.class, () -> new CustomPattern("a", Pattern.compile("itk_x"), "itk_"));
        assertThrows(IllegalArgumentException.class, () -> new CustomPattern("a", Pattern.compile("ab+"), "a"));
        assertThrows(
                IllegalArgumentException.class,
                () -> new CustomPattern("a", Pattern.compile("itk_", Pattern.CASE_INSENSITIVE), "itk_"));
        assertThrows(IllegalArgumentException.class, () -> new CustomPattern("A", Pattern.compile("itk_"), "itk_"));
        assertEquals("itk_", new CustomPattern("a", Pattern.compile("itk_"), "itk_").literalPrefix());
    }
}

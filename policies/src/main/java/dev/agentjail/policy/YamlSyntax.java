package dev.agentjail.policy;

import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.error.Mark;
import org.yaml.snakeyaml.error.MarkedYAMLException;

/**
 * A YAML syntax error in plain words, at the line and column a person would look at: snakeyaml's own problems
 * ({@code expected <block end>, but found '<block mapping start>'}) name parser states, not the mistake. An unclosed
 * quote or bracket and a key without its colon are placed where they start; everything else where the parser stopped.
 */
record YamlSyntax(int line, int column, String problem) {
    private static final Pattern FOUND_CHARACTER =
            Pattern.compile("found character '(.+?)' that cannot start any token.*");
    private static final Pattern UNKNOWN_ESCAPE = Pattern.compile("found unknown escape character (.+?)\\(\\d+\\)");
    private static final Pattern UNDEFINED_ALIAS = Pattern.compile("found undefined alias (.+)");
    private static final Pattern BUT_FOUND = Pattern.compile("expected (<block end>|the node content), but found (.+)");
    private static final Pattern FLOW_END = Pattern.compile("expected ',' or '([\\]}])', but got (.+)");

    /** snakeyaml's text, for a problem this class has no words for; it quotes at most a token of input. */
    private static final int FALLBACK_LENGTH = 120;

    /** The error of {@code e} in words; {@code text} is the document, to see which quote or bracket was left open. */
    static YamlSyntax of(MarkedYAMLException e, String text) {
        Mark problemMark = e.getProblemMark() != null ? e.getProblemMark() : e.getContextMark();
        Mark contextMark = e.getContextMark() != null ? e.getContextMark() : problemMark;
        String problem = e.getProblem() == null ? "" : e.getProblem();
        String context = e.getContext() == null ? "" : e.getContext();
        Matcher m;
        if (context.startsWith("while scanning a quoted scalar") && problem.contains("end of stream")) {
            String quote = String.valueOf(charAt(text, contextMark, '"'));
            return at(
                    contextMark,
                    "unclosed quote: the string that starts here with " + quote + " has no closing " + quote);
        }
        if ((m = FLOW_END.matcher(problem)).matches()) {
            String close = m.group(1);
            String open = close.equals("]") ? "[" : "{";
            String what = close.equals("]") ? "list" : "mapping";
            String problemText = m.group(2).equals("<stream end>")
                    ? "is not closed with '" + close + "' before the end of the file"
                    : "needs ',' or '" + close + "' at line " + line(problemMark) + ", column " + column(problemMark)
                            + ", not " + token(m.group(2));
            return at(contextMark, "unclosed '" + open + "': the " + what + " that starts here " + problemText);
        }
        if (context.startsWith("while scanning a simple key") && problem.startsWith("could not find expected ':'")) {
            return at(contextMark, "a key without a value: expected ':' after this key (key: value)");
        }
        if ((m = FOUND_CHARACTER.matcher(problem)).matches()) {
            String c = m.group(1);
            if (c.contains("TAB")) {
                return at(problemMark, "a tab character: YAML indents with spaces only");
            }
            return at(problemMark, "'" + c + "' cannot start a value; put the value in quotes");
        }
        if (problem.startsWith("mapping values are not allowed")) {
            return at(
                    problemMark,
                    "unexpected ':': a value cannot be another 'key: value' on the same line; quote it, or start the"
                            + " nested mapping on the next line (or is this line indented too far?)");
        }
        if ((m = BUT_FOUND.matcher(problem)).matches()) {
            return at(problemMark, unexpected(m.group(1), m.group(2), problemMark, contextMark, context));
        }
        if ((m = UNKNOWN_ESCAPE.matcher(problem)).matches()) {
            return at(
                    problemMark,
                    "unknown escape '\\" + m.group(1) + "' in a double-quoted string; use single quotes, or write a"
                            + " backslash as '\\\\'");
        }
        if ((m = UNDEFINED_ALIAS.matcher(problem)).matches()) {
            return at(problemMark, "'*" + m.group(1) + "' refers to no anchor (anchors and aliases are not allowed)");
        }
        if (context.startsWith("expected a single document")) {
            return at(problemMark, "a second document ('---'): a policy file holds one document");
        }
        if (problem.startsWith("Global tag is not allowed")) {
            return at(problemMark, "tags ('!!...') are not allowed");
        }
        String raw = problem.startsWith("but ") && !context.isEmpty() ? context + " " + problem : problem;
        if (raw.isEmpty()) {
            raw = context;
        }
        return at(problemMark, "invalid yaml: " + Quoting.shorten(raw, FALLBACK_LENGTH));
    }

    /** What stood where the parser expected the end of a block (or a value), in words. */
    private static String unexpected(String expected, String found, Mark at, Mark context, String contextText) {
        String where = "line " + line(context) + ", column " + column(context);
        if (expected.equals("the node content")) {
            return "a value was expected here, but found " + token(found);
        }
        String block = contextText.contains("mapping") ? "the mapping" : "the block";
        return switch (found) {
            case "'<block mapping start>'" ->
                "bad indentation: this key, at column " + column(at) + ", lines up with no key above it; the keys of"
                        + " one mapping start in the same column";
            case "'<block sequence start>'" ->
                "bad indentation: this list item ('-'), at column " + column(at) + ", lines up with nothing above it;"
                        + " the items of one list start in the same column";
            case "'-'" -> "a list item ('-') where a key of " + block + " that starts at " + where + " was expected";
            case "'?'" -> "a key where a list item ('- ...') of the list that starts at " + where + " was expected";
            case "']'", "'}'" -> "a stray " + found + " that closes nothing";
            default ->
                "bad indentation or a stray " + token(found) + ": " + block + " that starts at " + where
                        + " ends before it";
        };
    }

    private static String token(String token) {
        return switch (token) {
            case "<stream end>" -> "the end of the file";
            case "'<block mapping start>'", "<block mapping start>" -> "a new mapping";
            case "'<block sequence start>'", "<block sequence start>" -> "a new list";
            case ":" -> "':'";
            case "'?'", "?" -> "a key";
            default -> token.startsWith("'") ? token : "'" + token + "'";
        };
    }

    private static char charAt(String text, Mark mark, char otherwise) {
        int index = mark.getIndex();
        return index >= 0 && index < text.length() ? text.charAt(index) : otherwise;
    }

    private static YamlSyntax at(Mark mark, String problem) {
        return new YamlSyntax(line(mark), column(mark), problem);
    }

    private static int line(Mark mark) {
        return mark == null ? 0 : mark.getLine() + 1;
    }

    private static int column(Mark mark) {
        return mark == null ? 0 : mark.getColumn() + 1;
    }
}

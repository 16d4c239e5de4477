package dev.agentjail.policy;

import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * A secret format a policy adds to the redaction catalog: {@code name} is the kind recorded in the
 * audit trail, {@code regex} a {@code java.util.regex} pattern, {@code literalPrefix} the text every
 * match starts with, which the scanner searches for before it runs the regex.
 *
 * <p>Equality compares the regex text and flags, since {@link Pattern} itself has identity equality.
 */
public record CustomPattern(String name, Pattern regex, String literalPrefix) {
    /** The minimum literal prefix, so the scanner's pre-filter stays selective. */
    public static final int MIN_PREFIX = 3;

    /** Long enough for any token format; a cap on what a policy can make the scanner compile. */
    public static final int MAX_REGEX_LENGTH = 1024;

    private static final Pattern NAME = Pattern.compile("[a-z0-9][a-z0-9-]{0,39}");

    private static final String METACHARACTERS = "\\^$.|?*+()[]{}";

    public CustomPattern {
        Objects.requireNonNull(regex, "regex");
        Objects.requireNonNull(literalPrefix, "literalPrefix");
        Optional<String> problem = nameProblem(Objects.requireNonNull(name, "name"));
        if (problem.isPresent()) {
            throw new IllegalArgumentException(problem.get());
        }
        if (regex.flags() != 0) {
            throw new IllegalArgumentException("flags are not supported: " + regex.flags());
        }
        if (!literalPrefix.equals(literalPrefix(regex.pattern()))) {
            throw new IllegalArgumentException("literalPrefix is not the regex's literal prefix");
        }
        if (literalPrefix.codePointCount(0, literalPrefix.length()) < MIN_PREFIX) {
            throw new IllegalArgumentException("literal prefix shorter than " + MIN_PREFIX + ": " + literalPrefix);
        }
    }

    /** Compiles and checks a policy entry; the message of a refusal is the reason with a hint. */
    public static CustomPattern of(String name, String regex) throws MalformedEntryException {
        Optional<String> problem = nameProblem(name);
        if (problem.isPresent()) {
            throw new MalformedEntryException(problem.get());
        }
        if (regex.isEmpty()) {
            throw new MalformedEntryException("empty regex");
        }
        if (regex.length() > MAX_REGEX_LENGTH) {
            throw new MalformedEntryException("regex longer than " + MAX_REGEX_LENGTH + " characters");
        }
        Pattern compiled;
        try {
            compiled = Pattern.compile(regex);
        } catch (PatternSyntaxException e) {
            throw new MalformedEntryException(
                    "invalid regex: " + Quoting.shorten(e.getDescription()) + " near index " + e.getIndex());
        }
        if (hasTopLevelAlternation(regex)) {
            throw new MalformedEntryException(
                    "a top-level '|' means matches need not start with the prefix; group the alternatives after"
                            + " it, as in 'tok_(a|b)'");
        }
        String prefix = literalPrefix(regex);
        if (prefix.codePointCount(0, prefix.length()) < MIN_PREFIX) {
            throw new MalformedEntryException("must start with at least " + MIN_PREFIX
                    + " literal characters (found " + Quoting.quote(prefix)
                    + "), so the scanner can look for them first; write the fixed prefix of the token, as in"
                    + " 'itk_[A-Za-z0-9]{32}'");
        }
        return new CustomPattern(name, compiled, prefix);
    }

    /** Why a kind name cannot be used, if it cannot. */
    static Optional<String> nameProblem(String name) {
        if (!NAME.matcher(name).matches()) {
            return Optional.of("invalid name " + Quoting.quote(name) + ": must match [a-z0-9][a-z0-9-]{0,39}");
        }
        return Optional.empty();
    }

    /**
     * The characters every match of {@code regex} starts with: the leading literal characters (and
     * {@code \}-escaped punctuation) up to the first metacharacter. A character followed by a
     * quantifier ({@code ?}, {@code *}, {@code +}, <code>{</code>) does not count. The caller rules
     * out a top-level {@code |}.
     */
    static String literalPrefix(String regex) {
        StringBuilder prefix = new StringBuilder();
        int i = 0;
        while (i < regex.length()) {
            int c = regex.codePointAt(i);
            int literal;
            int next;
            if (c == '\\') {
                if (i + 1 >= regex.length()) {
                    break;
                }
                int escaped = regex.codePointAt(i + 1);
                // Letters and digits after '\' are classes, anchors, back-references or code escapes.
                if (!isPunctuation(escaped)) {
                    break;
                }
                literal = escaped;
                next = i + 1 + Character.charCount(escaped);
            } else if (c < 0x80 && METACHARACTERS.indexOf(c) >= 0) {
                break;
            } else {
                literal = c;
                next = i + Character.charCount(c);
            }
            if (next < regex.length()) {
                char quantifier = regex.charAt(next);
                // '+' would allow counting the character once; leaving it out keeps the rule simple.
                if (quantifier == '?' || quantifier == '*' || quantifier == '+' || quantifier == '{') {
                    break;
                }
            }
            prefix.appendCodePoint(literal);
            i = next;
        }
        return prefix.toString();
    }

    /** Whether a {@code |} outside any group or character class splits the whole regex. */
    static boolean hasTopLevelAlternation(String regex) {
        int depth = 0;
        int i = 0;
        while (i < regex.length()) {
            char c = regex.charAt(i);
            if (c == '\\') {
                if (i + 1 < regex.length() && regex.charAt(i + 1) == 'Q') {
                    int end = regex.indexOf("\\E", i + 2);
                    i = end < 0 ? regex.length() : end + 2;
                } else {
                    i += 2;
                }
                continue;
            }
            if (c == '[') {
                i = skipClass(regex, i);
                continue;
            }
            if (c == '(') {
                depth++;
            } else if (c == ')') {
                depth--;
            } else if (c == '|' && depth == 0) {
                return true;
            }
            i++;
        }
        return false;
    }

    /** The index after the character class opening at {@code open}, with Java's nested classes. */
    private static int skipClass(String regex, int open) {
        int depth = 0;
        int i = open;
        while (i < regex.length()) {
            char c = regex.charAt(i);
            if (c == '\\') {
                i += 2;
                continue;
            }
            if (c == '[') {
                depth++;
                i++;
                // A ']' right after '[' or '[^' is a literal member, not the end of the class.
                if (i < regex.length() && regex.charAt(i) == '^') {
                    i++;
                }
                if (i < regex.length() && regex.charAt(i) == ']') {
                    i++;
                }
                continue;
            }
            if (c == ']') {
                depth--;
                if (depth == 0) {
                    return i + 1;
                }
            }
            i++;
        }
        return regex.length();
    }

    private static boolean isPunctuation(int c) {
        return c < 0x80 && c > 0x20 && c != 0x7F && !Character.isLetterOrDigit(c);
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof CustomPattern that
                && name.equals(that.name)
                && regex.pattern().equals(that.regex.pattern())
                && regex.flags() == that.regex.flags()
                && literalPrefix.equals(that.literalPrefix);
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, regex.pattern(), regex.flags(), literalPrefix);
    }

    @Override
    public String toString() {
        return "CustomPattern[name=" + name + ", regex=" + regex.pattern() + ", literalPrefix=" + literalPrefix + "]";
    }
}

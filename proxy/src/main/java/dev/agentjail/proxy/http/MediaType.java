package dev.agentjail.proxy.http;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A {@code Content-Type} value parsed per RFC 9110 section 8.3.1: {@code type "/" subtype *( OWS ";" OWS [ parameter
 * ] )}, a parameter being {@code token "=" ( token / quoted-string )}; names compared case-insensitively, quoted
 * values unescaped. Every parameter is kept in order, repeated ones too, so that a caller can see that a name is
 * ambiguous.
 */
public record MediaType(String type, String subtype, List<Parameter> parameters) {
    /** One parameter: its name in lower case, its value with quotes and backslash escapes removed. */
    public record Parameter(String name, String value) {}

    /** A value that is not one media type with a well-formed parameter list. */
    public static final class Malformed extends Exception {
        private static final long serialVersionUID = 1L;

        Malformed(String message) {
            super(message, null, false, false);
        }
    }

    public MediaType {
        parameters = List.copyOf(parameters);
    }

    /** Parses {@code value} (one field value, surrounding whitespace allowed), or says why it is malformed. */
    public static MediaType parse(String value) throws Malformed {
        int n = value.length();
        int i = skipOws(value, 0);
        int slash = value.indexOf('/', i);
        int semicolon = value.indexOf(';', i);
        int essenceEnd = semicolon < 0 ? n : semicolon;
        if (slash < 0 || slash > essenceEnd) {
            throw new Malformed("not a media type (type/subtype)");
        }
        String type = value.substring(i, slash);
        int subtypeEnd = essenceEnd;
        while (subtypeEnd > slash + 1 && HeaderSyntax.isOws(value.charAt(subtypeEnd - 1))) {
            subtypeEnd--;
        }
        String subtype = value.substring(slash + 1, subtypeEnd);
        if (!HeaderSyntax.isToken(type) || !HeaderSyntax.isToken(subtype)) {
            throw new Malformed("not a media type (type/subtype)");
        }
        List<Parameter> params = new ArrayList<>();
        i = essenceEnd;
        while (i < n) {
            // value.charAt(i) == ';'
            i = skipOws(value, i + 1);
            if (i >= n || value.charAt(i) == ';') {
                continue; // an empty parameter, which the grammar allows
            }
            int start = i;
            while (i < n && HeaderSyntax.isTchar(value.charAt(i))) {
                i++;
            }
            if (i == start || i >= n || value.charAt(i) != '=') {
                throw new Malformed("a parameter that is not name=value");
            }
            String name = value.substring(start, i).toLowerCase(Locale.ROOT);
            i++;
            StringBuilder v = new StringBuilder();
            if (i < n && value.charAt(i) == '"') {
                i = quoted(value, i, v);
            } else {
                int from = i;
                while (i < n && HeaderSyntax.isTchar(value.charAt(i))) {
                    i++;
                }
                if (i == from) {
                    throw new Malformed("parameter '" + name + "' has no value");
                }
                v.append(value, from, i);
            }
            params.add(new Parameter(name, v.toString()));
            i = skipOws(value, i);
            if (i < n && value.charAt(i) != ';') {
                throw new Malformed("text after parameter '" + name + "'");
            }
        }
        return new MediaType(type.toLowerCase(Locale.ROOT), subtype.toLowerCase(Locale.ROOT), params);
    }

    /** Every value of the parameters named {@code name} (lower case), in order: none, one, or several. */
    public List<String> values(String name) {
        return parameters.stream()
                .filter(p -> p.name().equals(name))
                .map(Parameter::value)
                .toList();
    }

    /** Whether some parameter name appears more than once. */
    public boolean repeatsAParameter() {
        return parameters.stream().map(Parameter::name).distinct().count() != parameters.size();
    }

    /** Reads the quoted-string opening at {@code open} into {@code out}; the index after its closing quote. */
    private static int quoted(String value, int open, StringBuilder out) throws Malformed {
        for (int i = open + 1; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c == '"') {
                return i + 1;
            }
            if (c == '\\') {
                if (++i >= value.length() || !quotable(value.charAt(i))) {
                    throw new Malformed("a bad escape in a quoted string");
                }
                c = value.charAt(i);
            } else if (!quotable(c) || c == '\\') {
                throw new Malformed("a control character in a quoted string");
            }
            out.append(c);
        }
        throw new Malformed("an unterminated quoted string");
    }

    /** HTAB, SP, VCHAR and obs-text: what a quoted-string may hold (unescaped, '"' and '\' aside). */
    private static boolean quotable(char c) {
        return c == '\t' || (c >= 0x20 && c != 0x7f && c <= 0xff);
    }

    private static int skipOws(String value, int i) {
        while (i < value.length() && HeaderSyntax.isOws(value.charAt(i))) {
            i++;
        }
        return i;
    }
}

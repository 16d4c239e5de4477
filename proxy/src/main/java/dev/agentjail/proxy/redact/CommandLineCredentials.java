package dev.agentjail.proxy.redact;

import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Set;

/**
 * Finds credentials that have no shape of their own but are named by what stands next to them on a command line or in
 * a path: a credential header ({@code Authorization: Bearer x}, {@code X-Api-Key: x}), an auth scheme's word and its
 * token, a URL's password ({@code https://user:pass@host}) and a credential's long option ({@code --token x}).
 *
 * <p>Requests need none of this: header values and queries are never logged. Exec and file records log arguments and
 * paths as free text, so this runs after the catalog on each of them ({@link Redactor#redactArgument}, {@link
 * Redactor#redactPath}); a value the catalog already marked is left to the catalog's marker and count. Each value is
 * overwritten by a bracket marker naming its kind and counted once under the text's location.
 */
final class CommandLineCredentials {
    /** A credential header's value. */
    static final String KIND_HEADER = "credential-header";
    /** A token after an auth scheme's word ({@code Bearer}, {@code Basic}, {@code Token}...). */
    static final String KIND_SCHEME = "auth-credential";
    /** The password (or token) of a URL's userinfo. */
    static final String KIND_URL = "url-password";
    /** The value of a long option that names a credential ({@code --password}, {@code --token}...). */
    static final String KIND_OPTION = "credential-option";

    private static final Set<String> HEADERS = Set.of(
            "authorization",
            "proxy-authorization",
            "cookie",
            "set-cookie",
            "x-api-key",
            "api-key",
            "x-auth-token",
            "private-token");
    /** Parts of a header's name that make it a credential's (generic names; {@code author} is not one). */
    private static final String[] HEADER_WORDS = {
        "token",
        "secret",
        "password",
        "passwd",
        "api-key",
        "apikey",
        "api_key",
        "auth",
        "session",
        "cookie",
        "credential"
    };

    private static final Set<String> SCHEMES =
            Set.of("bearer", "basic", "token", "digest", "negotiate", "ntlm", "bot", "apikey", "pat");
    /** Words of a long option's name that make its value a credential. */
    private static final Set<String> OPTION_WORDS =
            Set.of("password", "passwd", "token", "secret", "apikey", "bearer", "auth", "cookie", "credential");
    /** Last words of an option's name that name where a credential is, or something about it, not the credential. */
    private static final Set<String> OPTION_NOT_VALUE = Set.of(
            "file",
            "stdin",
            "env",
            "path",
            "dir",
            "cmd",
            "command",
            "helper",
            "id",
            "type",
            "length",
            "name",
            "url",
            "uri",
            "prompt",
            "store",
            "jar",
            "reset",
            "required",
            "endpoint",
            "expiry",
            "ttl",
            "scope",
            "scopes");
    /** Options whose value is {@code user:password}: only what follows the first colon is the credential. */
    private static final Set<String> USER_OPTIONS = Set.of("user", "proxy-user");

    private static final int MIN_FREE_TOKEN = 8;

    private CommandLineCredentials() {}

    /** Where a credential's value is in a text, and its kind. */
    private record Span(int start, int end, String kind) {}

    /**
     * The text with every credential this class recognizes in it overwritten, each counted under {@code location};
     * the same instance when there is none.
     */
    static String redact(String text, String location, Findings findings, Set<String> allowed) {
        if (!worthScanning(text)) {
            return text;
        }
        StringBuilder out = null;
        int copied = 0;
        int i = 0;
        int n = text.length();
        while (i < n) {
            Span span = next(text, i);
            if (span == null) {
                break;
            }
            int start = span.start();
            int end = span.end();
            String kind = span.kind();
            String value = text.substring(start, end);
            if (!marked(value) && !allowed.contains(value)) {
                if (out == null) {
                    out = new StringBuilder(n + 32);
                }
                out.append(text, copied, start).append(marker(kind, value.length()));
                copied = end;
                findings.add(kind, location);
            }
            i = Math.max(end, i + 1);
        }
        if (out == null) {
            return text;
        }
        return out.append(text, copied, n).toString();
    }

    /**
     * {@code argument} with the credential overwritten that {@code previous}, the argument before it, names and leaves
     * out: after a bare auth scheme's word ({@code Bearer}, then a token), a header with an empty value ({@code
     * Authorization:}, {@code Authorization: Bearer}), a credential's long option without {@code =} ({@code --token},
     * {@code --user} then {@code name:password}). The same instance when there is none; counted under {@code location}.
     */
    static String redactNext(
            String previous, String argument, String location, Findings findings, Set<String> allowed) {
        String kind = kindOfNext(previous);
        if (kind == null || argument.isEmpty() || marked(argument) || allowed.contains(argument)) {
            return argument;
        }
        int start = 0;
        if (kind.equals(KIND_OPTION)) {
            // "--password --host x": an option that prompts for its value, not a password "--host".
            if (argument.startsWith("--")) {
                return argument;
            }
            if (USER_OPTIONS.contains(previous.strip().substring(2).toLowerCase(Locale.ROOT))) {
                start = argument.indexOf(':') + 1;
                if (start == 0 || start == argument.length()) {
                    return argument;
                }
            }
        } else if (kind.equals(KIND_SCHEME)
                && !previous.strip().equalsIgnoreCase("bearer")
                && !looksLikeToken(argument, 0, argument.length())) {
            // A word that is also English ("Basic", "Token") takes the next argument only when it looks like a token.
            return argument;
        }
        findings.add(kind, location);
        return argument.substring(0, start) + marker(kind, argument.length() - start);
    }

    /** The kind of credential the argument after {@code argument} is when this one names it (see redactNext). */
    private static String kindOfNext(String argument) {
        int end = argument.length();
        while (end > 0 && argument.charAt(end - 1) == ' ') {
            end--;
        }
        if (end == 0 || end > 64) {
            return null;
        }
        if (argument.startsWith("--") && argument.indexOf('=') < 0) {
            return credentialOption(argument.substring(2, end).toLowerCase(Locale.ROOT)) ? KIND_OPTION : null;
        }
        if (argument.charAt(end - 1) == ':') {
            int nameStart = nameStart(argument, end - 1);
            return nameStart < end - 1 && credentialHeader(argument, nameStart, end - 1, true) ? KIND_HEADER : null;
        }
        int wordStart = end;
        while (wordStart > 0 && Character.isLetter(argument.charAt(wordStart - 1))) {
            wordStart--;
        }
        if (end - wordStart > 9
                || !SCHEMES.contains(argument.substring(wordStart, end).toLowerCase(Locale.ROOT))) {
            return null;
        }
        if (wordStart == 0) {
            return KIND_SCHEME;
        }
        // "Authorization: Bearer" with its token in the next argument.
        int colon = wordStart;
        while (colon > 0 && argument.charAt(colon - 1) == ' ') {
            colon--;
        }
        if (colon > 0 && argument.charAt(colon - 1) == ':') {
            int nameStart = nameStart(argument, colon - 1);
            if (nameStart < colon - 1 && credentialHeader(argument, nameStart, colon - 1, true)) {
                return KIND_HEADER;
            }
        }
        return null;
    }

    /** A bracket marker for {@code length} characters of kind {@code kind}; longer when the kind does not fit. */
    static String marker(String kind, int length) {
        int full = "[REDACTED:".length() + kind.length() + 1;
        if (length < full) {
            return "[REDACTED:" + kind + "]";
        }
        byte[] bytes = new byte[length];
        Markers.fill(bytes, 0, length, kind, false);
        return new String(bytes, StandardCharsets.US_ASCII);
    }

    /** Cheap test before the scan: every form needs a colon, an option's dashes or a space before a token. */
    private static boolean worthScanning(String text) {
        return text.indexOf(':') >= 0 || text.indexOf("--") >= 0 || text.indexOf(' ') >= 0 || text.indexOf('\t') >= 0;
    }

    /** A value the catalog already overwrote (its count is the catalog's). */
    private static boolean marked(String value) {
        return value.contains("[REDACTED") || value.contains("_REDACTED");
    }

    /** The next credential at or after {@code from}; null when there is none. */
    private static Span next(String text, int from) {
        int n = text.length();
        for (int i = from; i < n; i++) {
            char c = text.charAt(i);
            Span span = null;
            if (c == ':') {
                span = i + 2 < n && text.charAt(i + 1) == '/' && text.charAt(i + 2) == '/'
                        ? userinfo(text, i + 3)
                        : header(text, i);
            } else if (c == '-'
                    && i + 2 < n
                    && text.charAt(i + 1) == '-'
                    && (i == 0 || separator(text.charAt(i - 1)))) {
                span = option(text, i + 2);
            } else if (Character.isLetter(c) && (i == 0 || schemeBoundary(text.charAt(i - 1)))) {
                span = scheme(text, i);
            }
            if (span != null) {
                return span;
            }
        }
        return null;
    }

    /** {@code Name: value} with the colon at {@code colon}: the value, past a scheme word it starts with. */
    private static Span header(String text, int colon) {
        int nameEnd = colon;
        char quote = 0;
        if (nameEnd > 0 && quoteChar(text.charAt(nameEnd - 1))) {
            quote = text.charAt(nameEnd - 1);
            nameEnd--;
        }
        int nameStart = nameStart(text, nameEnd);
        if (nameStart == nameEnd) {
            return null;
        }
        if (nameStart > 0) {
            char before = text.charAt(nameStart - 1);
            // Host names and URL authorities (auth.example.com:443, http://auth:8080) are not headers.
            if (before == '.' || before == '@' || before == '/' && nameStart > 1 && text.charAt(nameStart - 2) == '/') {
                return null;
            }
            if (quote == 0 && quoteChar(before)) {
                quote = before;
            } else if (quote != 0 && before != quote) {
                quote = 0;
            }
        }
        int v = colon + 1;
        int n = text.length();
        boolean spaced = v < n && (text.charAt(v) == ' ' || text.charAt(v) == '\t');
        while (v < n && (text.charAt(v) == ' ' || text.charAt(v) == '\t')) {
            v++;
        }
        boolean quotedValue = v < n && quoteChar(text.charAt(v));
        if (!credentialHeader(text, nameStart, nameEnd, spaced || quotedValue || quote != 0)) {
            return null;
        }
        if (quotedValue) {
            quote = text.charAt(v++);
        }
        int end = v;
        while (end < n && text.charAt(end) != '\n' && text.charAt(end) != '\r' && text.charAt(end) != quote) {
            end++;
        }
        if (quote == 0 && !quotedValue) {
            while (end > v && text.charAt(end - 1) == ' ') {
                end--;
            }
        }
        // Keep the scheme's word in sight: "Authorization: Bearer [REDACTED...]".
        int word = v;
        while (word < end && Character.isLetter(text.charAt(word))) {
            word++;
        }
        boolean scheme = SCHEMES.contains(text.substring(v, word).toLowerCase(Locale.ROOT));
        if (scheme && word == end) {
            return null; // "Authorization: Bearer", the token in the next argument (redactNext)
        }
        if (scheme && text.charAt(word) == ' ') {
            v = word;
            while (v < end && text.charAt(v) == ' ') {
                v++;
            }
        }
        return v < end ? new Span(v, end, KIND_HEADER) : null;
    }

    /** After {@code scheme://}: the userinfo's password, or a whole userinfo without one that is as long as a token. */
    private static Span userinfo(String text, int start) {
        int n = text.length();
        int end = start;
        int at = -1;
        while (end < n) {
            char c = text.charAt(end);
            if (c == '/' || c == '?' || c == '#' || c <= ' ' || quoteChar(c)) {
                break;
            }
            if (c == '@') {
                at = end;
            }
            end++;
        }
        if (at < 0) {
            return null;
        }
        int colon = text.indexOf(':', start);
        if (colon >= 0 && colon < at) {
            return colon + 1 < at ? new Span(colon + 1, at, KIND_URL) : null;
        }
        // https://<token>@github.com; ssh://git@host keeps its user.
        return at - start >= 20 ? new Span(start, at, KIND_URL) : null;
    }

    /**
     * {@code --name=value}, or {@code --name value} inside one text (a shell's {@code -c} script), with the name at
     * {@code start}: the value when the name is a credential's. A quoted value runs to its closing quote; a value
     * after a space that starts with {@code -} is another option.
     */
    private static Span option(String text, int start) {
        int n = text.length();
        int eq = start;
        while (eq < n
                && (Character.isLetterOrDigit(text.charAt(eq)) || text.charAt(eq) == '-' || text.charAt(eq) == '_')) {
            eq++;
        }
        if (eq == start || eq >= n || text.charAt(eq) != '=' && text.charAt(eq) != ' ') {
            return null;
        }
        String name = text.substring(start, eq).toLowerCase(Locale.ROOT);
        if (!credentialOption(name)) {
            return null;
        }
        int v = eq + 1;
        if (text.charAt(eq) == ' ') {
            while (v < n && text.charAt(v) == ' ') {
                v++;
            }
            if (v == n || text.charAt(v) == '-') {
                return null;
            }
        }
        char quote = v < n && quoteChar(text.charAt(v)) ? text.charAt(v++) : 0;
        int end = v;
        while (end < n && (quote == 0 ? !separator(text.charAt(end)) : text.charAt(end) != quote)) {
            end++;
        }
        if (USER_OPTIONS.contains(name)) {
            int colon = text.indexOf(':', v);
            if (colon < 0 || colon >= end) {
                return null;
            }
            v = colon + 1;
        }
        return v < end ? new Span(v, end, KIND_OPTION) : null;
    }

    /** A scheme's word at {@code start}, then spaces, then a token: the token. */
    private static Span scheme(String text, int start) {
        int n = text.length();
        int word = start;
        while (word < n && Character.isLetter(text.charAt(word))) {
            word++;
        }
        if (word - start > 9 || word >= n || text.charAt(word) != ' ' && text.charAt(word) != '\t') {
            return null;
        }
        if (!SCHEMES.contains(text.substring(start, word).toLowerCase(Locale.ROOT))) {
            return null;
        }
        int v = word;
        while (v < n && (text.charAt(v) == ' ' || text.charAt(v) == '\t')) {
            v++;
        }
        int end = v;
        while (end < n && token68(text.charAt(end))) {
            end++;
        }
        if (end < n && !separator(text.charAt(end)) && text.charAt(end) != ',' && text.charAt(end) != ';') {
            return null;
        }
        return end - v >= MIN_FREE_TOKEN && looksLikeToken(text, v, end) ? new Span(v, end, KIND_SCHEME) : null;
    }

    /** Where the header name that ends at {@code end} starts. */
    private static int nameStart(String text, int end) {
        int start = end;
        while (start > 0) {
            char c = text.charAt(start - 1);
            if (!(Character.isLetterOrDigit(c) || c == '-' || c == '_')) {
                break;
            }
            start--;
        }
        return start;
    }

    /**
     * Whether the name in {@code text[start, end)} is a credential header's: one of {@link #HEADERS} (also glued to
     * curl's {@code -H}), or, when {@code loose} (a space or quote after the colon, a quote around the name), a name
     * with a credential's word in it.
     */
    private static boolean credentialHeader(String text, int start, int end, boolean loose) {
        String name = text.substring(start, end).toLowerCase(Locale.ROOT);
        if (HEADERS.contains(name) || name.startsWith("-h") && HEADERS.contains(name.substring(2))) {
            return true;
        }
        if (!loose) {
            return false;
        }
        for (String word : HEADER_WORDS) {
            int at = name.indexOf(word);
            if (at >= 0
                    && !(word.equals("auth") && name.startsWith("author", at) && !name.startsWith("authoriz", at))) {
                return true;
            }
        }
        return false;
    }

    /** Whether a long option's name (without its dashes) takes a credential as its value. */
    private static boolean credentialOption(String name) {
        if (USER_OPTIONS.contains(name)) {
            return true;
        }
        if (name.startsWith("no-")) {
            return false;
        }
        String[] words = name.split("[-_]");
        if (words.length == 0 || OPTION_NOT_VALUE.contains(words[words.length - 1])) {
            return false;
        }
        for (int w = 0; w < words.length; w++) {
            if (OPTION_WORDS.contains(words[w])
                    || words[w].equals("api") && w + 1 < words.length && words[w + 1].equals("key")) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether {@code text[start, end)} looks like a token rather than a word: a digit, one of {@code + / = _ ~}, or
     * an upper-case letter after a lower-case one (base64's mixed case), so "Basic usage" and "Token expired" stay.
     */
    private static boolean looksLikeToken(String text, int start, int end) {
        boolean lower = false;
        for (int i = start; i < end; i++) {
            char c = text.charAt(i);
            if (Character.isDigit(c) || c == '+' || c == '/' || c == '=' || c == '_' || c == '~') {
                return true;
            }
            if (Character.isUpperCase(c) && lower) {
                return true;
            }
            lower |= Character.isLowerCase(c);
        }
        return false;
    }

    private static boolean token68(char c) {
        return c < 0x80 && (Character.isLetterOrDigit(c) || "-._~+/=".indexOf(c) >= 0);
    }

    private static boolean quoteChar(char c) {
        return c == '"' || c == '\'';
    }

    private static boolean separator(char c) {
        return c == ' ' || c == '\t' || c == '\n' || c == '\r' || quoteChar(c);
    }

    private static boolean schemeBoundary(char c) {
        return separator(c) || c == ':' || c == '=' || c == ',' || c == '(';
    }
}

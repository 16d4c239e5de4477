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
    /** The value of {@code NAME=value} where the name names a credential ({@code GITHUB_TOKEN=x}, {@code password=x}). */
    static final String KIND_ASSIGNMENT = "credential-assignment";

    private static final Set<String> HEADERS = Set.of(
            "authorization",
            "proxy-authorization",
            "cookie",
            "set-cookie",
            "x-api-key",
            "api-key",
            "x-auth-token",
            "private-token");
    /** Last parts of a header-shaped name ({@code X-Access-Token}, {@code Client-Secret}) that make it a credential's. */
    private static final Set<String> HEADER_LAST =
            Set.of("token", "secret", "password", "passwd", "apikey", "credential", "credentials");
    /** Words anywhere in a variable's or field's name that make its value a credential ({@code PGPASSWORD}). */
    private static final String[] NAME_WORDS = {
        "token",
        "secret",
        "password",
        "passwd",
        "apikey",
        "api_key",
        "api-key",
        "accesskey",
        "access_key",
        "access-key",
        "privatekey",
        "private_key",
        "private-key",
        "credential",
        "passphrase"
    };
    /** Whole parts of a name (between {@code _ - .}) that make its value a credential ({@code MYSQL_PWD}). */
    private static final Set<String> NAME_PARTS = Set.of("pwd", "pass", "pw");
    /** Values that say how to authenticate, not with what ({@code --auth=basic}, {@code --auth-type=password}). */
    private static final Set<String> NOT_SECRET_VALUES = Set.of(
            "true",
            "false",
            "yes",
            "no",
            "none",
            "null",
            "nil",
            "basic",
            "digest",
            "bearer",
            "ntlm",
            "negotiate",
            "kerberos",
            "oauth",
            "oauth2",
            "anyauth",
            "password",
            "token",
            "prompt",
            "env",
            "file",
            "stdin");
    /** Programs whose short options or following arguments carry a credential (see {@link #programAfter}). */
    private static final Set<String> PROGRAMS = Set.of(
            "curl",
            "wget",
            "mysql",
            "mariadb",
            "mysqldump",
            "mysqladmin",
            "sshpass",
            "docker",
            "podman",
            "nerdctl",
            "aws",
            "az",
            "gcloud",
            "gh",
            "git",
            "npm",
            "yarn",
            "pnpm");
    /** Programs (and subcommands) after which {@code some_password value} sets a credential. */
    private static final Set<String> CONFIG_PROGRAMS =
            Set.of("aws", "az", "gcloud", "gh", "git config", "npm config", "yarn config", "pnpm config");

    private static final Set<String> SCHEMES =
            Set.of("bearer", "basic", "token", "digest", "negotiate", "ntlm", "bot", "apikey", "pat");
    /** Words of a long option's name that make its value a credential. */
    private static final Set<String> OPTION_WORDS = Set.of(
            "password", "passwd", "token", "secret", "apikey", "bearer", "auth", "cookie", "credential", "passphrase");
    /** Words that name a credential only as an option's last word ({@code --pass}, {@code --db-pw}). */
    private static final Set<String> OPTION_LAST_WORDS = Set.of("pass", "pw");
    /** Words that, followed by {@code key}, name a credential ({@code --api-key}, {@code --access-key}). */
    private static final Set<String> KEY_WORDS = Set.of("api", "access", "private", "secret");
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
            "scopes",
            "limit",
            "method",
            "methods",
            "mode",
            "provider",
            "count",
            "size",
            "format",
            "algorithm",
            "version",
            "timeout",
            "kind",
            "prefix",
            "host",
            "server",
            "port",
            "level");
    /** Options whose value is {@code user:password}: only what follows the first colon is the credential. */
    private static final Set<String> USER_OPTIONS = Set.of("user", "proxy-user");

    private static final int MIN_FREE_TOKEN = 8;
    /** The shortest unquoted field value after a blank that is read as a credential ({@code password: hunter2}). */
    private static final int MIN_FIELD_TOKEN = 6;

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
        String out = redactSpans(text, location, findings, allowed);
        return out.indexOf(' ') >= 0 || out.indexOf('\t') >= 0 || out.indexOf('\n') >= 0
                ? redactWords(out, location, findings, allowed)
                : out;
    }

    /**
     * A command line inside one text ({@code sh -c 'curl -u bob:pw h'}): its words read as an argument vector is
     * ({@link #redactNext}), for the program the words name. Words are split at blanks only; quotes are not read.
     */
    private static String redactWords(String text, String location, Findings findings, Set<String> allowed) {
        StringBuilder out = null;
        int copied = 0;
        String program = null;
        String previous = null;
        int n = text.length();
        int i = 0;
        while (i < n) {
            i = blank(text, i);
            int end = i;
            while (end < n && !Character.isWhitespace(text.charAt(end))) {
                end++;
            }
            if (end == i) {
                break;
            }
            int start = i;
            while (start < end && (quoteChar(text.charAt(start)) || text.charAt(start) == '(')) {
                start++;
            }
            int stop = end;
            while (stop > start && (quoteChar(text.charAt(stop - 1)) || ";)&|".indexOf(text.charAt(stop - 1)) >= 0)) {
                stop--;
            }
            String word = text.substring(start, stop);
            if (previous != null && program != null && !word.isEmpty() && !marked(word) && !allowed.contains(word)) {
                int from = programValueStart(program, previous, word);
                String kind = from >= 0 && !shortOptionForm(program, previous, word) ? KIND_ASSIGNMENT : KIND_OPTION;
                if (from >= 0 && !allowed.contains(word.substring(from))) {
                    if (out == null) {
                        out = new StringBuilder(n + 32);
                    }
                    out.append(text, copied, start + from).append(marker(kind, word.length() - from));
                    copied = stop;
                    findings.add(kind, location);
                }
            }
            program = programAfter(program, word);
            previous = word;
            i = end;
        }
        return out == null ? text : out.append(text, copied, n).toString();
    }

    /** The credentials of {@link #next} overwritten and counted. */
    private static String redactSpans(String text, String location, Findings findings, Set<String> allowed) {
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
     * out: after a bare auth scheme's word ({@code Bearer}, then a token), a credential header with an empty value
     * ({@code Authorization:}, {@code Authorization: Bearer}), a credential's long option without a value ({@code
     * --token}, {@code --token=}, {@code --user} then {@code name:password}); and, for the {@code program} running (see
     * {@link #programAfter}; may be null), its short options ({@code curl -u name:password}, {@code mysql -pPW}) and a
     * credential's name then its value ({@code aws configure set aws_secret_access_key VALUE}). The same instance when
     * there is none; counted under {@code location}.
     */
    static String redactNext(
            String program, String previous, String argument, String location, Findings findings, Set<String> allowed) {
        if (argument.isEmpty() || marked(argument) || allowed.contains(argument)) {
            return argument;
        }
        String kind = KIND_OPTION;
        int start = -1;
        if (previous != null) {
            kind = kindOfNext(previous);
            start = kind == null ? -1 : valueStart(kind, previous, argument);
        }
        if (start < 0) {
            start = programValueStart(program, previous, argument);
            kind = shortOptionForm(program, previous, argument) ? KIND_OPTION : KIND_ASSIGNMENT;
        }
        if (start < 0 || allowed.contains(argument.substring(start))) {
            return argument;
        }
        findings.add(kind, location);
        return argument.substring(0, start) + marker(kind, argument.length() - start);
    }

    /**
     * Where the credential starts in {@code argument} that {@code program} reads as one: its short option's value
     * ({@link #shortOption}, {@link #afterShortOption}) or a setting's value ({@link #namesConfigValue}); -1.
     */
    private static int programValueStart(String program, String previous, String argument) {
        if (shortOptionForm(program, previous, argument)) {
            int start = shortOption(program, argument);
            return start >= 0 ? start : afterShortOption(program, previous, argument);
        }
        return previous != null
                        && !argument.startsWith("-")
                        && namesConfigValue(program, previous)
                        && secretValue(argument, previous)
                ? 0
                : -1;
    }

    /** Whether {@code argument} is, or follows, one of {@code program}'s short options with a credential. */
    private static boolean shortOptionForm(String program, String previous, String argument) {
        return shortOption(program, argument) >= 0
                || previous != null && afterShortOption(program, previous, argument) >= 0;
    }

    /**
     * The program whose arguments follow {@code argument}, given the one so far: a known program's basename when the
     * argument is one ({@code /usr/bin/curl}, {@code mysql} after {@code sudo} or {@code env}), with its subcommand
     * where that matters ({@code docker login}, {@code git config}), else {@code program} unchanged.
     */
    static String programAfter(String program, String argument) {
        String base = argument.substring(argument.lastIndexOf('/') + 1);
        if (PROGRAMS.contains(base)) {
            return base;
        }
        if (program == null) {
            return null;
        }
        if (argument.equals("login") && Set.of("docker", "podman", "nerdctl").contains(program)) {
            return program + " login";
        }
        if (argument.equals("config") && Set.of("git", "npm", "yarn", "pnpm").contains(program)) {
            return program + " config";
        }
        return program;
    }

    /** Where the credential starts in a short option with its value glued on ({@code -ubob:pw}, {@code -pPW}); -1. */
    private static int shortOption(String program, String argument) {
        if (program == null || argument.length() < 3 || argument.charAt(0) != '-' || argument.charAt(1) == '-') {
            return -1;
        }
        char option = argument.charAt(1);
        if ((option == 'u' || option == 'U') && (program.equals("curl") || program.equals("wget"))) {
            int colon = argument.indexOf(':', 2);
            return colon > 2 && colon + 1 < argument.length() ? colon + 1 : -1;
        }
        return option == 'p' && passwordShortOption(program) ? 2 : -1;
    }

    /** Where the credential starts in the value of a short option that {@code previous} is ({@code -u}, {@code -p}). */
    private static int afterShortOption(String program, String previous, String argument) {
        if (program == null || argument.startsWith("-")) {
            return -1;
        }
        if ((previous.equals("-u") || previous.equals("-U")) && (program.equals("curl") || program.equals("wget"))) {
            int colon = argument.indexOf(':');
            return colon > 0 && colon + 1 < argument.length() ? colon + 1 : -1;
        }
        return previous.equals("-p") && passwordShortOption(program) ? 0 : -1;
    }

    /** Programs whose {@code -p} takes a password: the MySQL clients, sshpass, a container registry's login. */
    private static boolean passwordShortOption(String program) {
        return program.startsWith("mysql")
                || program.equals("mariadb")
                || program.equals("sshpass")
                || program.endsWith(" login");
    }

    /**
     * Whether {@code previous} is a credential's name whose value is the next argument: {@code
     * aws_secret_access_key} always, any {@code *_password}, {@code *_token}, {@code *_secret} under a program that
     * sets configuration ({@code aws}, {@code az}, {@code gcloud}, {@code gh}, {@code git config}, {@code npm
     * config}).
     */
    private static boolean namesConfigValue(String program, String previous) {
        if (previous.length() > 80 || previous.startsWith("-") || !nameLike(previous)) {
            return false;
        }
        String name = previous.toLowerCase(Locale.ROOT);
        if (name.endsWith("secret_access_key") || name.endsWith("secret-access-key")) {
            return true;
        }
        if (program == null || !CONFIG_PROGRAMS.contains(program)) {
            return false;
        }
        String[] parts = name.split("[-_.:/]+");
        if (parts.length < 2) {
            return false; // "gh secret set": a subcommand, not a setting's name
        }
        String last = parts[parts.length - 1];
        return Set.of("password", "passwd", "token", "secret", "authtoken", "apikey", "pass")
                .contains(last);
    }

    /** A word of name characters ({@code A-Z a-z 0-9 _ - . : /}) with a letter in it. */
    private static boolean nameLike(String text) {
        boolean letter = false;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (!(Character.isLetterOrDigit(c) || "_-.:/".indexOf(c) >= 0)) {
                return false;
            }
            letter |= Character.isLetter(c);
        }
        return letter;
    }

    /** Where the credential starts in {@code argument}, the value {@code previous} names as {@code kind}; -1. */
    private static int valueStart(String kind, String previous, String argument) {
        if (kind.equals(KIND_OPTION)) {
            // "--password --host x": an option that prompts for its value, not a password "--host".
            if (argument.startsWith("-")) {
                return -1;
            }
            String name = optionName(previous);
            if (USER_OPTIONS.contains(name)) {
                int start = argument.indexOf(':') + 1;
                return start == 0 || start == argument.length() ? -1 : start;
            }
            return optionValue(name, argument, 0, argument.length()) ? 0 : -1;
        }
        if (kind.equals(KIND_SCHEME)
                && !previous.strip().equalsIgnoreCase("bearer")
                && !looksLikeToken(argument, 0, argument.length())) {
            // A word that is also English ("Basic", "Token") takes the next argument only when it looks like a token.
            return -1;
        }
        return 0;
    }

    /** The lower-case name of the long option {@code argument} ({@code --token=} is {@code token}). */
    private static String optionName(String argument) {
        String name = argument.strip();
        if (name.endsWith("=")) {
            name = name.substring(0, name.length() - 1);
        }
        return name.substring(2).toLowerCase(Locale.ROOT);
    }

    /** The kind of credential the argument after {@code argument} is when this one names it (see redactNext). */
    private static String kindOfNext(String argument) {
        int end = argument.length();
        while (end > 0 && Character.isWhitespace(argument.charAt(end - 1))) {
            end--;
        }
        if (end == 0 || end > 64) {
            return null;
        }
        if (argument.startsWith("--") && argument.indexOf('=') == end - 1) {
            return credentialOption(optionName(argument.substring(0, end))) ? KIND_OPTION : null; // "--token="
        }
        if (argument.startsWith("--") && argument.indexOf('=') < 0) {
            return credentialOption(argument.substring(2, end).toLowerCase(Locale.ROOT)) ? KIND_OPTION : null;
        }
        if (argument.charAt(end - 1) == ':') {
            // Only a credential header's name: "grep password: src/" is not followed by a password.
            int nameStart = nameStart(argument, end - 1);
            return nameStart < end - 1 && credentialHeader(argument, nameStart, end - 1) ? KIND_HEADER : null;
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
        while (colon > 0 && Character.isWhitespace(argument.charAt(colon - 1))) {
            colon--;
        }
        if (colon > 0 && argument.charAt(colon - 1) == ':') {
            int nameStart = nameStart(argument, colon - 1);
            if (nameStart < colon - 1 && credentialHeader(argument, nameStart, colon - 1)) {
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

    /** Cheap test before the scan: every form needs a colon, an {@code =}, an option's dashes or a blank. */
    private static boolean worthScanning(String text) {
        return text.indexOf(':') >= 0
                || text.indexOf('=') >= 0
                || text.indexOf("--") >= 0
                || text.indexOf(' ') >= 0
                || text.indexOf('\t') >= 0
                || text.indexOf('\n') >= 0;
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
            } else if (c == '=') {
                span = assignment(text, i);
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

    /**
     * {@code NAME=value} with the {@code =} at {@code eq}: the value, up to a blank, a quote, {@code &} or {@code ;}
     * (or inside its quotes), when the name is a credential's ({@link #credentialName}).
     */
    private static Span assignment(String text, int eq) {
        int n = text.length();
        int nameStart = eq;
        while (nameStart > 0) {
            char c = text.charAt(nameStart - 1);
            if (!(Character.isLetterOrDigit(c) || c == '_' || c == '-' || c == '.')) {
                break;
            }
            nameStart--;
        }
        if (nameStart == eq || eq + 1 >= n || text.charAt(eq + 1) == '=' || text.charAt(eq - 1) == '=') {
            return null;
        }
        String name = text.substring(nameStart, eq);
        if (!credentialName(name)) {
            return null;
        }
        int v = eq + 1;
        char quote = quoteChar(text.charAt(v)) ? text.charAt(v++) : 0;
        int end = v;
        while (end < n && (quote == 0 ? !valueEnd(text.charAt(end)) : text.charAt(end) != quote)) {
            end++;
        }
        if (quote != 0 && end == n) {
            return null; // grep "api_key=" src/: the quote closes the pattern, it opens no value
        }
        if (v == end || !secretValue(text.substring(v, end), name)) {
            return null;
        }
        // The shell's working directory, not ODBC's PWD=password.
        if (name.equalsIgnoreCase("pwd") && (text.charAt(v) == '/' || text.charAt(v) == '~')) {
            return null;
        }
        return new Span(v, end, KIND_ASSIGNMENT);
    }

    /**
     * {@code Name: value} with the colon at {@code colon}. A credential header ({@link #credentialHeader}): the value
     * up to the line's end or the closing quote, past a scheme word it starts with. Another name holding a
     * credential's word ({@code "pass":"x"}, {@code password:x}): the value when it is clearly one, quoted or right
     * after the colon, or a single word after a blank that looks like a token (so {@code 'token': tok} stays).
     */
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
        if (!credentialHeader(text, nameStart, nameEnd)) {
            return field(text, nameStart, nameEnd, v, spaced, quotedValue);
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

    /** A JSON or YAML field {@code name: value} whose name holds a credential's word; see {@link #header}. */
    private static Span field(String text, int nameStart, int nameEnd, int v, boolean spaced, boolean quotedValue) {
        int n = text.length();
        String name = text.substring(nameStart, nameEnd);
        if (v >= n || text.charAt(v) == ':' || name.startsWith("-") || !credentialName(name)) {
            return null;
        }
        int start = quotedValue ? v + 1 : v;
        int end = start;
        if (quotedValue) {
            while (end < n && text.charAt(end) != text.charAt(v)) {
                end++;
            }
            if (end == n) {
                return null; // grep "password:" src/ in one text
            }
        } else {
            while (end < n && !valueEnd(text.charAt(end)) && text.charAt(end) != ',' && text.charAt(end) != '}') {
                end++;
            }
            if (spaced) {
                // "password: hunter2" at a line's end is a value; "auth: fix login" and 'token': tok are not.
                int after = end;
                while (after < n && (text.charAt(after) == ' ' || text.charAt(after) == '\t')) {
                    after++;
                }
                boolean alone = after == n || "\n\r,}'\"".indexOf(text.charAt(after)) >= 0;
                if (!alone || end - start < MIN_FIELD_TOKEN || !looksLikeToken(text, start, end)) {
                    return null;
                }
            }
        }
        return start < end && secretValue(text.substring(start, end), name) ? new Span(start, end, KIND_HEADER) : null;
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
     * {@code start}: the value when the name is a credential's. The blank may be a tab, a newline or a shell's
     * backslash-newline; {@code --name= value} takes the word after the blank. A quoted value runs to its closing
     * quote; a value after a blank that starts with {@code -} is another option.
     */
    private static Span option(String text, int start) {
        int n = text.length();
        int eq = start;
        while (eq < n
                && (Character.isLetterOrDigit(text.charAt(eq)) || text.charAt(eq) == '-' || text.charAt(eq) == '_')) {
            eq++;
        }
        if (eq == start || eq >= n || text.charAt(eq) != '=' && blank(text, eq) == eq) {
            return null;
        }
        String name = text.substring(start, eq).toLowerCase(Locale.ROOT);
        if (!credentialOption(name)) {
            return null;
        }
        int v = text.charAt(eq) == '=' ? eq + 1 : eq;
        int past = blank(text, v);
        if (past > v || text.charAt(eq) != '=') {
            v = past;
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
        return v < end && optionValue(name, text, v, end) ? new Span(v, end, KIND_OPTION) : null;
    }

    /** Past the blanks at {@code at}: spaces, tabs, newlines and a shell's backslash-newline. */
    private static int blank(String text, int at) {
        int n = text.length();
        int i = at;
        while (i < n) {
            char c = text.charAt(i);
            if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
                i++;
            } else if (c == '\\' && i + 1 < n && (text.charAt(i + 1) == '\n' || text.charAt(i + 1) == '\r')) {
                i += 2;
            } else {
                break;
            }
        }
        return i;
    }

    /**
     * Whether {@code text[start, end)}, the value of the credential option {@code name}, can be a credential: not a
     * count ({@link #secretValue}), and for a key's option ({@code --key}, {@code --private-key}) not a file's path.
     */
    private static boolean optionValue(String name, String text, int start, int end) {
        String value = text.substring(start, end);
        if (!secretValue(value, name)) {
            return false;
        }
        if (name.equals("key") || name.endsWith("private-key") || name.endsWith("private_key")) {
            return !(value.indexOf('/') >= 0
                    || value.indexOf('\\') >= 0
                    || value.startsWith("~")
                    || value.startsWith(".")
                    || value.matches(".*\\.[A-Za-z0-9]{2,4}"));
        }
        return true;
    }

    /**
     * Whether a value of the credential named {@code name} can be a credential: not a short number ({@code
     * max_tokens=4096}) unless the name is a password's ({@code --password=1234} is a PIN), not a word that says how
     * to authenticate ({@code --auth=basic}), not a shell variable ({@code TOKEN=$GITHUB_TOKEN}).
     */
    private static boolean secretValue(String value, String name) {
        if (value.isEmpty()) {
            return false;
        }
        if (value.length() < MIN_FREE_TOKEN && value.chars().allMatch(Character::isDigit) && !pinName(name)) {
            return false;
        }
        if (value.charAt(0) == '$'
                && value.length() > 1
                && (Character.isLetter(value.charAt(1)) || "{(_".indexOf(value.charAt(1)) >= 0)) {
            return false;
        }
        return !NOT_SECRET_VALUES.contains(value.toLowerCase(Locale.ROOT));
    }

    /** Whether {@code name} is a password's, whose value may be a few digits. */
    private static boolean pinName(String name) {
        String lower = name.toLowerCase(Locale.ROOT);
        return lower.contains("pass") || lower.matches("(.*[-_.])?(pw|pwd)");
    }

    /** A scheme's word at {@code start}, then blanks, then a token: the token. */
    private static Span scheme(String text, int start) {
        int n = text.length();
        int word = start;
        while (word < n && Character.isLetter(text.charAt(word))) {
            word++;
        }
        if (word - start > 9 || word >= n || blank(text, word) == word) {
            return null;
        }
        if (!SCHEMES.contains(text.substring(start, word).toLowerCase(Locale.ROOT))) {
            return null;
        }
        int v = blank(text, word);
        int end = v;
        while (end < n && token68(text.charAt(end))) {
            end++;
        }
        if (end < n && !separator(text.charAt(end)) && text.charAt(end) != ',' && text.charAt(end) != ';') {
            return null;
        }
        // In free text an underscore alone does not make a token: "token refresh_handler" is a word.
        return end - v >= MIN_FREE_TOKEN && looksLikeToken(text, v, end) && !underscoredWord(text, v, end)
                ? new Span(v, end, KIND_SCHEME)
                : null;
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
     * Whether the name in {@code text[start, end)} is a credential header's (also glued to curl's {@code -H}): one of
     * {@link #HEADERS}, or header-shaped, words joined by {@code -} with the last one a credential's ({@code
     * X-Access-Token}, {@code Client-Secret}) or {@code key} after {@code X-} or {@code Api} ({@code X-Goog-Api-Key}).
     */
    private static boolean credentialHeader(String text, int start, int end) {
        String name = text.substring(start, end).toLowerCase(Locale.ROOT);
        if (name.startsWith("-h")) {
            name = name.substring(2);
        }
        if (HEADERS.contains(name)) {
            return true;
        }
        String[] words = name.split("-", -1);
        if (words.length < 2) {
            return false;
        }
        for (String word : words) {
            if (word.isEmpty() || !word.chars().allMatch(Character::isLetterOrDigit)) {
                return false;
            }
        }
        String last = words[words.length - 1];
        return HEADER_LAST.contains(last)
                || last.equals("key") && (words[0].equals("x") || words[words.length - 2].equals("api"));
    }

    /**
     * Whether a variable's or field's name names a credential: it holds one of {@link #NAME_WORDS} ({@code
     * GITHUB_TOKEN}, {@code PGPASSWORD}, {@code _authToken}) or has one of {@link #NAME_PARTS} as a whole part ({@code
     * MYSQL_PWD}), and its last part does not say where the credential is or what about it ({@code TOKEN_FILE},
     * {@code token_type}, {@code credential.helper}; see {@link #OPTION_NOT_VALUE}).
     */
    private static boolean credentialName(String name) {
        String lower = name.toLowerCase(Locale.ROOT);
        if (lower.contains("tokeniz")) {
            return false;
        }
        String[] parts = lower.split("[-_.]+");
        if (parts.length == 0 || OPTION_NOT_VALUE.contains(parts[parts.length - 1])) {
            return false;
        }
        for (String word : NAME_WORDS) {
            if (lower.contains(word)) {
                return true;
            }
        }
        for (String part : parts) {
            if (NAME_PARTS.contains(part)) {
                return true;
            }
        }
        return false;
    }

    /** Whether a long option's name (without its dashes) takes a credential as its value. */
    private static boolean credentialOption(String name) {
        if (USER_OPTIONS.contains(name) || name.equals("key")) {
            return true;
        }
        if (name.startsWith("no-")) {
            return false;
        }
        String[] words = name.split("[-_]");
        if (words.length == 0 || OPTION_NOT_VALUE.contains(words[words.length - 1])) {
            return false;
        }
        if (OPTION_LAST_WORDS.contains(words[words.length - 1])) {
            return true;
        }
        for (int w = 0; w < words.length; w++) {
            if (OPTION_WORDS.contains(words[w])
                    || KEY_WORDS.contains(words[w]) && w + 1 < words.length && words[w + 1].equals("key")) {
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

    /** Lower-case letters joined by underscores, nothing else ({@code implementation_of_feature}). */
    private static boolean underscoredWord(String text, int start, int end) {
        for (int i = start; i < end; i++) {
            char c = text.charAt(i);
            if (c != '_' && !Character.isLowerCase(c)) {
                return false;
            }
        }
        return true;
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

    /** Where an unquoted assignment's or field's value ends: a separator, {@code &} or {@code ;}. */
    private static boolean valueEnd(char c) {
        return separator(c) || c == '&' || c == ';';
    }

    private static boolean schemeBoundary(char c) {
        return separator(c) || c == ':' || c == '=' || c == ',' || c == '(';
    }
}

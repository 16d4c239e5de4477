package dev.agentjail.proxy.redact;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Finds secrets in a request's target, headers and body and overwrites each with a same-length marker.
 * Immutable and thread-safe once built; build one per policy and share it.
 */
public final class Redactor {
    /** Finding location of the request target (path and query). */
    public static final String LOCATION_TARGET = "target";
    /** Default finding location of a body. */
    public static final String LOCATION_BODY = "body";
    /**
     * Finding location of a secret in a header's name; the name itself is never part of a location, since it
     * carries the secret.
     */
    public static final String LOCATION_HEADER_NAME = "header-name";

    /** Where a secret in a request's host name is counted. */
    public static final String LOCATION_HOST = "host";
    /** Where a secret in a program's argument is counted (exec records). */
    public static final String LOCATION_ARGV = "argv";
    /** Where a secret in a path of an exec or file record is counted. */
    public static final String LOCATION_PATH = "path";
    /** Finding locations of headers are this prefix plus the lower-case header name. */
    public static final String LOCATION_HEADER_PREFIX = "header:";

    private static final Pattern KIND = Pattern.compile("[A-Za-z0-9_.:-]{1,64}");
    private static final int MIN_KNOWN_VALUE = 8;
    private static final int MIN_LITERAL_PREFIX = 3;

    private final Compiled compiled;

    private Redactor(Compiled compiled) {
        this.compiled = compiled;
    }

    /** The built-in catalog, no custom patterns, known values or allow list. */
    public static Redactor builtIn() {
        return builder().build();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** The compiled rules (for tests that drive a stream over them directly). */
    Compiled compiled() {
        return compiled;
    }

    /** Every kind this redactor can report: built-in, custom and known. */
    public List<String> kinds() {
        return compiled.kinds;
    }

    /**
     * Redacts a request target (origin-form path and query, or absolute-form). Percent-encoding is decoded
     * for the scan, and {@code +} in the query; markers use only unreserved characters, so the result is
     * still a valid target of the same length.
     */
    public String redactTarget(String target, Findings findings) {
        return redactString(target, Mode.TARGET, LOCATION_TARGET, findings);
    }

    /**
     * Redacts one header (or trailer) value. {@code Basic} credentials in {@code Authorization} and {@code
     * Proxy-Authorization} are decoded, scanned and re-encoded; {@code X-Amz-Security-Token} is redacted
     * whole; everything else (cookies included) is scanned as text with percent-encoding decoded.
     */
    public String redactHeader(String name, String value, Findings findings) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(value, "value");
        String lower = name.toLowerCase(Locale.ROOT);
        String location = LOCATION_HEADER_PREFIX + lower;
        if (lower.equals("x-amz-security-token")) {
            String token = value.strip();
            if (!token.isEmpty() && !compiled.allowed.contains(token)) {
                byte[] marker = new byte[value.length()];
                Markers.fill(marker, 0, marker.length, "aws-session-token", false);
                findings.add("aws-session-token", location);
                return new String(marker, StandardCharsets.ISO_8859_1);
            }
        }
        String result = value;
        if (lower.equals("authorization") || lower.equals("proxy-authorization")) {
            result = redactBasic(result, location, findings);
        }
        return redactString(result, Mode.TEXT, location, findings);
    }

    /**
     * Scans a header (or trailer) name as text, as a receiver could read it; a secret in it is counted under
     * {@value #LOCATION_HEADER_NAME} and the caller drops the field or refuses the request.
     */
    public boolean headerNameCarriesSecret(String name, Findings findings) {
        Objects.requireNonNull(name, "name");
        int before = findings.total();
        redactString(name, Mode.TEXT, LOCATION_HEADER_NAME, findings);
        return findings.total() > before;
    }

    /**
     * Redacts a host name as written (before it is lower-cased: a key id such as {@code AKIA...} keeps its case
     * there), counting what it finds under {@value #LOCATION_HOST}. The caller denies a request whose name carried one:
     * a name is resolved and sent on as it is, so it cannot be redacted, only refused.
     */
    public String redactHost(String host, Findings findings) {
        Objects.requireNonNull(host, "host");
        return redactString(host, Mode.TEXT, LOCATION_HOST, findings);
    }

    /**
     * Redacts one argument of a program the jail ran, scanned as text, for the audit record ({@code kind: exec}); then
     * the credentials its context names ({@code Authorization: Bearer x}, {@code https://u:p@host}, {@code
     * --token=x}; see {@link CommandLineCredentials}). Counted under {@value #LOCATION_ARGV}; the same instance when
     * nothing was found.
     */
    public String redactArgument(String argument, Findings findings) {
        Objects.requireNonNull(argument, "argument");
        String out = redactString(argument, Mode.TEXT, LOCATION_ARGV, findings);
        return CommandLineCredentials.redact(out, LOCATION_ARGV, findings, compiled.allowed);
    }

    /**
     * Redacts the argument after {@code previous} when {@code previous} names a credential and leaves it to the next
     * argument ({@code Bearer} then the token, {@code --password} then the password), or is a catalog token's prefix
     * that the argument completes ({@code ghp_} then the rest); call it with what {@link #redactArgument} returned
     * unchanged. Counted under {@value #LOCATION_ARGV}; the same instance when there is none.
     */
    public String redactArgumentAfter(String previous, String argument, Findings findings) {
        return redactArgumentAfter(null, previous, argument, findings);
    }

    /**
     * As {@link #redactArgumentAfter(String, String, Findings)}, and for the {@code program} running (null when not
     * known; follow it with {@link #programAfter}) its short options and the credentials its arguments set ({@code
     * curl -u name:password}, {@code mysql -pPW}, {@code sshpass -p PW}, {@code docker login -p PW}, {@code aws
     * configure set aws_secret_access_key VALUE}).
     */
    public String redactArgumentAfter(String program, String previous, String argument, Findings findings) {
        Objects.requireNonNull(previous, "previous");
        Objects.requireNonNull(argument, "argument");
        String out = CommandLineCredentials.redactNext(
                program, previous, argument, LOCATION_ARGV, findings, compiled.allowed);
        return out != argument ? out : redactSplitToken(previous, argument, findings);
    }

    /**
     * The program whose arguments follow {@code argument} in an argument vector, given {@code program}, the one so far
     * (null at the vector's start): a program whose arguments {@link #redactArgumentAfter(String, String, String,
     * Findings)} reads ({@code curl}, {@code mysql}, {@code sshpass}, {@code docker login}, {@code aws}, {@code git
     * config}...), named by its basename, also after {@code sudo}, {@code env} or {@code ssh host}; else {@code
     * program} unchanged.
     */
    public static String programAfter(String program, String argument) {
        Objects.requireNonNull(argument, "argument");
        return CommandLineCredentials.programAfter(program, argument);
    }

    /**
     * A token split into its prefix and the rest ({@code "ghp_" "A1b2..."}): only a short previous argument that
     * starts with a letter and ends as most prefixes do ({@code _ - .}) is joined to the argument and scanned, so the
     * scan costs nothing on ordinary command lines.
     */
    private String redactSplitToken(String previous, String argument, Findings findings) {
        int n = previous.length();
        if (n < 2
                || n > 16
                || argument.isEmpty()
                || !Character.isLetter(previous.charAt(0))
                || "_-.".indexOf(previous.charAt(n - 1)) < 0) {
            return argument;
        }
        Findings joined = new Findings();
        redactString(previous + argument, Mode.TEXT, LOCATION_ARGV, joined);
        if (joined.total() == 0 || compiled.allowed.contains(previous + argument)) {
            return argument;
        }
        String kind = joined.list().get(0).kind();
        findings.add(kind, LOCATION_ARGV);
        return CommandLineCredentials.marker(kind, argument.length());
    }

    /**
     * Redacts a path the jail's audit records (a program's, its working directory, a file changed, a symbolic link's
     * target), scanned as text, then for the credentials its context names as an argument is; counted under {@value
     * #LOCATION_PATH}.
     */
    public String redactPath(String path, Findings findings) {
        Objects.requireNonNull(path, "path");
        String out = redactString(path, Mode.TEXT, LOCATION_PATH, findings);
        return CommandLineCredentials.redact(out, LOCATION_PATH, findings, compiled.allowed);
    }

    /** A streaming redactor for one body of the given kind; findings are recorded under {@code location}. */
    public BodyRedactor bodyRedactor(BodyKind kind, String location, Findings findings) {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(location, "location");
        Objects.requireNonNull(findings, "findings");
        return new BodyRedactor(compiled, Mode.of(kind), location, findings);
    }

    /** {@link #bodyRedactor(BodyKind, String, Findings)} with location {@value #LOCATION_BODY}. */
    public BodyRedactor bodyRedactor(BodyKind kind, Findings findings) {
        return bodyRedactor(kind, LOCATION_BODY, findings);
    }

    /** Redacts a whole (aggregated) body; returns a new array of the same length. */
    public byte[] redactBody(byte[] body, BodyKind kind, String location, Findings findings) {
        Collector out = new Collector(body.length);
        BodyRedactor redactor = bodyRedactor(kind, location, findings);
        redactor.feed(body, 0, body.length, out);
        redactor.finish(out);
        return out.bytes;
    }

    /** Scan only: reports findings for a whole body without producing output. */
    public boolean scanBody(byte[] body, BodyKind kind, String location, Findings findings) {
        int before = findings.total();
        BodyRedactor redactor = bodyRedactor(kind, location, findings);
        redactor.feed(body, 0, body.length, ByteSink.DISCARD);
        redactor.finish(ByteSink.DISCARD);
        return findings.total() > before;
    }

    private String redactString(String text, Mode mode, String location, Findings findings) {
        boolean latin1 = true;
        for (int i = 0; i < text.length() && latin1; i++) {
            latin1 = text.charAt(i) <= 0xff;
        }
        var charset = latin1 ? StandardCharsets.ISO_8859_1 : StandardCharsets.UTF_8;
        byte[] bytes = text.getBytes(charset);
        int before = findings.total();
        Collector out = new Collector(bytes.length);
        BodyRedactor redactor = new BodyRedactor(compiled, mode, location, findings);
        redactor.feed(bytes, 0, bytes.length, out);
        redactor.finish(out);
        return findings.total() == before ? text : new String(out.bytes, charset);
    }

    private String redactBasic(String value, String location, Findings findings) {
        int i = 0;
        while (i < value.length() && value.charAt(i) == ' ') {
            i++;
        }
        if (!value.regionMatches(true, i, "Basic", 0, 5)) {
            return value;
        }
        int tokenStart = i + 5;
        while (tokenStart < value.length() && value.charAt(tokenStart) == ' ') {
            tokenStart++;
        }
        if (tokenStart == i + 5) {
            return value;
        }
        int tokenEnd = tokenStart;
        while (tokenEnd < value.length() && value.charAt(tokenEnd) != ' ') {
            tokenEnd++;
        }
        byte[] credentials;
        try {
            credentials = Base64.getDecoder().decode(value.substring(tokenStart, tokenEnd));
        } catch (IllegalArgumentException notBase64) {
            return value;
        }
        int before = findings.total();
        Collector out = new Collector(credentials.length);
        BodyRedactor redactor = new BodyRedactor(compiled, Mode.PLAIN, location, findings);
        redactor.feed(credentials, 0, credentials.length, out);
        redactor.finish(out);
        if (findings.total() == before) {
            return value;
        }
        return value.substring(0, tokenStart)
                + Base64.getEncoder().encodeToString(out.bytes)
                + value.substring(tokenEnd);
    }

    /** Collects released bytes into one array of known final size. */
    private static final class Collector implements ByteSink {
        final byte[] bytes;
        int length;

        Collector(int size) {
            bytes = new byte[size];
        }

        @Override
        public void write(byte[] source, int offset, int count) {
            System.arraycopy(source, offset, bytes, length, count);
            length += count;
        }
    }

    /** The compiled rules, shared by every stream. */
    static final class Compiled {
        final Rule[] rules;
        final TriggerAutomaton automaton;
        /**
         * Per state index: {@code L > 0} where every rule whose trigger ends there has a trigger of length {@code L}
         * and needs no word character before it, so a word character {@code L} bytes back rules them all out at once;
         * else 0.
         */
        final int[] wordBefore;

        final Set<String> allowed;
        final int maxBack;
        final List<String> kinds;

        Compiled(List<Rule> rules, Set<String> allowed) {
            this.rules = rules.toArray(Rule[]::new);
            List<byte[]> triggers = new ArrayList<>(rules.size());
            int back = 0;
            for (Rule rule : rules) {
                triggers.add(rule.trigger);
                back = Math.max(back, rule.back);
            }
            this.automaton = new TriggerAutomaton(triggers);
            this.wordBefore = new int[automaton.outputs.length];
            for (int state = 0; state < wordBefore.length; state++) {
                int length = 0;
                for (int id : automaton.outputs[state]) {
                    Rule rule = this.rules[id];
                    int own = rule.boundaryBefore ? rule.trigger.length : -1;
                    length = length == 0 || length == own ? own : -1;
                }
                wordBefore[state] = Math.max(length, 0);
            }
            this.allowed = Set.copyOf(allowed);
            this.maxBack = back;
            this.kinds =
                    rules.stream().map(rule -> rule.kind).distinct().sorted().toList();
        }
    }

    /** Collects the policy's additions to the catalog. */
    public static final class Builder {
        private final List<Rule> custom = new ArrayList<>();
        private final List<Rule> known = new ArrayList<>();
        private final Set<String> allowed = new HashSet<>();

        private Builder() {}

        /**
         * A policy pattern: wherever {@code literalPrefix} (at least 3 characters) occurs in the decoded
         * bytes, {@code regex} is matched from there ({@code lookingAt}, over at most 1 KiB, bytes seen as
         * ISO-8859-1 characters); the match, or only its named group {@code secret} if the regex has one, is
         * redacted under kind {@code name}.
         */
        public Builder customPattern(String name, Pattern regex, String literalPrefix) {
            checkKind(name);
            Objects.requireNonNull(regex, "regex");
            if (literalPrefix == null || literalPrefix.length() < MIN_LITERAL_PREFIX) {
                throw new IllegalArgumentException(
                        "custom pattern " + name + ": literal prefix needs at least 3 characters");
            }
            custom.add(new Rule.Custom(name, regex, literalPrefix));
            return this;
        }

        /**
         * A host secret's exact value (at least 8 bytes), redacted under {@code kind} (for example {@code
         * known:ANTHROPIC_API_KEY}) wherever it appears raw, percent-encoded or JSON-escaped.
         */
        public Builder knownValue(String kind, byte[] value) {
            checkKind(kind);
            if (value == null || value.length < MIN_KNOWN_VALUE) {
                throw new IllegalArgumentException("known value " + kind + ": needs at least 8 bytes");
            }
            Set<String> variants = new HashSet<>();
            // A value with spaces is also looked for as a form would carry it ('+' for ' '), whatever the body's type.
            byte[] plus = new String(value, StandardCharsets.ISO_8859_1)
                    .replace(' ', '+')
                    .getBytes(StandardCharsets.ISO_8859_1);
            for (byte[] variant : List.of(value, Mode.TEXT.decodeAll(value), Mode.FORM.decodeAll(value), plus)) {
                if (variant.length >= MIN_KNOWN_VALUE
                        && variants.add(new String(variant, StandardCharsets.ISO_8859_1))) {
                    known.add(new Rule.Known(kind, variant));
                }
            }
            return this;
        }

        public Builder knownValue(String kind, String value) {
            return knownValue(kind, value.getBytes(StandardCharsets.UTF_8));
        }

        /** A value that is never redacted, though it matches a rule (a known false positive). */
        public Builder allow(String value) {
            Objects.requireNonNull(value, "value");
            allowed.add(value);
            return this;
        }

        public Redactor build() {
            List<Rule> rules = new ArrayList<>(Catalog.rules());
            rules.addAll(custom);
            rules.addAll(known);
            return new Redactor(new Compiled(rules, allowed));
        }

        private static void checkKind(String kind) {
            if (kind == null || !KIND.matcher(kind).matches()) {
                throw new IllegalArgumentException("kind must match " + KIND.pattern() + ": " + kind);
            }
        }
    }

    @Override
    public String toString() {
        return "Redactor[" + compiled.rules.length + " rules, " + compiled.allowed.size() + " allowed]";
    }
}

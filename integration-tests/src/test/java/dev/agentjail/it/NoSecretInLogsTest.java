package dev.agentjail.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.agentjail.proxy.audit.AuditChain;
import dev.agentjail.proxy.audit.ChainVerifier;
import java.io.IOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Issue 7, "no secret in any log": after the whole integration suite has run (this class runs in its own surefire
 * execution, after the default one), scans every audit log the suite wrote (collected by
 * {@link NoSecretInLogsCollector}) and every diagnostic log (the tests' redirected output, where in-process proxies log)
 * for every canary secret the suite plants, plain, URL-encoded and base64-encoded. Expects zero hits, and fails if it
 * found no audit log at all (which would mean the collection is broken, not that the logs are clean).
 */
class NoSecretInLogsTest {
    /** The directory surefire redirects each test class's output to, as {@code <class>-output.txt}. */
    static final String REPORTS_PROPERTY = "agentjail.it.reports";

    /** A child process's standard error, saved into the log directory by a harness, is a diagnostic log too. */
    static final String STDERR_SUFFIX = ".stderr";

    /** The {@code -Dtest} selection of this run, if any: a partial run may legitimately have written no log. */
    static final String SELECTION_PROPERTY = "agentjail.it.selection";

    /**
     * Every secret value the integration tests plant, with where it comes from. A value added to a test without being
     * added here is still caught by {@link #GENERIC}, as long as it follows the convention of containing "canary".
     */
    static final Map<String, String> CANARIES = canaries();

    /** The convention every planted secret follows; found in any case, in any log, it is a hit. */
    static final String GENERIC = "canary";

    /** Encoded forms shorter than this are too likely to occur by chance in hashes and ids. */
    private static final int MIN_ENCODED = 8;

    private static Map<String, String> canaries() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("canary-ssh-private-key-3f9a1c", "CredentialIsolationTest: planted in ~/.netrc");
        m.put("canary-aws-secret-7b2e55d1", "CredentialIsolationTest: AWS_SECRET_ACCESS_KEY, GITHUB_TOKEN");
        m.put("canary-db-5e1f", "MaskedFilesTest: the masked .env");
        m.put("real-example-key-5f1c0e2a9b7d4c3e8a6f", "CredentialInjectionTest: the real credential");
        m.put("x7Qz9", "CaConfinementTest: SHORT_SECRET, refused as a known value");
        m.put("agent:secret", "HttpForwardingTest: Proxy-Authorization basic credentials");
        m.put("token=abc", "HttpForwardingTest: a query string (never logged)");
        m.put("secret=1", "HttpForwardingTest: a query string (never logged)");
        m.put("secret payload", "ConnectTunnelTest: a response body (never logged)");
        m.put("ghp_canaryMcpInJail7Kq2Vx9Lm4Np8Rt3Wz6Yb1", "McpInJailTest: a secret in MCP tool arguments");
        return m;
    }

    @Test
    void noLogTheSuiteWroteHoldsACanarySecretInAnyEncoding() throws IOException {
        List<Path> auditLogs = auditLogs();
        List<Path> diagnostics = diagnosticLogs();
        if (auditLogs.isEmpty()) {
            assumeTrue(selected(), "a partial run (-Dtest) that wrote no audit log");
        }
        assertFalse(
                auditLogs.isEmpty(),
                "the suite wrote no audit log that was collected under " + logsDir()
                        + ": the collection (NoSecretInLogsCollector) is broken, so the scan proves nothing");
        long lines = 0;
        List<String> hits = new ArrayList<>();
        Map<String, Set<String>> needles = needles();
        for (Path log : concat(auditLogs, diagnostics)) {
            List<String> content = Files.readAllLines(log, StandardCharsets.ISO_8859_1);
            lines += content.size();
            for (int i = 0; i < content.size(); i++) {
                String line = content.get(i);
                for (Map.Entry<String, Set<String>> canary : needles.entrySet()) {
                    for (String needle : canary.getValue()) {
                        if (line.contains(needle)) {
                            hits.add(log + ":" + (i + 1) + ": " + canary.getKey() + " as " + needle);
                        }
                    }
                }
                if (line.toLowerCase(Locale.ROOT).contains(GENERIC)) {
                    hits.add(log + ":" + (i + 1) + ": the word '" + GENERIC + "'");
                }
            }
        }
        assertTrue(lines > 0, "the collected logs are all empty");
        assertEquals(
                List.of(),
                hits,
                () -> hits.size() + " secret(s) in " + auditLogs.size() + " audit and " + diagnostics.size()
                        + " diagnostic logs");
    }

    @Test
    void everyAuditLogTheSuiteWroteIsAnIntactChain() throws IOException {
        List<Path> auditLogs = auditLogs();
        assumeTrue(!auditLogs.isEmpty() || selected(), "the other test fails for this");
        Set<Path> lives = new TreeSet<>();
        auditLogs.forEach(p -> lives.add(AuditChain.liveFile(p)));
        List<String> broken = new ArrayList<>();
        ChainVerifier verifier = new ChainVerifier(null, false);
        for (Path live : lives) {
            ChainVerifier.Report report = verifier.verify(AuditChain.rotationSet(live));
            report.broken().ifPresent(f -> broken.add(f.toString()));
        }
        assertEquals(List.of(), broken, () -> "of " + lives.size() + " audit logs");
    }

    @Test
    void theEncodingsFindWhatTheyShould() {
        Set<String> forms = encodings("agent:secret");

        assertTrue(forms.contains("agent:secret"));
        assertTrue(forms.contains("agent%3Asecret"));
        assertTrue(forms.contains("agent%3asecret"));
        assertTrue(forms.contains("%61%67%65%6E%74%3A%73%65%63%72%65%74"));
        assertTrue(forms.contains("YWdlbnQ6c2VjcmV0"), "Basic credentials as a client sends them");
        // The same value inside a longer base64 text, at each of the three alignments.
        for (String prefix : List.of("", "u", "us")) {
            String encoded =
                    Base64.getEncoder().encodeToString((prefix + "agent:secret!").getBytes(StandardCharsets.UTF_8));
            assertTrue(forms.stream().anyMatch(encoded::contains), () -> prefix + " → " + encoded);
        }
        assertTrue(encodings("x7Qz9").stream().allMatch(f -> f.length() >= 5));
    }

    /** Every form of every canary to look for. */
    private static Map<String, Set<String>> needles() {
        Map<String, Set<String>> needles = new LinkedHashMap<>();
        CANARIES.keySet().forEach(c -> needles.put(c, encodings(c)));
        return needles;
    }

    /**
     * The forms a secret travels or could be logged in: as is; URL-encoded (form style, and fully percent-encoded in
     * upper and lower case hex); base64 and base64url, at each of the three alignments it can have inside a longer
     * encoded text.
     */
    static Set<String> encodings(String secret) {
        byte[] bytes = secret.getBytes(StandardCharsets.UTF_8);
        Set<String> forms = new LinkedHashSet<>();
        forms.add(secret);
        String form = URLEncoder.encode(secret, StandardCharsets.UTF_8);
        forms.add(form);
        forms.add(form.replace("+", "%20"));
        forms.add(Pattern.compile("%[0-9A-F]{2}")
                .matcher(form)
                .replaceAll(m -> m.group().toLowerCase(Locale.ROOT)));
        StringBuilder all = new StringBuilder();
        for (byte b : bytes) {
            all.append('%').append(HexFormat.of().withUpperCase().toHexDigits(b));
        }
        forms.add(all.toString());
        forms.add(all.toString().toLowerCase(Locale.ROOT));
        for (int skip = 0; skip < 3; skip++) {
            int whole = (bytes.length - skip) / 3 * 3;
            if (whole <= 0) {
                continue;
            }
            byte[] aligned = Arrays.copyOfRange(bytes, skip, skip + whole);
            String b64 = Base64.getEncoder().withoutPadding().encodeToString(aligned);
            if (b64.length() >= MIN_ENCODED) {
                forms.add(b64);
                forms.add(Base64.getUrlEncoder().withoutPadding().encodeToString(aligned));
            }
        }
        forms.removeIf(f -> f.length() < Math.min(MIN_ENCODED, secret.length()));
        return forms;
    }

    private static Path logsDir() {
        String dir = System.getProperty(NoSecretInLogsCollector.LOGS_PROPERTY);
        assertTrue(dir != null && !dir.isBlank(), "the pom sets " + NoSecretInLogsCollector.LOGS_PROPERTY);
        return Path.of(dir);
    }

    private static List<Path> auditLogs() throws IOException {
        Path dir = logsDir();
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        try (Stream<Path> files = Files.walk(dir)) {
            return files.filter(Files::isRegularFile)
                    .filter(p -> NoSecretInLogsCollector.LOG_NAME
                            .matcher(p.getFileName().toString())
                            .matches())
                    .sorted()
                    .toList();
        }
    }

    /**
     * The diagnostic logs: the redirected output of every other test class of this module (where in-process proxies
     * and the launcher's code log, through the same logback configuration as the CLI), and any {@value #STDERR_SUFFIX}
     * file a harness saved into the log directory.
     */
    private static List<Path> diagnosticLogs() throws IOException {
        List<Path> found = new ArrayList<>();
        Path dir = logsDir();
        if (Files.isDirectory(dir)) {
            try (Stream<Path> files = Files.walk(dir)) {
                files.filter(p -> p.getFileName().toString().endsWith(STDERR_SUFFIX))
                        .forEach(found::add);
            }
        }
        String reports = System.getProperty(REPORTS_PROPERTY);
        if (reports != null && Files.isDirectory(Path.of(reports))) {
            try (Stream<Path> files = Files.list(Path.of(reports))) {
                files.filter(p -> p.getFileName().toString().endsWith("-output.txt"))
                        .filter(p -> !p.getFileName().toString().contains(NoSecretInLogsTest.class.getSimpleName()))
                        .sorted()
                        .forEach(found::add);
            }
        }
        return found;
    }

    /** Whether this run was narrowed down with {@code -Dtest}. */
    private static boolean selected() {
        String selection = System.getProperty(SELECTION_PROPERTY, "");
        return !selection.isBlank() && !selection.startsWith("${");
    }

    private static List<Path> concat(List<Path> a, List<Path> b) {
        List<Path> all = new ArrayList<>(a);
        all.addAll(b);
        return all;
    }
}

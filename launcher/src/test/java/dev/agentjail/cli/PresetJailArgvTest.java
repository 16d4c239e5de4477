package dev.agentjail.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.agentjail.certs.CertificateAuthority;
import dev.agentjail.jail.Bind;
import dev.agentjail.jail.BwrapCommand;
import dev.agentjail.jail.HomeEntry;
import dev.agentjail.jail.HostLayout;
import dev.agentjail.jail.Identity;
import dev.agentjail.jail.JailSpec;
import dev.agentjail.jail.Limits;
import dev.agentjail.jail.ProtectedPath;
import dev.agentjail.jail.ProtectedPaths;
import dev.agentjail.jail.SessionFiles;
import dev.agentjail.jail.TrustFiles;
import dev.agentjail.policy.CredentialPaths;
import dev.agentjail.policy.CredentialRule;
import dev.agentjail.policy.HostPath;
import dev.agentjail.policy.Policy;
import dev.agentjail.policy.Preset;
import dev.agentjail.policy.Presets;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The whole bwrap argv each built-in preset produces, for a fixed user, project and session layout, compared with a
 * reviewed golden file ({@code src/test/resources/dev/agentjail/cli/presets/NAME.argv}, one argument per line), and
 * checked for what must never be in it: read-write binds outside the project and the preset's own directories, a
 * bind of a credential store, the CA key or the audit log, and a real API key in the environment.
 *
 * <p>A preset change that alters the argv fails here until the golden file is regenerated with {@code
 * -Dagentjail.updateGolden=true} and the diff is reviewed.
 */
class PresetJailArgvTest {
    private static final Path HOME = Path.of("/home/agent");
    private static final Path PROJECT = HOME.resolve("src/app");
    private static final Path SESSION = Path.of("/run/user/1000/agentjail-0123456789abcdef");
    private static final Path INIT = HOME.resolve(".cache/agentjail/agentjail-init-linux-x86_64-0123456789abcdef");
    private static final HostLayout LAYOUT = new HostLayout(
            List.of(Path.of("/usr")),
            List.of(
                    new HostLayout.RootLink(Path.of("/bin"), "usr/bin"),
                    new HostLayout.RootLink(Path.of("/lib"), "usr/lib"),
                    new HostLayout.RootLink(Path.of("/lib64"), "usr/lib64"),
                    new HostLayout.RootLink(Path.of("/sbin"), "usr/sbin")),
            HostLayout.ETC_DEFAULTS);
    private static final int PORT = 3128;
    private static final String REAL_SECRET = "real-secret-of-";
    private static final String PLACEHOLDER = "agentjail-placeholder-for-";
    private static final Path GOLDEN = Path.of("src", "test", "resources", "dev", "agentjail", "cli", "presets");

    @TempDir
    Path emptyProject;

    static Stream<Preset> presets() {
        return Presets.all().stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("presets")
    void theArgvIsTheReviewedOne(Preset preset) throws Exception {
        List<String> argv = BwrapCommand.argv(spec(preset));
        String actual = String.join("\n", argv) + "\n";
        String resource = "presets/" + preset.name() + ".argv";
        if (Boolean.getBoolean("agentjail.updateGolden")) {
            Files.createDirectories(GOLDEN);
            Files.writeString(GOLDEN.resolve(preset.name() + ".argv"), actual, StandardCharsets.UTF_8);
            return;
        }
        String expected;
        try (var in = PresetJailArgvTest.class.getResourceAsStream(resource)) {
            if (in == null) {
                fail("no golden file " + resource + "; generate it with -Dagentjail.updateGolden=true and review it");
            }
            expected = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        if (!expected.equals(actual)) {
            fail("the bwrap argv of preset " + preset.name() + " changed (" + differences(expected, actual)
                    + "); if that is intended, regenerate with -Dagentjail.updateGolden=true and review the diff");
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("presets")
    void writesOnlyTheProjectAndThePresetsOwnDirectories(Preset preset) throws Exception {
        Policy policy = preset.policy(HOME);
        Set<Path> writable = new LinkedHashSet<>();
        writable.add(PROJECT);
        policy.filesystem().write().forEach(p -> writable.add(p.resolve(HOME)));
        List<String> options = BwrapCommand.options(spec(preset));
        for (int i = 0; i < options.size(); i++) {
            String option = options.get(i);
            if (option.equals("--bind") || option.equals("--bind-try")) {
                Path source = Path.of(options.get(i + 1));
                assertTrue(writable.contains(source), () -> preset.name() + " binds " + source + " read-write");
                assertTrue(
                        source.startsWith(HOME) && !source.equals(HOME),
                        () -> preset.name() + ": read-write bind outside the home: " + source);
            }
        }
        for (HostPath path : policy.filesystem().read()) {
            assertEquals(HostPath.Anchor.HOME, path.anchor(), () -> preset.name() + " reads " + path.text());
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("presets")
    void exposesNoCredentialStoreNorTheCaNorTheAuditLog(Preset preset) throws Exception {
        JailSpec spec = spec(preset);
        Map<String, String> env = hostEnv(preset.policy(HOME));
        List<Path> secret = new ArrayList<>();
        CredentialPaths.ALWAYS_HIDDEN.forEach(p -> secret.add(p.resolve(HOME)));
        secret.add(CertificateAuthority.defaultDirectory(env));
        secret.add(Paths.defaultAuditLog(env));
        for (Path source : BwrapCommand.bindSources(spec)) {
            assertFalse(HOME.startsWith(source), () -> preset.name() + ": the bind of " + source + " shows the home");
            for (Path path : secret) {
                assertFalse(
                        source.startsWith(path) || path.startsWith(source),
                        () -> preset.name() + ": the bind of " + source + " exposes " + path);
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("presets")
    void theJailSeesPlaceholdersNeverTheRealKeys(Preset preset) throws Exception {
        Policy policy = preset.policy(HOME);
        List<String> argv = BwrapCommand.argv(spec(preset));
        for (String arg : argv) {
            assertFalse(arg.startsWith(REAL_SECRET), () -> preset.name() + " passes a real key: " + arg);
            assertFalse(arg.equals("decoy-value"), () -> preset.name() + " passes a variable it does not forward");
        }
        for (CredentialRule rule : policy.credentials()) {
            int at = argv.indexOf(rule.env());
            assertTrue(at > 0 && argv.get(at - 1).equals("--setenv"), rule.env());
            assertEquals(PLACEHOLDER + rule.env(), argv.get(at + 1));
        }
        for (String name : policy.env().forward()) {
            int at = argv.indexOf(name);
            assertTrue(at > 0 && argv.get(at - 1).equals("--setenv"), name);
            assertEquals("host-value-of-" + name, argv.get(at + 1));
        }
        assertEquals(policy.jail().newSession(), argv.contains("--new-session"));
    }

    /** The spec {@code agentjail run} builds for this preset alone, on the fixed layout. */
    private JailSpec spec(Preset preset) throws Exception {
        Policy policy = preset.policy(HOME);
        Map<String, String> host = hostEnv(policy);
        Map<String, String> placeholders = new LinkedHashMap<>();
        for (CredentialRule rule : policy.credentials()) {
            placeholders.put(rule.env(), PLACEHOLDER + rule.env());
        }
        Map<String, String> env =
                JailEnvironment.build(host, policy.env(), PORT, HOME, "0123456789abcdef", placeholders);
        return new JailSpec(
                Path.of("/usr/bin/bwrap"),
                INIT,
                LAYOUT,
                new SessionFiles(
                        SESSION.resolve("empty"),
                        SESSION.resolve("passwd"),
                        SESSION.resolve("group"),
                        SESSION.resolve("hosts")),
                PROJECT,
                HOME,
                homeEntries(policy),
                extraBinds(policy),
                protectedPaths(policy),
                List.of(),
                policy.jail().hostname(),
                env,
                policy.jail().newSession(),
                SESSION.resolve("handoff.sock"),
                PORT,
                Optional.of(new TrustFiles(SESSION.resolve("ca-bundle.pem"), SESSION.resolve("truststore.p12"))),
                limits(policy),
                Identity.forOutsideUid(1000),
                3,
                OptionalInt.of(4),
                List.of(preset.binaries().get(0)),
                List.of());
    }

    /**
     * A user's environment with a real-looking value for every credential variable (which must never reach the
     * jail), a value for every forwarded one, and a variable no preset forwards.
     */
    private static Map<String, String> hostEnv(Policy policy) {
        Map<String, String> env = new LinkedHashMap<>();
        env.put("HOME", HOME.toString());
        env.put("PATH", "/usr/local/bin:/usr/bin:/bin");
        env.put("TERM", "xterm-256color");
        env.put("LANG", "C.UTF-8");
        env.put("USER", "agent");
        env.put("DECOY_NOT_FORWARDED", "decoy-value");
        for (CredentialRule rule : policy.credentials()) {
            env.put(rule.env(), REAL_SECRET + rule.env());
        }
        for (String name : policy.env().forward()) {
            env.put(name, "host-value-of-" + name);
        }
        return env;
    }

    /** Protected paths for an empty project, as the launcher resolves them (defaults plus the preset's). */
    private List<ProtectedPath> protectedPaths(Policy policy) throws IOException {
        List<String> patterns = new ArrayList<>(ProtectedPaths.DEFAULTS);
        policy.filesystem().protectedPaths().forEach(g -> patterns.add(g.pattern()));
        return ProtectedPaths.resolve(emptyProject, patterns);
    }

    // The launcher's own policy-to-spec mapping (Session), so this test sees what `agentjail run` builds.

    private static List<HomeEntry> homeEntries(Policy policy) {
        return Session.homeEntries(policy);
    }

    private static List<Bind> extraBinds(Policy policy) {
        return Session.extraBinds(policy, HOME);
    }

    private static Limits limits(Policy policy) {
        return Session.limits(policy);
    }

    /** Which lines appear only on one side, for the failure message. */
    private static String differences(String expected, String actual) {
        List<String> was = expected.lines().toList();
        List<String> now = actual.lines().toList();
        List<String> removed = new ArrayList<>(was);
        now.forEach(removed::remove);
        List<String> added = new ArrayList<>(now);
        was.forEach(added::remove);
        return "no longer: " + removed + ", now also: " + added
                + (removed.isEmpty() && added.isEmpty() ? ", reordered" : "");
    }
}

package dev.agentjail.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The compact constructors of the jail-side records: they check and copy, also when built in code. */
class RecordsTest {
    @Test
    void policyKeepsItsNetworkOnlyConstructorAndDenyAll() {
        Policy denyAll = Policy.denyAll();
        assertEquals(1, denyAll.version());
        assertEquals(NetworkPolicy.none(), denyAll.network());
        assertEquals(FilesystemPolicy.none(), denyAll.filesystem());
        assertEquals(EnvPolicy.none(), denyAll.env());
        assertEquals(Limits.defaults(), denyAll.limits());
        assertEquals(JailSettings.defaults(), denyAll.jail());
        assertEquals("<built-in deny-all>", denyAll.source());
        assertEquals(
                new Policy(
                        1,
                        NetworkPolicy.none(),
                        FilesystemPolicy.none(),
                        EnvPolicy.none(),
                        Limits.defaults(),
                        JailSettings.defaults(),
                        "x"),
                new Policy(1, NetworkPolicy.none(), "x"));
        assertThrows(
                NullPointerException.class,
                () -> new Policy(
                        1,
                        NetworkPolicy.none(),
                        null,
                        EnvPolicy.none(),
                        Limits.defaults(),
                        JailSettings.defaults(),
                        "x"));
    }

    @Test
    void policyDefaultsTheInspectionSectionsAndChecksCredentials() throws Exception {
        Policy denyAll = Policy.denyAll();
        assertEquals(TlsSettings.defaults(), denyAll.tls());
        assertEquals(RedactionPolicy.defaults(), denyAll.redaction());
        assertEquals(List.of(), denyAll.credentials());
        CredentialRule rule =
                new CredentialRule("KEY", null, List.of(Authorities.parseAuthority("api.test", 443)), "x-api-key");
        List<CredentialRule> rules = new ArrayList<>(List.of(rule));
        Policy policy = new Policy(
                1,
                NetworkPolicy.none(),
                FilesystemPolicy.none(),
                EnvPolicy.none(),
                Limits.defaults(),
                JailSettings.defaults(),
                "x",
                TlsSettings.defaults(),
                RedactionPolicy.defaults(),
                rules);
        rules.clear();
        assertEquals(List.of(rule), policy.credentials());
        assertThrows(
                IllegalArgumentException.class,
                () -> new Policy(
                        1,
                        NetworkPolicy.none(),
                        FilesystemPolicy.none(),
                        new EnvPolicy(List.of("KEY"), Map.of()),
                        Limits.defaults(),
                        JailSettings.defaults(),
                        "x",
                        TlsSettings.defaults(),
                        RedactionPolicy.defaults(),
                        List.of(rule)));
        assertThrows(
                IllegalArgumentException.class,
                () -> new Policy(
                        1,
                        NetworkPolicy.none(),
                        FilesystemPolicy.none(),
                        new EnvPolicy(List.of(), Map.of("KEY", "v")),
                        Limits.defaults(),
                        JailSettings.defaults(),
                        "x",
                        TlsSettings.defaults(),
                        RedactionPolicy.defaults(),
                        List.of(rule)));
        assertThrows(
                IllegalArgumentException.class,
                () -> new Policy(
                        1,
                        NetworkPolicy.none(),
                        FilesystemPolicy.none(),
                        EnvPolicy.none(),
                        Limits.defaults(),
                        JailSettings.defaults(),
                        "x",
                        TlsSettings.defaults(),
                        RedactionPolicy.defaults(),
                        List.of(rule, rule)));
        assertThrows(
                NullPointerException.class,
                () -> new Policy(
                        1,
                        NetworkPolicy.none(),
                        FilesystemPolicy.none(),
                        EnvPolicy.none(),
                        Limits.defaults(),
                        JailSettings.defaults(),
                        "x",
                        null,
                        RedactionPolicy.defaults(),
                        List.of()));
    }

    @Test
    void envPolicyCopiesKeepsOrderAndChecks() {
        List<String> forward = new ArrayList<>(List.of("A"));
        Map<String, String> set = new LinkedHashMap<>();
        set.put("Z", "1");
        set.put("B", "2");
        EnvPolicy env = new EnvPolicy(forward, set);
        forward.add("C");
        set.put("D", "3");
        assertEquals(List.of("A"), env.forward());
        assertEquals(List.of("Z", "B"), List.copyOf(env.set().keySet()));
        assertThrows(UnsupportedOperationException.class, () -> env.set().put("E", "4"));

        assertThrows(IllegalArgumentException.class, () -> new EnvPolicy(List.of("A", "A"), Map.of()));
        assertThrows(IllegalArgumentException.class, () -> new EnvPolicy(List.of("A"), Map.of("A", "x")));
        assertThrows(IllegalArgumentException.class, () -> new EnvPolicy(List.of("1A"), Map.of()));
        assertThrows(IllegalArgumentException.class, () -> new EnvPolicy(List.of(), Map.of("https_proxy", "x")));
        assertThrows(IllegalArgumentException.class, () -> new EnvPolicy(List.of(), Map.of("A", "a\0b")));
        assertEquals(
                java.util.Set.of(
                        "HTTP_PROXY",
                        "HTTPS_PROXY",
                        "http_proxy",
                        "https_proxy",
                        "ALL_PROXY",
                        "all_proxy",
                        "NO_PROXY",
                        "no_proxy"),
                EnvPolicy.SET_BY_AGENTJAIL);
    }

    @Test
    void limitsAreBounded() {
        Limits defaults = Limits.defaults();
        assertEquals(
                Duration.ofMinutes(5),
                defaults.withTimeout(Duration.ofMinutes(5)).timeout());
        assertEquals(
                Duration.ofMillis(500),
                defaults.withTimeout(Duration.ofMillis(500)).timeout());
        assertThrows(IllegalArgumentException.class, () -> defaults.withTimeout(Duration.ZERO));
        assertThrows(IllegalArgumentException.class, () -> defaults.withTimeout(Duration.ofSeconds(-1)));
        assertThrows(
                IllegalArgumentException.class,
                () -> defaults.withTimeout(Duration.ofDays(30).plusNanos(1)));
        assertThrows(NullPointerException.class, () -> defaults.withTimeout(null));
        Duration hour = Duration.ofHours(1);
        assertThrows(IllegalArgumentException.class, () -> new Limits(hour, 0, 1, 1, 1, 1));
        assertThrows(IllegalArgumentException.class, () -> new Limits(hour, (1L << 40) + 1, 1, 1, 1, 1));
        assertThrows(IllegalArgumentException.class, () -> new Limits(hour, 1, 0, 1, 1, 1));
        assertThrows(IllegalArgumentException.class, () -> new Limits(hour, 1, (1 << 22) + 1, 1, 1, 1));
        assertThrows(IllegalArgumentException.class, () -> new Limits(hour, 1, 1, 0, 1, 1));
        assertThrows(IllegalArgumentException.class, () -> new Limits(hour, 1, 1, (1 << 20) + 1, 1, 1));
        assertThrows(IllegalArgumentException.class, () -> new Limits(hour, 1, 1, 1, -1, 1));
        assertThrows(IllegalArgumentException.class, () -> new Limits(hour, 1, 1, 1, 1, 0));
    }

    @Test
    void jailSettingsCheckTheHostname() {
        assertEquals(new JailSettings("agentjail", true, true), JailSettings.defaults());
        assertThrows(IllegalArgumentException.class, () -> new JailSettings("a.b", true, true));
        assertThrows(IllegalArgumentException.class, () -> new JailSettings("", true, true));
        assertThrows(NullPointerException.class, () -> new JailSettings(null, true, true));
    }
}

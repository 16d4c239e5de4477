package dev.agentjail.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class CredentialsSectionTest {
    private static final Path BASE = Path.of("/policies/project");
    private static final Path HOME = Path.of("/home/dev");

    private static Policy load(String yaml) throws PolicyException {
        return PolicyLoader.parse("version: 1\n" + yaml, "p.yaml", BASE, HOME);
    }

    private static Target target(String authority) throws MalformedTargetException {
        return Authorities.parseAuthority(authority, 443);
    }

    @Test
    void rulesLoadWithCanonicalHostsAndLowerCaseHeaders() throws Exception {
        List<CredentialRule> rules = load("""
                credentials:
                  - env: ANTHROPIC_API_KEY
                    hosts: [api.anthropic.com]
                    header: x-api-key
                  - env: GITHUB_TOKEN
                    file: ~/.config/gh/token
                    hosts: [API.GitHub.com., "uploads.github.com:8443", "[2001:db8::1]"]
                    header: Authorization
                  - env: CI_TOKEN
                    file: secrets/ci
                    hosts: [ci.test]
                    header: X-CI-Token
                """).credentials();
        assertEquals(
                List.of(
                        new CredentialRule(
                                "ANTHROPIC_API_KEY", null, List.of(target("api.anthropic.com")), "x-api-key"),
                        new CredentialRule(
                                "GITHUB_TOKEN",
                                Path.of("/home/dev/.config/gh/token"),
                                List.of(
                                        target("api.github.com"),
                                        target("uploads.github.com:8443"),
                                        target("[2001:db8::1]")),
                                "authorization"),
                        new CredentialRule(
                                "CI_TOKEN",
                                Path.of("/policies/project/secrets/ci"),
                                List.of(target("ci.test")),
                                "x-ci-token")),
                rules);
        assertEquals("authorization", rules.get(1).header());
        assertEquals(
                new Target("api.github.com", HostKind.DNS, 443),
                rules.get(1).hosts().get(0));
    }

    static Stream<Arguments> appliesTo() {
        return Stream.of(
                arguments("api.github.com:443", true),
                arguments("uploads.github.com:8443", true),
                arguments("uploads.github.com:443", false),
                arguments("api.github.com:8443", false),
                arguments("github.com:443", false),
                arguments("sub.api.github.com:443", false),
                arguments("[2001:db8::1]:443", true),
                arguments("[2001:db8::2]:443", false));
    }

    @ParameterizedTest(name = "[{index}] {0} -> {1}")
    @MethodSource("appliesTo")
    void appliesOnlyToTheExactHostsAndPorts(String connect, boolean expected) throws Exception {
        CredentialRule rule = load("""
                credentials:
                  - env: GITHUB_TOKEN
                    hosts: [api.github.com, "uploads.github.com:8443", "[2001:db8::1]"]
                    header: authorization
                """).credentials().get(0);
        assertEquals(expected, rule.appliesTo(Authorities.parseConnectTarget(connect)));
    }

    @Test
    void absentOrEmptyMeansNoCredentials() throws Exception {
        assertEquals(List.of(), PolicyLoader.parse("version: 1\n", "p.yaml").credentials());
        assertEquals(List.of(), load("credentials: []\n").credentials());
    }

    @Test
    void aCredentialHostMayAlsoBeAllowedButNotTunnelled() throws Exception {
        Policy policy = load("""
                network:
                  allow: [api.anthropic.com, pinned.test]
                  tunnel: [pinned.test, "api.anthropic.com:8443"]
                credentials:
                  - {env: A, hosts: [api.anthropic.com], header: x-api-key}
                """);
        assertTrue(policy.credentials().get(0).appliesTo(target("api.anthropic.com")));
    }

    static Stream<Arguments> badSections() {
        String rule = "credentials:\n  - env: KEY\n    hosts: [api.test]\n    header: x-api-key\n";
        return Stream.of(
                // shapes and keys
                arguments("credentials: {env: KEY}\n", "p.yaml:2: credentials: expected a list, got a mapping"),
                arguments("credentials: [KEY]\n", "p.yaml:2: credentials[0]: expected a mapping, got 'KEY'"),
                arguments(
                        "credentials:\n  - {env: KEY, host: [api.test], header: x}\n",
                        "p.yaml:3: credentials[0].host: unknown key 'host' (did you mean 'hosts'?)"),
                arguments(
                        "credentials:\n  - {env: KEY, hosts: [api.test], header: x, value: s3cret}\n",
                        "p.yaml:3: credentials[0].value: unknown key 'value' (expected one of: env, file, header,"
                                + " hosts, optional)"),
                arguments(
                        "credentials:\n  - hosts: [api.test]\n    header: x\n",
                        "p.yaml:3: credentials[0].env: missing required key"),
                arguments(
                        "credentials:\n  - env: KEY\n    header: x\n",
                        "p.yaml:3: credentials[0].hosts: missing required key"),
                arguments(
                        "credentials:\n  - env: KEY\n    hosts: [api.test]\n",
                        "p.yaml:3: credentials[0].header: missing required key"),
                // env
                arguments(
                        "credentials:\n  - {env: 1KEY, hosts: [api.test], header: x}\n",
                        "p.yaml:3: credentials[0].env: invalid variable name '1KEY': must match [A-Za-z_][A-Za-z0-9_]*"),
                arguments(
                        "credentials:\n  - {env: HTTPS_PROXY, hosts: [api.test], header: x}\n",
                        "p.yaml:3: credentials[0].env: 'HTTPS_PROXY' is set by agentjail to point at its proxy"),
                arguments(
                        rule + "  - env: KEY\n    hosts: [other.test]\n    header: x-api-key\n",
                        "p.yaml:6: credentials[1].env: 'KEY' already has a different credential rule, at p.yaml:3; a policy may restate that rule word for word, but not change it: remove one"),
                arguments(
                        "env:\n  forward:\n    - PATH_EXTRA\n    - KEY\n" + rule,
                        "p.yaml:7: credentials[0].env: 'KEY' is also in env.forward[1] (line 5); the jail must see"
                                + " only the placeholder, never the real value: remove it there"),
                arguments(
                        "env:\n  set:\n    KEY: fixed\n" + rule,
                        "p.yaml:6: credentials[0].env: 'KEY' is also in env.set.KEY (line 4); the jail must see only"
                                + " the placeholder, never the real value: remove it there"),
                // file
                arguments(
                        "credentials:\n  - {env: KEY, file: \"~bob/key\", hosts: [api.test], header: x}\n",
                        "p.yaml:3: credentials[0].file: invalid path '~bob/key': '~user' is not supported; write '~/'"
                                + " for your own home"),
                arguments(
                        "credentials:\n  - {env: KEY, file: [a], hosts: [api.test], header: x}\n",
                        "p.yaml:3: credentials[0].file: expected a string, got a list"),
                // hosts
                arguments(
                        "credentials:\n  - {env: KEY, hosts: [], header: x}\n",
                        "p.yaml:3: credentials[0].hosts: expected at least one host"),
                arguments(
                        "credentials:\n  - {env: KEY, hosts: api.test, header: x}\n",
                        "p.yaml:3: credentials[0].hosts: expected a list, got 'api.test'"),
                arguments(
                        "credentials:\n  - env: KEY\n    hosts:\n      - api.test\n      - \"*.api.test\"\n    header: x\n",
                        "p.yaml:6: credentials[0].hosts[1]: invalid host '*.api.test': wildcards are not allowed; a"
                                + " credential goes only to the exact hosts named"),
                arguments(
                        "credentials:\n  - {env: KEY, hosts: [\"*\"], header: x}\n",
                        "p.yaml:3: credentials[0].hosts[0]: invalid host '*': wildcards are not allowed; a credential"
                                + " goes only to the exact hosts named"),
                arguments(
                        "credentials:\n  - {env: KEY, hosts: [\"https://api.test\"], header: x}\n",
                        "p.yaml:3: credentials[0].hosts[0]: invalid host 'https://api.test': '/' is not allowed in"
                                + " authority"),
                arguments(
                        "credentials:\n  - {env: KEY, hosts: [\"api.test:0\"], header: x}\n",
                        "p.yaml:3: credentials[0].hosts[0]: invalid host 'api.test:0': port out of range"),
                arguments(
                        "credentials:\n  - {env: KEY, hosts: [api.test, \"API.test.:443\"], header: x}\n",
                        "p.yaml:3: credentials[0].hosts[1]: 'api.test:443' is already listed at"
                                + " credentials[0].hosts[0]"),
                arguments(
                        "network:\n  allow: [api.test]\n  tunnel: [\"*.other.test\", api.test]\n" + rule,
                        "p.yaml:7: credentials[0].hosts[0]: 'api.test:443' is tunnelled by network.tunnel[1]=api.test;"
                                + " a credential is injected only into intercepted requests"),
                // header
                arguments(
                        "credentials:\n  - {env: KEY, hosts: [api.test], header: \"x api key\"}\n",
                        "p.yaml:3: credentials[0].header: invalid header name 'x api key': must be an HTTP token"),
                arguments(
                        "credentials:\n  - {env: KEY, hosts: [api.test], header: \"x-key:\"}\n",
                        "p.yaml:3: credentials[0].header: invalid header name 'x-key:': must be an HTTP token"),
                arguments(
                        "credentials:\n  - {env: KEY, hosts: [api.test], header: \"\"}\n",
                        "p.yaml:3: credentials[0].header: invalid header name '': must be an HTTP token"),
                arguments(
                        "credentials:\n  - {env: KEY, hosts: [api.test], header: Host}\n",
                        "p.yaml:3: credentials[0].header: 'host' frames or routes the request and cannot carry a"
                                + " credential"),
                arguments(
                        "credentials:\n  - {env: KEY, hosts: [api.test], header: Proxy-Authorization}\n",
                        "p.yaml:3: credentials[0].header: 'proxy-authorization' frames or routes the request and"
                                + " cannot carry a credential"),
                arguments(
                        "credentials:\n  - {env: KEY, hosts: [api.test], header: [x]}\n",
                        "p.yaml:3: credentials[0].header: expected a string, got a list"));
    }

    @ParameterizedTest(name = "[{index}] {1}")
    @MethodSource("badSections")
    void badSectionIsRefusedWithFileLineAndKey(String yaml, String message) {
        PolicyException e = assertThrows(PolicyException.class, () -> load(yaml));
        assertEquals(message, e.getMessage());
    }

    @Test
    void recordChecksCopiesAndLowerCases() throws Exception {
        List<Target> hosts = new ArrayList<>(List.of(target("api.test")));
        CredentialRule rule = new CredentialRule("KEY", null, hosts, "X-Api-Key");
        hosts.clear();
        assertEquals(List.of(target("api.test")), rule.hosts());
        assertEquals("x-api-key", rule.header());
        assertFalse(rule.appliesTo(target("api.test:8443")));
        assertThrows(IllegalArgumentException.class, () -> new CredentialRule("KEY", null, List.of(), "x"));
        assertThrows(
                IllegalArgumentException.class,
                () -> new CredentialRule("KEY", Path.of("relative"), List.of(target("api.test")), "x"));
        assertThrows(
                IllegalArgumentException.class,
                () -> new CredentialRule("KEY", null, List.of(target("api.test"), target("api.test")), "x"));
        assertThrows(
                IllegalArgumentException.class,
                () -> new CredentialRule("KEY", null, List.of(target("api.test")), "content-length"));
        assertThrows(
                IllegalArgumentException.class,
                () -> new CredentialRule("1KEY", null, List.of(target("api.test")), "x"));
    }
}

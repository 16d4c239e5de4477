package dev.agentjail.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Every shape of file {@link AllowListEdit} edits, as exact text, and every shape it refuses, with the line. */
class AllowListEditTest {
    private static final List<String> ENTRIES = List.of("a.test", "b.test:8443");

    static Stream<Arguments> edits() {
        return Stream.of(
                Arguments.of("block list: after the last item, same dash column and gap; comments stay", """
                        version: 1   # mine
                        network:
                          # who we talk to
                          allow:
                          -   ok.test   # the api
                          # - old.test
                          deny: [evil.test]
                        """, """
                        version: 1   # mine
                        network:
                          # who we talk to
                          allow:
                          -   ok.test   # the api
                          -   a.test
                          -   b.test:8443
                          # - old.test
                          deny: [evil.test]
                        """),
                Arguments.of("empty flow list as agentjail init writes it: replaced, its comment kept", """
                        version: 1
                        network:
                            allow: []   # add hosts here
                            # deny: []
                        """, """
                        version: 1
                        network:
                            allow:   # add hosts here
                                - a.test
                                - b.test:8443
                            # deny: []
                        """),
                Arguments.of("network without allow: allow becomes its first key", """
                        version: 1
                        network:
                          # never these
                          deny: [evil.test]
                        """, """
                        version: 1
                        network:
                          allow:
                            - a.test
                            - b.test:8443
                          # never these
                          deny: [evil.test]
                        """),
                Arguments.of(
                        "no network: a section at the end, indented like the file's other sections",
                        "version: 1\nlimits:\n   timeout: 1h\n# end",
                        "version: 1\nlimits:\n   timeout: 1h\n# end\nnetwork:\n   allow:\n      - a.test\n"
                                + "      - b.test:8443\n"),
                Arguments.of(
                        "CRLF file: new lines get CRLF too",
                        "version: 1\r\nnetwork:\r\n  allow:\r\n    - ok.test\r\n",
                        "version: 1\r\nnetwork:\r\n  allow:\r\n    - ok.test\r\n    - a.test\r\n    - b.test:8443\r\n"),
                Arguments.of(
                        "last item on the last line without a newline",
                        "version: 1\nnetwork:\n  allow:\n    - \"ok.test\"",
                        "version: 1\nnetwork:\n  allow:\n    - \"ok.test\"\n    - a.test\n    - b.test:8443\n"));
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("edits")
    void editsKeepEveryOtherByte(String why, String before, String after) throws Exception {
        String edited = AllowListEdit.append(before, "p.yaml", ENTRIES);
        assertEquals(after, edited, why);
        // And the result is a policy whose allow list has the entries.
        List<String> allow = PolicyLoader.parse(edited, "p.yaml").network().allow().stream()
                .map(HostPattern::text)
                .toList();
        assertEquals(ENTRIES, allow.subList(allow.size() - 2, allow.size()), why);
    }

    static Stream<Arguments> refusals() {
        return Stream.of(
                Arguments.of(
                        "version: 1\nnetwork:\n  allow: [ok.test]\n", "p.yaml:3: network.allow: a flow-style list"),
                Arguments.of(
                        "version: 1\nnetwork:\n  allow: [\n    ok.test]\n",
                        "p.yaml:3: network.allow: a flow-style list"),
                Arguments.of("version: 1\nnetwork: {allow: [ok.test]}\n", "p.yaml:2: network: not a block mapping"),
                Arguments.of("{version: 1}\n", "p.yaml:1: -: the top level is not a block mapping"),
                Arguments.of(
                        "version: 1\nbase: &hosts\n  - ok.test\nnetwork:\n  allow: *hosts\n",
                        "p.yaml:2: -: anchors and aliases"),
                Arguments.of(
                        "version: 1\nnetwork:\n  allow:\n    - ok.test\n    -  two.test\n",
                        "p.yaml:5: network.allow: items indented unevenly"),
                Arguments.of(
                        "version: 1\nnetwork:\n  allow:\n    - |\n      ok.test\n",
                        "p.yaml:4: network.allow: an item that is not a one-line host"),
                Arguments.of("version: 1\nnetwork:\n  allow: ok.test\n", "p.yaml:3: network.allow: not a list"),
                Arguments.of("version: 1\r# old mac\n", "p.yaml:1: -: a line break other than"),
                Arguments.of("version: 1\n...\n", "p.yaml:2: -: a document end marker"),
                Arguments.of("? network\n: {}\nversion: 1\n", "p.yaml:1: network: an unusual key"),
                Arguments.of("  version: 1\n  network: {}\n", "p.yaml:1: -: top-level keys are indented"));
    }

    @ParameterizedTest(name = "[{index}] {1}")
    @MethodSource("refusals")
    void shapesThatCannotBeEditedFaithfullyAreRefusedWithTheirLine(String text, String message) {
        PolicyException e = assertThrows(PolicyException.class, () -> AllowListEdit.append(text, "p.yaml", ENTRIES));
        assertEquals(
                message,
                e.getMessage()
                        .substring(0, Math.min(message.length(), e.getMessage().length())));
    }

    @Test
    void aNewPolicyHoldsOnlyTheVersionAndTheEntries() throws Exception {
        String text = AllowListEdit.newPolicy(ENTRIES);
        assertEquals("version: 1\nnetwork:\n  allow:\n    - a.test\n    - b.test:8443\n", text);
    }

    @Test
    void anEntryThatIsNoAllowEntryIsAProgrammingError() {
        assertThrows(
                IllegalArgumentException.class, () -> AllowListEdit.append("version: 1\n", "p.yaml", List.of("*")));
    }
}

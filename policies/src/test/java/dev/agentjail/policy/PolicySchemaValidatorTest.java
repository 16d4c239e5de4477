package dev.agentjail.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The test-only validator and readers behind the schema tests mean what JSON Schema and YAML 1.2 mean. */
class PolicySchemaValidatorTest {
    private static final String SCHEMA = """
            {
              "type": "object",
              "additionalProperties": false,
              "required": ["n"],
              "properties": {
                "n": {"type": "integer", "minimum": 1, "maximum": 3},
                "s": {"type": "string", "pattern": "b", "minLength": 2, "maxLength": 3},
                "e": {"enum": ["x", 2]},
                "l": {"type": "array", "items": {"$ref": "#/$defs/word"}, "minItems": 1, "uniqueItems": true},
                "o": {"oneOf": [{"type": "string"}, {"const": 5}, {"type": "integer"}]},
                "m": {"type": "object", "propertyNames": {"pattern": "^[a-z]+$"}, "additionalProperties": {"type": "boolean"}},
                "v": {"type": ["string", "number"]}
              },
              "$defs": {"word": {"type": "string", "pattern": "^[a-z]+$"}}
            }
            """;

    @SuppressWarnings("unchecked")
    private final PolicySchemaValidator validator =
            new PolicySchemaValidator((Map<String, Object>) PolicySchemaJson.parse(SCHEMA));

    private List<String> failures(String yaml) {
        return validator.validate(PolicySchemaYaml.parse(yaml)).stream()
                .map(f -> f.path() + " " + f.keyword())
                .toList();
    }

    @Test
    void validDocumentHasNoFailures() {
        assertEquals(List.of(), failures("{n: 2, s: abc, e: 2, l: [a, b], o: x, m: {a: true}, v: 1.5}"));
    }

    @Test
    void eachKeywordReportsItsOwnFailureWithThePath() {
        assertEquals(List.of("n required", "x additionalProperties"), failures("{x: 1}"));
        assertEquals(List.of("n type"), failures("{n: '2'}"));
        assertEquals(List.of("n minimum"), failures("{n: 0}"));
        assertEquals(List.of("n maximum"), failures("{n: 4}"));
        assertEquals(List.of("n type"), failures("{n: 1.5}"));
        assertEquals(List.of("s pattern"), failures("{n: 1, s: ac}"));
        assertEquals(List.of("s minLength"), failures("{n: 1, s: b}"));
        assertEquals(List.of("s maxLength"), failures("{n: 1, s: abcd}"));
        assertEquals(List.of("e enum"), failures("{n: 1, e: '2'}"));
        assertEquals(List.of("l minItems"), failures("{n: 1, l: []}"));
        assertEquals(List.of("l[1] uniqueItems"), failures("{n: 1, l: [a, a]}"));
        assertEquals(List.of("l[0] pattern"), failures("{n: 1, l: [A]}"));
        assertEquals(List.of("m.B propertyNames", "m.B type"), failures("{n: 1, m: {B: 1}}"));
        assertEquals(List.of("v type"), failures("{n: 1, v: true}"));
    }

    @Test
    void oneOfNeedsExactlyOneMatch() {
        assertEquals(List.of(), failures("{n: 1, o: 6}"));
        // 5 is both the const and an integer: two alternatives match.
        assertEquals(List.of("o oneOf"), failures("{n: 1, o: 5}"));
        assertEquals(List.of("o oneOf"), failures("{n: 1, o: [1]}"));
    }

    @Test
    void patternsMatchAnywhereUnlessAnchored() {
        assertEquals(List.of(), failures("{n: 1, s: abc}"));
        assertEquals(List.of(), failures("{n: 1, s: bb}"));
    }

    @Test
    void integersMayBeWrittenWithAZeroFraction() {
        assertEquals(List.of(), failures("{n: 2.0}"));
        assertTrue(PolicySchemaValidator.same(new BigDecimal("2"), new BigDecimal("2.00")));
    }

    @Test
    void unknownKeywordsAreAnErrorNotIgnored() {
        @SuppressWarnings("unchecked")
        PolicySchemaValidator strict =
                new PolicySchemaValidator((Map<String, Object>) PolicySchemaJson.parse("{\"if\": {}}"));
        assertThrows(IllegalStateException.class, () -> strict.validate(Map.of()));
    }

    @Test
    void yamlIsReadWithTheCoreSchemaOfYaml12() {
        Object document = PolicySchemaYaml.parse("{a: yes, b: on, c: True, d: 0x10, e: 2001-12-14, f: ~, g: '1'}");
        assertEquals(
                Map.of(
                        "a", "yes",
                        "b", "on",
                        "c", true,
                        "d", BigDecimal.valueOf(16),
                        "e", "2001-12-14",
                        "f", PolicySchemaJson.NULL,
                        "g", "1"),
                document);
    }

    @Test
    void jsonReaderIsStrict() {
        assertEquals(Map.of("a", List.of(BigDecimal.ONE, "x\n")), PolicySchemaJson.parse("{\"a\": [1, \"x\\n\"]}"));
        for (String bad : List.of("{\"a\": 1,}", "{\"a\": 1, \"a\": 2}", "[1] x", "{'a': 1}", "[01]", "{\"a\": tru}")) {
            assertThrows(IllegalArgumentException.class, () -> PolicySchemaJson.parse(bad), bad);
        }
    }
}

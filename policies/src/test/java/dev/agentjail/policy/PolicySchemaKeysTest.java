package dev.agentjail.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.math.BigDecimal;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

/**
 * The schema and the loader know the same keys: every key the schema declares loads (with the
 * schema's own example value) in an otherwise minimal document, and an unknown key beside them is
 * refused by both, the loader listing exactly the keys the schema declares. Keys the loader does
 * not read yet are listed in {@link PolicySchemaFixtures#PENDING}.
 */
class PolicySchemaKeysTest {
    /** Far from every real key, so that the loader lists the keys it knows instead of suggesting one. */
    private static final String UNKNOWN = "qqqqqqqqqqqq";

    private static final Pattern KNOWN_KEYS = Pattern.compile("expected one of: ([^)]*)\\)");

    /** Only agentjail's built-in presets may carry this section; the loader refuses it anywhere else. */
    private static final String PRESET_ONLY = "preset";

    /**
     * Values used instead of the schema's first example where that example needs what a unit test
     * lacks: {@code claude-code} is a preset that may not be built in yet, so extends names a file
     * the sandbox lays out.
     */
    private static final Map<String, Object> LOADER_VALUES = Map.of("extends", List.of("../team/base.yaml"));

    private static final Map<String, Object> SCHEMA = PolicySchemaFixtures.schema();
    private static final PolicySchemaValidator VALIDATOR = new PolicySchemaValidator(SCHEMA);

    @TempDir
    Path tmp;

    /** A closed object of the schema: its path ({@code ""}, {@code network}, {@code mcp.servers[]}) and schema. */
    record ObjectSchema(String path, Map<String, Object> schema) {
        Map<String, Object> properties() {
            return map(schema.get("properties"));
        }

        /** The path as the loader writes it, with {@code [0]} for the one generated list item. */
        String loaderPath() {
            return path.replace("[]", "[0]");
        }
    }

    @TestFactory
    Stream<DynamicTest> everyDeclaredKeyLoads() {
        List<DynamicTest> tests = new ArrayList<>();
        for (ObjectSchema object : objects()) {
            for (String key : object.properties().keySet()) {
                String path = child(object.path(), key);
                tests.add(DynamicTest.dynamicTest("loads " + path, () -> checkLoads(object, key, path)));
            }
        }
        return tests.stream();
    }

    @TestFactory
    Stream<DynamicTest> unknownKeysAreRefusedByBothWithTheSameKeySet() {
        return objects().stream()
                .filter(object -> !presetOnly(object.path()))
                .filter(object -> !PolicySchemaFixtures.pending(object.path()))
                .map(object -> DynamicTest.dynamicTest(
                        "unknown key in " + (object.path().isEmpty() ? "the top level" : object.path()),
                        () -> checkUnknownKey(object)));
    }

    @Test
    void pendingKeysAreDeclaredByTheSchema() {
        Set<String> declared = new TreeSet<>();
        for (ObjectSchema object : objects()) {
            object.properties().keySet().forEach(key -> declared.add(child(object.path(), key)));
        }
        for (String pending : PolicySchemaFixtures.PENDING) {
            assertTrue(declared.contains(pending), pending + " is pending but the schema does not declare it");
        }
    }

    @Test
    void lockedNamesExactlyTheLoadersSectionsAndKeys() throws IOException {
        List<Object> names =
                list(map(map(map(SCHEMA.get("properties")).get("locked")).get("items"))
                        .get("enum"));
        Set<String> expected = new TreeSet<>();
        PolicyKeys.SECTIONS.forEach((section, keys) -> {
            expected.add(section);
            keys.forEach(key -> expected.add(section + "." + key));
        });
        Set<String> declared = new TreeSet<>();
        names.forEach(name -> declared.add((String) name));
        Set<String> missing = new TreeSet<>(expected);
        missing.removeAll(declared);
        assertEquals(Set.of(), missing, "the loader can lock these; locked's enum lacks them");
        PolicySchemaFixtures.Sandbox sandbox = PolicySchemaFixtures.sandbox(tmp);
        for (String name : declared) {
            String yaml = "version: 1\nlocked: [" + name + "]\n";
            if (PolicySchemaFixtures.pending(name)) {
                assertThrows(
                        PolicyException.class,
                        () -> sandbox.load(yaml),
                        name + " can be locked now: remove it from PolicySchemaFixtures.PENDING");
            } else {
                try {
                    sandbox.load(yaml);
                } catch (PolicyException e) {
                    fail("locked: [" + name + "] is valid by the schema but the loader refuses it: " + e.getMessage());
                }
            }
        }
    }

    private void checkLoads(ObjectSchema object, String key, String path) throws IOException {
        Map<String, Object> document =
                document(object, key, exampleOf(path, object.properties().get(key)));
        assertSchemaValid(path, document);
        if (presetOnly(path)) {
            return; // The presets' own tests load them.
        }
        PolicySchemaFixtures.Sandbox sandbox = PolicySchemaFixtures.sandbox(tmp);
        String json = PolicySchemaFixtures.toJson(document);
        if (PolicySchemaFixtures.PENDING.contains(path)) {
            try {
                sandbox.load(json);
                fail(path + " loads now: remove it from PolicySchemaFixtures.PENDING");
            } catch (PolicyException expected) {
                return;
            }
        }
        if (PolicySchemaFixtures.pending(path)) {
            return;
        }
        try {
            sandbox.load(json);
        } catch (PolicyException e) {
            fail(path + " is declared by the schema, but the loader refuses " + json + ": " + e.getMessage());
        }
    }

    private void checkUnknownKey(ObjectSchema object) throws IOException {
        Map<String, Object> document = document(object, UNKNOWN, Boolean.TRUE);
        String key = child(object.loaderPath(), UNKNOWN);
        List<PolicySchemaValidator.Failure> failures = VALIDATOR.validate(document);
        assertTrue(
                failures.stream()
                        .anyMatch(f -> f.path().equals(key) && f.keyword().equals("additionalProperties")),
                "the schema does not refuse " + key + ": " + failures);

        PolicySchemaFixtures.Sandbox sandbox = PolicySchemaFixtures.sandbox(tmp);
        PolicyException e =
                assertThrows(PolicyException.class, () -> sandbox.load(PolicySchemaFixtures.toJson(document)));
        assertEquals(key, e.key(), e.getMessage());
        Matcher listed = KNOWN_KEYS.matcher(e.getMessage());
        assertTrue(listed.find(), "the loader's message lists no keys: " + e.getMessage());
        Set<String> loaderKeys = new TreeSet<>(Arrays.asList(listed.group(1).split(", ")));
        Set<String> schemaKeys = new TreeSet<>(object.properties().keySet());

        Set<String> undeclared = new TreeSet<>(loaderKeys);
        undeclared.removeAll(schemaKeys);
        assertEquals(
                Set.of(), undeclared, "the loader reads these keys of " + where(object) + "; the schema lacks them");
        Set<String> unread = schemaKeys.stream()
                .filter(k -> !loaderKeys.contains(k))
                .filter(k -> !PolicySchemaFixtures.pending(child(object.path(), k)))
                .filter(k -> !presetOnly(child(object.path(), k)))
                .collect(Collectors.toCollection(TreeSet::new));
        assertEquals(
                Set.of(),
                unread,
                "the schema declares these keys of " + where(object) + "; the loader refuses them (pending?)");
    }

    /** Every closed object of the schema reachable from the top through properties and list items. */
    static List<ObjectSchema> objects() {
        List<ObjectSchema> objects = new ArrayList<>();
        collect("", SCHEMA, objects);
        return objects;
    }

    private static void collect(String path, Map<String, Object> schema, List<ObjectSchema> out) {
        if (!schema.containsKey("properties")) {
            return;
        }
        out.add(new ObjectSchema(path, schema));
        map(schema.get("properties")).forEach((key, property) -> {
            Map<String, Object> resolved = resolved(property);
            if (resolved.containsKey("properties")) {
                collect(child(path, key), resolved, out);
            } else if (resolved.get("items") != null
                    && resolved(resolved.get("items")).containsKey("properties")) {
                collect(child(path, key) + "[]", resolved(resolved.get("items")), out);
            }
        });
    }

    /**
     * A document that is valid by the schema, holding the object at {@code object.path()} with its
     * required keys, {@code key: value}, and whatever its {@code oneOf} needs besides (the first
     * alternative that fits); every object above it holds only its own required keys.
     */
    private static Map<String, Object> document(ObjectSchema object, String key, Object value) {
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("version", BigDecimal.ONE);
        List<Map<String, Object>> maps = new ArrayList<>(List.of(root));
        List<Map<String, Object>> schemas = new ArrayList<>(List.of(SCHEMA));
        Map<String, Object> current = root;
        Map<String, Object> currentSchema = SCHEMA;
        String path = "";
        if (!object.path().isEmpty()) {
            for (String segment : object.path().split("\\.")) {
                boolean item = segment.endsWith("[]");
                String name = item ? segment.substring(0, segment.length() - 2) : segment;
                path = child(path, name);
                Map<String, Object> propertySchema =
                        resolved(map(currentSchema.get("properties")).get(name));
                Map<String, Object> childSchema = item ? resolved(propertySchema.get("items")) : propertySchema;
                Map<String, Object> childMap = required(path + (item ? "[]" : ""), childSchema);
                current.put(name, item ? new ArrayList<>(List.of(childMap)) : childMap);
                maps.add(childMap);
                schemas.add(childSchema);
                current = childMap;
                currentSchema = childSchema;
                if (item) {
                    path += "[]";
                }
            }
        }
        current.put(key, value);
        for (int i = maps.size() - 1; i >= 0; i--) {
            satisfyOneOf(pathOf(object.path(), i), maps.get(i), schemas.get(i));
        }
        return root;
    }

    /** The path of the {@code depth}-th object on the way to {@code objectPath} (0 is the top level). */
    private static String pathOf(String objectPath, int depth) {
        if (depth == 0) {
            return "";
        }
        return String.join(".", Arrays.asList(objectPath.split("\\.")).subList(0, depth));
    }

    private static Map<String, Object> required(String path, Map<String, Object> schema) {
        Map<String, Object> map = new LinkedHashMap<>();
        for (Object name : list(schema.getOrDefault("required", List.of()))) {
            String key = (String) name;
            map.put(
                    key,
                    exampleOf(child(path, key), map(schema.get("properties")).get(key)));
        }
        return map;
    }

    private static void satisfyOneOf(String path, Map<String, Object> map, Map<String, Object> schema) {
        if (!schema.containsKey("oneOf") || oneOfHolds(map, schema)) {
            return;
        }
        for (Object branch : list(schema.get("oneOf"))) {
            Map<String, Object> candidate = new LinkedHashMap<>(map);
            for (Object name : list(map(branch).getOrDefault("required", List.of()))) {
                String key = (String) name;
                candidate.putIfAbsent(
                        key,
                        exampleOf(
                                child(path, key), map(schema.get("properties")).get(key)));
            }
            if (oneOfHolds(candidate, schema)) {
                map.clear();
                map.putAll(candidate);
                return;
            }
        }
        throw new IllegalStateException("no alternative of " + path + "'s oneOf fits " + map);
    }

    private static boolean oneOfHolds(Map<String, Object> map, Map<String, Object> schema) {
        return VALIDATOR.validate(schema, map).stream()
                .noneMatch(f -> f.path().isEmpty() && f.keyword().equals("oneOf"));
    }

    /** The property's first example (its own, else its definition's), unless {@link #LOADER_VALUES} has one. */
    private static Object exampleOf(String path, Object property) {
        if (LOADER_VALUES.containsKey(path)) {
            return PolicySchemaYaml.plain(LOADER_VALUES.get(path));
        }
        Map<String, Object> schema = map(property);
        Object examples = schema.containsKey("examples")
                ? schema.get("examples")
                : resolved(schema).get("examples");
        if (!(examples instanceof List<?> list) || list.isEmpty()) {
            throw new IllegalStateException(path + " has no example");
        }
        return list.get(0);
    }

    private static void assertSchemaValid(String what, Map<String, Object> document) {
        List<PolicySchemaValidator.Failure> failures = VALIDATOR.validate(document);
        assertEquals(List.of(), failures, "generated document for " + what + " " + document);
    }

    private static Map<String, Object> resolved(Object schema) {
        Map<String, Object> map = map(schema);
        return map.get("$ref") instanceof String ref ? map(VALIDATOR.resolve(ref)) : map;
    }

    private static boolean presetOnly(String path) {
        return path.equals(PRESET_ONLY) || path.startsWith(PRESET_ONLY + ".");
    }

    private static String where(ObjectSchema object) {
        return object.path().isEmpty() ? "the top level" : object.path();
    }

    private static String child(String path, String key) {
        return path.isEmpty() ? key : path + "." + key;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(Object value) {
        return (Map<String, Object>) value;
    }

    @SuppressWarnings("unchecked")
    private static List<Object> list(Object value) {
        return (List<Object>) value;
    }
}

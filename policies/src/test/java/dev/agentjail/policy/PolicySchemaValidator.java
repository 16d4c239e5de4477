package dev.agentjail.policy;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Validates plain values (as {@link PolicySchemaJson} and {@link PolicySchemaYaml} make them)
 * against the subset of JSON Schema 2020-12 that the policy schema uses. A schema keyword outside
 * {@link #KEYWORDS} is an {@link IllegalStateException}, never silently ignored.
 */
final class PolicySchemaValidator {
    /** Keywords that constrain the instance; each is implemented below. */
    static final Set<String> ASSERTIONS = Set.of(
            "$ref",
            "type",
            "properties",
            "additionalProperties",
            "propertyNames",
            "required",
            "items",
            "minItems",
            "uniqueItems",
            "enum",
            "const",
            "pattern",
            "minLength",
            "maxLength",
            "minimum",
            "maximum",
            "oneOf");

    /**
     * Keywords that only describe, identify or hold definitions; they never change a verdict. {@code
     * patternErrorMessage} is the editors' extension (VS Code, yaml-language-server): the message
     * they show instead of the regular expression.
     */
    static final Set<String> ANNOTATIONS = Set.of(
            "$schema",
            "$id",
            "$comment",
            "$defs",
            "title",
            "description",
            "examples",
            "default",
            "patternErrorMessage");

    static final Set<String> KEYWORDS =
            Stream.concat(ASSERTIONS.stream(), ANNOTATIONS.stream()).collect(Collectors.toUnmodifiableSet());

    /** One failed assertion: where in the instance (dotted, like the loader's keys), which keyword, why. */
    record Failure(String path, String keyword, String message) {
        @Override
        public String toString() {
            return (path.isEmpty() ? "(root)" : path) + ": " + message + " [" + keyword + "]";
        }
    }

    private final Map<String, Object> root;
    private final Map<String, Pattern> patterns = new HashMap<>();

    PolicySchemaValidator(Map<String, Object> root) {
        this.root = root;
    }

    /** The failures of {@code instance} against the whole schema; empty when it is valid. */
    List<Failure> validate(Object instance) {
        return validate(root, instance);
    }

    /** The failures of {@code instance} against one (sub)schema of this schema. */
    List<Failure> validate(Object schema, Object instance) {
        List<Failure> failures = new ArrayList<>();
        check(schema, instance, "", failures);
        return failures;
    }

    /** The schema a local reference ({@code #/$defs/name}, any JSON pointer into this schema) names. */
    Object resolve(String ref) {
        if (!ref.startsWith("#")) {
            throw new IllegalStateException("only local references are supported: " + ref);
        }
        Object node = root;
        String pointer = ref.substring(1);
        if (pointer.isEmpty()) {
            return node;
        }
        if (!pointer.startsWith("/")) {
            throw new IllegalStateException("not a json pointer: " + ref);
        }
        for (String token : pointer.substring(1).split("/", -1)) {
            String name = token.replace("~1", "/").replace("~0", "~");
            if (!(node instanceof Map<?, ?> map) || !map.containsKey(name)) {
                throw new IllegalStateException("unresolvable reference: " + ref);
            }
            node = map.get(name);
        }
        return node;
    }

    @SuppressWarnings("unchecked")
    private void check(Object schemaNode, Object value, String path, List<Failure> out) {
        if (schemaNode instanceof Boolean allowed) {
            if (!allowed) {
                out.add(new Failure(path, "false", "not allowed here"));
            }
            return;
        }
        if (!(schemaNode instanceof Map<?, ?>)) {
            throw new IllegalStateException("a schema must be an object or a boolean at " + path);
        }
        Map<String, Object> schema = (Map<String, Object>) schemaNode;
        for (String keyword : schema.keySet()) {
            if (!KEYWORDS.contains(keyword)) {
                throw new IllegalStateException("unsupported keyword '" + keyword + "' at " + path);
            }
        }
        if (schema.get("$ref") instanceof String ref) {
            check(resolve(ref), value, path, out);
        }
        if (schema.containsKey("type")) {
            checkType(schema.get("type"), value, path, out);
        }
        if (schema.containsKey("enum")) {
            List<Object> options = (List<Object>) schema.get("enum");
            if (options.stream().noneMatch(option -> same(option, value))) {
                out.add(new Failure(path, "enum", show(value) + " is not one of " + options));
            }
        }
        if (schema.containsKey("const") && !same(schema.get("const"), value)) {
            out.add(new Failure(path, "const", "expected " + show(schema.get("const")) + ", got " + show(value)));
        }
        if (value instanceof String text) {
            checkString(schema, text, path, out);
        }
        if (value instanceof BigDecimal number) {
            checkNumber(schema, number, path, out);
        }
        if (value instanceof List<?> list) {
            checkArray(schema, (List<Object>) list, path, out);
        }
        if (value instanceof Map<?, ?> map) {
            checkObject(schema, (Map<String, Object>) map, path, out);
        }
        if (schema.containsKey("oneOf")) {
            List<Object> branches = (List<Object>) schema.get("oneOf");
            long matching = branches.stream()
                    .filter(branch -> validate(branch, value).isEmpty())
                    .count();
            if (matching != 1) {
                out.add(new Failure(
                        path,
                        "oneOf",
                        "expected exactly one of " + branches.size() + " alternatives to match, " + matching + " did"));
            }
        }
    }

    private void checkType(Object type, Object value, String path, List<Failure> out) {
        List<?> types = type instanceof List<?> list ? list : List.of(type);
        if (types.stream().noneMatch(t -> hasType(String.valueOf(t), value))) {
            out.add(new Failure(path, "type", "expected " + join(types) + ", got " + typeOf(value)));
        }
    }

    private void checkString(Map<String, Object> schema, String text, String path, List<Failure> out) {
        int length = text.codePointCount(0, text.length());
        if (schema.get("minLength") instanceof BigDecimal min && length < min.intValueExact()) {
            out.add(new Failure(path, "minLength", "shorter than " + min + " characters"));
        }
        if (schema.get("maxLength") instanceof BigDecimal max && length > max.intValueExact()) {
            out.add(new Failure(path, "maxLength", "longer than " + max + " characters"));
        }
        if (schema.get("pattern") instanceof String regex) {
            // JSON Schema patterns are not anchored: a match anywhere counts.
            Pattern pattern = patterns.computeIfAbsent(regex, Pattern::compile);
            if (!pattern.matcher(text).find()) {
                out.add(new Failure(path, "pattern", show(text) + " does not match " + regex));
            }
        }
    }

    private static void checkNumber(Map<String, Object> schema, BigDecimal number, String path, List<Failure> out) {
        if (schema.get("minimum") instanceof BigDecimal min && number.compareTo(min) < 0) {
            out.add(new Failure(path, "minimum", number + " is less than " + min));
        }
        if (schema.get("maximum") instanceof BigDecimal max && number.compareTo(max) > 0) {
            out.add(new Failure(path, "maximum", number + " is greater than " + max));
        }
    }

    private void checkArray(Map<String, Object> schema, List<Object> list, String path, List<Failure> out) {
        if (schema.get("minItems") instanceof BigDecimal min && list.size() < min.intValueExact()) {
            out.add(new Failure(path, "minItems", "fewer than " + min + " items"));
        }
        if (Boolean.TRUE.equals(schema.get("uniqueItems"))) {
            for (int i = 0; i < list.size(); i++) {
                for (int j = 0; j < i; j++) {
                    if (same(list.get(i), list.get(j))) {
                        out.add(new Failure(
                                path + "[" + i + "]", "uniqueItems", show(list.get(i)) + " is already at [" + j + "]"));
                    }
                }
            }
        }
        if (schema.containsKey("items")) {
            for (int i = 0; i < list.size(); i++) {
                check(schema.get("items"), list.get(i), path + "[" + i + "]", out);
            }
        }
    }

    @SuppressWarnings("unchecked")
    private void checkObject(Map<String, Object> schema, Map<String, Object> map, String path, List<Failure> out) {
        Map<String, Object> properties = (Map<String, Object>) schema.getOrDefault("properties", Map.of());
        if (schema.containsKey("required")) {
            for (Object name : (List<Object>) schema.get("required")) {
                if (!map.containsKey((String) name)) {
                    out.add(new Failure(child(path, (String) name), "required", "missing required key"));
                }
            }
        }
        for (Map.Entry<String, Object> entry : map.entrySet()) {
            String key = entry.getKey();
            String keyPath = child(path, key);
            if (schema.containsKey("propertyNames")) {
                for (Failure failure : validate(schema.get("propertyNames"), key)) {
                    out.add(new Failure(keyPath, "propertyNames", "invalid key: " + failure.message()));
                }
            }
            if (properties.containsKey(key)) {
                check(properties.get(key), entry.getValue(), keyPath, out);
            } else if (schema.containsKey("additionalProperties")) {
                Object additional = schema.get("additionalProperties");
                if (Boolean.FALSE.equals(additional)) {
                    out.add(new Failure(
                            keyPath,
                            "additionalProperties",
                            "unknown key " + show(key) + " (expected one of: " + String.join(", ", properties.keySet())
                                    + ")"));
                } else {
                    check(additional, entry.getValue(), keyPath, out);
                }
            }
        }
    }

    private static String child(String path, String key) {
        return path.isEmpty() ? key : path + "." + key;
    }

    private static boolean hasType(String type, Object value) {
        return switch (type) {
            case "object" -> value instanceof Map;
            case "array" -> value instanceof List;
            case "string" -> value instanceof String;
            case "boolean" -> value instanceof Boolean;
            case "null" -> value == PolicySchemaJson.NULL;
            case "number" -> value instanceof BigDecimal;
            case "integer" ->
                value instanceof BigDecimal n && n.stripTrailingZeros().scale() <= 0;
            default -> throw new IllegalStateException("unknown type " + type);
        };
    }

    private static String typeOf(Object value) {
        if (value instanceof Map) {
            return "an object";
        }
        if (value instanceof List) {
            return "an array";
        }
        if (value instanceof BigDecimal || value instanceof Boolean || value == PolicySchemaJson.NULL) {
            return String.valueOf(value);
        }
        return "the string " + show(value);
    }

    private static String join(List<?> types) {
        return types.stream().map(String::valueOf).collect(Collectors.joining(" or "));
    }

    private static String show(Object value) {
        return value instanceof String s ? "'" + s + "'" : String.valueOf(value);
    }

    /** JSON equality: numbers by value (1 equals 1.0), objects regardless of member order. */
    static boolean same(Object a, Object b) {
        if (a instanceof BigDecimal x && b instanceof BigDecimal y) {
            return x.compareTo(y) == 0;
        }
        if (a instanceof List<?> x && b instanceof List<?> y) {
            if (x.size() != y.size()) {
                return false;
            }
            for (int i = 0; i < x.size(); i++) {
                if (!same(x.get(i), y.get(i))) {
                    return false;
                }
            }
            return true;
        }
        if (a instanceof Map<?, ?> x && b instanceof Map<?, ?> y) {
            if (!x.keySet().equals(y.keySet())) {
                return false;
            }
            return x.keySet().stream().allMatch(k -> same(x.get(k), y.get(k)));
        }
        return a.equals(b);
    }
}

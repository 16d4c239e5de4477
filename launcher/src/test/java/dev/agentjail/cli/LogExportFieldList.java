package dev.agentjail.cli;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.net.InetAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * A schema's field list from the test resources (ecs-fields.txt, ocsf-http-activity-fields.txt) and the check of an
 * exported document against it: only listed fields, each of its listed type and values, required ones present,
 * at-least-one constraints met. Written for these tests, independent of the exporter's own code.
 */
final class LogExportFieldList {
    private static final Pattern IPV4 =
            Pattern.compile("((25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)");
    private static final Set<String> STRING_TYPES =
            Set.of("keyword", "wildcard", "match_only_text", "string_t", "hostname_t");

    private final Map<String, Field> fields = new LinkedHashMap<>();
    private final List<List<String>> atLeastOne = new ArrayList<>();

    /** One listed field: its type ({@code keyword[]} for an array) and flags. */
    record Field(String name, String type, boolean required, Set<String> values) {
        boolean array() {
            return type.endsWith("[]");
        }

        String elementType() {
            return array() ? type.substring(0, type.length() - 2) : type;
        }
    }

    static LogExportFieldList load(String resource) {
        LogExportFieldList list = new LogExportFieldList();
        try {
            for (String raw : Files.readAllLines(LogReaderTestCli.resource(resource))) {
                String line = raw.strip();
                if (line.isEmpty() || line.startsWith("#")) {
                    continue;
                }
                String[] parts = line.split("\\s+");
                if (parts[0].equals("@at_least_one")) {
                    list.atLeastOne.add(List.of(parts).subList(1, parts.length));
                    continue;
                }
                boolean required = false;
                Set<String> values = null;
                for (int i = 2; i < parts.length; i++) {
                    if (parts[i].equals("required")) {
                        required = true;
                    } else if (parts[i].startsWith("values=")) {
                        values = Set.of(parts[i].substring("values=".length()).split("\\|"));
                    } else {
                        throw new IllegalStateException(resource + ": unknown flag " + parts[i]);
                    }
                }
                list.fields.put(parts[0], new Field(parts[0], parts[1], required, values));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return list;
    }

    Map<String, Field> fields() {
        return fields;
    }

    /** Everything wrong with {@code doc}; empty when it conforms. */
    List<String> problems(Map<String, Object> doc) {
        List<String> problems = new ArrayList<>();
        checkObject("", doc, problems);
        for (Field f : fields.values()) {
            if (f.required() && parentPresent(doc, f.name()) && lookup(doc, f.name()) == null) {
                problems.add("missing required " + f.name());
            }
        }
        for (List<String> group : atLeastOne) {
            if (parentPresent(doc, group.get(0)) && group.stream().allMatch(p -> lookup(doc, p) == null)) {
                problems.add("none of " + group);
            }
        }
        return problems;
    }

    private void checkObject(String prefix, Map<String, Object> object, List<String> problems) {
        for (Map.Entry<String, Object> e : object.entrySet()) {
            String path = prefix + e.getKey();
            Field f = fields.get(path);
            Object value = e.getValue();
            if (f == null) {
                boolean impliedObject =
                        value instanceof Map && fields.keySet().stream().anyMatch(k -> k.startsWith(path + "."));
                if (impliedObject) {
                    @SuppressWarnings("unchecked")
                    Map<String, Object> child = (Map<String, Object>) value;
                    checkObject(path + ".", child, problems);
                } else {
                    problems.add("unknown field " + path);
                }
                continue;
            }
            if (f.array()) {
                if (!(value instanceof List<?> list)) {
                    problems.add(path + ": expected an array of " + f.elementType() + ", found " + value);
                    continue;
                }
                for (Object element : list) {
                    checkValue(f, path, element, problems);
                }
            } else {
                checkValue(f, path, value, problems);
            }
        }
    }

    private void checkValue(Field f, String path, Object value, List<String> problems) {
        String type = f.elementType();
        if (type.equals("object")) {
            if (value instanceof Map<?, ?> m) {
                @SuppressWarnings("unchecked")
                Map<String, Object> child = (Map<String, Object>) m;
                checkObject(path + ".", child, problems);
                // Required members of the document's objects are checked from the top; those of array elements here.
                for (Field inner : fields.values()) {
                    if (f.array()
                            && inner.required()
                            && inner.name().startsWith(path + ".")
                            && inner.name().indexOf('.', path.length() + 1) < 0
                            && !child.containsKey(inner.name().substring(path.length() + 1))) {
                        problems.add("missing required " + inner.name());
                    }
                }
            } else {
                problems.add(path + ": expected an object, found " + value);
            }
            return;
        }
        if (!typeMatches(type, value)) {
            problems.add(path + ": expected " + type + ", found " + value);
            return;
        }
        if (f.values() != null && !f.values().contains(String.valueOf(value))) {
            problems.add(path + ": " + value + " is not one of " + f.values());
        }
    }

    private static boolean typeMatches(String type, Object value) {
        if (STRING_TYPES.contains(type)) {
            return value instanceof String;
        }
        return switch (type) {
            case "long", "long_t", "timestamp_t" -> value instanceof Long;
            case "integer_t" -> value instanceof Long l && l >= Integer.MIN_VALUE && l <= Integer.MAX_VALUE;
            case "port_t" -> value instanceof Long l && l >= 0 && l <= 65_535;
            case "float_t", "double" -> value instanceof Long || value instanceof BigDecimal;
            case "boolean", "boolean_t" -> value instanceof Boolean;
            case "date" -> value instanceof String s && parsesAsInstant(s);
            case "ip", "ip_t" -> value instanceof String s && isIp(s);
            case "url_t" -> value instanceof String s && isUrl(s);
            default -> throw new IllegalStateException("no check for type " + type);
        };
    }

    private static boolean parsesAsInstant(String s) {
        try {
            Instant.parse(s);
            return true;
        } catch (DateTimeParseException e) {
            return false;
        }
    }

    private static boolean isIp(String s) {
        if (IPV4.matcher(s).matches()) {
            return true;
        }
        // With a colon and only address characters, InetAddress parses an IPv6 literal and never resolves a name.
        if (s.indexOf(':') < 0 || !s.matches("[0-9A-Fa-f:][0-9A-Fa-f:.]*")) {
            return false;
        }
        try {
            InetAddress.getByName(s);
            return true;
        } catch (UnknownHostException e) {
            return false;
        }
    }

    private static boolean isUrl(String s) {
        try {
            URI uri = new URI(s);
            return uri.getScheme() != null && uri.getHost() != null;
        } catch (URISyntaxException e) {
            return false;
        }
    }

    private static boolean parentPresent(Map<String, Object> doc, String path) {
        int dot = path.lastIndexOf('.');
        return dot < 0 || lookup(doc, path.substring(0, dot)) instanceof Map;
    }

    /** The value at a dotted path, or {@code null}; a path through an array is never present. */
    static Object lookup(Map<String, Object> doc, String path) {
        Object node = doc;
        for (String part : path.split("\\.")) {
            if (!(node instanceof Map<?, ?> m)) {
                return null;
            }
            node = m.get(part);
        }
        return node;
    }
}

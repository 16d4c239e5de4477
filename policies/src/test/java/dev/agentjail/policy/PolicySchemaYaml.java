package dev.agentjail.policy;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.DumperOptions;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;
import org.yaml.snakeyaml.nodes.Tag;
import org.yaml.snakeyaml.representer.Representer;
import org.yaml.snakeyaml.resolver.Resolver;

/**
 * Turns policy YAML into the plain values a JSON Schema talks about (maps with string keys, lists,
 * strings, {@link BigDecimal} numbers, booleans, {@link PolicySchemaJson#NULL}), reading scalars the
 * way editors do: YAML 1.2's core schema, so {@code yes} and {@code on} stay strings (as the loader
 * insists) and dates are not dates.
 */
final class PolicySchemaYaml {
    private PolicySchemaYaml() {}

    static Object parse(String yaml) {
        return plain(reader().load(yaml));
    }

    /** Every document of a stream ({@code ---} between them), as examples with several files show them. */
    static List<Object> parseAll(String yaml) {
        List<Object> documents = new ArrayList<>();
        reader().loadAll(yaml).forEach(document -> documents.add(plain(document)));
        return documents;
    }

    private static Yaml reader() {
        LoaderOptions options = new LoaderOptions();
        options.setAllowDuplicateKeys(false);
        DumperOptions dumper = new DumperOptions();
        return new Yaml(new SafeConstructor(options), new Representer(dumper), dumper, options, new Core());
    }

    /** Makes numbers {@link BigDecimal}, keys strings, and null the JSON marker. */
    static Object plain(Object value) {
        if (value == null) {
            return PolicySchemaJson.NULL;
        }
        if (value instanceof Map<?, ?> map) {
            Map<String, Object> out = new LinkedHashMap<>();
            map.forEach((k, v) -> out.put(String.valueOf(k), plain(v)));
            return out;
        }
        if (value instanceof List<?> list) {
            List<Object> out = new ArrayList<>();
            list.forEach(v -> out.add(plain(v)));
            return out;
        }
        if (value instanceof Integer || value instanceof Long) {
            return BigDecimal.valueOf(((Number) value).longValue());
        }
        if (value instanceof BigInteger big) {
            return new BigDecimal(big);
        }
        if (value instanceof Double d) {
            // .inf and .nan have no JSON form; a schema sees them as strings it will refuse.
            return d.isInfinite() || d.isNaN() ? String.valueOf(d) : BigDecimal.valueOf(d);
        }
        return value;
    }

    /** The YAML 1.2 core schema's implicit types: null, true/false, decimal and hex ints, floats. */
    private static final class Core extends Resolver {
        @Override
        protected void addImplicitResolvers() {
            addImplicitResolver(Tag.BOOL, Pattern.compile("^(?:true|True|TRUE|false|False|FALSE)$"), "tTfF");
            addImplicitResolver(
                    Tag.INT, Pattern.compile("^(?:[-+]?(?:0|[1-9][0-9]*)|0x[0-9a-fA-F]+)$"), "-+0123456789");
            addImplicitResolver(
                    Tag.FLOAT,
                    Pattern.compile("^(?:[-+]?(?:\\.[0-9]+|[0-9]+(?:\\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
                            + "|[-+]?\\.(?:inf|Inf|INF)|\\.(?:nan|NaN|NAN))$"),
                    "-+0123456789.");
            addImplicitResolver(Tag.NULL, Pattern.compile("^(?:~|null|Null|NULL|)$"), "~nN\0");
            addImplicitResolver(Tag.NULL, EMPTY, null);
        }
    }
}

package dev.agentjail.policy;

import java.io.IOException;
import java.io.InputStream;
import java.io.StringReader;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.error.YAMLException;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;
import org.yaml.snakeyaml.nodes.Tag;

/**
 * The built-in agent presets, read from the resources {@code dev/agentjail/policy/presets/NAME.yaml}.
 * Each is an ordinary policy plus a top-level {@code preset} mapping ({@code name}, {@code
 * description}, {@code binaries}, {@code install}) that this class reads strictly. A broken preset resource is a bug
 * in this build, not bad user input, so it throws {@link IllegalStateException}; the tests load every
 * preset.
 */
public final class Presets {
    /** The preset files, by name; the tests check that this list and the resource directory agree. */
    static final List<String> NAMES =
            List.of("aider", "claude-code", "codex", "crush", "gemini-cli", "goose", "hermes", "opencode", "pi");

    private static final String RESOURCE_DIR = "presets/";

    private static final Set<String> METADATA_KEYS = Set.of("name", "description", "binaries", "install");

    /** The metadata every preset must have; {@code install} is optional (PresetsTest requires it of built-ins). */
    private static final Set<String> REQUIRED_KEYS = Set.of("name", "description", "binaries");

    /** Presets are a few kilobytes; the bounds only keep a mistake from costing much. */
    private static final int MAX_BYTES = 1 << 20;

    private static final int MAX_NESTING = 20;

    private Presets() {}

    /** Every preset, sorted by name. */
    public static List<Preset> all() {
        List<Preset> presets = new ArrayList<>();
        for (String name : names()) {
            presets.add(read(name));
        }
        return List.copyOf(presets);
    }

    /** The preset called {@code name}, if there is one. */
    public static Optional<Preset> named(String name) {
        return NAMES.contains(name) ? Optional.of(read(name)) : Optional.empty();
    }

    /**
     * The preset whose {@code binaries} include the file name of {@code program} (argv[0], a path or a
     * bare name): {@code /usr/local/bin/claude} selects {@code claude-code}.
     */
    public static Optional<Preset> forProgram(String program) {
        if (program == null || Preset.basename(program).isEmpty()) {
            return Optional.empty();
        }
        return all().stream().filter(p -> p.runs(program)).findFirst();
    }

    /** The names of all presets, sorted. */
    public static SortedSet<String> names() {
        return Collections.unmodifiableSortedSet(new TreeSet<>(NAMES));
    }

    private static Preset read(String name) {
        String resource = RESOURCE_DIR + name + ".yaml";
        byte[] bytes;
        try (InputStream in = Presets.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("built-in preset " + name + " is missing: no resource " + resource);
            }
            bytes = in.readNBytes(MAX_BYTES + 1);
        } catch (IOException e) {
            throw new IllegalStateException("cannot read the built-in preset " + resource, e);
        }
        if (bytes.length > MAX_BYTES) {
            throw new IllegalStateException("built-in preset " + resource + " is larger than 1 MiB");
        }
        String yaml;
        try {
            yaml = StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes))
                    .toString();
        } catch (CharacterCodingException e) {
            throw new IllegalStateException("built-in preset " + resource + " is not valid UTF-8", e);
        }
        return parse(name, yaml);
    }

    /**
     * Reads the {@code preset} mapping of {@code yaml}, which must declare {@code expectedName}; the rest
     * of the document is left to {@link PolicyLoader}, which checks it when the preset is used.
     */
    static Preset parse(String expectedName, String yaml) {
        String where = RESOURCE_DIR + expectedName + ".yaml";
        Node root;
        try {
            root = new Yaml(loaderOptions()).compose(new StringReader(yaml));
        } catch (YAMLException e) {
            throw new IllegalStateException(
                    where + ": invalid yaml: " + Quoting.shorten(String.valueOf(e.getMessage())));
        }
        if (!(root instanceof MappingNode document)) {
            throw new IllegalStateException(where + ": expected a mapping at the top level");
        }
        Node metadata = entries(where, document, null).get("preset");
        if (metadata == null) {
            throw problem(where, root, "no top-level 'preset' mapping");
        }
        if (!(metadata instanceof MappingNode mapping)) {
            throw problem(where, metadata, "'preset' must be a mapping");
        }
        Map<String, Node> fields = entries(where, mapping, METADATA_KEYS);
        for (String key : REQUIRED_KEYS) {
            if (!fields.containsKey(key)) {
                throw problem(where, metadata, "preset." + key + " is missing");
            }
        }
        String name = string(where, fields.get("name"), "preset.name");
        if (!name.equals(expectedName)) {
            throw problem(
                    where,
                    fields.get("name"),
                    "preset.name is " + Quoting.quote(name) + " but the file is named " + expectedName);
        }
        String description = string(where, fields.get("description"), "preset.description");
        Node binariesNode = fields.get("binaries");
        if (!(binariesNode instanceof SequenceNode sequence)) {
            throw problem(where, binariesNode, "preset.binaries must be a list");
        }
        List<String> binaries = new ArrayList<>();
        for (Node item : sequence.getValue()) {
            binaries.add(string(where, item, "preset.binaries"));
        }
        String install = fields.containsKey("install") ? string(where, fields.get("install"), "preset.install") : "";
        try {
            return new Preset(name, description, binaries, install, yaml);
        } catch (IllegalArgumentException e) {
            throw problem(where, metadata, e.getMessage());
        }
    }

    private static Map<String, Node> entries(String where, MappingNode mapping, Set<String> allowed) {
        Map<String, Node> entries = new LinkedHashMap<>();
        for (NodeTuple tuple : mapping.getValue()) {
            Node keyNode = tuple.getKeyNode();
            if (!(keyNode instanceof ScalarNode key) || !key.getTag().equals(Tag.STR)) {
                throw problem(where, keyNode, "keys must be strings");
            }
            if (allowed != null && !allowed.contains(key.getValue())) {
                throw problem(
                        where,
                        keyNode,
                        "unknown key " + Quoting.quote(key.getValue()) + " (expected: "
                                + String.join(", ", new TreeSet<>(allowed)) + ")");
            }
            if (entries.put(key.getValue(), tuple.getValueNode()) != null) {
                throw problem(where, keyNode, "duplicate key " + Quoting.quote(key.getValue()));
            }
        }
        return entries;
    }

    private static String string(String where, Node node, String what) {
        if (!(node instanceof ScalarNode scalar) || !scalar.getTag().equals(Tag.STR) || node.getAnchor() != null) {
            throw problem(where, node, what + " must be a string");
        }
        return scalar.getValue();
    }

    private static IllegalStateException problem(String where, Node node, String problem) {
        return new IllegalStateException(
                where + ":" + (node.getStartMark().getLine() + 1) + ": broken built-in preset: " + problem);
    }

    /** The same bounds as policy files: no aliases to speak of, small documents, shallow nesting. */
    private static LoaderOptions loaderOptions() {
        LoaderOptions options = new LoaderOptions();
        options.setAllowDuplicateKeys(false);
        options.setMaxAliasesForCollections(0);
        options.setCodePointLimit(MAX_BYTES);
        options.setNestingDepthLimit(MAX_NESTING);
        options.setAllowRecursiveKeys(false);
        options.setMergeOnCompose(false);
        return options;
    }
}

package dev.agentjail.policy;

import java.io.IOException;
import java.io.InputStream;
import java.io.StringReader;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.error.MarkedYAMLException;
import org.yaml.snakeyaml.error.YAMLException;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.Tag;

/**
 * One policy file, composed and checked at the top level: a mapping with {@code version: 1} and only
 * known keys. {@code settings} holds the policy sections; {@code extends} and {@code locked} (when
 * present) are kept apart because they steer the merge rather than being merged.
 */
record PolicyDocument(
        PolicySource source,
        String text,
        MappingNode root,
        Map<String, Node> settings,
        Node extendsNode,
        Node lockedNode) {
    /** Upper bound on a policy's size in code points; real policies are a few kilobytes. */
    static final int MAX_CODE_POINTS = 1 << 20;

    /** Aliases make no sense in a policy and are refused; this bound only caps the composer's work. */
    private static final int MAX_ALIASES = 50;

    static final int MAX_NESTING = 20;

    /** snakeyaml's problem sentences are longer than our own; they quote at most a token of input. */
    private static final int YAML_PROBLEM_LENGTH = 120;

    /** UTF-8 needs at most 4 bytes per code point. */
    private static final int MAX_BYTES = 4 * MAX_CODE_POINTS;

    PolicyDocument {
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(root, "root");
        settings = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(settings));
    }

    /** Parses and checks one document's text; the sections themselves are read later, merged. */
    static PolicyDocument parse(String yaml, PolicySource source) throws PolicyException {
        Objects.requireNonNull(yaml, "yaml");
        String name = source.name();
        if (yaml.codePointCount(0, yaml.length()) > MAX_CODE_POINTS) {
            throw new PolicyException(name, 0, "-", "policy larger than 1 MiB");
        }
        Node root = compose(yaml, name);
        YamlNodes nodes = new YamlNodes(new Origins(source));
        if (root == null || (root instanceof ScalarNode && root.getTag().equals(Tag.NULL))) {
            throw new PolicyException(name, 1, "-", "empty policy");
        }
        if (!(root instanceof MappingNode mapping)) {
            throw nodes.error(root, "-", "expected a mapping at the top level, got " + YamlNodes.describe(root));
        }
        boolean preset = source.name().startsWith(PolicyKeys.PRESET_SOURCE_PREFIX);
        Map<String, Node> entries =
                nodes.mapping(root, "", preset ? PolicyKeys.PRESET_TOP_LEVEL : PolicyKeys.TOP_LEVEL);
        Node version = entries.remove("version");
        if (version == null) {
            throw nodes.error(root, "version", "missing required key");
        }
        int number = nodes.integer(version, "version");
        if (number != PolicyLoader.SUPPORTED_VERSION) {
            throw nodes.error(
                    version,
                    "version",
                    "unsupported version " + number + " (supported: " + PolicyLoader.SUPPORTED_VERSION + ")");
        }
        Node extendsNode = entries.remove("extends");
        Node lockedNode = entries.remove("locked");
        entries.remove("preset");
        return new PolicyDocument(source, yaml, mapping, entries, extendsNode, lockedNode);
    }

    /** Reads a policy file of at most 1 MiB, strictly as UTF-8. */
    static String read(Path file, String name) throws PolicyException {
        try (InputStream in = Files.newInputStream(file)) {
            return read(in, name);
        } catch (IOException e) {
            throw new PolicyException(name, 0, "-", "cannot read: " + Quoting.shorten(IoErrors.describe(file, e)));
        }
    }

    /** Reads a policy of at most 1 MiB from {@code in}, strictly as UTF-8; the caller maps its I/O errors. */
    static String read(InputStream in, String name) throws IOException, PolicyException {
        byte[] bytes = in.readNBytes(MAX_BYTES + 1);
        if (bytes.length > MAX_BYTES) {
            throw new PolicyException(name, 0, "-", "policy larger than 1 MiB");
        }
        try {
            return StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes))
                    .toString();
        } catch (CharacterCodingException e) {
            throw new PolicyException(name, 0, "-", "cannot read: not valid utf-8");
        }
    }

    /** Composes a configuration file with the same limits as a policy; null when it is empty. */
    static Node composeConfig(String yaml, String sourceName) throws PolicyException {
        Node root = compose(yaml, sourceName);
        return root == null || (root instanceof ScalarNode && root.getTag().equals(Tag.NULL)) ? null : root;
    }

    /** Composes with the size, nesting and alias limits that keep hostile YAML cheap. */
    private static Node compose(String yaml, String sourceName) throws PolicyException {
        LoaderOptions options = new LoaderOptions();
        // Composing skips snakeyaml's duplicate-key check; YamlNodes.mapping does it with the line.
        options.setAllowDuplicateKeys(false);
        options.setMaxAliasesForCollections(MAX_ALIASES);
        options.setCodePointLimit(MAX_CODE_POINTS);
        options.setNestingDepthLimit(MAX_NESTING);
        options.setAllowRecursiveKeys(false);
        options.setMergeOnCompose(false);
        try {
            return new Yaml(options).compose(new StringReader(yaml));
        } catch (MarkedYAMLException e) {
            YamlSyntax syntax = YamlSyntax.of(e, yaml);
            throw new PolicyException(sourceName, syntax.line(), syntax.column(), syntax.problem());
        } catch (YAMLException e) {
            // Unmarked errors are the limits (aliases, size, depth); they have no single line.
            throw new PolicyException(sourceName, 0, "-", limitProblem(String.valueOf(e.getMessage())));
        }
    }

    /** Says which composer limit was hit in our own words; snakeyaml's wording is not stable. */
    private static String limitProblem(String message) {
        if (message.startsWith("Number of aliases")) {
            return "too many aliases (anchors and aliases are not allowed)";
        }
        if (message.startsWith("Nesting Depth")) {
            return "nested deeper than " + MAX_NESTING + " levels";
        }
        if (message.contains("exceeds the limit")) {
            return "policy larger than 1 MiB";
        }
        return "invalid yaml: " + Quoting.shorten(message, YAML_PROBLEM_LENGTH);
    }
}

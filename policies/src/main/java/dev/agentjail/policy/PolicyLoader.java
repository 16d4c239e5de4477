package dev.agentjail.policy;

import java.io.IOException;
import java.io.InputStream;
import java.io.StringReader;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.error.Mark;
import org.yaml.snakeyaml.error.MarkedYAMLException;
import org.yaml.snakeyaml.error.YAMLException;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.Tag;

/** Reads policy YAML into a validated {@link Policy}; every error names file, line and key. */
public final class PolicyLoader {
    /** The schema version this build reads. */
    public static final int SUPPORTED_VERSION = 1;

    /** Upper bound on a policy's size in code points; real policies are a few kilobytes. */
    static final int MAX_CODE_POINTS = 1 << 20;

    /** Aliases make no sense in a policy and are refused; this bound only caps the composer's work. */
    private static final int MAX_ALIASES = 50;

    private static final int MAX_NESTING = 20;

    /** snakeyaml's problem sentences are longer than our own; they quote at most a token of input. */
    private static final int YAML_PROBLEM_LENGTH = 120;

    /** UTF-8 needs at most 4 bytes per code point. */
    private static final int MAX_BYTES = 4 * MAX_CODE_POINTS;

    private static final Set<String> TOP_LEVEL_KEYS = Set.of(
            "version",
            "network",
            "filesystem",
            "env",
            "limits",
            "jail",
            "tls",
            "redaction",
            "credentials",
            // Metadata of the built-in agent presets; read by Presets, ignored here.
            "preset");

    private PolicyLoader() {}

    /** Loads a policy file; files it names by relative path are relative to the file's directory. */
    public static Policy load(Path file) throws PolicyException {
        return load(file, PolicyFiles.defaultHome());
    }

    /** As {@link #load(Path)}, with {@code ~/} in file entries meaning {@code home} (absolute). */
    public static Policy load(Path file, Path home) throws PolicyException {
        String source = file.toString();
        Path parent = file.toAbsolutePath().normalize().getParent();
        return parse(read(file, source), source, parent == null ? Path.of("/") : parent, home);
    }

    /** Parses policy text; files it names by relative path are relative to the current directory. */
    public static Policy parse(String yaml, String sourceName) throws PolicyException {
        return parse(yaml, sourceName, Path.of(""));
    }

    /** Parses policy text; files it names by relative path are relative to {@code baseDir}. */
    public static Policy parse(String yaml, String sourceName, Path baseDir) throws PolicyException {
        return parse(yaml, sourceName, baseDir, PolicyFiles.defaultHome());
    }

    /**
     * Parses policy text; files it names are relative to {@code baseDir}, or to {@code home} when
     * written {@code ~/...}. Checks that {@code tls.upstream_ca} files are readable regular files.
     */
    public static Policy parse(String yaml, String sourceName, Path baseDir, Path home) throws PolicyException {
        Objects.requireNonNull(yaml, "yaml");
        Objects.requireNonNull(sourceName, "sourceName");
        PolicyFiles files = new PolicyFiles(
                baseDir.toAbsolutePath().normalize(), home.toAbsolutePath().normalize());
        if (yaml.codePointCount(0, yaml.length()) > MAX_CODE_POINTS) {
            throw new PolicyException(sourceName, 0, "-", "policy larger than 1 MiB");
        }
        Node root = compose(yaml, sourceName);
        YamlNodes nodes = new YamlNodes(sourceName);
        if (root == null || (root instanceof ScalarNode && root.getTag().equals(Tag.NULL))) {
            throw new PolicyException(sourceName, 1, "-", "empty policy");
        }
        if (!(root instanceof MappingNode)) {
            throw nodes.error(root, "-", "expected a mapping at the top level, got " + YamlNodes.describe(root));
        }
        Map<String, Node> entries = nodes.mapping(root, "", TOP_LEVEL_KEYS);
        Node version = entries.get("version");
        if (version == null) {
            throw nodes.error(root, "version", "missing required key");
        }
        int number = nodes.integer(version, "version");
        if (number != SUPPORTED_VERSION) {
            throw nodes.error(
                    version, "version", "unsupported version " + number + " (supported: " + SUPPORTED_VERSION + ")");
        }
        Node network = entries.get("network");
        Node filesystem = entries.get("filesystem");
        Node env = entries.get("env");
        Node limits = entries.get("limits");
        Node jail = entries.get("jail");
        Node tls = entries.get("tls");
        Node redaction = entries.get("redaction");
        Node credentials = entries.get("credentials");
        NetworkPolicy networkPolicy = network == null ? NetworkPolicy.none() : new NetworkSection(nodes).read(network);
        FilesystemPolicy filesystemPolicy =
                filesystem == null ? FilesystemPolicy.none() : new FilesystemSection(nodes).read(filesystem);
        EnvSection envSection = new EnvSection(nodes);
        EnvPolicy envPolicy = env == null ? EnvPolicy.none() : envSection.read(env);
        Limits limitsPolicy = limits == null ? Limits.defaults() : new LimitsSection(nodes).read(limits);
        JailSettings jailSettings = jail == null ? JailSettings.defaults() : new JailSection(nodes).read(jail);
        TlsSettings tlsSettings = tls == null ? TlsSettings.defaults() : new TlsSection(nodes, files).read(tls);
        RedactionPolicy redactionPolicy =
                redaction == null ? RedactionPolicy.defaults() : new RedactionSection(nodes, files).read(redaction);
        List<CredentialRule> credentialRules = credentials == null
                ? List.of()
                : new CredentialsSection(nodes, files).read(credentials, envSection.origins(), networkPolicy);
        return new Policy(
                number,
                networkPolicy,
                filesystemPolicy,
                envPolicy,
                limitsPolicy,
                jailSettings,
                sourceName,
                tlsSettings,
                redactionPolicy,
                credentialRules);
    }

    /** Builds a composer with the size, nesting and alias limits that keep hostile YAML cheap. */
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
            Mark mark = e.getProblemMark() != null ? e.getProblemMark() : e.getContextMark();
            int line = mark == null ? 0 : mark.getLine() + 1;
            String problem = e.getProblem() != null ? e.getProblem() : e.getContext();
            if (problem != null && problem.startsWith("but ") && e.getContext() != null) {
                // snakeyaml splits some messages in two ("expected a single document", "but found another").
                problem = e.getContext() + " " + problem;
            }
            throw new PolicyException(
                    sourceName,
                    line,
                    "-",
                    "invalid yaml: " + Quoting.shorten(String.valueOf(problem), YAML_PROBLEM_LENGTH));
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

    /** Reads at most {@link #MAX_BYTES} bytes, strictly as UTF-8, so a huge or endless file cannot exhaust memory. */
    private static String read(Path file, String source) throws PolicyException {
        byte[] bytes;
        try (InputStream in = Files.newInputStream(file)) {
            bytes = in.readNBytes(MAX_BYTES + 1);
        } catch (NoSuchFileException e) {
            throw new PolicyException(source, 0, "-", "cannot read: no such file");
        } catch (AccessDeniedException e) {
            throw new PolicyException(source, 0, "-", "cannot read: permission denied");
        } catch (IOException e) {
            throw new PolicyException(
                    source, 0, "-", "cannot read: " + Quoting.shorten(String.valueOf(e.getMessage())));
        }
        if (bytes.length > MAX_BYTES) {
            throw new PolicyException(source, 0, "-", "policy larger than 1 MiB");
        }
        try {
            return StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes))
                    .toString();
        } catch (CharacterCodingException e) {
            throw new PolicyException(source, 0, "-", "cannot read: not valid utf-8");
        }
    }
}

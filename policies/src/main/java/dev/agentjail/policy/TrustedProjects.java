package dev.agentjail.policy;

import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.nodes.Node;

/**
 * The project policies the user trusts ({@code agentjail policy trust}): for each project directory, the SHA-256 of
 * every project-layer file at the time. Kept as a small JSON file, private to the user ({@code 0600}) and never
 * visible inside the jail, so that neither a repository nor an agent can vouch for itself. Immutable; {@link
 * #with} and {@link #without} return changed copies.
 */
public final class TrustedProjects {
    /** The file's name in agentjail's state directory ({@code $XDG_STATE_HOME/agentjail}). */
    public static final String FILE_NAME = "trusted-projects.json";

    private static final int VERSION = 1;
    private static final Pattern SHA256 = Pattern.compile("[0-9a-f]{64}");
    private static final Set<String> TOP_LEVEL = Set.of("version", "projects");
    private static final Set<String> GRANT_KEYS = Set.of("trusted_at", "files", "entries");

    /**
     * Trust in one project: the files and their SHA-256 as they were trusted, the widening entries the user was shown
     * (their {@link ProjectTrust#entryId}s), and when.
     */
    public record Grant(Map<String, String> files, Set<String> entries, Instant trustedAt) {
        public Grant {
            files = Collections.unmodifiableMap(new LinkedHashMap<>(files));
            entries = Collections.unmodifiableSet(new TreeSet<>(entries));
            Objects.requireNonNull(trustedAt, "trustedAt");
        }
    }

    private final Map<String, Grant> grants;

    private TrustedProjects(Map<String, Grant> grants) {
        this.grants = Collections.unmodifiableMap(new TreeMap<>(grants));
    }

    /** No project trusted. */
    public static TrustedProjects none() {
        return new TrustedProjects(Map.of());
    }

    /** Reads the trust file; a missing file trusts nothing. A malformed one is an error naming its line. */
    public static TrustedProjects read(Path file) throws PolicyException {
        if (!Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
            return none();
        }
        String name = file.toString();
        String text = PolicyDocument.read(file, name);
        Node root = PolicyDocument.composeConfig(text, name);
        if (root == null) {
            return none();
        }
        Path parent = file.toAbsolutePath().normalize().getParent();
        YamlNodes nodes = new YamlNodes(
                new Origins(new PolicySource(PolicyLayer.USER, name, parent == null ? Path.of("/") : parent)));
        Map<String, Node> top = nodes.mapping(root, "", TOP_LEVEL);
        Node version = nodes.required(top, root, "", "version");
        if (nodes.integer(version, "version") != VERSION) {
            throw nodes.error(version, "version", "unsupported version (supported: " + VERSION + ")");
        }
        Map<String, Grant> grants = new LinkedHashMap<>();
        Node projects = top.get("projects");
        if (projects != null) {
            for (Map.Entry<String, Node> project :
                    nodes.mapping(projects, "projects", null).entrySet()) {
                grants.put(project.getKey(), grant(nodes, project.getValue(), "projects"));
            }
        }
        return new TrustedProjects(grants);
    }

    private static Grant grant(YamlNodes nodes, Node node, String path) throws PolicyException {
        Map<String, Node> entries = nodes.mapping(node, path + ".PROJECT", GRANT_KEYS);
        Node at = nodes.required(entries, node, path + ".PROJECT", "trusted_at");
        Instant trustedAt;
        try {
            trustedAt = Instant.parse(nodes.string(at, "trusted_at"));
        } catch (DateTimeParseException e) {
            throw nodes.error(at, "trusted_at", "expected an ISO-8601 instant");
        }
        Map<String, String> files = new LinkedHashMap<>();
        Node filesNode = nodes.required(entries, node, path + ".PROJECT", "files");
        for (Map.Entry<String, Node> file :
                nodes.mapping(filesNode, "files", null).entrySet()) {
            String sha = nodes.string(file.getValue(), "files");
            if (!SHA256.matcher(sha).matches()) {
                throw nodes.error(file.getValue(), "files", "expected a SHA-256 in lower-case hex");
            }
            files.put(file.getKey(), sha);
        }
        // Records written before entries were recorded cover no entry: such a project is trusted again once.
        Set<String> ids = new java.util.TreeSet<>();
        Node entriesNode = entries.get("entries");
        if (entriesNode != null) {
            for (Node id : nodes.sequence(entriesNode, "entries")) {
                String text = nodes.string(id, "entries");
                if (!SHA256.matcher(text).matches()) {
                    throw nodes.error(id, "entries", "expected a SHA-256 in lower-case hex");
                }
                ids.add(text);
            }
        }
        return new Grant(files, ids, trustedAt);
    }

    /** The trust recorded for the project directory {@code root}, if any. */
    public Optional<Grant> grant(Path root) {
        return Optional.ofNullable(grants.get(root.toString()));
    }

    /** The project directories trusted, in name order. */
    public List<Path> roots() {
        return grants.keySet().stream().map(Path::of).toList();
    }

    /** A copy that trusts {@code snapshot}'s files (replacing earlier trust in the same project). */
    public TrustedProjects with(ProjectSnapshot snapshot, Instant now) {
        Map<String, Grant> copy = new TreeMap<>(grants);
        // Files trusted before from another directory of the same project (a session started in a subdirectory reads
        // more files) stay trusted as they were; the files of this snapshot are trusted as they are now.
        Map<String, String> files = new LinkedHashMap<>();
        Set<String> entries = new java.util.TreeSet<>();
        Grant earlier = grants.get(snapshot.root().toString());
        if (earlier != null) {
            files.putAll(earlier.files());
            entries.addAll(earlier.entries());
        }
        files.putAll(snapshot.files());
        entries.addAll(snapshot.entries());
        copy.put(snapshot.root().toString(), new Grant(files, entries, now));
        return new TrustedProjects(copy);
    }

    /** A copy without trust in the project directory {@code root}. */
    public TrustedProjects without(Path root) {
        Map<String, Grant> copy = new TreeMap<>(grants);
        copy.remove(root.toString());
        return new TrustedProjects(copy);
    }

    /**
     * The file's text: JSON, which is also YAML, so it is read back with the policy reader's limits. The launcher writes
     * it (this module only reads files).
     */
    public String json() {
        StringBuilder out =
                new StringBuilder("{\n  \"version\": ").append(VERSION).append(",\n  \"projects\": {");
        String separator = "\n";
        for (Map.Entry<String, Grant> project : grants.entrySet()) {
            out.append(separator)
                    .append("    ")
                    .append(string(project.getKey()))
                    .append(": {\n");
            out.append("      \"trusted_at\": ")
                    .append(string(project.getValue().trustedAt().toString()))
                    .append(",\n      \"files\": {");
            String fileSeparator = "\n";
            for (Map.Entry<String, String> file : project.getValue().files().entrySet()) {
                out.append(fileSeparator)
                        .append("        ")
                        .append(string(file.getKey()))
                        .append(": ")
                        .append(string(file.getValue()));
                fileSeparator = ",\n";
            }
            out.append(project.getValue().files().isEmpty() ? "}" : "\n      }");
            out.append(",\n      \"entries\": [");
            String entrySeparator = "\n";
            for (String id : project.getValue().entries()) {
                out.append(entrySeparator).append("        ").append(string(id));
                entrySeparator = ",\n";
            }
            out.append(project.getValue().entries().isEmpty() ? "]\n    }" : "\n      ]\n    }");
            separator = ",\n";
        }
        return out.append(grants.isEmpty() ? "}\n}\n" : "\n  }\n}\n").toString();
    }

    /**
     * A JSON string. Besides JSON's own escapes, everything YAML treats as a line break or refuses unescaped (C1
     * controls, U+2028, U+2029, U+FEFF) is written as {@code \}{@code uXXXX}, so the text reads back identically.
     */
    private static String string(String value) {
        StringBuilder out = new StringBuilder("\"");
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c == '"' || c == '\\') {
                out.append('\\').append(c);
            } else if (c < 0x20 || (c >= 0x7f && c <= 0x9f) || c == 0x2028 || c == 0x2029 || c == 0xfeff) {
                out.append(String.format("\\u%04x", (int) c));
            } else {
                out.append(c);
            }
        }
        return out.append('"').toString();
    }
}

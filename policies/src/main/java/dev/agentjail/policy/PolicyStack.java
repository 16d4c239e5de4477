package dev.agentjail.policy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HexFormat;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.DumperOptions;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;
import org.yaml.snakeyaml.nodes.Tag;

/**
 * Loads a stack of policy documents (machine, team, user, project, command line; each after the
 * presets and files it {@code extends}) and merges them into one effective policy:
 *
 * <ul>
 *   <li>mappings merge key by key; lists add up (an entry already there is not repeated);
 *   <li>a scalar from a later document overrides an earlier one;
 *   <li>a key that a document of an earlier layer lists under {@code locked} cannot be set by any
 *       document of a later layer;
 *   <li>denies are never lifted: deny lists only grow, and every deny wins over every allow,
 *       whichever layer wrote them.
 * </ul>
 *
 * Every document is first checked on its own, so its errors name its own keys; the merged result is
 * then checked as a whole, with every error still naming the file and line the value came from.
 */
public final class PolicyStack {
    /** Deeper {@code extends} chains than this are refused; real ones are one or two levels. */
    static final int MAX_EXTENDS_DEPTH = 8;

    private static final Pattern PRESET_NAME = Pattern.compile("[a-z0-9][a-z0-9-]*");

    /** One input of the stack: a file, a built-in preset, or policy text (tests, {@code policy check -}). */
    public record Input(PolicyLayer layer, Path file, String preset, String name, String text, Path baseDir) {
        public Input {
            Objects.requireNonNull(layer, "layer");
        }

        public static Input file(PolicyLayer layer, Path file) {
            return new Input(layer, Objects.requireNonNull(file, "file"), null, null, null, null);
        }

        public static Input preset(PolicyLayer layer, String name) {
            return new Input(layer, null, Objects.requireNonNull(name, "name"), null, null, null);
        }

        /**
         * A file the caller has read already, after checks of its own (the machine policy's): the stack uses {@code
         * text} as the file's contents and does not read it again.
         */
        static Input read(PolicyLayer layer, Path file, String text) {
            Path absolute = file.toAbsolutePath().normalize();
            Path parent = absolute.getParent();
            return new Input(
                    layer,
                    absolute,
                    null,
                    absolute.toString(),
                    Objects.requireNonNull(text, "text"),
                    parent == null ? Path.of("/") : parent);
        }

        public static Input text(PolicyLayer layer, String name, String text, Path baseDir) {
            return new Input(
                    layer,
                    null,
                    null,
                    Objects.requireNonNull(name, "name"),
                    Objects.requireNonNull(text, "text"),
                    baseDir.toAbsolutePath().normalize());
        }
    }

    /**
     * A lock: the layer and place that wrote it, and which input of the stack brought it in (for the project layer,
     * whose files from the repository root down lock for the files below them).
     */
    private record Lock(PolicyLayer layer, String where, int input) {
        /** Whether this lock binds a document of {@code layer} that input {@code input} brought in. */
        boolean binds(PolicyLayer layer, int input) {
            return this.layer.compareTo(layer) < 0
                    || (this.layer == PolicyLayer.PROJECT && layer == PolicyLayer.PROJECT && this.input < input);
        }
    }

    private final Path home;
    private final List<PolicyDocument> documents = new ArrayList<>();
    /** What is already in the stack, and in which layer first. */
    private final Map<String, PolicyLayer> included = new java.util.HashMap<>();

    private final Deque<String> chain = new ArrayDeque<>();
    /** The project layer's own files (not its presets), by document, with their real path as the name. */
    private final Map<PolicyDocument, String> projectFiles = new IdentityHashMap<>();
    /**
     * The documents whose widening entries need the user's trust, each with the project file whose trust covers them:
     * the project layer's files (their own), and whatever they extend (a preset pulled in by a project file widens the
     * jail as much as the file itself would: the file's).
     */
    private final Map<PolicyDocument, String> untrusted = new IdentityHashMap<>();
    /** The directory of the first project policy file given as an input: the project that trust is keyed by. */
    private Path projectRoot;
    /** Which input of the stack each document came in with (its own, or the one that extends it). */
    private final Map<PolicyDocument, Integer> inputOf = new IdentityHashMap<>();
    /** The index of the input being added. */
    private int currentInput = -1;
    /** The directory the session starts in, when known: what "inside the project" means for binds. */
    private Optional<Path> sessionDir = Optional.empty();
    /** Who may own a project policy file ({@link ProjectPolicies#ownershipProblem}); known at the first one. */
    private Set<Integer> projectOwners;

    private PolicyStack(Path home) {
        this.home = home.toAbsolutePath().normalize();
    }

    /** Loads, checks and merges {@code inputs}, listed from the most authoritative layer to the least. */
    public static EffectivePolicy load(List<Input> inputs, Path home) throws PolicyException {
        return load(inputs, home, Optional.empty());
    }

    /**
     * As {@link #load(List, Path)}, for a session in {@code projectDir}: the directory a project file's host paths are
     * judged against (a path outside it needs trust, also one inside the repository root above it).
     */
    public static EffectivePolicy load(List<Input> inputs, Path home, Optional<Path> projectDir)
            throws PolicyException {
        PolicyStack stack = new PolicyStack(home);
        stack.sessionDir = projectDir.map(PolicyStack::real);
        PolicyLayer previous = PolicyLayer.DEFAULTS;
        for (Input input : inputs) {
            if (input.layer().compareTo(previous) < 0) {
                throw new IllegalArgumentException("inputs must be ordered by layer");
            }
            previous = input.layer();
            stack.currentInput++;
            stack.add(input, null, null, null);
        }
        return stack.merge();
    }

    private void add(Input input, Node referrer, PolicySource referrerSource, String fromUntrusted)
            throws PolicyException {
        boolean projectFile = input.layer() == PolicyLayer.PROJECT && input.preset() == null;
        if (projectFile && input.file() != null) {
            if (projectOwners == null) {
                projectOwners = ProjectPolicies.owners(Optional.of(projectDirectory(input)));
            }
            Optional<String> problem = ProjectPolicies.ownershipProblem(input.file(), projectOwners);
            if (problem.isPresent()) {
                throw new PolicyException(
                        input.file().toString(), 0, "-", "refusing this project policy: " + problem.get());
            }
        }
        Resolved resolved = resolve(input, referrer, referrerSource);
        if (chain.contains(resolved.identity())) {
            List<String> cycle = new ArrayList<>(chain);
            java.util.Collections.reverse(cycle);
            cycle.add(resolved.identity());
            throw new YamlNodes(origins(referrerSource))
                    .error(referrer, "extends", "extends cycle: " + String.join(" -> ", cycle));
        }
        PolicyLayer first = included.putIfAbsent(resolved.identity(), input.layer());
        if (first == input.layer() || first == PolicyLayer.MACHINE) {
            return; // Already in this layer (through another extends), or the machine's: once is enough.
        }
        // A file another layer holds too is merged in each: a project file that extends the user's --policy file must
        // not pull it out of the command-line layer (it restates it, which widens nothing).
        if (chain.size() >= MAX_EXTENDS_DEPTH) {
            throw new YamlNodes(origins(referrerSource))
                    .error(referrer, "extends", "extends nested deeper than " + MAX_EXTENDS_DEPTH + " levels");
        }
        PolicyDocument document = PolicyDocument.parse(resolved.text(), resolved.source());
        String trustFile = projectFile ? resolved.identity() : fromUntrusted;
        if (trustFile != null) {
            untrusted.put(document, trustFile);
        }
        inputOf.put(document, currentInput);
        if (projectFile) {
            projectFiles.put(document, resolved.identity());
            if (referrer == null && projectRoot == null) {
                projectRoot = projectDirectory(input);
            }
        }
        chain.push(resolved.identity());
        if (document.extendsNode() != null) {
            YamlNodes nodes = new YamlNodes(origins(document.source()));
            List<Node> items = nodes.sequence(document.extendsNode(), "extends");
            for (int i = 0; i < items.size(); i++) {
                Node item = items.get(i);
                String reference = nodes.string(item, "extends[" + i + "]");
                add(
                        reference(reference, input.layer(), item, nodes, document.source()),
                        item,
                        document.source(),
                        trustFile);
            }
        }
        chain.pop();
        documents.add(document);
    }

    private record Resolved(String identity, PolicySource source, String text) {}

    private Resolved resolve(Input input, Node referrer, PolicySource referrerSource) throws PolicyException {
        if (input.preset() != null) {
            Optional<Preset> preset = Presets.named(input.preset());
            if (preset.isEmpty()) {
                String problem = "unknown preset " + Quoting.quote(input.preset())
                        + YamlNodes.nearest(input.preset(), Presets.names())
                                .map(n -> " (did you mean " + Quoting.quote(n) + "?)")
                                .orElse(" (agentjail policy presets lists them)");
                if (referrer == null) {
                    throw new PolicyException("--preset", 0, "-", problem);
                }
                throw new YamlNodes(origins(referrerSource)).error(referrer, "extends", problem);
            }
            String name = PolicyKeys.PRESET_SOURCE_PREFIX + input.preset();
            return new Resolved(
                    name,
                    new PolicySource(input.layer(), name, Path.of("/")),
                    preset.get().yaml());
        }
        if (input.text() != null && input.file() != null) {
            return new Resolved(
                    realPath(input.file()),
                    new PolicySource(input.layer(), input.name(), input.baseDir()),
                    input.text());
        }
        if (input.text() != null) {
            return new Resolved(
                    "text:" + input.name(),
                    new PolicySource(input.layer(), input.name(), input.baseDir()),
                    input.text());
        }
        Path file = input.file();
        if (input.layer() == PolicyLayer.MACHINE) {
            throw new IllegalArgumentException("machine policy files are read (and checked) by MachinePolicy: " + file);
        }
        String name = file.toString();
        Path absolute = file.toAbsolutePath().normalize();
        String identity = realPath(absolute);
        Path parent = absolute.getParent();
        String text = PolicyDocument.read(file, name);
        return new Resolved(
                identity, new PolicySource(input.layer(), name, parent == null ? Path.of("/") : parent), text);
    }

    private static Path real(Path dir) {
        Path absolute = dir.toAbsolutePath().normalize();
        try {
            return absolute.toRealPath();
        } catch (IOException e) {
            return absolute;
        }
    }

    /** What a file is included as: its real path, so that one reached by two names is merged once. */
    private static String realPath(Path file) {
        Path absolute = file.toAbsolutePath().normalize();
        try {
            return absolute.toRealPath().toString();
        } catch (IOException e) {
            return absolute.toString(); // Reading it fails next, with a clear message.
        }
    }

    /** An {@code extends} entry: a preset name, or a file relative to the extending file's directory. */
    private Input reference(String text, PolicyLayer layer, Node item, YamlNodes nodes, PolicySource source)
            throws PolicyException {
        if (PRESET_NAME.matcher(text).matches()) {
            return Input.preset(layer, text);
        }
        if (layer == PolicyLayer.MACHINE) {
            // The stack would read the file without the ownership and mode checks the machine policy's files pass.
            throw nodes.error(
                    item,
                    "extends",
                    "the machine policy extends presets only, not files; put " + Quoting.quote(text) + " in the "
                            + MachinePolicy.DROP_INS + " directory instead");
        }
        try {
            return Input.file(layer, new PolicyFiles(nodes.origins(), home).resolve(text, source.baseDir()));
        } catch (MalformedEntryException e) {
            throw nodes.error(item, "extends", "invalid path " + Quoting.quote(text) + ": " + e.getMessage());
        }
    }

    /** The real path of the directory holding a project policy given as an input (not one it extends). */
    private static Path projectDirectory(Input input) {
        Path dir =
                input.file() != null ? input.file().toAbsolutePath().normalize().getParent() : input.baseDir();
        if (dir == null) {
            dir = Path.of("/");
        }
        try {
            return dir.toRealPath();
        } catch (IOException e) {
            return dir;
        }
    }

    private static Origins origins(PolicySource source) {
        return new Origins(source);
    }

    private EffectivePolicy merge() throws PolicyException {
        if (documents.isEmpty()) {
            throw new IllegalArgumentException("no policy documents");
        }
        Origins origins = new Origins(documents.get(0).source());
        Map<String, Lock> locks = new LinkedHashMap<>();
        Map<String, Node> merged = new LinkedHashMap<>();
        Map<String, Node> keyNodes = new LinkedHashMap<>();
        Optional<Path> root = Optional.ofNullable(projectRoot);
        ProjectRequests projectRequests = new ProjectRequests(origins, home, sessionDir.or(() -> root));
        List<ProjectRequests.Found> requests = new ArrayList<>();
        for (PolicyDocument document : documents) {
            origins.register(document.root(), document.source());
            // Each document alone first, so its own mistakes are reported with its own keys.
            PolicyLoader.build(
                    document.settings(), origins, home, document.source().name());
            Node trust = document.settings().get(TrustSection.SECTION);
            if (trust != null) {
                new TrustSection(new YamlNodes(origins)).read(trust);
            }
            HostCommands.refuseFromProject(document, origins);
            TrustSection.refuseFromProject(document, origins);
            String trustFile = untrusted.get(document);
            if (trustFile != null) {
                requests.addAll(projectRequests.scan(document, merged, trustFile));
            }
            checkLocks(document, inputOf.get(document), locks, origins, merged);
            for (NodeTuple tuple : document.root().getValue()) {
                String key = ((ScalarNode) tuple.getKeyNode()).getValue();
                if (!document.settings().containsKey(key)) {
                    continue;
                }
                Node existing = merged.get(key);
                merged.put(
                        key,
                        existing == null ? tuple.getValueNode() : merge(existing, tuple.getValueNode(), origins, key));
                keyNodes.putIfAbsent(key, tuple.getKeyNode());
            }
            addLocks(document, inputOf.get(document), locks, origins);
        }
        String name = documents.stream()
                .filter(d -> d.source().layer() != PolicyLayer.DEFAULTS)
                .map(d -> d.source().name())
                .reduce((a, b) -> a + " + " + b)
                .orElse(documents.get(0).source().name());
        Policy policy = PolicyLoader.build(merged, origins, home, name);
        List<NodeTuple> tuples = new ArrayList<>();
        for (Map.Entry<String, Node> entry : merged.entrySet()) {
            tuples.add(new NodeTuple(keyNodes.get(entry.getKey()), entry.getValue()));
        }
        Map<String, String> lockedBy = new LinkedHashMap<>();
        locks.forEach((path, lock) -> lockedBy.put(path, lock.where()));
        Node trust = merged.get(TrustSection.SECTION);
        ProjectTrust.Setting setting =
                trust == null ? ProjectTrust.Setting.DEFAULT : new TrustSection(new YamlNodes(origins)).read(trust);
        return new EffectivePolicy(
                policy, tuples, origins, documents, lockedBy, snapshot(root, requests), requests, setting);
    }

    /** The project layer's files with the SHA-256 of the bytes that were parsed (valid UTF-8 round-trips exactly). */
    private Optional<ProjectSnapshot> snapshot(Optional<Path> root, List<ProjectRequests.Found> requests) {
        if (root.isEmpty()) {
            return Optional.empty();
        }
        Map<String, String> files = new LinkedHashMap<>();
        for (PolicyDocument document : documents) {
            String file = projectFiles.get(document);
            if (file != null) {
                files.put(file, sha256(document.text()));
            }
        }
        java.util.Set<String> entries = new java.util.TreeSet<>();
        requests.forEach(found -> entries.add(ProjectTrust.entryId(found)));
        return Optional.of(new ProjectSnapshot(root.get(), files, entries));
    }

    private static String sha256(String text) {
        try {
            return HexFormat.of()
                    .formatHex(MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }

    /**
     * Refuses any key this document changes that a document of a more authoritative layer locked. Restating what is
     * already there (the same scalar, list entries already present) changes nothing and passes, so that a preset may
     * repeat what a team policy that locks the key lists itself.
     */
    private static void checkLocks(
            PolicyDocument document, int input, Map<String, Lock> locks, Origins origins, Map<String, Node> merged)
            throws PolicyException {
        if (locks.isEmpty()) {
            return;
        }
        YamlNodes nodes = new YamlNodes(origins);
        for (NodeTuple section : document.root().getValue()) {
            String sectionKey = ((ScalarNode) section.getKeyNode()).getValue();
            if (!document.settings().containsKey(sectionKey)) {
                continue;
            }
            Node before = merged.get(sectionKey);
            if (restates(before, section.getValueNode())) {
                continue;
            }
            if (section.getValueNode() instanceof MappingNode mapping) {
                for (NodeTuple entry : mapping.getValue()) {
                    String key = ((ScalarNode) entry.getKeyNode()).getValue();
                    if (!restates(YamlNodes.value(before, key), entry.getValueNode())) {
                        checkLock(
                                sectionKey + "." + key, sectionKey, entry.getKeyNode(), document, input, locks, nodes);
                    }
                }
            } else {
                checkLock(sectionKey, sectionKey, section.getKeyNode(), document, input, locks, nodes);
            }
        }
    }

    /** Refuses {@code path} if it or its section is locked by a more authoritative layer. */
    private static void checkLock(
            String path,
            String section,
            Node node,
            PolicyDocument document,
            int input,
            Map<String, Lock> locks,
            YamlNodes nodes)
            throws PolicyException {
        for (String locked : List.of(section, path)) {
            Lock lock = locks.get(locked);
            if (lock != null && lock.binds(document.source().layer(), input)) {
                String name = document.source().name();
                String wayOut = name.startsWith(PolicyKeys.PRESET_SOURCE_PREFIX)
                        ? "; the preset " + Quoting.quote(name.substring(PolicyKeys.PRESET_SOURCE_PREFIX.length()))
                                + " sets it. A value the " + lock.layer().description()
                                + " lists itself may be restated, so ask its maintainers to add this one there; or run"
                                + " without the preset (agentjail run -- PROGRAM) and add what the lock allows in your"
                                + " own policy"
                        : lock.layer() == document.source().layer()
                                ? "; a project policy file below it cannot change it"
                                : "; the " + document.source().layer().description() + " cannot change it";
                throw nodes.error(
                        node, path, "locked by the " + lock.layer().description() + " (" + lock.where() + ")" + wayOut);
            }
        }
    }

    /**
     * Whether {@code value} only repeats what {@code before} already holds: the same scalar, list entries all already
     * listed, a mapping whose every key restates the same key's value. Nothing restates a missing value.
     */
    static boolean restates(Node before, Node value) {
        if (before == null) {
            return false;
        }
        if (before instanceof ScalarNode a && value instanceof ScalarNode b) {
            return sameScalar(a, b);
        }
        if (before instanceof SequenceNode a && value instanceof SequenceNode b) {
            return b.getValue().stream().allMatch(item -> a.getValue().stream().anyMatch(e -> YamlNodes.same(e, item)));
        }
        if (before instanceof MappingNode && value instanceof MappingNode b) {
            for (NodeTuple tuple : b.getValue()) {
                String key = ((ScalarNode) tuple.getKeyNode()).getValue();
                if (!restates(YamlNodes.value(before, key), tuple.getValueNode())) {
                    return false;
                }
            }
            return true;
        }
        return false;
    }

    private static void addLocks(PolicyDocument document, int input, Map<String, Lock> locks, Origins origins)
            throws PolicyException {
        if (document.lockedNode() == null) {
            return;
        }
        YamlNodes nodes = new YamlNodes(origins);
        List<Node> items = nodes.sequence(document.lockedNode(), "locked");
        for (int i = 0; i < items.size(); i++) {
            String path = nodes.string(items.get(i), "locked[" + i + "]");
            Optional<String> problem = PolicyKeys.lockProblem(path);
            if (problem.isPresent()) {
                throw nodes.error(items.get(i), "locked[" + i + "]", problem.get());
            }
            locks.putIfAbsent(path, new Lock(document.source().layer(), origins.where(items.get(i)), input));
        }
    }

    /**
     * Merges {@code overlay} (later) onto {@code base} (earlier), both at {@code path}; see the class comment for the
     * rules. A list entry equal to one already there is dropped (a restated credential rule or server is no second
     * one); an address pin ({@code network.resolve}) is an identity: a later layer may restate it, never change it.
     */
    private static Node merge(Node base, Node overlay, Origins origins, String path) throws PolicyException {
        if (base instanceof MappingNode baseMap && overlay instanceof MappingNode overlayMap) {
            Map<String, NodeTuple> out = new LinkedHashMap<>();
            for (NodeTuple tuple : baseMap.getValue()) {
                out.put(((ScalarNode) tuple.getKeyNode()).getValue(), tuple);
            }
            for (NodeTuple tuple : overlayMap.getValue()) {
                String key = ((ScalarNode) tuple.getKeyNode()).getValue();
                NodeTuple existing = out.get(key);
                String child = path + "." + key;
                if (existing != null
                        && PINNED.contains(path)
                        && !YamlNodes.same(existing.getValueNode(), tuple.getValueNode())) {
                    throw new YamlNodes(origins)
                            .error(
                                    tuple.getValueNode(),
                                    YamlNodes.child(path, key),
                                    Quoting.quote(key) + " is already pinned, at "
                                            + origins.where(existing.getValueNode())
                                            + "; a policy may restate a pin but not change it: remove one");
                }
                out.put(
                        key,
                        existing == null
                                ? tuple
                                : new NodeTuple(
                                        existing.getKeyNode(),
                                        merge(existing.getValueNode(), tuple.getValueNode(), origins, child)));
            }
            MappingNode result = new MappingNode(
                    Tag.MAP,
                    true,
                    new ArrayList<>(out.values()),
                    baseMap.getStartMark(),
                    baseMap.getEndMark(),
                    DumperOptions.FlowStyle.BLOCK);
            origins.registerOne(result, origins.source(baseMap));
            return result;
        }
        if (base instanceof SequenceNode baseList && overlay instanceof SequenceNode overlayList) {
            List<Node> items = new ArrayList<>(baseList.getValue());
            for (Node item : overlayList.getValue()) {
                if (items.stream().noneMatch(i -> YamlNodes.same(i, item))) {
                    items.add(item);
                }
            }
            SequenceNode result = new SequenceNode(
                    Tag.SEQ,
                    true,
                    items,
                    baseList.getStartMark(),
                    baseList.getEndMark(),
                    DumperOptions.FlowStyle.BLOCK);
            origins.registerOne(result, origins.source(baseList));
            return result;
        }
        // The same value written again keeps the earlier node: a relative path keeps meaning what the earlier file
        // meant (audit.log: logs/a.jsonl restated by a project file is no move into the project).
        return base instanceof ScalarNode scalar && sameScalar(overlay, scalar) ? base : overlay;
    }

    /** Mappings whose entries are identities: a key names one thing, and no two layers may say different things. */
    private static final Set<String> PINNED = Set.of("network.resolve");

    private static boolean sameScalar(Node node, ScalarNode scalar) {
        return node instanceof ScalarNode other
                && other.getTag().equals(scalar.getTag())
                && other.getValue().equals(scalar.getValue());
    }
}

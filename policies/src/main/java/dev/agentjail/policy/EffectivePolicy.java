package dev.agentjail.policy;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;

/**
 * The result of merging a policy stack: the {@link Policy} everything runs with, plus what is needed
 * to explain it: the documents it came from, which keys are locked and by whom, and the merged YAML
 * with the file and line of every value.
 */
public final class EffectivePolicy {
    private final Policy policy;
    private final List<NodeTuple> merged;
    private final Origins origins;
    private final List<PolicyDocument> documents;
    private final Map<String, String> lockedBy;
    private final Optional<ProjectSnapshot> projectSnapshot;
    private final List<ProjectRequests.Found> projectRequests;
    private final ProjectTrust.Setting projectTrust;

    EffectivePolicy(
            Policy policy,
            List<NodeTuple> merged,
            Origins origins,
            List<PolicyDocument> documents,
            Map<String, String> lockedBy,
            Optional<ProjectSnapshot> projectSnapshot,
            List<ProjectRequests.Found> projectRequests,
            ProjectTrust.Setting projectTrust) {
        this.policy = policy;
        this.merged = List.copyOf(merged);
        this.origins = origins;
        this.documents = List.copyOf(documents);
        this.lockedBy = Map.copyOf(lockedBy);
        this.projectSnapshot = projectSnapshot;
        this.projectRequests = List.copyOf(projectRequests);
        this.projectTrust = projectTrust;
    }

    public Policy policy() {
        return policy;
    }

    /** The documents merged, in merge order (most authoritative layer first, each after what it extends). */
    public List<PolicySource> sources() {
        return documents.stream().map(PolicyDocument::source).toList();
    }

    /**
     * The project layer's files (the {@code .agentjail.yaml} and what it extends by path; never the presets, which
     * ship with agentjail) with their SHA-256: what {@code agentjail policy trust} records. Empty without a project
     * policy file.
     */
    public Optional<ProjectSnapshot> projectSnapshot() {
        return projectSnapshot;
    }

    /** The entries of the project layer that widen the jail; they need the user's trust. */
    public List<ProjectRequest> projectRequests() {
        return projectRequests.stream().map(ProjectRequests.Found::request).toList();
    }

    /** As {@link #projectRequests()}, with the project file whose trust covers each. */
    List<ProjectRequests.Found> projectFindings() {
        return projectRequests;
    }

    /** The effective {@code trust.projects}: whether a project policy may be trusted at all. */
    public ProjectTrust.Setting projectTrust() {
        return projectTrust;
    }

    /**
     * Where {@code keyPath} ({@code section} or {@code section.key}) is locked, as {@code FILE:LINE},
     * if it or its section is; command-line options that would change a locked key are refused.
     */
    public Optional<String> lockedBy(String keyPath) {
        String where = lockedBy.get(keyPath);
        int dot = keyPath.indexOf('.');
        if (where == null && dot > 0) {
            where = lockedBy.get(keyPath.substring(0, dot));
        }
        return Optional.ofNullable(where);
    }

    /**
     * Pins exactly the policy a session ran with: for a single document, the SHA-256 of its bytes (what
     * {@code sha256sum FILE} prints); for several, a SHA-256 over every merged document's name and
     * text, each length-prefixed, in merge order.
     */
    public String sha256() {
        try {
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            if (documents.size() == 1) {
                return HexFormat.of()
                        .formatHex(digest.digest(documents.get(0).text().getBytes(StandardCharsets.UTF_8)));
            }
            for (PolicyDocument document : documents) {
                byte[] name = document.source().name().getBytes(StandardCharsets.UTF_8);
                byte[] text = document.text().getBytes(StandardCharsets.UTF_8);
                digest.update(lengthPrefix(name.length));
                digest.update(name);
                digest.update(lengthPrefix(text.length));
                digest.update(text);
            }
            return HexFormat.of().formatHex(digest.digest());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }

    private static byte[] lengthPrefix(int length) {
        return new byte[] {(byte) (length >>> 24), (byte) (length >>> 16), (byte) (length >>> 8), (byte) length};
    }

    /**
     * The merged policy as YAML that loads back to the same policy; with {@code withOrigins}, every
     * value carries a comment naming the file and line it came from.
     */
    public String render(boolean withOrigins) {
        return new PolicyRenderer(origins, withOrigins, Map.of()).render(merged, lockedBy, sources());
    }

    /**
     * As {@link #render(boolean)}; with origins, every project entry that needs trust is marked with how {@code
     * trust} stands ({@code trusted project entry}, or why {@code agentjail run} refuses it).
     */
    public String render(boolean withOrigins, ProjectTrust.Result trust) {
        Map<Node, String> marks = new IdentityHashMap<>();
        String mark = switch (trust.status()) {
            case NOT_NEEDED -> null;
            case TRUSTED -> "trusted project entry";
            case UNTRUSTED -> "not trusted: agentjail run refuses it (see " + ProjectTrust.COMMAND + ")";
            case CHANGED -> "trust lapsed, a file changed: agentjail run refuses it";
            case FORBIDDEN -> "trust.projects is never: agentjail run refuses it";
        };
        if (mark != null) {
            for (ProjectRequests.Found found : projectRequests) {
                boolean refused = !trust.allowed() && trust.requests().contains(found.request());
                marks.put(found.node(), refused ? mark : "trusted project entry");
            }
        }
        return new PolicyRenderer(origins, withOrigins, marks).render(merged, lockedBy, sources());
    }
}

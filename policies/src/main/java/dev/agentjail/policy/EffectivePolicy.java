package dev.agentjail.policy;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
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

    EffectivePolicy(
            Policy policy,
            List<NodeTuple> merged,
            Origins origins,
            List<PolicyDocument> documents,
            Map<String, String> lockedBy) {
        this.policy = policy;
        this.merged = List.copyOf(merged);
        this.origins = origins;
        this.documents = List.copyOf(documents);
        this.lockedBy = Map.copyOf(lockedBy);
    }

    public Policy policy() {
        return policy;
    }

    /** The documents merged, in merge order (most authoritative layer first, each after what it extends). */
    public List<PolicySource> sources() {
        return documents.stream().map(PolicyDocument::source).toList();
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
        return new PolicyRenderer(origins, withOrigins).render(merged, lockedBy, sources());
    }
}

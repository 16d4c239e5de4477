package dev.agentjail.proxy.redact;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What one request's redaction found: counts per {@code (kind, location)}, never a value. One instance per
 * request, used from one thread.
 */
public final class Findings {
    /** One line of the audit record's {@code redactions} list. */
    public record Finding(String kind, String location, int count) {
        public Finding {
            Objects.requireNonNull(kind, "kind");
            Objects.requireNonNull(location, "location");
            if (count < 1) {
                throw new IllegalArgumentException("count must be positive");
            }
        }
    }

    /**
     * Why the scan itself says the request must not go on, whatever the policy's action: a secret found in a
     * decoded layer that cannot be overwritten at the same length, or content nested past a decoding bound.
     * {@code reason} is a stable reason code ({@link #NOT_REWRITABLE}, {@link #DECODE_DEPTH}).
     */
    public record Refusal(String reason, String detail) {
        public Refusal {
            Objects.requireNonNull(reason, "reason");
            Objects.requireNonNull(detail, "detail");
        }
    }

    /** A secret was found in a decoded layer (base64, hex, an escape) whose bytes cannot be rewritten in place. */
    public static final String NOT_REWRITABLE = "secret-not-rewritable";
    /** Base64 or hex nested deeper than {@link BodyRedactor#MAX_LAYER_DEPTH}: not decoded, so not sent. */
    public static final String DECODE_DEPTH = "decode-depth-exceeded";

    private final Map<String, int[]> counts = new LinkedHashMap<>();
    private Refusal refusal;
    private final Map<String, String[]> keys = new LinkedHashMap<>();

    void add(String kind, String location) {
        String key = kind + '\u0000' + location;
        int[] count = counts.get(key);
        if (count == null) {
            counts.put(key, new int[] {1});
            keys.put(key, new String[] {kind, location});
        } else {
            count[0]++;
        }
    }

    /** Takes back one count when a later, more specific rule re-labels the same secret. */
    void remove(String kind, String location) {
        String key = kind + '\u0000' + location;
        int[] count = counts.get(key);
        if (count != null && --count[0] == 0) {
            counts.remove(key);
            keys.remove(key);
        }
    }

    /** Records the first reason the scan refuses the request; later ones are dropped. */
    void refuse(String reason, String detail) {
        if (refusal == null) {
            refusal = new Refusal(reason, detail);
        }
    }

    /**
     * Set when the request must be refused whatever {@code redaction.action} says: the bytes released since (and the
     * rest of the request) must not be sent.
     */
    public java.util.Optional<Refusal> refusal() {
        return java.util.Optional.ofNullable(refusal);
    }

    public boolean isEmpty() {
        return counts.isEmpty();
    }

    /** Total number of secrets found, over all kinds and locations. */
    public int total() {
        int total = 0;
        for (int[] count : counts.values()) {
            total += count[0];
        }
        return total;
    }

    /** The findings in the order they were first seen. */
    public List<Finding> list() {
        List<Finding> result = new ArrayList<>(counts.size());
        for (Map.Entry<String, int[]> entry : counts.entrySet()) {
            String[] key = keys.get(entry.getKey());
            result.add(new Finding(key[0], key[1], entry.getValue()[0]));
        }
        return List.copyOf(result);
    }

    /** Lists kinds, locations and counts only: safe to log. */
    @Override
    public String toString() {
        StringBuilder text = new StringBuilder("Findings[");
        boolean first = true;
        for (Finding finding : list()) {
            if (!first) {
                text.append(", ");
            }
            first = false;
            text.append(finding.kind())
                    .append('@')
                    .append(finding.location())
                    .append('x')
                    .append(finding.count());
        }
        return text.append(']').toString();
    }
}

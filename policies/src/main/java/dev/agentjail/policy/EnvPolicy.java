package dev.agentjail.policy;

import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The environment a policy adds to the jail's otherwise cleared one: names copied from the host
 * environment when set there ({@code forward}) and fixed values ({@code set}, in file order). A
 * name appears at most once across both, and never one of {@link #SET_BY_AGENTJAIL}.
 */
public record EnvPolicy(List<String> forward, Map<String, String> set) {
    /** The proxy variables agentjail points at its own proxy; a policy cannot forward or set them. */
    public static final Set<String> SET_BY_AGENTJAIL = Set.of(
            "HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy");

    private static final Pattern NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

    public EnvPolicy {
        forward = List.copyOf(forward);
        set = Collections.unmodifiableSequencedMap(new LinkedHashMap<>(set));
        Set<String> seen = new HashSet<>();
        for (String name : forward) {
            checkName(name);
            if (!seen.add(name)) {
                throw new IllegalArgumentException("forwarded twice: " + name);
            }
        }
        for (Map.Entry<String, String> entry : set.entrySet()) {
            checkName(entry.getKey());
            if (seen.contains(entry.getKey())) {
                throw new IllegalArgumentException("both forwarded and set: " + entry.getKey());
            }
            Optional<String> problem = valueProblem(entry.getValue());
            if (problem.isPresent()) {
                throw new IllegalArgumentException(problem.get() + ": " + entry.getKey());
            }
        }
    }

    /** Nothing forwarded, nothing set. */
    public static EnvPolicy none() {
        return new EnvPolicy(List.of(), Map.of());
    }

    /** Why a variable name cannot be used in a policy, if it cannot. */
    static Optional<String> nameProblem(String name) {
        if (!NAME.matcher(name).matches()) {
            return Optional.of("invalid variable name " + Quoting.quote(name) + ": must match [A-Za-z_][A-Za-z0-9_]*");
        }
        if (SET_BY_AGENTJAIL.contains(name)) {
            return Optional.of(Quoting.quote(name) + " is set by agentjail to point at its proxy");
        }
        return Optional.empty();
    }

    static Optional<String> valueProblem(String value) {
        return value.indexOf('\0') >= 0 ? Optional.of("NUL is not allowed in a value") : Optional.empty();
    }

    private static void checkName(String name) {
        Optional<String> problem = nameProblem(Objects.requireNonNull(name, "name"));
        if (problem.isPresent()) {
            throw new IllegalArgumentException(problem.get());
        }
    }
}

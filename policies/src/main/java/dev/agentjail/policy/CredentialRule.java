package dev.agentjail.policy;

import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * A credential kept out of the jail: inside, variable {@code env} holds a per-session placeholder;
 * the proxy swaps it for the real value only in header {@code header} of requests to one of {@code
 * hosts} (exact canonical targets) over verified TLS. The real value is read on the host from {@code
 * file} (trimmed; an absolute path) when given, else from the host's variable {@code env}.
 *
 * <p>{@code file} is null when the value comes from the environment. {@code header} is lower case.
 * An {@code optional} rule whose value is not available on the host is skipped: the jail then gets
 * neither the variable nor a placeholder (agent presets use this for API keys a user may not have).
 */
public record CredentialRule(String env, Path file, List<Target> hosts, String header, boolean optional) {
    /** Port of a credential host written without one: credentials only travel over TLS. */
    public static final int DEFAULT_PORT = 443;

    /** Headers that frame, route or authenticate to the proxy; a credential in them would break or leak. */
    private static final Set<String> RESERVED_HEADERS = Set.of(
            "host",
            "content-length",
            "transfer-encoding",
            "connection",
            "keep-alive",
            "upgrade",
            "te",
            "trailer",
            "proxy-connection",
            "proxy-authorization",
            "proxy-authenticate");

    private static final String TOKEN_PUNCTUATION = "!#$%&'*+-.^_`|~";

    public CredentialRule {
        Optional<String> problem = EnvPolicy.nameProblem(Objects.requireNonNull(env, "env"));
        if (problem.isPresent()) {
            throw new IllegalArgumentException(problem.get());
        }
        if (file != null && !file.isAbsolute()) {
            throw new IllegalArgumentException("file must be absolute: " + file);
        }
        hosts = List.copyOf(hosts);
        if (hosts.isEmpty()) {
            throw new IllegalArgumentException("a credential needs at least one host");
        }
        if (new HashSet<>(hosts).size() != hosts.size()) {
            throw new IllegalArgumentException("host listed twice");
        }
        header = Objects.requireNonNull(header, "header").toLowerCase(Locale.ROOT);
        Optional<String> headerProblem = headerProblem(header);
        if (headerProblem.isPresent()) {
            throw new IllegalArgumentException(headerProblem.get());
        }
    }

    /** A rule whose value must be available when the session starts. */
    public CredentialRule(String env, Path file, List<Target> hosts, String header) {
        this(env, file, hosts, header, false);
    }

    /** Whether the placeholder may be swapped in requests to this canonical target. */
    public boolean appliesTo(Target target) {
        return hosts.contains(Objects.requireNonNull(target, "target"));
    }

    /** Why a header name cannot carry a credential, if it cannot; the name is compared in lower case. */
    static Optional<String> headerProblem(String header) {
        if (header.isEmpty() || !header.chars().allMatch(CredentialRule::isTokenChar)) {
            return Optional.of("invalid header name " + Quoting.quote(header) + ": must be an HTTP token");
        }
        String lower = header.toLowerCase(Locale.ROOT);
        if (RESERVED_HEADERS.contains(lower)) {
            return Optional.of(Quoting.quote(lower) + " frames or routes the request and cannot carry a credential");
        }
        return Optional.empty();
    }

    private static boolean isTokenChar(int c) {
        return (c >= 'a' && c <= 'z')
                || (c >= 'A' && c <= 'Z')
                || (c >= '0' && c <= '9')
                || TOKEN_PUNCTUATION.indexOf(c) >= 0;
    }
}

package dev.agentjail.policy;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Decides whether the entries of a project policy that reach outside the jail and the project (see {@link
 * ProjectRequest}) may be used: only when the user trusts exactly these project-layer files ({@code agentjail policy
 * trust}), and never when a more authoritative layer sets {@code trust.projects: never}. A repository's {@code
 * .agentjail.yaml} comes with the clone, so without this it could hand the agent the user's secrets.
 */
public final class ProjectTrust {
    /** The command that reviews and records trust, as messages name it. */
    public static final String COMMAND = "agentjail policy trust";

    private ProjectTrust() {}

    /** {@code trust.projects}: whether a project policy may be trusted at all. */
    public enum Mode {
        /** The default: a project policy may use such entries once the user trusts it. */
        EXPLICIT,
        /** Trust is ignored: a project policy can never reach outside the jail and the project. */
        NEVER
    }

    /** The effective {@code trust.projects} and where it was written ({@code FILE:LINE}). */
    public record Setting(Mode mode, PolicyLayer layer, String where) {
        static final Setting DEFAULT = new Setting(Mode.EXPLICIT, PolicyLayer.DEFAULTS, "built-in default");

        public Setting {
            Objects.requireNonNull(mode, "mode");
            Objects.requireNonNull(layer, "layer");
            Objects.requireNonNull(where, "where");
        }
    }

    /** How the user's trust in the project policy stands. */
    public enum Status {
        /** The project layer asks for nothing outside the jail and the project. */
        NOT_NEEDED,
        /** It does, and the user trusts exactly these files. */
        TRUSTED,
        /** It does, and the user has not trusted it. */
        UNTRUSTED,
        /** It does, and the user trusted it, but a file changed since. */
        CHANGED,
        /** It does, and {@code trust.projects: never} rules trust out. */
        FORBIDDEN
    }

    /**
     * The verdict with its reason: {@code requests} are the entries that need trust, {@code reason} says why they are
     * (not) usable, as the second half of a policy error.
     */
    public record Result(Status status, List<ProjectRequest> requests, Optional<Path> root, String reason) {
        public Result {
            Objects.requireNonNull(status, "status");
            requests = List.copyOf(requests);
            Objects.requireNonNull(root, "root");
            Objects.requireNonNull(reason, "reason");
        }

        /** Nothing in the project layer needs trust. */
        public static Result notNeeded() {
            return new Result(Status.NOT_NEEDED, List.of(), Optional.empty(), "");
        }

        /** Whether {@code agentjail run} may use the policy. */
        public boolean allowed() {
            return status == Status.NOT_NEEDED || status == Status.TRUSTED;
        }

        /**
         * The error {@code agentjail run} stops with: the first entry needing trust, with its file, line and key,
         * and what to do about it.
         */
        public PolicyException error() {
            if (allowed()) {
                throw new IllegalStateException("nothing to refuse: " + status);
            }
            ProjectRequest first = requests.get(0);
            String more = requests.size() == 1
                    ? ""
                    : " (" + (requests.size() - 1) + " more " + (requests.size() == 2 ? "entry needs" : "entries need")
                            + " it too)";
            return new PolicyException(
                    first.file(),
                    first.line(),
                    first.key(),
                    first.asks() + ", which reaches outside the jail and the project; " + reason + more);
        }

        /** One warning per entry needing trust that is not usable, for commands that only check files. */
        public List<String> warnings() {
            if (allowed()) {
                return List.of();
            }
            return requests.stream()
                    .map(r -> r.where() + ": " + r.key() + ": warning: " + r.asks() + "; " + reason)
                    .toList();
        }
    }

    /** Whether {@code policy}'s project layer may reach outside the jail and the project, given the user's trust. */
    public static Result evaluate(EffectivePolicy policy, TrustedProjects trusted) {
        List<ProjectRequest> requests = policy.projectRequests();
        if (requests.isEmpty()) {
            return Result.notNeeded();
        }
        Optional<ProjectSnapshot> snapshot = policy.projectSnapshot();
        Optional<Path> root = snapshot.map(ProjectSnapshot::root);
        Setting setting = policy.projectTrust();
        if (setting.mode() == Mode.NEVER) {
            return new Result(
                    Status.FORBIDDEN,
                    requests,
                    root,
                    "the " + setting.layer().description() + " forbids trusting project policies (" + setting.where()
                            + ": trust.projects: never); ask for it in your user policy or a --policy file instead");
        }
        String command = COMMAND + root.map(r -> " --project " + r).orElse("");
        Optional<TrustedProjects.Grant> grant = root.flatMap(trusted::grant);
        if (grant.isEmpty()) {
            return new Result(
                    Status.UNTRUSTED,
                    requests,
                    root,
                    "a project policy needs your trust for that; review and trust it with: " + command);
        }
        Optional<String> changed =
                changedFile(snapshot.get().files(), grant.get().files());
        if (changed.isPresent()) {
            return new Result(
                    Status.CHANGED,
                    requests,
                    root,
                    "you trusted this project policy, but " + changed.get() + " since; review and trust it again with: "
                            + command);
        }
        return new Result(Status.TRUSTED, requests, root, "trusted");
    }

    /** Throws the error {@code agentjail run} stops with, unless the project layer's requests may be used. */
    public static void require(EffectivePolicy policy, TrustedProjects trusted) throws PolicyException {
        Result result = evaluate(policy, trusted);
        if (!result.allowed()) {
            throw result.error();
        }
    }

    /** What differs from the trusted files: a file's bytes, a file added, or one no longer extended. */
    private static Optional<String> changedFile(Map<String, String> now, Map<String, String> trusted) {
        for (Map.Entry<String, String> file : now.entrySet()) {
            String before = trusted.get(file.getKey());
            if (before == null) {
                return Optional.of(file.getKey() + " was added to it");
            }
            if (!file.getValue().equals(before)) {
                return Optional.of(file.getKey() + " changed");
            }
        }
        return trusted.keySet().stream()
                .filter(f -> !now.containsKey(f))
                .findFirst()
                .map(f -> f + " was removed from it");
    }
}

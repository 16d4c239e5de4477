package dev.agentjail.policy;

import java.nio.file.Path;
import java.util.ArrayList;
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
        /** The project layer widens nothing. */
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
        /** How many more entries the error names besides the first: the rest are counted. */
        static final int MAX_NAMED = 20;

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
            String more = requests.size() == 1 ? "" : " (it widens the jail at " + others(requests) + " too)";
            return new PolicyException(
                    first.file(),
                    first.line(),
                    first.key(),
                    first.asks() + ", which widens the jail; " + reason + more);
        }

        /** {@code FILE:LINE key} of every request but the first, the first {@value #MAX_NAMED} of them. */
        private static String others(List<ProjectRequest> requests) {
            List<String> named = requests.stream()
                    .skip(1)
                    .limit(MAX_NAMED)
                    .map(r -> r.where() + " " + r.key())
                    .toList();
            int left = requests.size() - 1 - named.size();
            return String.join(", ", named) + (left > 0 ? " and " + left + " more places" : "");
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

    /**
     * Whether {@code policy}'s project layer may widen the jail, given the user's trust: each widening entry needs the
     * trust of the project file it comes from (for a preset a project file extends, that file's) at that file's current
     * SHA-256. The result's requests are the entries refused, or all of them when every one is trusted.
     */
    public static Result evaluate(EffectivePolicy policy, TrustedProjects trusted) {
        List<ProjectRequests.Found> found = policy.projectFindings();
        if (found.isEmpty()) {
            return Result.notNeeded();
        }
        List<ProjectRequest> all =
                found.stream().map(ProjectRequests.Found::request).toList();
        Optional<ProjectSnapshot> snapshot = policy.projectSnapshot();
        Optional<Path> root = snapshot.map(ProjectSnapshot::root);
        Setting setting = policy.projectTrust();
        if (setting.mode() == Mode.NEVER) {
            return new Result(
                    Status.FORBIDDEN,
                    all,
                    root,
                    "the " + setting.layer().description() + " forbids trusting project policies (" + setting.where()
                            + ": trust.projects: never); ask for it in your user policy or a --policy file instead");
        }
        String command = COMMAND + root.map(r -> " --project " + r).orElse("");
        Optional<TrustedProjects.Grant> grant = root.flatMap(trusted::grant);
        Map<String, String> now = snapshot.map(ProjectSnapshot::files).orElse(Map.of());
        List<ProjectRequest> refused = new ArrayList<>();
        Status status = Status.TRUSTED;
        String reason = "trusted";
        for (ProjectRequests.Found f : found) {
            String file = f.trustFile();
            String before = grant.map(g -> g.files().get(file)).orElse(null);
            boolean sameFile = before != null && before.equals(now.get(file));
            if (sameFile && grant.get().entries().contains(entryId(f))) {
                continue;
            }
            refused.add(f.request());
            if (status != Status.TRUSTED) {
                continue;
            }
            if (grant.isEmpty()) {
                status = Status.UNTRUSTED;
                reason = "a project policy needs your trust for that; review and trust it with: " + command;
            } else if (sameFile) {
                // The file is as trusted, but this entry was not shown then: it restated what another layer said, and
                // that layer no longer says it.
                status = Status.CHANGED;
                reason = "you trusted this project policy when another layer already allowed this, so it was not"
                        + " among what you were shown; review and trust it again with: " + command;
            } else {
                status = Status.CHANGED;
                reason = "you trusted this project policy, but " + file
                        + (before == null ? " was added to it" : " changed") + " since; review and trust it again"
                        + " with: " + command;
            }
        }
        return refused.isEmpty()
                ? new Result(Status.TRUSTED, all, root, reason)
                : new Result(status, refused, root, reason);
    }

    /**
     * The identity of a widening entry as trust records it: the SHA-256 of the file whose trust covers it, its key and
     * what it asks for, so trust in a file covers exactly the entries the user was shown for it.
     */
    static String entryId(ProjectRequests.Found found) {
        String text = found.trustFile() + "\0" + found.request().file() + "\0"
                + found.request().key() + "\0" + found.request().asks();
        try {
            return java.util.HexFormat.of()
                    .formatHex(java.security.MessageDigest.getInstance("SHA-256")
                            .digest(text.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }

    /** Throws the error {@code agentjail run} stops with, unless the project layer's requests may be used. */
    public static void require(EffectivePolicy policy, TrustedProjects trusted) throws PolicyException {
        Result result = evaluate(policy, trusted);
        if (!result.allowed()) {
            throw result.error();
        }
    }
}

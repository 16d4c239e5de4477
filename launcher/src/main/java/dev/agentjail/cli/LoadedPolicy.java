package dev.agentjail.cli;

import dev.agentjail.policy.EffectivePolicy;
import dev.agentjail.policy.IoErrors;
import dev.agentjail.policy.MachinePolicyException;
import dev.agentjail.policy.Policy;
import dev.agentjail.policy.PolicyDiscovery;
import dev.agentjail.policy.PolicyException;
import dev.agentjail.policy.PolicyLayer;
import dev.agentjail.policy.PolicyStack;
import dev.agentjail.policy.ProjectTrust;
import dev.agentjail.policy.TrustedProjects;
import dev.agentjail.proxy.audit.Sha256;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.UnaryOperator;

/**
 * The effective policy of a command together with where it came from, a SHA-256 over every document merged into it
 * (for the session record), and how the user's trust in its project layer stands. {@code effective} is empty for the
 * built-in deny-all policy (no policy file applies).
 */
record LoadedPolicy(
        Policy policy, String source, String sha256, Optional<EffectivePolicy> effective, ProjectTrust.Result trust) {
    static final String BUILT_IN = "built-in deny-all";

    static LoadedPolicy builtIn() {
        return new LoadedPolicy(
                Policy.denyAll(),
                BUILT_IN,
                Sha256.hex(new byte[0], 0, 0),
                Optional.empty(),
                ProjectTrust.Result.notNeeded());
    }

    /** Where the user's trust in project policies is kept: {@code $XDG_STATE_HOME/agentjail/trusted-projects.json}. */
    static Path trustStore(Map<String, String> env) {
        return Paths.stateHome(env).toAbsolutePath().normalize().resolve(TrustedProjects.FILE_NAME);
    }

    /**
     * Finds and merges the policy stack, as {@code agentjail run} uses it: machine, team, user, the presets and project
     * file, then the {@code --policy} files. A policy that cannot be used, or a project policy that reaches outside the
     * jail without the user's trust, is a usage error (exit 2); a machine policy file that someone other than root could
     * have written, or that cannot be read, is an environment error (exit 3): nothing starts.
     */
    static LoadedPolicy discover(
            Map<String, String> env, Path home, Optional<Path> projectDir, List<String> presets, List<Path> overrides) {
        LoadedPolicy loaded = review(env, home, projectDir, presets, overrides);
        if (!loaded.trust().allowed()) {
            throw new CliException(ExitCodes.USAGE, loaded.trust().error().getMessage());
        }
        return loaded;
    }

    /**
     * As {@link #discover}, but a project policy the user does not trust is loaded anyway, its trust status in
     * {@link #trust()}: for the commands that only look at policies.
     */
    static LoadedPolicy review(
            Map<String, String> env, Path home, Optional<Path> projectDir, List<String> presets, List<Path> overrides) {
        return review(env, home, projectDir, presets, overrides, inputs -> inputs);
    }

    /**
     * As {@link #review}, but with {@code text} as the project policy file {@code projectFile} (which need not exist
     * yet): the stack as it would be after an edit, checked before the edit is written.
     */
    static LoadedPolicy reviewEdited(
            Map<String, String> env,
            Path home,
            Path projectDir,
            List<String> presets,
            List<Path> overrides,
            Path projectFile,
            String text) {
        PolicyStack.Input edited =
                PolicyStack.Input.text(PolicyLayer.PROJECT, projectFile.toString(), text, projectFile.getParent());
        return review(env, home, Optional.of(projectDir), presets, overrides, found -> {
            List<PolicyStack.Input> inputs = new ArrayList<>(found);
            for (int i = 0; i < inputs.size(); i++) {
                if (inputs.get(i).layer() == PolicyLayer.PROJECT
                        && projectFile.equals(inputs.get(i).file())) {
                    inputs.set(i, edited);
                    return inputs;
                }
            }
            int at = 0;
            while (at < inputs.size() && inputs.get(at).layer().compareTo(PolicyLayer.PROJECT) <= 0) {
                at++;
            }
            inputs.add(at, edited);
            return inputs;
        });
    }

    private static LoadedPolicy review(
            Map<String, String> env,
            Path home,
            Optional<Path> projectDir,
            List<String> presets,
            List<Path> overrides,
            UnaryOperator<List<PolicyStack.Input>> edit) {
        try {
            List<PolicyStack.Input> inputs = edit.apply(
                    PolicyDiscovery.discover(env, home, new PolicyDiscovery.Request(projectDir, presets, overrides)));
            if (inputs.isEmpty()) {
                return builtIn();
            }
            EffectivePolicy effective = PolicyStack.load(inputs, home, projectDir);
            // The store is read only when the project asks for something that needs it.
            TrustedProjects trusted = effective.projectRequests().isEmpty()
                    ? TrustedProjects.none()
                    : TrustedProjects.read(trustStore(env));
            return new LoadedPolicy(
                    effective.policy(),
                    effective.policy().source(),
                    effective.sha256(),
                    Optional.of(effective),
                    ProjectTrust.evaluate(effective, trusted));
        } catch (MachinePolicyException e) {
            throw machinePolicy(e);
        } catch (PolicyException e) {
            throw new CliException(ExitCodes.USAGE, e.getMessage());
        } catch (IOException e) {
            throw new CliException(ExitCodes.USAGE, "cannot look for policy files: " + IoErrors.describe(e));
        }
    }

    /** A machine policy that is not root's alone or cannot be read is the host's problem: nothing starts (exit 3). */
    static CliException machinePolicy(MachinePolicyException e) {
        return new CliException(ExitCodes.ENVIRONMENT, e.getMessage(), e);
    }

    /** Refuses a command-line option that would change a key a policy layer locked. */
    void checkNotLocked(String keyPath, String option) {
        Optional<String> where = effective.flatMap(e -> e.lockedBy(keyPath));
        if (where.isPresent()) {
            throw new CliException(
                    ExitCodes.USAGE,
                    option + ": " + keyPath + " is locked by " + where.get() + "; it cannot be changed");
        }
    }
}

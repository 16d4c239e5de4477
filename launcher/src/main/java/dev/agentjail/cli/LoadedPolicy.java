package dev.agentjail.cli;

import dev.agentjail.policy.EffectivePolicy;
import dev.agentjail.policy.Policy;
import dev.agentjail.policy.PolicyDiscovery;
import dev.agentjail.policy.PolicyException;
import dev.agentjail.policy.PolicyStack;
import dev.agentjail.proxy.audit.Sha256;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The effective policy of a command together with where it came from and a SHA-256 over every
 * document merged into it, for the session record. {@code effective} is empty for the built-in
 * deny-all policy (no policy file applies).
 */
record LoadedPolicy(Policy policy, String source, String sha256, Optional<EffectivePolicy> effective) {
    static final String BUILT_IN = "built-in deny-all";

    static LoadedPolicy builtIn() {
        return new LoadedPolicy(Policy.denyAll(), BUILT_IN, Sha256.hex(new byte[0], 0, 0), Optional.empty());
    }

    /**
     * Finds and merges the policy stack: team, user, the presets and project file, then the {@code
     * --policy} files. A policy that cannot be used is a usage error (exit 2): nothing starts.
     */
    static LoadedPolicy discover(
            Map<String, String> env, Path home, Optional<Path> projectDir, List<String> presets, List<Path> overrides) {
        try {
            List<PolicyStack.Input> inputs =
                    PolicyDiscovery.discover(env, home, new PolicyDiscovery.Request(projectDir, presets, overrides));
            if (inputs.isEmpty()) {
                return builtIn();
            }
            EffectivePolicy effective = PolicyStack.load(inputs, home);
            return new LoadedPolicy(
                    effective.policy(), effective.policy().source(), effective.sha256(), Optional.of(effective));
        } catch (PolicyException e) {
            throw new CliException(ExitCodes.USAGE, e.getMessage());
        } catch (IOException e) {
            throw new CliException(ExitCodes.USAGE, "cannot look for policy files: " + e.getMessage());
        }
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

package dev.agentjail.policy;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.yaml.snakeyaml.nodes.Node;

/**
 * Finds the documents of a policy stack on this machine, from the most authoritative to the least:
 *
 * <ol>
 *   <li>the machine policy: {@code /etc/agentjail/policy.yaml}, then {@code /etc/agentjail/policy.d/*.yaml} in name
 *       order, each read only when it and every directory on the way are root's and only root can write them
 *       ({@link MachinePolicy}). Nothing turns it off or moves it: no variable, option or property;
 *   <li>the team policy, added after the machine's: {@code AGENTJAIL_TEAM_POLICY}, else the user config's {@code team_policy}
 *       ({@code $XDG_CONFIG_HOME/agentjail/config.yaml}); a file, or a directory whose {@code *.yaml}
 *       files are read in name order. A team policy that is named but missing is an error, never
 *       silently skipped;
 *   <li>the user policy: {@code $XDG_CONFIG_HOME/agentjail/policy.yaml}, when it exists;
 *   <li>the presets the command line picks ({@code agentjail run claude}), then the project's {@code
 *       .agentjail.yaml} files, from the repository root down to the project directory ({@link
 *       ProjectPolicies#chain});
 *   <li>{@code --policy} files.
 * </ol>
 */
public final class PolicyDiscovery {
    /** Names the team policy file or directory; wins over the user config's {@code team_policy}. */
    public static final String TEAM_ENV = "AGENTJAIL_TEAM_POLICY";

    private static final int MAX_TEAM_FILES = 64;

    private PolicyDiscovery() {}

    /** What to look for: the project (if any), the presets and {@code --policy} files of the command line. */
    public record Request(Optional<Path> projectDir, List<String> presets, List<Path> overrides) {
        public Request {
            Objects.requireNonNull(projectDir, "projectDir");
            presets = List.copyOf(presets);
            overrides = List.copyOf(overrides);
        }
    }

    /** The directory of agentjail's user configuration: {@code $XDG_CONFIG_HOME/agentjail}, else {@code ~/.config/agentjail}. */
    public static Path configDirectory(Map<String, String> env, Path home) {
        String xdg = env.get("XDG_CONFIG_HOME");
        Path base = xdg != null && !xdg.isEmpty() && Path.of(xdg).isAbsolute() ? Path.of(xdg) : home.resolve(".config");
        return base.resolve("agentjail");
    }

    /**
     * The inputs of the stack, in layer order; empty when no policy file applies at all. A machine policy that is not
     * root's alone, or that cannot be read, is a {@link MachinePolicyException}.
     */
    public static List<PolicyStack.Input> discover(Map<String, String> env, Path home, Request request)
            throws PolicyException, MachinePolicyException, IOException {
        return discover(MachinePolicy.SYSTEM, env, home, request);
    }

    /**
     * The machine policy's inputs alone, for a command that merges a policy file of its own over them ({@code
     * agentjail proxy --policy FILE}).
     */
    public static List<PolicyStack.Input> machine() throws PolicyException, MachinePolicyException {
        return MachinePolicy.SYSTEM.inputs();
    }

    /** As the public {@code discover}, with the machine policy of a test. */
    static List<PolicyStack.Input> discover(MachinePolicy machine, Map<String, String> env, Path home, Request request)
            throws PolicyException, MachinePolicyException, IOException {
        List<PolicyStack.Input> inputs = new ArrayList<>(machine.inputs());
        Path config = configDirectory(env, home);
        Optional<Path> team = teamPolicy(env, home, config);
        if (team.isPresent()) {
            for (Path file : teamFiles(team.get())) {
                inputs.add(PolicyStack.Input.file(PolicyLayer.TEAM, file));
            }
        }
        Path user = config.resolve("policy.yaml");
        if (Files.exists(user)) {
            inputs.add(PolicyStack.Input.file(PolicyLayer.USER, user));
        }
        for (String preset : request.presets()) {
            inputs.add(PolicyStack.Input.preset(PolicyLayer.PROJECT, preset));
        }
        if (request.projectDir().isPresent()) {
            for (Path file : ProjectPolicies.chain(request.projectDir().get())) {
                inputs.add(PolicyStack.Input.file(PolicyLayer.PROJECT, file));
            }
        }
        for (Path file : request.overrides()) {
            inputs.add(PolicyStack.Input.file(PolicyLayer.OVERRIDE, file));
        }
        return inputs;
    }

    /**
     * Where the team policy is named ({@code AGENTJAIL_TEAM_POLICY}, else the user config's {@code team_policy}): a
     * file or a directory of files, if one is named. The launcher keeps it out of the jail's reach.
     */
    public static Optional<Path> teamPolicy(Map<String, String> env, Path home) throws PolicyException {
        return teamPolicy(env, home, configDirectory(env, home));
    }

    private static Optional<Path> teamPolicy(Map<String, String> env, Path home, Path config) throws PolicyException {
        String named = env.get(TEAM_ENV);
        if (named != null && !named.isEmpty()) {
            return Optional.of(Path.of(named).toAbsolutePath().normalize());
        }
        Path configFile = config.resolve("config.yaml");
        if (!Files.exists(configFile)) {
            return Optional.empty();
        }
        return UserConfig.read(configFile, home).teamPolicy();
    }

    private static List<Path> teamFiles(Path team) throws PolicyException, IOException {
        String name = team.toString();
        if (!Files.exists(team)) {
            throw new PolicyException(name, 0, "-", "cannot read the team policy: no such file or directory");
        }
        if (!Files.isDirectory(team)) {
            return List.of(team);
        }
        List<Path> files = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(team, "*.{yaml,yml}")) {
            for (Path entry : entries) {
                files.add(entry);
            }
        }
        if (files.size() > MAX_TEAM_FILES) {
            throw new PolicyException(
                    name, 0, "-", "more than " + MAX_TEAM_FILES + " policy files in the team directory");
        }
        files.sort(null);
        return files;
    }

    /** The user config file: only {@code team_policy} for now, read as strictly as a policy. */
    record UserConfig(Optional<Path> teamPolicy) {
        static UserConfig read(Path file, Path home) throws PolicyException {
            String name = file.toString();
            Path parent = file.toAbsolutePath().normalize().getParent();
            PolicySource source = new PolicySource(PolicyLayer.USER, name, parent);
            String text = PolicyDocument.read(file, name);
            Origins origins = new Origins(source);
            YamlNodes nodes = new YamlNodes(origins);
            Node root = PolicyDocument.composeConfig(text, name);
            if (root == null) {
                return new UserConfig(Optional.empty());
            }
            Map<String, Node> entries = nodes.mapping(root, "", java.util.Set.of("team_policy"));
            Node team = entries.get("team_policy");
            if (team == null) {
                return new UserConfig(Optional.empty());
            }
            return new UserConfig(Optional.of(new PolicyFiles(origins, home).read(nodes, team, "team_policy")));
        }
    }
}

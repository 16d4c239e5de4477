package dev.agentjail.cli;

import dev.agentjail.policy.PolicyException;
import dev.agentjail.policy.PolicyLayer;
import dev.agentjail.policy.PolicyStack;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code agentjail policy}: checks, shows, suggests and trusts policies; lists the agent presets. */
@Command(
        name = "policy",
        mixinStandardHelpOptions = true,
        description = "Checks, shows, suggests and trusts policies; lists the agent presets.",
        subcommands = {
            PolicyCommand.Check.class,
            PolicyCommand.Show.class,
            PolicySuggest.class,
            PolicyTrustCommand.class,
            PolicyPresets.class,
            PolicySchema.class
        })
final class PolicyCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        spec.commandLine().usage(spec.commandLine().getOut());
        return ExitCodes.OK;
    }

    /** The options that pick the policy stack, as {@code agentjail run} has them. */
    static final class StackOptions {
        @Option(
                names = "--project",
                paramLabel = "DIR",
                description = "Project directory whose .agentjail.yaml applies (default: the current directory).")
        Path project;

        @Option(
                names = "--policy",
                paramLabel = "FILE",
                description = "Policy file merged on top, as agentjail run --policy (repeatable).")
        List<Path> policyFiles = new ArrayList<>();

        @Option(
                names = "--preset",
                paramLabel = "NAME",
                description = "Agent preset applied under the project policy (repeatable).")
        List<String> presets = new ArrayList<>();

        /** The stack as agentjail run would merge it; a project policy not trusted yet loads, with its status. */
        LoadedPolicy load() {
            return load(System.getenv());
        }

        /** As {@link #load()}, with the policy files found from {@code env} (HOME, XDG_CONFIG_HOME, the team policy). */
        LoadedPolicy load(Map<String, String> env) {
            return LoadedPolicy.review(env, Paths.home(env), Optional.of(projectDir(project)), presets, policyFiles);
        }

        /** As {@link #load}, with {@code text} as the project policy file {@code projectFile}: after an edit. */
        LoadedPolicy loadEdited(Map<String, String> env, Path projectFile, String text) {
            return LoadedPolicy.reviewEdited(
                    env, Paths.home(env), projectDir(project), presets, policyFiles, projectFile, text);
        }

        /** {@code --project DIR} (default: the current directory), checked to be a directory. */
        static Path projectDir(Path project) {
            Path dir =
                    (project != null ? project : Path.of("")).toAbsolutePath().normalize();
            if (!Files.isDirectory(dir)) {
                throw new CliException(ExitCodes.USAGE, "--project: not a directory: " + dir);
            }
            return dir;
        }
    }

    /** Prints why agentjail run would refuse the project policy's entries that need the user's trust, if it would. */
    static void warnUntrusted(LoadedPolicy loaded, PrintWriter err) {
        loaded.trust().warnings().forEach(err::println);
        err.flush();
    }

    /** {@code agentjail policy check}. */
    @Command(
            name = "check",
            mixinStandardHelpOptions = true,
            description = {
                "Validates policy files. With FILEs, checks each on its own (with what it extends);",
                "without, checks the policy agentjail run would use here: machine, team, user, preset,",
                "project and --policy files merged. Each error names the file, line and key, with the",
                "nearest valid key for a typo. Exit code 0 when valid, 2 when not, 3 when a machine",
                "policy file is not root's alone. Entries of the project policy that need your trust",
                "(agentjail policy trust) and do not have it are warnings here."
            })
    static final class Check implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Mixin
        StackOptions stack;

        @Parameters(arity = "0..*", paramLabel = "FILE", description = "Policy files to check on their own.")
        List<Path> files = new ArrayList<>();

        @Override
        public Integer call() {
            PrintWriter out = spec.commandLine().getOut();
            PrintWriter err = spec.commandLine().getErr();
            if (files.isEmpty()) {
                LoadedPolicy loaded = stack.load();
                if (loaded.effective().isEmpty()) {
                    out.println("ok: no policy file applies here; the built-in deny-all policy (no network) would");
                    return ExitCodes.OK;
                }
                List<String> names = loaded.effective().get().sources().stream()
                        .map(s -> s.layer().description() + " " + s.name())
                        .toList();
                out.println("ok: " + String.join(", ", names));
                out.flush();
                warnUntrusted(loaded, err);
                return ExitCodes.OK;
            }
            int exit = ExitCodes.OK;
            Path home = Paths.home(System.getenv());
            for (Path file : files) {
                try {
                    PolicyStack.load(List.of(PolicyStack.Input.file(PolicyLayer.OVERRIDE, file)), home);
                    out.println("ok: " + file);
                } catch (PolicyException e) {
                    err.println(e.getMessage());
                    exit = ExitCodes.USAGE;
                }
            }
            return exit;
        }
    }

    /** {@code agentjail policy show}. */
    @Command(
            name = "show",
            mixinStandardHelpOptions = true,
            description = {
                "Prints the effective policy agentjail run would use here, merged from every layer, as",
                "YAML that loads back to the same policy. --origin adds the file and line of every value,",
                "and marks the project entries that need your trust (agentjail policy trust) with whether",
                "they have it."
            })
    static final class Show implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Mixin
        StackOptions stack;

        @Option(names = "--origin", description = "Annotate every value with the file and line it came from.")
        boolean origin;

        @Override
        public Integer call() {
            PrintWriter out = spec.commandLine().getOut();
            LoadedPolicy loaded = stack.load();
            if (loaded.effective().isEmpty()) {
                out.println("# no policy file applies here: the built-in deny-all policy (no network)");
                out.println("version: 1");
                return ExitCodes.OK;
            }
            out.print(loaded.effective().get().render(origin, loaded.trust()));
            out.flush();
            warnUntrusted(loaded, spec.commandLine().getErr());
            return ExitCodes.OK;
        }
    }
}

package dev.agentjail.cli;

import dev.agentjail.policy.IoErrors;
import dev.agentjail.policy.Preset;
import dev.agentjail.policy.Presets;
import dev.agentjail.policy.ProjectPolicies;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code agentjail init}: writes a commented {@code .agentjail.yaml} for the project. */
@Command(
        name = "init",
        mixinStandardHelpOptions = true,
        description = {
            "Writes a commented .agentjail.yaml into the project directory: deny by default, the agent's",
            "preset when --agent names one, and the common settings commented out. Refuses to overwrite",
            "an existing file unless --force."
        })
final class ProjectInitCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(
            names = "--agent",
            paramLabel = "NAME",
            description = "Agent preset to extend (see agentjail policy presets), by its name or its program's, e.g."
                    + " claude-code or claude.")
    String agent;

    @Option(
            names = "--project",
            paramLabel = "DIR",
            description = "Project directory (default: the current directory).")
    Path project;

    @Option(names = "--force", description = "Overwrite an existing .agentjail.yaml.")
    boolean force;

    @Override
    public Integer call() {
        Path dir = (project != null ? project : Path.of("")).toAbsolutePath().normalize();
        if (!Files.isDirectory(dir)) {
            throw new CliException(ExitCodes.USAGE, "--project: not a directory: " + dir);
        }
        Optional<Preset> preset = Optional.empty();
        if (agent != null) {
            // The names `agentjail run` knows an agent by: a preset's, or the program it runs (claude for claude-code).
            preset = Presets.named(agent).or(() -> Presets.forProgram(agent));
            if (preset.isEmpty()) {
                throw new CliException(
                        ExitCodes.USAGE,
                        "--agent: unknown agent '" + agent + "'; known: " + String.join(", ", Presets.names())
                                + ", or the program one runs (as agentjail run PROGRAM picks its preset)");
            }
        }
        Path file = dir.resolve(ProjectPolicies.FILE_NAME);
        try {
            if (force) {
                Files.writeString(file, template(preset), StandardCharsets.UTF_8);
            } else {
                Files.writeString(file, template(preset), StandardCharsets.UTF_8, StandardOpenOption.CREATE_NEW);
            }
        } catch (FileAlreadyExistsException e) {
            throw new CliException(ExitCodes.USAGE, file + " already exists; edit it, or use --force to replace it");
        } catch (IOException e) {
            throw new CliException(ExitCodes.FAILURE, "cannot write " + file + ": " + IoErrors.describe(file, e), e);
        }
        PrintWriter out = spec.commandLine().getOut();
        out.println("wrote " + file);
        out.println(
                "check it with: agentjail policy check; see the effective policy with: agentjail policy show --origin");
        out.println("what it widens (its preset, hosts you add) needs your trust once reviewed: agentjail policy trust"
                + (project != null ? " --project " + dir : ""));
        return ExitCodes.OK;
    }

    static String template(Optional<Preset> preset) {
        String extendsLine = preset.map(p -> "extends: [" + p.name() + "]    # " + p.description() + "\n")
                .orElse("# extends: [claude-code]    # an agent preset: agentjail policy presets lists them\n");
        return """
                # agentjail policy for this project. Reference: docs/policy.md in the agentjail repository.
                # Check it with `agentjail policy check`; `agentjail policy show --origin` prints the
                # effective policy. Team and user policies apply too: this file adds to them, and can never
                # lift their denies or change what they lock.
                version: 1
                """ + extendsLine + """

                network:
                  # Hosts the agent may reach besides its preset's, e.g. your package registry or git host.
                  # Patterns: exact host, or *.domain (subdomains only); an optional :port.
                  allow: []
                  # deny: []                # always wins over allow, in every layer
                  # mode: report            # learning mode: let unlisted hosts through but record them, then
                  #                         # agentjail policy suggest --from-log <audit log>

                # What this file adds that widens the jail (hosts, report mode, MCP servers, host paths,
                # forwarded variables, credentials, raised limits, ...) needs your trust, once per reviewed
                # change: `agentjail policy trust`. Denies, masks, protected paths and lower limits apply
                # without it.
                # filesystem:
                #   mask: [".env", "**/.env", "*.pem"]   # hidden behind empty files inside the jail
                #   read: ["~/.gitconfig"]               # extra read-only paths from the host (needs trust)

                # env:
                #   forward: [GIT_AUTHOR_NAME, GIT_AUTHOR_EMAIL]   # copied from the host (needs trust)

                # limits:
                #   timeout: 4h
                """;
    }
}

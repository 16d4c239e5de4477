package dev.agentjail.cli;

import dev.agentjail.policy.IoErrors;
import dev.agentjail.policy.PolicyLoader;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code agentjail policy schema}: prints the JSON Schema of policy files, for editors. */
@Command(
        name = "schema",
        mixinStandardHelpOptions = true,
        description = {
            "Prints the JSON Schema of policy files (version 1), for editors to complete and check them:",
            "",
            "  agentjail policy schema > .agentjail.schema.json",
            "",
            "then add this comment to the policy (other editors: docs/policy-schema.md):",
            "",
            "  # yaml-language-server: $schema=.agentjail.schema.json"
        })
final class PolicySchema implements Callable<Integer> {
    /** Beside the policy classes in the policies module; ASCII, ending in a newline. */
    static final String RESOURCE = "policy-v1.schema.json";

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        out.print(text());
        out.flush();
        return ExitCodes.OK;
    }

    /** The schema as built into this agentjail. */
    static String text() {
        try (InputStream in = PolicyLoader.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new CliException(
                        ExitCodes.FAILURE, "this build of agentjail lacks the policy schema (" + RESOURCE + ")");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new CliException(ExitCodes.FAILURE, "cannot read the policy schema: " + IoErrors.describe(e), e);
        }
    }
}

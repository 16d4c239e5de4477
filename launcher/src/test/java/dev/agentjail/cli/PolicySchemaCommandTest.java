package dev.agentjail.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.policy.PolicyLoader;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class PolicySchemaCommandTest {
    /** The resource as the policies jar holds it, read independently of the command. */
    private static String resource() throws Exception {
        try (InputStream in = PolicyLoader.class.getResourceAsStream("policy-v1.schema.json")) {
            assertTrue(in != null, "the policies jar holds policy-v1.schema.json");
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    /** Runs the command alone, with its own writers. */
    private static String[] execute(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cli = new CommandLine(new PolicySchema());
        cli.setOut(new PrintWriter(out));
        cli.setErr(new PrintWriter(err));
        int code = cli.execute(args);
        return new String[] {String.valueOf(code), out.toString(), err.toString()};
    }

    @Test
    void printsTheBuiltInSchemaVerbatim() throws Exception {
        String[] run = execute();
        assertEquals(String.valueOf(ExitCodes.OK), run[0], run[2]);
        assertEquals(resource(), run[1]);
        assertEquals("", run[2]);
        assertTrue(run[1].startsWith("{\n"), run[1]);
        assertTrue(run[1].endsWith("}\n"), "ends with one newline, so a redirect writes a proper text file");
        assertTrue(run[1].contains("\"$schema\": \"https://json-schema.org/draft/2020-12/schema\""));
        assertTrue(run[1].contains("\"$id\": \"https://agentjail.dev/schema/policy-v1.json\""));
    }

    @Test
    void helpSaysHowToUseIt() {
        String[] run = execute("--help");
        assertEquals(String.valueOf(ExitCodes.OK), run[0]);
        assertTrue(run[1].contains("yaml-language-server: $schema="), run[1]);
    }

    @Test
    void agentjailPolicySchemaPrintsIt() throws Exception {
        CommandLine policy = Main.commandLine().getSubcommands().get("policy");
        assertTrue(policy.getSubcommands().containsKey("schema"), "'agentjail policy schema' is registered");
        CaCommandTest.Run run = CaCommandTest.run("policy", "schema");
        assertEquals(ExitCodes.OK, run.exitCode(), run.err());
        assertEquals(resource(), run.out());
    }
}

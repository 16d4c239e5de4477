package dev.agentjail.it.jail;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * An agent cannot widen a later session's jail through policy files: the project's own {@code .agentjail.yaml} is
 * read-only in the jail, one it writes in a subdirectory (for a later session started there) is quarantined at the
 * end, and a session started in a subdirectory applies the repository root's policy under the subdirectory's, whose
 * widening entries wait for the user's trust.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class ProjectPolicyPlantTest {
    private static final String ROOT_POLICY = "version: 1\nfilesystem:\n  mask: [\"secret.txt\", \"**/secret.txt\"]\n";
    private static final String WIDENING = "version: 1\nnetwork:\n  mode: report\n";

    @TempDir
    Path dir;

    @Test
    void plantedPoliciesAreRefusedAndASubdirectorySessionKeepsTheRootsDenies() throws IOException {
        AgentjailRun.requireBwrap();
        AgentjailRun run = AgentjailRun.in(dir);
        Path p = run.project();
        HostExecutedSurfacesTest.git(p, "init", "-q");
        Path rootPolicy = Files.writeString(p.resolve(".agentjail.yaml"), ROOT_POLICY);
        Files.createDirectories(p.resolve("sub"));
        Files.writeString(p.resolve("sub/secret.txt"), "s3cret\n");

        AgentjailRun.Outcome o = run.bash("""
                echo 'version: 1' > .agentjail.yaml; echo "root=$?"
                printf '%s' > sub/.agentjail.yaml; echo "sub=$?"
                mkdir -p deep/er && printf '%s' > deep/er/.agentjail.yaml; echo "deep=$?"
                """.formatted(WIDENING.replace("\n", "\\n"), WIDENING.replace("\n", "\\n")));

        assertEquals(0, o.exitCode(), o::describe);
        assertAll(
                () -> assertNotEquals("0", o.probe("root"), "the jail rewrote the project's policy: " + o.describe()),
                () -> assertEquals("0", o.probe("sub"), o::describe),
                () -> assertEquals(ROOT_POLICY, Files.readString(rootPolicy)),
                () -> assertFalse(
                        Files.exists(p.resolve("sub/.agentjail.yaml"), LinkOption.NOFOLLOW_LINKS),
                        "the planted policy is still there: " + o.describe()),
                () -> assertFalse(
                        Files.exists(p.resolve("deep/er/.agentjail.yaml"), LinkOption.NOFOLLOW_LINKS),
                        "the planted policy is still there: " + o.describe()),
                () -> assertTrue(
                        o.err().contains("new agentjail-policy " + p.resolve("sub/.agentjail.yaml")), o::describe));

        // A subdirectory's own file (one the user keeps there) adds to the root's; what it widens waits for trust.
        Path subPolicy = Files.writeString(p.resolve("sub/.agentjail.yaml"), WIDENING);
        AgentjailRun sub = AgentjailRun.in(dir.resolve("sub-run")).project(p.resolve("sub"));
        AgentjailRun.Outcome refused = sub.bash("echo ran=yes");
        assertEquals(2, refused.exitCode(), refused::describe);
        assertFalse(refused.out().contains("ran=yes"), refused::describe);
        assertTrue(
                refused.err().contains(subPolicy.toRealPath() + ":3: network.mode: switches to report mode"),
                refused::describe);

        // What only narrows applies at once, and the root's mask still hides the secret in the subdirectory.
        Files.writeString(subPolicy, "version: 1\nlimits:\n  timeout: 1h\n");
        AgentjailRun.Outcome ran = sub.bash("echo \"secret=$(cat secret.txt)\"");
        assertEquals(0, ran.exitCode(), ran::describe);
        assertEquals("", ran.probe("secret"), ran::describe);
    }

    @Test
    void everyPolicyFileTheSessionReadIsReadOnlyInTheJail() throws IOException {
        AgentjailRun.requireBwrap();
        AgentjailRun run = AgentjailRun.in(dir);
        Path p = run.project();
        Files.createDirectories(p.resolve("policies"));
        Path base = Files.writeString(p.resolve("policies/base.yaml"), "version: 1\nlimits:\n  timeout: 1h\n");
        Files.writeString(p.resolve(".agentjail.yaml"), "version: 1\nextends: [policies/base.yaml]\n");
        Path override = Files.writeString(p.resolve("policies/override.yaml"), "version: 1\n");
        run.options("--policy", override.toString());

        AgentjailRun.Outcome o = run.bash("""
                echo 'network: {mode: report}' >> policies/base.yaml; echo "base=$?"
                echo 'network: {mode: report}' >> policies/override.yaml; echo "override=$?"
                mv policies policies.old; echo "moved=$?"
                """);

        assertEquals(0, o.exitCode(), o::describe);
        assertAll(
                () -> assertNotEquals("0", o.probe("base"), o::describe),
                () -> assertNotEquals("0", o.probe("override"), o::describe),
                () -> assertNotEquals("0", o.probe("moved"), o::describe),
                () -> assertEquals("version: 1\nlimits:\n  timeout: 1h\n", Files.readString(base)),
                () -> assertEquals("version: 1\n", Files.readString(override)));
    }

    @Test
    void aTeamPolicyDirectoryInTheProjectTakesNoNewFile() throws IOException {
        AgentjailRun.requireBwrap();
        AgentjailRun run = AgentjailRun.in(dir);
        Path team = Files.createDirectories(run.project().resolve("team"));
        Files.writeString(team.resolve("base.yaml"), "version: 1\n");
        run.env("AGENTJAIL_TEAM_POLICY", team.toString());

        AgentjailRun.Outcome o =
                run.bash("printf 'version: 1\\nnetwork: {mode: report}\\n' > team/zz.yaml; echo \"added=$?\"");

        assertEquals(0, o.exitCode(), o::describe);
        assertNotEquals("0", o.probe("added"), o::describe);
        assertFalse(Files.exists(team.resolve("zz.yaml"), LinkOption.NOFOLLOW_LINKS), o::describe);
    }

    @Test
    void aPolicyFileTheJailCouldWriteThroughABindStartsNothing() throws IOException {
        AgentjailRun.requireBwrap();
        AgentjailRun run = AgentjailRun.in(dir);
        Path tools = Files.createDirectories(dir.resolve("tools"));
        run.policy("version: 1\n");
        Path policy = Files.writeString(
                tools.resolve("policy.yaml"), "version: 1\nfilesystem:\n  write: [" + tools.toRealPath() + "]\n");
        run.options("--policy", policy.toString());

        AgentjailRun.Outcome o = run.bash("echo ran=yes");

        assertEquals(2, o.exitCode(), o::describe);
        assertFalse(o.out().contains("ran=yes"), o::describe);
        assertTrue(
                o.err()
                        .contains(
                                "the policy file " + policy + " would be writable inside the jail through the bind of"),
                o::describe);
    }
}

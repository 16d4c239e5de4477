package dev.agentjail.it.jail;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A symbolic link that one session's agent leaves in a directory it may write does not widen the next session's
 * view. Under the claude-code preset ~/.claude is writable and ~/.claude/settings.json is bound read-only over it when
 * it exists; an agent that finds no settings.json can make it a link to {@code ..}, and bwrap, binding that path in
 * the next session, would follow the link and show the whole home, ~/.ssh included. The next session must refuse to
 * start instead, and say which link to remove. A link the user made to a path the policy names still works.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class PlantedLinkTest {
    private static final String KEY = "canary-planted-link-ssh-key-5e1d";

    @TempDir
    Path dir;

    @Test
    void aLinkPlantedInTheClaudeConfigDirectoryDoesNotShowTheHomeToTheNextSession() throws IOException {
        AgentjailRun.requireBwrap();
        AgentjailRun run = AgentjailRun.in(dir).options("--preset", "claude-code");
        Files.createDirectories(run.home().resolve(".ssh"));
        Files.writeString(run.home().resolve(".ssh/id_ed25519"), KEY);
        Files.createDirectories(run.home().resolve(".claude"));

        AgentjailRun.Outcome plant = run.bash("""
                ln -s .. ~/.claude/settings.json; echo "planted=$?"
                """);
        // The missing settings file is made (neutral) and bound read-only now: the agent cannot plant the link at all.
        assertEquals(0, plant.exitCode(), plant::describe);
        assertNotEquals("0", plant.probe("planted"), plant::describe);
        assertEquals("{}\n", Files.readString(run.home().resolve(".claude/settings.json")));
        // One planted before that (by an older agentjail, or by hand) must still stop the next session.
        Files.delete(run.home().resolve(".claude/settings.json"));
        Files.createSymbolicLink(run.home().resolve(".claude/settings.json"), Path.of(".."));

        AgentjailRun.Outcome next = run.bash("""
                echo "key=$(cat ~/.ssh/id_ed25519 ~/.claude/settings.json/.ssh/id_ed25519 2>/dev/null)"
                """);

        next.assertRefused("filesystem.read ~/.claude/settings.json leads through the symbolic link "
                + run.home().toRealPath().resolve(".claude/settings.json") + " -> ..");
        assertAll(
                () -> assertFalse(next.out().contains(KEY), next::describe),
                () -> assertFalse(next.err().contains(KEY), next::describe),
                () -> assertTrue(next.err().contains("remove it"), next::describe));

        Files.delete(run.home().resolve(".claude/settings.json"));
        AgentjailRun.Outcome after = run.bash("""
                echo "started=yes"
                """);
        assertEquals(0, after.exitCode(), after::describe);
        assertEquals("yes", after.probe("started"), after::describe);
    }

    @Test
    void aProjectDirectoryThatLeadsIntoOrHoldsACredentialDirectoryIsRefused() throws IOException {
        AgentjailRun.requireBwrap();
        AgentjailRun run = AgentjailRun.in(dir);
        Path home = run.home().toRealPath();
        Files.createDirectories(home.resolve(".ssh"));
        Files.writeString(home.resolve(".ssh/id_ed25519"), KEY);
        Files.createDirectories(home.resolve(".config/gcloud"));
        // The project directory replaced by a link to ~/.ssh, as an agent with write access to its parent could do.
        Files.delete(run.project());
        Files.createSymbolicLink(run.project(), home.resolve(".ssh"));

        AgentjailRun.Outcome intoSsh = run.bash("echo \"key=$(cat id_ed25519)\"");

        intoSsh.assertRefused("the project directory " + home.resolve(".ssh") + " lies inside " + home.resolve(".ssh"));
        assertFalse(intoSsh.out().contains(KEY), intoSsh::describe);

        Files.delete(run.project());
        Files.createSymbolicLink(run.project(), home.resolve(".config"));
        AgentjailRun.Outcome holdsGcloud = run.bash("echo started=yes");
        holdsGcloud.assertRefused(" holds " + home.resolve(".config/gcloud"));
    }

    @Test
    void aDotfileLinkToAPathThePolicyNamesIsFollowed() throws IOException {
        AgentjailRun.requireBwrap();
        AgentjailRun run = AgentjailRun.in(dir).policy("""
                version: 1
                filesystem:
                  read: ["~/.gitconfig", "~/dotfiles"]
                """);
        Files.createDirectories(run.home().resolve("dotfiles"));
        Files.writeString(run.home().resolve("dotfiles/gitconfig"), "[user]\n\tname = canary-dotfile-user\n");
        Files.createSymbolicLink(run.home().resolve(".gitconfig"), Path.of("dotfiles/gitconfig"));

        AgentjailRun.Outcome o = run.bash("""
                echo "name=$(git config --global user.name 2>/dev/null || sed -n 's/.*name = //p' ~/.gitconfig)"
                echo "write=$( (echo x >> ~/.gitconfig) 2>/dev/null && echo yes || echo no)"
                """);

        assertEquals(0, o.exitCode(), o::describe);
        assertEquals("canary-dotfile-user", o.probe("name"), o::describe);
        assertEquals("no", o.probe("write"), o::describe);
        assertEquals(
                "[user]\n\tname = canary-dotfile-user\n",
                Files.readString(run.home().resolve("dotfiles/gitconfig")),
                "the host's file is untouched");
    }

    @Test
    void aDotfileLinkToAPathThePolicyDoesNotNameStopsTheSession() throws IOException {
        AgentjailRun.requireBwrap();
        AgentjailRun run = AgentjailRun.in(dir).policy("""
                version: 1
                filesystem:
                  read: ["~/.gitconfig"]
                """);
        Files.createDirectories(run.home().resolve("dotfiles"));
        Files.writeString(run.home().resolve("dotfiles/gitconfig"), "[user]\n");
        Files.createSymbolicLink(run.home().resolve(".gitconfig"), Path.of("dotfiles/gitconfig"));

        AgentjailRun.Outcome o = run.bash("echo started=yes");

        o.assertRefused("add " + run.home().toRealPath().resolve("dotfiles/gitconfig") + " to filesystem.read");
    }
}

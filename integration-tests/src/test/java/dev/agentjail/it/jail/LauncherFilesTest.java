package dev.agentjail.it.jail;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * What agentjail itself runs or reads on the host stays out of the agent's reach for writing: its cache (the init
 * program that runs on the host before bwrap, Netty's native libraries, the class-data archives the launcher's JVM
 * maps), its user configuration (the policy of every later session) and its own jar. A writable bind of ~/.cache or
 * ~/.config, or a cache inside the project, stops the session before the jail starts; a read-only view is harmless
 * and allowed, and so is a project that holds agentjail's own jar (working on agentjail itself).
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class LauncherFilesTest {
    @TempDir
    Path dir;

    @Test
    void aWritableBindOfTheCacheDirectoryIsRefused() throws IOException {
        AgentjailRun.requireBwrap();
        AgentjailRun run = AgentjailRun.in(dir).policy("""
                version: 1
                filesystem:
                  write: ["~/.cache"]
                """);
        Path cache = run.home().resolve(".cache/agentjail");

        AgentjailRun.Outcome o = run.bash("touch ~/.cache/agentjail/planted; echo started=yes");

        o.assertRefused("agentjail's cache " + cache + " would be writable inside the jail");
        assertFalse(Files.exists(cache.resolve("planted")), o::describe);
    }

    @Test
    void aCacheInsideTheProjectIsRefused() {
        AgentjailRun.requireBwrap();
        AgentjailRun run = AgentjailRun.in(dir);
        run.env("XDG_CACHE_HOME", run.project().resolve(".cache").toString());

        AgentjailRun.Outcome o = run.bash("echo started=yes");

        o.assertRefused("the project directory " + run.project() + " holds agentjail's cache ("
                + run.project().resolve(".cache/agentjail"));
    }

    @Test
    void aWritableBindOfTheUserConfigurationIsRefused() throws IOException {
        AgentjailRun.requireBwrap();
        AgentjailRun run = AgentjailRun.in(dir).policy("""
                version: 1
                filesystem:
                  write: ["~/.config/agentjail"]
                """);
        Files.createDirectories(run.home().resolve(".config/agentjail"));

        AgentjailRun.Outcome o = run.bash("echo started=yes");

        o.assertRefused("agentjail's user configuration " + run.home().resolve(".config/agentjail"));
    }

    @Test
    void aWritableBindHoldingAgentjailsOwnJarIsRefusedAndAProjectHoldingItIsNot() throws IOException {
        AgentjailRun.requireBwrap();
        Path tools = Files.createDirectories(dir.resolve("tools"));
        AgentjailRun run = AgentjailRun.in(dir).policy("""
                version: 1
                filesystem:
                  write: ["%s"]
                """.formatted(tools));
        Path jar = Files.copy(AgentjailRun.jar(), tools.resolve("agentjail.jar"));
        run.jar(jar);

        AgentjailRun.Outcome bound = run.bash("echo started=yes");

        bound.assertRefused("agentjail's installation " + jar + " would be writable");

        // Working on agentjail itself: the project holds the jar the session runs from.
        AgentjailRun inProject = AgentjailRun.in(dir.resolve("other"));
        inProject.jar(Files.copy(AgentjailRun.jar(), inProject.project().resolve("agentjail.jar")));
        AgentjailRun.Outcome o = inProject.bash("echo started=yes");
        assertEquals(0, o.exitCode(), o::describe);
        assertEquals("yes", o.probe("started"), o::describe);
    }

    @Test
    void aReadOnlyViewOfTheCacheIsAllowed() throws IOException {
        AgentjailRun.requireBwrap();
        AgentjailRun run = AgentjailRun.in(dir).policy("""
                version: 1
                filesystem:
                  read: ["~/.cache"]
                """);
        Files.createDirectories(run.home().resolve(".cache"));

        AgentjailRun.Outcome o = run.bash("""
                echo "write=$( (touch ~/.cache/agentjail/planted) 2>/dev/null && echo yes || echo no)"
                """);

        assertEquals(0, o.exitCode(), o::describe);
        assertEquals("no", o.probe("write"), o::describe);
        assertFalse(Files.exists(run.home().resolve(".cache/agentjail/planted")));
    }
}

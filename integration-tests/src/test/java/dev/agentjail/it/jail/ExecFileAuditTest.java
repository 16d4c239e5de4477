package dev.agentjail.it.jail;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.agentjail.cli.ExitCodes;
import dev.agentjail.it.support.Command;
import dev.agentjail.proxy.audit.AuditRecord;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The exec and file audit in real jails (docs/jail.md "Exec and file audit", docs/audit-log.md "Inside the jail"):
 * the records a known command sequence gives, a caller that races its own memory, a burst, and a supervisor killed
 * while the jail runs, under both failure policies.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class ExecFileAuditTest {
    @TempDir
    Path dir;

    @BeforeEach
    void setUp() {
        AgentjailRun.requireBwrap();
    }

    private static List<JsonNode> ofKind(List<JsonNode> audit, String... kinds) {
        Set<String> wanted = Set.of(kinds);
        return audit.stream()
                .filter(r -> wanted.contains(r.path("kind").asText()))
                .toList();
    }

    /** Compiles {@code source} into the project as {@code name} (threads allowed), on the host. */
    private Path compile(AgentjailRun run, String name, String source) throws Exception {
        Path file = dir.resolve(name + ".c");
        Files.writeString(file, source);
        Path binary = run.project().resolve(name);
        Process cc = new ProcessBuilder("gcc", "-O1", "-pthread", "-o", binary.toString(), file.toString())
                .inheritIO()
                .start();
        assertTrue(cc.waitFor(60, TimeUnit.SECONDS) && cc.exitValue() == 0, "gcc failed");
        return binary;
    }

    private static String describe(JsonNode r) {
        if (r.has("exec")) {
            JsonNode e = r.path("exec");
            List<String> argv = new ArrayList<>();
            e.path("argv").forEach(a -> argv.add(a.asText()));
            String path = e.path("path").asText();
            return "exec " + path.substring(path.lastIndexOf('/') + 1) + " " + String.join(" ", argv);
        }
        JsonNode f = r.path("file");
        return "file " + f.path("op").asText() + " " + f.path("path").asText()
                + (f.has("target") ? " -> " + f.path("target").asText() : "");
    }

    @Test
    void aShellSequenceGivesExactlyItsExecAndFileRecordsInOrderAndNoneForTheRead() {
        String script = "echo > a; mv a b; rm b; ln -s x y; mkdir d; cat /etc/hostname";
        AgentjailRun run = AgentjailRun.in(dir);
        AgentjailRun.Outcome o = run.run("/bin/sh", "-c", script);

        List<JsonNode> audit = o.audit();
        List<String> seen = ofKind(audit, AuditRecord.KIND_EXEC, AuditRecord.KIND_FILE).stream()
                .map(ExecFileAuditTest::describe)
                .toList();
        assertEquals(
                List.of(
                        "exec sh /bin/sh -c " + script,
                        "file write a",
                        "exec mv mv a b",
                        "file rename a -> b",
                        "exec rm rm b",
                        "file unlink b",
                        "exec ln ln -s x y",
                        "file symlink y -> x",
                        "exec mkdir mkdir d",
                        "file mkdir d",
                        "exec cat cat /etc/hostname"),
                seen,
                o::describe);
        JsonNode write = ofKind(audit, AuditRecord.KIND_FILE).get(0).path("file");
        assertEquals("[\"create\",\"truncate\"]", write.path("flags").toString(), write::toString);
        JsonNode mv = ofKind(audit, AuditRecord.KIND_EXEC).get(1).path("exec");
        JsonNode sh = ofKind(audit, AuditRecord.KIND_EXEC).get(0).path("exec");
        assertEquals(sh.path("pid").asInt(), mv.path("ppid").asInt(), "mv's parent is the shell: " + mv);
        assertEquals(run.project().toString(), mv.path("cwd").asText(), mv::toString);
        if (AgentjailRun.isRoot()) {
            assertTrue(mv.path("uid").asLong() >= 0, mv::toString);
        } else {
            assertEquals(Long.parseLong(uid()), mv.path("uid").asLong(), mv::toString);
        }
        assertTrue(ofKind(audit, AuditRecord.KIND_AUDIT_GAP).isEmpty(), audit::toString);
        JsonNode end = audit.get(audit.size() - 1);
        assertEquals(AuditRecord.KIND_SESSION_END, end.path("kind").asText(), end::toString);
        assertEquals(6, end.path("programs").asLong(), end::toString);
        // a, b (the rename's new name, then unlinked), y, d.
        assertEquals(4, end.path("files_changed").asLong(), end::toString);
        assertTrue(o.err().contains("ran 6 programs, changed 4 files"), o::describe);
        Command.Result verify = run.cli("log", "verify", o.auditLog().toString());
        assertEquals(0, verify.exitCode(), verify::describe);
    }

    @Test
    void credentialsNamedByTheirContextInArgumentsAndALinkTargetNeverReachTheLog() throws IOException {
        String opaque = "abcdefghijklmnop1234567890ABCDEF";
        String split = "zyxwvutsrqponmlk0987654321FEDCBA";
        String script = "/bin/true -H \"Authorization: Bearer " + opaque + "\"; /bin/true -H Bearer " + split
                + "; /bin/true https://user:hunter2supersecret@example.com/x; /bin/true --password hunter3word"
                + "; ln -s \"Authorization: Bearer " + opaque + "\" linky";
        AgentjailRun run = AgentjailRun.in(dir);
        AgentjailRun.Outcome o = run.run("/bin/sh", "-c", script);

        String log = Files.readString(o.auditLog());
        for (String secret : List.of(opaque, split, "hunter2supersecret", "hunter3word")) {
            assertFalse(log.contains(secret), () -> secret + " in the log: " + o.describe());
        }
        List<String> seen = ofKind(o.audit(), AuditRecord.KIND_EXEC, AuditRecord.KIND_FILE).stream()
                .map(ExecFileAuditTest::describe)
                .filter(d -> !d.startsWith("exec sh "))
                .toList();
        assertEquals(
                List.of(
                        "exec true /bin/true -H Authorization: Bearer [REDACTED:credential-header****]",
                        "exec true /bin/true -H Bearer [REDACTED:auth-credential******]",
                        "exec true /bin/true https://user:[REDACTED:url-password]@example.com/x",
                        "exec true /bin/true --password [REDACTED:credential-option]",
                        "exec ln ln -s Authorization: Bearer [REDACTED:credential-header****] linky",
                        "file symlink linky -> Authorization: Bearer [REDACTED:credential-header****]"),
                seen,
                o::describe);
        // Five in the shell's own script, five in the programs' arguments, one in the link's target.
        assertTrue(o.err().contains("11 secrets redacted from their arguments and paths"), o::describe);
    }

    @Test
    void aPathSearchsMissesAreMarkedMissingAndOnlyTheProgramFoundCountsAsRun() {
        // A PATH whose first directories lack sh: execvp tries each in turn, and each try is a record.
        AgentjailRun run = AgentjailRun.in(dir).env("PATH", "/nonexistent-dir:/usr/local/sbin:/usr/bin:/bin");
        AgentjailRun.Outcome o = run.run("sh", "-c", "exit 0");

        assertEquals(0, o.exitCode(), o::describe);
        List<JsonNode> execs = ofKind(o.audit(), AuditRecord.KIND_EXEC);
        List<String> tried = execs.stream()
                .map(r -> r.path("exec").path("path").asText()
                        + (r.path("exec").path("missing").asBoolean() ? " missing" : ""))
                .toList();
        assertEquals(List.of("/nonexistent-dir/sh missing", "/usr/local/sbin/sh missing", "/usr/bin/sh"), tried);
        JsonNode end = o.audit().get(o.audit().size() - 1);
        assertEquals(1, end.path("programs").asLong(), end::toString);
        assertTrue(o.err().contains("ran 1 program,"), o::describe);
    }

    @Test
    void aMissGetsTheKernelsOwnErrorAndAProgramThatAppearsMeanwhileIsNeverRecordedAsMissing() throws Exception {
        // Exec auditing only: the renames then run at full speed, not one notification at a time with the execs.
        AgentjailRun run = AgentjailRun.in(dir).policy("version: 1\naudit: {exec: on, files: off}\n");
        // One thread renames a program in and out of place all along while the main thread starts it 1,000 times: each
        // start either runs it (exit 42) or fails, and its record must say which. Then the errors of two plain misses.
        Path binary = compile(run, "flip", """
                #define _GNU_SOURCE
                #include <errno.h>
                #include <pthread.h>
                #include <stdatomic.h>
                #include <stdio.h>
                #include <fcntl.h>
                #include <string.h>
                #include <sys/stat.h>
                #include <sys/syscall.h>
                #include <sys/wait.h>
                #include <unistd.h>
                static atomic_int stop;
                static void *flipper(void *arg) {
                    (void) arg;
                    while (!atomic_load(&stop)) {
                        rename("prog.off", "prog");
                        rename("prog", "prog.off");
                    }
                    return 0;
                }
                int main(int argc, char **argv) {
                    if (argc > 1) return 42; /* the program itself, started as ./flip run */
                    char here[4096], off[4200], prog[4200];
                    getcwd(here, sizeof here);
                    snprintf(off, sizeof off, "%s/prog.off", here);
                    snprintf(prog, sizeof prog, "%s/prog", here);
                    link("flip", "prog.off");
                    pthread_t t;
                    pthread_create(&t, 0, flipper, 0);
                    int ran = 0, failed = 0;
                    for (int i = 0; i < 1000; i++) {
                        pid_t p = fork();
                        if (p == 0) {
                            char *args[] = {"prog", "run", 0};
                            execv(prog, args);
                            _exit(errno == ENOENT ? 7 : 8);
                        }
                        int st;
                        waitpid(p, &st, 0);
                        if (WEXITSTATUS(st) == 42) ran++;
                        else if (WEXITSTATUS(st) == 7) failed++;
                    }
                    atomic_store(&stop, 1);
                    pthread_join(t, 0);
                    char *args[] = {"x", 0};
                    errno = 0;
                    execv("/nonexistent-dir/x", args);
                    int noent = errno;
                    char through_file[4200];
                    snprintf(through_file, sizeof through_file, "%s/flip/x", here);
                    execv(through_file, args);
                    int notdir = errno;
                    /* Behind a directory the caller may not search: the kernel's EACCES, whatever the supervisor may
                     * search (as root, it could); with a flag execveat refuses: its EINVAL, before any look-up. */
                    /* Made here, not before the session: the launcher refuses a project it cannot read whole. */
                    mkdir("locked", 0700);
                    chmod("locked", 0);
                    char locked[4200];
                    snprintf(locked, sizeof locked, "%s/locked/x", here);
                    execv(locked, args);
                    int acces = errno;
                    chmod("locked", 0700);
                    char *env[] = {0};
                    syscall(SYS_execveat, AT_FDCWD, "/nonexistent-dir/x", args, env, 0x8000);
                    int inval = errno;
                    printf("ran=%d\\nfailed=%d\\nnoent=%d\\nnotdir=%d\\nacces=%d\\ninval=%d\\n", ran, failed,
                           noent == ENOENT, notdir == ENOTDIR, acces == EACCES, inval == EINVAL);
                    return 0;
                }
                """);

        AgentjailRun.Outcome o = run.run(binary.toString());

        assertEquals(0, o.exitCode(), o::describe);
        assertEquals("1", o.probes().get("noent"), o::describe);
        assertEquals("1", o.probes().get("notdir"), o::describe);
        assertEquals("1", o.probes().get("acces"), "a miss the caller could not have seen: " + o.describe());
        assertEquals("1", o.probes().get("inval"), o::describe);
        int ran = Integer.parseInt(o.probes().get("ran"));
        int failed = Integer.parseInt(o.probes().get("failed"));
        assertEquals(1000, ran + failed, o::describe);
        String prog = run.project().resolve("prog").toString();
        long recordedRuns = 0;
        long recordedMisses = 0;
        for (JsonNode r : ofKind(o.audit(), AuditRecord.KIND_EXEC)) {
            JsonNode e = r.path("exec");
            if (!e.path("path").asText().equals(prog)) {
                continue;
            }
            if (e.path("missing").asBoolean()) {
                recordedMisses += e.path("count").asLong();
                assertTrue(e.path("argv").isEmpty() && !e.has("cwd"), "a miss reads no arguments: " + r);
            } else {
                recordedRuns += e.path("count").asLong();
                assertEquals("[\"prog\",\"run\"]", e.path("argv").toString(), r::toString);
            }
        }
        // A program renamed away after the supervisor found it fails unmarked (the record comes before the call);
        // the other way round is what the answer rules out: no start that ran is recorded as missing.
        assertEquals(1000, recordedRuns + recordedMisses, o::describe);
        assertTrue(recordedMisses <= failed, "a miss recorded for a start that ran: " + o.describe());
        assertTrue(recordedMisses > 0 && recordedRuns > 0, "the flipper never raced: " + o.describe());
        for (String missing :
                List.of("/nonexistent-dir/x", run.project().resolve("flip/x").toString())) {
            assertTrue(
                    ofKind(o.audit(), AuditRecord.KIND_EXEC).stream()
                            .anyMatch(r -> r.path("exec").path("path").asText().equals(missing)
                                    && r.path("exec").path("missing").asBoolean()),
                    missing + " " + o.describe());
        }
        JsonNode end = o.audit().get(o.audit().size() - 1);
        // flip itself, the starts recorded as run, and the one behind the locked directory (it failed, unmarked).
        assertEquals(2 + recordedRuns, end.path("programs").asLong(), end::toString);
    }

    @Test
    void aCallNamingMemoryTheSupervisorCannotReadIsRefusedAndRecordedAndSecretMemoryIsDenied() throws Exception {
        AgentjailRun run = AgentjailRun.in(dir);
        Path binary = compile(run, "unreadable", """
                #define _GNU_SOURCE
                #include <errno.h>
                #include <fcntl.h>
                #include <stdio.h>
                #include <string.h>
                #include <sys/mman.h>
                #include <sys/syscall.h>
                #include <unistd.h>
                int main(void) {
                    /* memfd_secret: pages the kernel reads and /proc/PID/mem does not. */
                    errno = 0;
                    long s = syscall(447, 0);
                    printf("memfd_secret=%ld,%d\\n", s, s < 0 ? errno : 0);
                    /* A path whose end runs into memory that cannot be read, as such pages look to the supervisor. */
                    char *pages = mmap(0, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
                    munmap(pages + 4096, 4096);
                    memcpy(pages + 4096 - 7, "partial", 7);
                    errno = 0;
                    int fd = open(pages + 4096 - 7, O_WRONLY | O_CREAT, 0600);
                    printf("open=%d,%d\\n", fd, fd < 0 ? errno : 0);
                    char *argv[] = {"true", pages + 4096 - 7, 0};
                    errno = 0;
                    execv("/bin/true", argv);
                    printf("exec=%d\\n", errno);
                    return 0;
                }
                """);

        AgentjailRun.Outcome o = run.run(binary.toString());

        assertEquals(0, o.exitCode(), o::describe);
        assertEquals("-1,1", o.probes().get("memfd_secret"), o::describe);
        assertEquals("-1,14", o.probes().get("open"), () -> "EFAULT, and nothing created; " + o.describe());
        assertEquals("14", o.probes().get("exec"), () -> "EFAULT: argv ran into unreadable memory; " + o.describe());
        assertFalse(Files.exists(run.project().resolve("partial")));
        List<JsonNode> refused = o.audit().stream()
                .filter(r -> "audit-unreadable-memory".equals(r.path("reason").asText()))
                .toList();
        boolean opensFirst = execOpensProgramFirst();
        assertEquals(
                opensFirst
                        ? List.of("file write partial deny")
                        : List.of("file write partial deny", "exec true true partial deny"),
                refused.stream()
                        .map(r -> describe(r) + " " + r.path("decision").asText())
                        .toList(),
                o::describe);
        // Since Linux 6.8 the kernel opens the program before it copies argv: the exec goes on (and fails EFAULT in
        // the kernel), recorded with what could be read and marked cut; before 6.8 it is refused as the open is.
        List<String> execs = ofKind(o.audit(), AuditRecord.KIND_EXEC).stream()
                .filter(r -> r.path("exec").path("path").asText().equals("/bin/true")
                        || r.path("exec").path("path").asText().equals("/usr/bin/true"))
                .map(r -> describe(r) + " " + r.path("decision").asText("-") + " cut="
                        + r.path("exec").path("argv_truncated").asText())
                .toList();
        assertEquals(
                List.of("exec true true partial " + (opensFirst ? "- cut=true" : "deny cut=true")), execs, o::describe);
    }

    /**
     * The errno of execs the supervisor could answer itself, with audit on and off: pid 1's descriptors and mappings,
     * which procfs hides from the caller by ptrace access and not from the supervisor, and paths with an unreadable
     * argv, which the kernel looks up before it copies argv. Audit on must answer each as audit off does.
     */
    @Test
    void anExecGetsTheSameErrnoWithAuditOnAndOff() throws Exception {
        String source = """
                #define _GNU_SOURCE
                #include <errno.h>
                #include <fcntl.h>
                #include <stdio.h>
                #include <sys/stat.h>
                #include <sys/syscall.h>
                #include <sys/wait.h>
                #include <unistd.h>
                static char *envp[] = {0};
                /* In a child, so that an exec that works does not end the probe. */
                static void try(const char *name, const char *path, char *const *argv) {
                    int p[2];
                    if (pipe2(p, O_CLOEXEC) != 0) return;
                    pid_t pid = fork();
                    if (pid == 0) {
                        close(p[0]);
                        syscall(SYS_execve, path, argv, envp);
                        int e = errno;
                        (void) !write(p[1], &e, sizeof e);
                        _exit(127);
                    }
                    close(p[1]);
                    int e = 0;
                    ssize_t n = read(p[0], &e, sizeof e);
                    waitpid(pid, 0, 0);
                    printf("%s=%d\\n", name, n == (ssize_t) sizeof e ? e : 0);
                }
                int main(void) {
                    char *plain[] = {"probe", 0};
                    char **bad = (char **) 0x10;
                    char *bad0[] = {(char *) 0x10, 0};
                    mkdir("locked", 0700);
                    close(open("locked/present", O_CREAT | O_WRONLY, 0755));
                    chmod("locked", 0);
                    mkfifo("fifo", 0755);
                    try("fdinfo_open", "/proc/1/fdinfo/0", plain);
                    try("fdinfo_missing", "/proc/1/fdinfo/999", plain);
                    try("task_fdinfo_missing", "/proc/1/task/1/fdinfo/999", plain);
                    try("map_files_missing", "/proc/1/map_files/1000-2000", plain);
                    try("badargv_passwd", "/etc/passwd", bad);
                    try("badargv_missing", "/nonexistent", bad);
                    try("badargv_locked", "locked/present", bad);
                    try("badargv_relative_missing", "nonexistent", bad);
                    try("badargv_root", "/", bad);
                    try("badargv_program", "/bin/true", bad);
                    try("badarg0_passwd", "/etc/passwd", bad0);
                    try("badarg0_fifo", "fifo", bad0);
                    try("badarg0_program", "/bin/true", bad0);
                    return 0;
                }
                """;
        AgentjailRun on = AgentjailRun.in(dir.resolve("on"));
        AgentjailRun off = AgentjailRun.in(dir.resolve("off")).policy("""
                version: 1
                audit:
                  exec: off
                  files: off
                """);
        AgentjailRun.Outcome audited = on.run(compile(on, "errno", source).toString());
        AgentjailRun.Outcome unaudited = off.run(compile(off, "errno", source).toString());

        assertEquals(0, audited.exitCode(), audited::describe);
        assertEquals(0, unaudited.exitCode(), unaudited::describe);
        assertEquals(13, unaudited.probes().size(), unaudited::describe);
        assertEquals(unaudited.probes(), audited.probes(), "errno with audit off, then on");
        // The kernel answered these, and their records are there: an unreadable argv is marked cut, not refused.
        List<String> badArgv = ofKind(audited.audit(), AuditRecord.KIND_EXEC).stream()
                .filter(r -> r.path("exec").path("path").asText().equals("/etc/passwd"))
                .map(r -> r.path("decision").asText("allow") + " "
                        + r.path("exec").path("argv_truncated").asText())
                .toList();
        assertEquals(
                List.of(execOpensProgramFirst() ? "allow true" : "deny true"),
                badArgv.stream().distinct().toList(),
                audited::describe);
    }

    /** Linux 6.8 and later open an exec's program before they copy argv (so a bad path fails before a bad argv). */
    private static boolean execOpensProgramFirst() {
        Matcher m = Pattern.compile("^(\\d+)\\.(\\d+)").matcher(System.getProperty("os.version"));
        assertTrue(m.find(), System.getProperty("os.version"));
        int major = Integer.parseInt(m.group(1));
        return major > 6 || (major == 6 && Integer.parseInt(m.group(2)) >= 8);
    }

    @Test
    void aProcessThatMadeItselfNotDumpableIsRecordedAndNotRefused() throws Exception {
        // ssh does this at start: its /proc/PID/mem becomes root's file, which an unprivileged supervisor cannot
        // open (bin/test-as-user runs this test as an ordinary user).
        AgentjailRun run = AgentjailRun.in(dir);
        Path binary = compile(run, "nodump", """
                #include <fcntl.h>
                #include <stdio.h>
                #include <sys/prctl.h>
                #include <unistd.h>
                int main(void) {
                    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
                    int fd = open("nodump-out", O_WRONLY | O_CREAT, 0600);
                    dprintf(1, "open=%s\\n", fd >= 0 ? "ok" : "failed");
                    execl("/bin/echo", "echo", "after=nodump", (char *) 0);
                    return 1;
                }
                """);

        AgentjailRun.Outcome o = run.run(binary.toString());

        assertEquals(0, o.exitCode(), o::describe);
        assertEquals("ok", o.probes().get("open"), o::describe);
        assertEquals("nodump", o.probes().get("after"), o::describe);
        List<String> seen = ofKind(o.audit(), AuditRecord.KIND_EXEC, AuditRecord.KIND_FILE).stream()
                .map(r -> describe(r)
                        + (r.has("decision") ? " " + r.path("decision").asText() : ""))
                .toList();
        assertEquals(List.of("exec nodump " + binary, "file write nodump-out", "exec echo echo after=nodump"), seen);
    }

    @Test
    void everyUnixSocketBindIsARecordAPathOneAFileAndAnInetBindNone() {
        AgentjailRun.Outcome o = AgentjailRun.in(dir).run("python3", "-c", """
                import socket
                s = socket.socket(socket.AF_UNIX); s.bind("agent.sock")
                a = socket.socket(socket.AF_UNIX); a.bind("\\0abstract")
                t = socket.socket(); t.bind(("127.0.0.1", 0))
                print("bound=yes")
                """);

        assertEquals("yes", o.probes().get("bound"), o::describe);
        List<String> files = ofKind(o.audit(), AuditRecord.KIND_FILE).stream()
                .map(ExecFileAuditTest::describe)
                .filter(d -> !d.contains("__pycache__"))
                .toList();
        // The abstract name has a record too (a racing thread could have made it a path after the reading).
        assertEquals(List.of("file mknod agent.sock", "file bind @abstract"), files, o::describe);
        JsonNode end = o.audit().get(o.audit().size() - 1);
        assertEquals(1, end.path("files_changed").asLong(), () -> "an abstract name makes no file: " + end);
    }

    @Test
    void aBurstOfWritesGivesBoundedRecordsWhoseCountsAddUp() {
        // 100,000 opens for writing of 100 files, from one process (the shell's own redirections).
        AgentjailRun.Outcome o = AgentjailRun.in(dir)
                .run("/bin/sh", "-c", "i=0; while [ $i -lt 100000 ]; do : > f$((i % 100)); i=$((i + 1)); done");

        assertEquals(0, o.exitCode(), o::describe);
        List<JsonNode> files = ofKind(o.audit(), AuditRecord.KIND_FILE);
        long events = files.stream()
                .mapToLong(r -> r.path("file").path("count").asLong())
                .sum();
        assertEquals(100_000, events, () -> files.size() + " records");
        assertTrue(files.size() < 2_000, "records: " + files.size());
        assertTrue(
                files.stream().allMatch(r -> r.path("file").path("op").asText().equals("write")),
                () -> files.stream()
                        .map(ExecFileAuditTest::describe)
                        .distinct()
                        .toList()
                        .toString());
        JsonNode end = o.audit().get(o.audit().size() - 1);
        assertEquals(100, end.path("files_changed").asLong(), end::toString);
    }

    @Test
    void aCallerThatRacesItsOwnMemoryNeitherCrashesNorHangsTheSupervisor() throws Exception {
        AgentjailRun run = AgentjailRun.in(dir);
        Path binary = compile(run, "race", """
                #include <fcntl.h>
                #include <pthread.h>
                #include <string.h>
                #include <unistd.h>
                static char path[64] = "race-aaaa";
                static char *argv2[] = {"race-argv", path, 0};
                static volatile int stop;
                static void *flip(void *unused) {
                    (void) unused;
                    while (!stop) {
                        memcpy(path, "race-bbbb", 10);
                        memcpy(path, "race-aaaa", 10);
                    }
                    return 0;
                }
                int main(void) {
                    pthread_t t;
                    pthread_create(&t, 0, flip, 0);
                    for (int i = 0; i < 3000; i++) {
                        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
                        if (fd >= 0) {
                            close(fd);
                        }
                        execve(path, argv2, 0); /* fails: no such program; the race is in its path and argv */
                    }
                    stop = 1;
                    pthread_join(t, 0);
                    write(1, "race=done\\n", 10);
                    return 0;
                }
                """);

        AgentjailRun.Outcome o = run.run(binary.toString());

        assertEquals(0, o.exitCode(), o::describe);
        assertEquals("done", o.probes().get("race"), o::describe);
        List<JsonNode> audit = o.audit();
        assertTrue(ofKind(audit, AuditRecord.KIND_AUDIT_GAP).isEmpty(), audit::toString);
        List<JsonNode> files = ofKind(audit, AuditRecord.KIND_FILE);
        assertEquals(
                3000,
                files.stream()
                        .mapToLong(r -> r.path("file").path("count").asLong())
                        .sum());
        // Whatever was read is one of the two spellings (or cut where the other began), never another's memory.
        for (JsonNode r : files) {
            String path = r.path("file").path("path").asText();
            assertTrue(path.startsWith("race-"), r::toString);
        }
        long execs = ofKind(audit, AuditRecord.KIND_EXEC).stream()
                .filter(r -> r.path("exec").path("argv").path(0).asText().equals("race-argv"))
                .mapToLong(r -> r.path("exec").path("count").asLong())
                .sum();
        assertEquals(3000, execs);
    }

    @Test
    void aThreadsEventsNameItsProcessAndAChildsItsOwn() throws Exception {
        AgentjailRun run = AgentjailRun.in(dir);
        // Three threads write their files many times each (the supervisor keeps what it knows of a thread while the
        // thread lives); then a child does, whose pid the parent learns from fork.
        Path binary = compile(run, "threads", """
                #include <fcntl.h>
                #include <pthread.h>
                #include <stdio.h>
                #include <sys/wait.h>
                #include <unistd.h>
                static void *work(void *name) {
                    for (int i = 0; i < 300; i++) {
                        int fd = open((const char *) name, O_WRONLY | O_CREAT | O_TRUNC, 0600);
                        if (fd >= 0) {
                            close(fd);
                        }
                    }
                    return 0;
                }
                int main(void) {
                    pthread_t t[3];
                    char *names[] = {"thread-0", "thread-1", "thread-2"};
                    for (int i = 0; i < 3; i++) {
                        pthread_create(&t[i], 0, work, names[i]);
                    }
                    for (int i = 0; i < 3; i++) {
                        pthread_join(t[i], 0);
                    }
                    pid_t child = fork();
                    if (child == 0) {
                        work("child");
                        _exit(0);
                    }
                    waitpid(child, 0, 0);
                    printf("threads=%d\\nchild=%d\\n", (int) getpid(), (int) child);
                    return 0;
                }
                """);

        AgentjailRun.Outcome o = run.run(binary.toString());

        assertEquals(0, o.exitCode(), o::describe);
        int pid = Integer.parseInt(o.probes().get("threads"));
        int child = Integer.parseInt(o.probes().get("child"));
        List<JsonNode> files = ofKind(o.audit(), AuditRecord.KIND_FILE);
        for (String name : List.of("thread-0", "thread-1", "thread-2", "child")) {
            List<JsonNode> of = files.stream()
                    .filter(r -> r.path("file").path("path").asText().equals(name))
                    .toList();
            assertEquals(
                    300,
                    of.stream()
                            .mapToLong(r -> r.path("file").path("count").asLong())
                            .sum(),
                    name);
            int expected = name.equals("child") ? child : pid;
            assertTrue(of.stream().allMatch(r -> r.path("file").path("pid").asInt() == expected), of::toString);
        }
    }

    private static List<String> writes(List<JsonNode> audit) {
        return ofKind(audit, AuditRecord.KIND_FILE).stream()
                .filter(r -> r.path("file").path("op").asText().equals("write"))
                .map(r -> r.path("file").path("path").asText())
                .toList();
    }

    @Test
    void aRelativePathNamesTheFileInTheDirectoryItWasWrittenFromAfterEveryChangeOfDirectory() {
        // The shell's own redirections, from one thread that changes directory (cd), whose directory is renamed by
        // another process (mv), and that comes back to it by another name.
        String script = "p=$PWD && mkdir -p a/b && cd a && echo > f1 && echo > f2 && cd b && echo > g && cd .."
                + " && mv b c && cd c && echo > h && mv ../../a ../../z && echo > k && cd / && cd \"$p/z/c\""
                + " && echo > m && cd ../.. && echo > n";
        AgentjailRun run = AgentjailRun.in(dir);
        AgentjailRun.Outcome o = run.run("/bin/sh", "-c", script);

        assertEquals(0, o.exitCode(), o::describe);
        assertEquals(List.of("a/f1", "a/f2", "a/b/g", "a/c/h", "z/c/k", "z/c/m", "n"), writes(o.audit()), o::describe);
        for (String file : List.of("z/f1", "z/c/g", "z/c/k", "z/c/m", "n")) {
            assertTrue(Files.exists(run.project().resolve(file)), file);
        }
    }

    @Test
    void aThreadsRelativeWriteAfterAnotherThreadChangedTheirDirectoryNamesTheNewOne() throws Exception {
        AgentjailRun run = AgentjailRun.in(dir);
        Files.createDirectories(run.project().resolve("d0"));
        Files.createDirectories(run.project().resolve("d1"));
        // One thread changes the process's directory 200 times; the other writes relative files while it does, and
        // one marked file each time it has seen a change complete. Its marks must name the directory then current.
        // (A pause between changes keeps each directory's marks of a second within the 32 that get records each.)
        Path binary = compile(run, "cwdrace", """
                #include <fcntl.h>
                #include <pthread.h>
                #include <stdatomic.h>
                #include <stdio.h>
                #include <unistd.h>
                static atomic_int changing, changed, marked;
                static void touch(const char *name) {
                    int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0600);
                    if (fd >= 0) {
                        close(fd);
                    }
                }
                static void *writer(void *unused) {
                    (void) unused;
                    for (int seen = 0; seen < 200;) {
                        int now = atomic_load(&changed);
                        if (now == seen) {
                            if (atomic_load(&changing)) {
                                touch("noise");
                            } else {
                                usleep(200);
                            }
                            continue;
                        }
                        char name[32];
                        snprintf(name, sizeof name, "mark-%d", now);
                        touch(name);
                        seen = now;
                        atomic_store(&marked, now);
                    }
                    return 0;
                }
                int main(void) {
                    char root[4096];
                    if (getcwd(root, sizeof root) == NULL) {
                        return 1;
                    }
                    pthread_t t;
                    pthread_create(&t, 0, writer, 0);
                    for (int i = 1; i <= 200; i++) {
                        char to[4200];
                        snprintf(to, sizeof to, "%s/d%d", root, i % 2);
                        atomic_store(&changing, 1);
                        usleep(100);
                        if (chdir(to) != 0) {
                            return 2;
                        }
                        atomic_store(&changed, i);
                        while (atomic_load(&marked) != i) {
                        }
                        atomic_store(&changing, 0);
                        usleep(30000);
                    }
                    pthread_join(t, 0);
                    printf("cwdrace=done\\n");
                    return 0;
                }
                """);

        AgentjailRun.Outcome o = run.run(binary.toString());

        assertEquals("done", o.probes().get("cwdrace"), o::describe);
        List<String> marks =
                writes(o.audit()).stream().filter(p -> p.contains("mark-")).toList();
        assertEquals(200, marks.size(), marks::toString);
        for (String mark : marks) {
            int i = Integer.parseInt(mark.substring(mark.indexOf("mark-") + 5));
            assertEquals("d" + (i % 2) + "/mark-" + i, mark);
        }
    }

    @Test
    void anExecByAThreadWithItsOwnDirectoryNamesTheFilesOfTheNewProgramInThatDirectory() throws Exception {
        AgentjailRun run = AgentjailRun.in(dir);
        Files.createDirectories(run.project().resolve("sub"));
        // A thread made without CLONE_FS has a working directory of its own; its exec makes it the process's first
        // thread, with that thread's tid and its own directory.
        Path binary = compile(run, "threadexec", """
                #define _GNU_SOURCE
                #include <fcntl.h>
                #include <sched.h>
                #include <stdatomic.h>
                #include <sys/syscall.h>
                #include <unistd.h>
                extern char **environ;
                static atomic_int stage;
                static char stack[1 << 16] __attribute__((aligned(16)));
                static int thread(void *unused) {
                    (void) unused;
                    syscall(SYS_chdir, "sub");
                    long fd = syscall(SYS_openat, AT_FDCWD, "from-thread", O_WRONLY | O_CREAT | O_TRUNC, 0600);
                    syscall(SYS_close, fd);
                    atomic_store(&stage, 1);
                    while (atomic_load(&stage) != 2) {
                    }
                    char *argv[] = {"sh", "-c", "echo > after-exec", 0};
                    syscall(SYS_execve, "/bin/sh", argv, environ);
                    syscall(SYS_exit, 3);
                    return 0;
                }
                int main(void) {
                    if (clone(thread, stack + sizeof stack, CLONE_VM | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM,
                              0) < 0) {
                        return 1;
                    }
                    while (atomic_load(&stage) != 1) {
                    }
                    int fd = open("from-leader", O_WRONLY | O_CREAT | O_TRUNC, 0600);
                    close(fd);
                    atomic_store(&stage, 2);
                    for (;;) {
                        pause();
                    }
                }
                """);

        AgentjailRun.Outcome o = run.run(binary.toString());

        assertEquals(0, o.exitCode(), o::describe);
        assertTrue(Files.exists(run.project().resolve("sub/after-exec")), o::describe);
        assertEquals(List.of("sub/from-thread", "from-leader", "sub/after-exec"), writes(o.audit()), o::describe);
    }

    @ParameterizedTest
    @ValueSource(strings = {"thread", "clone-fs"})
    void aRelativeWriteWhileAnotherTaskFlipsTheDirectoryNamesWhereItLandedOrIsMarkedRacy(String flipper)
            throws Exception {
        AgentjailRun run = AgentjailRun.in(dir);
        Files.createDirectories(run.project().resolve("dA"));
        Files.createDirectories(run.project().resolve("dB"));
        // The directory is flipped by a thread, or by a child process that shares it (CLONE_FS, not a thread).
        Path binary = compile(run, "flip", """
                #define _GNU_SOURCE
                #include <fcntl.h>
                #include <pthread.h>
                #include <sched.h>
                #include <signal.h>
                #include <stdatomic.h>
                #include <stdio.h>
                #include <string.h>
                #include <sys/syscall.h>
                #include <sys/wait.h>
                #include <unistd.h>
                static atomic_int stop, flips;
                static int a, b;
                static char stack[1 << 16] __attribute__((aligned(16)));
                static int flip(void *unused) {
                    (void) unused;
                    while (!atomic_load(&stop)) {
                        syscall(SYS_fchdir, a);
                        syscall(SYS_fchdir, b);
                        atomic_fetch_add(&flips, 1);
                    }
                    return 0;
                }
                static void *flip_thread(void *unused) {
                    flip(unused);
                    return 0;
                }
                int main(int argc, char **argv) {
                    a = open("dA", O_RDONLY | O_DIRECTORY);
                    b = open("dB", O_RDONLY | O_DIRECTORY);
                    pthread_t t;
                    pid_t child = -1;
                    if (argc > 1 && strcmp(argv[1], "clone-fs") == 0) {
                        child = clone(flip, stack + sizeof stack, CLONE_VM | CLONE_FS | SIGCHLD, 0);
                    } else {
                        pthread_create(&t, 0, flip_thread, 0);
                    }
                    /* Flipping all along: a change notified just after an open was let go on is not markable. */
                    while (atomic_load(&flips) < 10) {
                    }
                    for (int i = 0; i < 50; i++) {
                        char name[32];
                        snprintf(name, sizeof name, "f%d", i);
                        int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0600);
                        if (fd >= 0) {
                            close(fd);
                        }
                        usleep(25000);
                    }
                    atomic_store(&stop, 1);
                    if (child > 0) {
                        waitpid(child, 0, 0);
                    } else {
                        pthread_join(t, 0);
                    }
                    printf("flip=done\\n");
                    return 0;
                }
                """);

        AgentjailRun.Outcome o = run.run(binary.toString(), flipper);

        assertEquals("done", o.probes().get("flip"), o::describe);
        List<JsonNode> writes = ofKind(o.audit(), AuditRecord.KIND_FILE).stream()
                .filter(r -> r.path("file").path("path").asText().matches("(d[AB]/)?f\\d+"))
                .toList();
        assertEquals(50, writes.size(), writes::toString);
        for (JsonNode r : writes) {
            String path = r.path("file").path("path").asText();
            boolean there = Files.exists(run.project().resolve(path));
            assertTrue(there || r.path("file").path("racy").asBoolean(), "unmarked and wrong: " + r);
        }
    }

    @Test
    void aRelativeWriteWhileAnotherProcessRenamesItsDirectoryIsMarkedRacy() throws Exception {
        AgentjailRun run = AgentjailRun.in(dir);
        Files.createDirectories(run.project().resolve("a"));
        Files.createDirectories(run.project().resolve("b"));
        // A child swaps the names a and b all along (renameat2 RENAME_EXCHANGE) while its parent, inside a, writes
        // relative files: the directory the kernel walks from is named a or b by then, whichever the record says.
        Path binary = compile(run, "swap", """
                #define _GNU_SOURCE
                #include <fcntl.h>
                #include <signal.h>
                #include <stdio.h>
                #include <sys/mman.h>
                #include <sys/syscall.h>
                #include <sys/wait.h>
                #include <unistd.h>
                int main(void) {
                    volatile int *swaps = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
                    pid_t child = fork();
                    if (child == 0) {
                        for (;;) {
                            syscall(SYS_renameat2, AT_FDCWD, "a", AT_FDCWD, "b", RENAME_EXCHANGE);
                            (*swaps)++;
                        }
                    }
                    while (*swaps < 10) {
                    }
                    if (chdir("a") != 0) {
                        return 1;
                    }
                    for (int i = 0; i < 40; i++) {
                        char name[32];
                        snprintf(name, sizeof name, "f%d", i);
                        int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0600);
                        if (fd >= 0) {
                            close(fd);
                        }
                        usleep(20000);
                    }
                    kill(child, SIGKILL);
                    waitpid(child, 0, 0);
                    printf("swap=done\\n");
                    return 0;
                }
                """);

        AgentjailRun.Outcome o = run.run(binary.toString());

        assertEquals("done", o.probes().get("swap"), o::describe);
        List<JsonNode> writes = ofKind(o.audit(), AuditRecord.KIND_FILE).stream()
                .filter(r -> r.path("file").path("op").asText().equals("write"))
                .filter(r -> r.path("file").path("path").asText().matches("[ab]/f\\d+"))
                .toList();
        assertEquals(40, writes.size(), writes::toString);
        for (JsonNode r : writes) {
            assertTrue(r.path("file").path("racy").asBoolean(), "a write during the swaps is unmarked: " + r);
        }
    }

    @Test
    void aDirectoryTooLongToReadMakesThePathUnknownNotAProjectPathAndAnOverlongNameIsAMiss() throws Exception {
        AgentjailRun run = AgentjailRun.in(dir);
        // 25 directories of 200 characters, nested: past 4,096 bytes, /proc's readlink of them fails.
        Path binary = compile(run, "deep", """
                #include <fcntl.h>
                #include <stdio.h>
                #include <string.h>
                #include <sys/stat.h>
                #include <unistd.h>
                int main(void) {
                    char name[201];
                    memset(name, 'n', 200);
                    name[200] = 0;
                    int fd = open(".", O_RDONLY | O_DIRECTORY);
                    for (int i = 0; i < 25; i++) {
                        mkdirat(fd, name, 0700);
                        int next = openat(fd, name, O_RDONLY | O_DIRECTORY);
                        close(fd);
                        fd = next;
                    }
                    int f = openat(fd, "via-dirfd", O_WRONLY | O_CREAT, 0600);
                    close(f);
                    fchdir(fd);
                    f = open("via-cwd", O_WRONLY | O_CREAT, 0600);
                    close(f);
                    chdir("/");
                    char program[400];
                    memset(program, 'p', 300);
                    program[0] = '/';
                    program[300] = 0;
                    char *argv[] = {"long", 0};
                    execve(program, argv, 0);
                    printf("deep=%d\\n", fd >= 0);
                    return 0;
                }
                """);

        AgentjailRun.Outcome o = run.run(binary.toString());
        // JUnit's clean-up walks absolute paths, which these are too long for; rm walks from descriptors.
        Process rm = new ProcessBuilder(
                        "rm", "-rf", run.project().resolve("n".repeat(200)).toString())
                .inheritIO()
                .start();
        assertTrue(rm.waitFor(60, TimeUnit.SECONDS) && rm.exitValue() == 0, "rm failed");

        assertEquals("1", o.probes().get("deep"), o::describe);
        List<String> writes = writes(o.audit());
        assertTrue(writes.contains("?/via-dirfd"), writes::toString);
        assertTrue(writes.contains("?/via-cwd"), writes::toString);
        assertFalse(writes.contains("via-dirfd") || writes.contains("via-cwd"), writes::toString);
        JsonNode miss = ofKind(o.audit(), AuditRecord.KIND_EXEC).stream()
                .filter(r -> r.path("exec").path("argv").path(0).asText().equals("long"))
                .findFirst()
                .orElseThrow();
        assertTrue(miss.path("exec").path("missing").asBoolean(), miss::toString);
    }

    @Test
    void aCallInterruptedBeforeItRanAndRestartedCountsOnce() throws Exception {
        AgentjailRun run = AgentjailRun.in(dir);
        // One thread opens a file 5,000 times while another signals it all along: a signal that lands while the open
        // waits for the supervisor withdraws the notification, and the open runs again as a new one.
        Path binary = compile(run, "sigdup", """
                #define _GNU_SOURCE
                #include <fcntl.h>
                #include <pthread.h>
                #include <signal.h>
                #include <stdatomic.h>
                #include <stdio.h>
                #include <sys/syscall.h>
                #include <unistd.h>
                static atomic_int stop, signals;
                static pid_t target;
                static void on_signal(int s) {
                    (void) s;
                    atomic_fetch_add(&signals, 1);
                }
                static void *pester(void *unused) {
                    (void) unused;
                    while (!atomic_load(&stop)) {
                        syscall(SYS_tgkill, getpid(), target, SIGUSR1);
                    }
                    return 0;
                }
                int main(void) {
                    struct sigaction sa = {.sa_handler = on_signal, .sa_flags = SA_RESTART};
                    sigaction(SIGUSR1, &sa, 0);
                    target = (pid_t) syscall(SYS_gettid);
                    pthread_t t;
                    pthread_create(&t, 0, pester, 0);
                    int opened = 0;
                    for (int i = 0; i < 5000; i++) {
                        int fd = open("sig", O_WRONLY | O_CREAT | O_TRUNC, 0600);
                        if (fd >= 0) {
                            opened++;
                            close(fd);
                        }
                    }
                    atomic_store(&stop, 1);
                    pthread_join(t, 0);
                    printf("opened=%d\\nsignals=%d\\n", opened, atomic_load(&signals));
                    return 0;
                }
                """);

        AgentjailRun.Outcome o = run.run(binary.toString());

        assertEquals("5000", o.probes().get("opened"), o::describe);
        assertTrue(Integer.parseInt(o.probes().get("signals")) > 500, o::describe);
        long counted = ofKind(o.audit(), AuditRecord.KIND_FILE).stream()
                .filter(r -> r.path("file").path("path").asText().equals("sig"))
                .mapToLong(r -> r.path("file").path("count").asLong())
                .sum();
        assertEquals(5_000, counted);
    }

    @Test
    void killingTheSupervisorUnderFailureClosedStopsTheJailAndSaysSo() throws Exception {
        AgentjailRun run = AgentjailRun.in(dir);
        CompletableFuture<AgentjailRun.Outcome> session = CompletableFuture.supplyAsync(() -> run.run(
                "/bin/sh",
                "-c",
                "touch started; i=0; while [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done;" + " touch finished"));
        killSupervisorOnce(run.project().resolve("started"), session);
        AgentjailRun.Outcome o = session.get(120, TimeUnit.SECONDS);

        assertEquals(ExitCodes.FAILURE, o.exitCode(), o::describe);
        assertTrue(o.err().contains("the exec and file audit failed"), o::describe);
        assertTrue(o.err().contains("stopping the jail, as audit.failure is closed"), o::describe);
        assertFalse(Files.exists(run.project().resolve("finished")), o::describe);
        assertTrue(o.elapsed().toSeconds() < 25, "stopped, not run to its end: " + o.describe());
        List<JsonNode> gaps = ofKind(o.audit(), AuditRecord.KIND_AUDIT_GAP);
        assertEquals(1, gaps.size(), gaps::toString);
        assertEquals("audit-supervisor-stopped", gaps.get(0).path("reason").asText(), gaps::toString);
        assertTrue(gaps.get(0).path("gap").path("stopped").asBoolean(), gaps::toString);
        JsonNode end = o.audit().get(o.audit().size() - 1);
        assertEquals(AuditRecord.KIND_SESSION_END, end.path("kind").asText(), end::toString);
    }

    @Test
    void killingTheSupervisorUnderFailureOpenLetsTheAgentGoOnAndCountsWhatIsMissed() throws Exception {
        AgentjailRun run = AgentjailRun.in(dir).policy("""
                version: 1
                audit:
                  failure: open
                """);
        CompletableFuture<AgentjailRun.Outcome> session = CompletableFuture.supplyAsync(() -> run.run(
                "/bin/sh",
                "-c",
                "touch started; i=0; while [ $i -lt 40 ]; do sleep 0.1; i=$((i + 1)); done;" + " touch finished"));
        killSupervisorOnce(run.project().resolve("started"), session);
        AgentjailRun.Outcome o = session.get(120, TimeUnit.SECONDS);

        assertEquals(0, o.exitCode(), o::describe);
        assertTrue(Files.exists(run.project().resolve("finished")), o::describe);
        assertTrue(o.err().contains("the agent goes on unrecorded (audit.failure: open)"), o::describe);
        List<JsonNode> gaps = ofKind(o.audit(), AuditRecord.KIND_AUDIT_GAP);
        assertEquals("audit-supervisor-stopped", gaps.get(0).path("reason").asText(), gaps::toString);
        long missed = gaps.stream()
                .filter(g -> g.path("reason").asText().equals("audit-events-dropped"))
                .mapToLong(g -> g.path("gap").path("missed").asLong())
                .sum();
        // The sleeps after the kill and the touch at the end: each one let go on, and counted.
        assertTrue(missed >= 2, gaps::toString);
        long sleeps = ofKind(o.audit(), AuditRecord.KIND_EXEC).stream()
                .filter(r -> r.path("exec").path("path").asText().endsWith("/sleep"))
                .mapToLong(r -> r.path("exec").path("count").asLong())
                .sum();
        assertNotEquals(0, missed);
        assertTrue(sleeps + missed >= 40, () -> sleeps + " recorded, " + missed + " missed");
    }

    @Test
    void recordsTheLogRefusesForAWhileAreWrittenLateNotLost() throws Exception {
        // Another writer of the same log holding its lock for longer than an append waits (2 s): a neighbouring
        // session stopped while it held it, or a host process of the user. The programs run meanwhile must all
        // be in the log once it takes records again.
        AgentjailRun run = AgentjailRun.in(dir);
        int programs = 40;
        CompletableFuture<AgentjailRun.Outcome> session = CompletableFuture.supplyAsync(() -> run.run(
                "/bin/sh",
                "-c",
                "touch started; i=0; while [ $i -lt " + programs + " ]; do /bin/true; sleep 0.1; i=$((i + 1));"
                        + " done"));
        Path started = run.project().resolve("started");
        awaitStarted(started, session);
        try (FileChannel lock = openLockFile(run);
                FileLock held = lock.lock(0, 1, false)) {
            Thread.sleep(4_000);
        }
        AgentjailRun.Outcome o = session.get(120, TimeUnit.SECONDS);

        assertEquals(0, o.exitCode(), o::describe);
        long recorded = runsOf(o, "/bin/true");
        assertEquals(programs, recorded, o::describe);
        assertTrue(o.err().contains("cannot write the exec and file records"), o::describe);
        assertTrue(o.err().contains("the exec and file records are written again"), o::describe);
        JsonNode end = o.audit().get(o.audit().size() - 1);
        assertEquals(AuditRecord.KIND_SESSION_END, end.path("kind").asText(), end::toString);
        // Each /bin/true, each sleep, the touch and the shell.
        assertEquals(2L * programs + 2, end.path("programs").asLong(), end::toString);
        Command.Result verify = run.cli("log", "verify", o.auditLog().toString());
        assertEquals(0, verify.exitCode(), verify::describe);
    }

    @Test
    void recordsTheLogStillRefusesWhenTheJailEndsAreWrittenOnceItTakesThemAgain() throws Exception {
        AgentjailRun run = AgentjailRun.in(dir);
        int programs = 30;
        CompletableFuture<AgentjailRun.Outcome> session = CompletableFuture.supplyAsync(() -> run.run(
                "/bin/sh",
                "-c",
                "touch started; while [ ! -e locked ]; do sleep 0.05; done; i=0; while [ $i -lt " + programs
                        + " ]; do /bin/true; i=$((i + 1)); done"));
        Path started = run.project().resolve("started");
        awaitStarted(started, session);
        try (FileChannel lock = openLockFile(run);
                FileLock held = lock.lock(0, 1, false)) {
            Files.writeString(run.project().resolve("locked"), "");
            // The agent's programs run and it exits while the lock is held; the session's end waits for the log.
            Thread.sleep(5_000);
        }
        AgentjailRun.Outcome o = session.get(120, TimeUnit.SECONDS);

        assertEquals(0, o.exitCode(), o::describe);
        long recorded = runsOf(o, "/bin/true");
        assertEquals(programs, recorded, o::describe);
        assertFalse(o.err().contains("could not be written"), o::describe);
        Command.Result verify = run.cli("log", "verify", o.auditLog().toString());
        assertEquals(0, verify.exitCode(), verify::describe);
    }

    @Test
    void recordsTheLogNeverTakesFailTheSessionUnderFailureClosed() throws Exception {
        AgentjailRun run = AgentjailRun.in(dir);
        CompletableFuture<AgentjailRun.Outcome> session = CompletableFuture.supplyAsync(() -> run.run(
                "/bin/sh",
                "-c",
                "touch started; while [ ! -e locked ]; do sleep 0.05; done; i=0; while [ $i -lt 20 ]; do /bin/true;"
                        + " i=$((i + 1)); done"));
        Path started = run.project().resolve("started");
        awaitStarted(started, session);
        AgentjailRun.Outcome o;
        // Held until the session has given up on the log (30 s after the jail's end).
        try (FileChannel lock = openLockFile(run);
                FileLock held = lock.lock(0, 1, false)) {
            Files.writeString(run.project().resolve("locked"), "");
            o = session.get(150, TimeUnit.SECONDS);
        }

        assertEquals(ExitCodes.FAILURE, o.exitCode(), o::describe);
        assertTrue(o.err().contains("exec and file records could not be written to the audit log"), o::describe);
    }

    /** Waits (at most a minute) for the agent's {@code started} file, or the session's end. */
    private static void awaitStarted(Path started, CompletableFuture<?> session) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!Files.exists(started) && System.nanoTime() < deadline && !session.isDone()) {
            Thread.sleep(20);
        }
        assertTrue(Files.exists(started), "the agent did not start");
    }

    /** The lock file that the writers of the run's audit log take turns on (byte 0: the append lock). */
    private static FileChannel openLockFile(AgentjailRun run) throws IOException {
        Path lockFile = run.auditLog().resolveSibling("." + run.auditLog().getFileName() + ".lock");
        return FileChannel.open(lockFile, StandardOpenOption.READ, StandardOpenOption.WRITE);
    }

    /** How many times the session's exec records say {@code program} ran (coalesced records count for their count). */
    private static long runsOf(AgentjailRun.Outcome o, String program) {
        return ofKind(o.audit(), AuditRecord.KIND_EXEC).stream()
                .filter(r -> r.path("exec").path("path").asText().equals(program))
                .mapToLong(r -> r.path("exec").path("count").asLong(1))
                .sum();
    }

    /** Waits for the agent's {@code started} file, then kills the session's supervisor (SIGKILL, by its pid). */
    private static void killSupervisorOnce(Path started, CompletableFuture<?> session) throws Exception {
        awaitStarted(started, session);
        Process pgrep = new ProcessBuilder("pgrep", "-n", "-f", "agentjail-init.* supervise --connect").start();
        String pid = new String(pgrep.getInputStream().readAllBytes()).strip();
        pgrep.waitFor(10, TimeUnit.SECONDS);
        assertFalse(pid.isEmpty(), "no supervisor process");
        Process kill = new ProcessBuilder("kill", "-KILL", pid).inheritIO().start();
        assertEquals(0, kill.waitFor(10, TimeUnit.SECONDS) ? kill.exitValue() : -1);
    }

    private static String uid() {
        try {
            Process p = new ProcessBuilder("id", "-u").start();
            return new String(p.getInputStream().readAllBytes()).strip();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}

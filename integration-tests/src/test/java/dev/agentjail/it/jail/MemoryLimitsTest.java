package dev.agentjail.it.jail;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.agentjail.cli.ExitCodes;
import dev.agentjail.it.support.Prerequisites;
import dev.agentjail.proxy.audit.AuditRecord;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The session's cgroup, for real: as root on a cgroup v1 host (this one) memory, processes and CPU are each the
 * session's own v1 group; an allocation beyond {@code limits.memory} is OOM-killed and the session-end record names the
 * process; three 300 MB processes do not all fit in 512m. Node with two WebAssembly memories (what undici's llhttp
 * maps) works under the default policy, which no longer sets RLIMIT_AS. As an ordinary user without delegation the
 * explicit limit is refused instead (see {@link UnprivilegedUserTest} and bin/test-as-user).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MemoryLimitsTest {
    static final Pattern CPU_GROUP = Pattern.compile("cpu [0-9.]+: cgroup v1 (/[^ \"]+) \\(");

    @TempDir
    Path dir;

    /** Allocates and touches {@code mib} MiB (bytes(n) alone stays unbacked zero pages). */
    static String allocate(int mib) {
        return "python3 -c \"import time; a = b'x' * (" + mib + " << 20); time.sleep(2); print('survived')\"";
    }

    static List<String> strings(JsonNode record, String field) {
        return StreamSupport.stream(record.path(field).spliterator(), false)
                .map(JsonNode::asText)
                .toList();
    }

    @Test
    void aProcessAllocatingBeyondTheMemoryLimitIsKilledAndTheEndRecordNamesIt() {
        AgentjailRun.requireBwrap();
        AgentjailRun run = AgentjailRun.in(dir).policy("""
                version: 1
                limits:
                  memory: 256m
                """);
        AgentjailRun.Outcome o = run.bash(allocate(400) + "; echo \"alloc=$?\"");
        if (!AgentjailRun.isRoot()) {
            assertRefusedWithoutDelegation(o, "limits.memory: 256m cannot be enforced");
            return;
        }

        assertEquals(0, o.exitCode(), o::describe);
        assertEquals("137", o.probe("alloc"), () -> "not killed by SIGKILL; " + o.describe());
        JsonNode start = o.only(AuditRecord.KIND_SESSION_START);
        JsonNode end = o.only(AuditRecord.KIND_SESSION_END);
        assertAll(
                () -> assertTrue(
                        strings(start, "limits").stream().anyMatch(l -> l.startsWith("memory 256m: cgroup v")),
                        start::toString),
                () -> assertEquals(strings(start, "limits"), strings(end, "limits")),
                () -> assertTrue(
                        strings(end, "limit_hits").stream()
                                .anyMatch(h -> h.startsWith("memory: oom-kill of python3 (pid ")),
                        end::toString),
                () -> assertTrue(o.err().contains("limit reached: memory: oom-kill of python3"), o::describe));
        AgentjailRun.assertPidsCgroupRemoved(o);
    }

    /** RLIMIT_AS let all three through (each under 512m); the session's memory counts them together. */
    @Test
    void threeProcessesOf300MbDoNotAllSurviveUnder512m() {
        AgentjailRun.requireBwrap();
        assumeTrue(AgentjailRun.isRoot(), "an ordinary user has no memory controller here (refusal: the test above)");
        AgentjailRun.Outcome o = AgentjailRun.in(dir).policy("""
                        version: 1
                        limits:
                          memory: 512m
                        """).bash("""
                        for i in 1 2 3; do %s > out.$i 2>/dev/null & done
                        wait
                        echo "survivors=$(cat out.1 out.2 out.3 | grep -c survived)"
                        """.formatted(allocate(300)));

        assertEquals(0, o.exitCode(), o::describe);
        int survivors = Integer.parseInt(o.probe("survivors"));
        assertTrue(survivors < 3, () -> "all three 300 MB processes survived under 512m; " + o.describe());
        assertTrue(
                strings(o.only(AuditRecord.KIND_SESSION_END), "limit_hits").size() >= 3 - survivors,
                () -> "each kill recorded; " + o.describe());
    }

    /**
     * V8 reserves 8 to 10 GiB of address space per WebAssembly memory: under the old default RLIMIT_AS (16 GiB) the
     * second failed ("Cannot allocate Wasm memory"), which broke Node's fetch (llhttp) next to the undici package.
     */
    @Test
    void nodeWithTwoWebAssemblyMemoriesRunsUnderTheDefaultPolicy() {
        AgentjailRun.requireBwrap();
        Prerequisites.require(Files.isExecutable(Path.of("/usr/bin/node")), "node in /usr/bin");
        AgentjailRun.Outcome o = AgentjailRun.in(dir).bash("""
                node -e '
                  const a = new WebAssembly.Memory({initial: 1, maximum: 65536});
                  const b = new WebAssembly.Memory({initial: 1, maximum: 65536});
                  const c = new WebAssembly.Memory({initial: 1, maximum: 65536});
                  console.log("wasm=" + (a.buffer.byteLength + b.buffer.byteLength + c.buffer.byteLength));
                '
                echo "as=$(awk '/Max address space/ {print $4}' /proc/self/limits)"
                """);

        assertEquals(0, o.exitCode(), o::describe);
        assertEquals(String.valueOf(3 * 65536), o.probe("wasm"), o::describe);
        assertEquals("unlimited", o.probe("as"), "no RLIMIT_AS by default");
        JsonNode start = o.only(AuditRecord.KIND_SESSION_START);
        List<String> limits = strings(start, "limits");
        assertTrue(limits.stream().noneMatch(l -> l.startsWith("address_space")), start::toString);
        assertTrue(limits.stream().anyMatch(l -> l.startsWith("memory 16g: ")), start::toString);
    }

    @Test
    void anExplicitAddressSpaceLimitIsRlimitAs() {
        AgentjailRun.requireBwrap();
        AgentjailRun.Outcome o = AgentjailRun.in(dir)
                .policy("""
                        version: 1
                        limits:
                          address_space: 64g
                        """)
                .bash("echo \"as=$(awk '/Max address space/ {print $4}' /proc/self/limits)\"");

        assertEquals(0, o.exitCode(), o::describe);
        assertEquals(String.valueOf(64L << 30), o.probe("as"), o::describe);
        assertTrue(
                strings(o.only(AuditRecord.KIND_SESSION_START), "limits")
                        .contains("address_space 64g: rlimit RLIMIT_AS"),
                o::describe);
    }

    /** The quota is read from the session's v1 cpu group (named in the start record) while the jail runs. */
    @Test
    void theCpuQuotaIsSetInTheSessionsCgroup() throws Exception {
        AgentjailRun.requireBwrap();
        AgentjailRun run = AgentjailRun.in(dir).policy("""
                version: 1
                limits:
                  cpu: 0.5
                """);
        if (!AgentjailRun.isRoot()) {
            assertRefusedWithoutDelegation(run.bash("true"), "limits.cpu: 0.5 cannot be enforced");
            return;
        }
        CompletableFuture<String> quota = CompletableFuture.supplyAsync(() -> readQuotaWhileRunning(run.auditLog()));
        AgentjailRun.Outcome o = run.bash("sleep 4");

        assertEquals(0, o.exitCode(), o::describe);
        assertEquals("50000", quota.get(10, TimeUnit.SECONDS), o::describe);
        AgentjailRun.assertPidsCgroupRemoved(o);
    }

    private static String readQuotaWhileRunning(Path auditLog) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
            try {
                if (Files.exists(auditLog)) {
                    Matcher m = CPU_GROUP.matcher(Files.readString(auditLog, StandardCharsets.UTF_8));
                    if (m.find()) {
                        return Files.readString(Path.of(m.group(1), "cpu.cfs_quota_us"))
                                .trim();
                    }
                }
                Thread.sleep(50);
            } catch (IOException e) {
                return "unreadable: " + e;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return "interrupted";
            }
        }
        return "no cpu group in the start record";
    }

    static void assertRefusedWithoutDelegation(AgentjailRun.Outcome o, String message) {
        assertEquals(ExitCodes.ENVIRONMENT, o.exitCode(), o::describe);
        assertTrue(o.err().contains(message), o::describe);
        assertTrue(o.err().contains("systemd-run --user --scope -p Delegate=yes"), o::describe);
    }
}

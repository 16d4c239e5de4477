package dev.agentjail.it.jail;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.any;
import static com.github.tomakehurst.wiremock.client.WireMock.anyUrl;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.wireMockConfig;
import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.tomakehurst.wiremock.junit5.WireMockExtension;
import dev.agentjail.it.support.Command;
import dev.agentjail.it.support.Prerequisites;
import dev.agentjail.proxy.audit.AuditRecord;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The jail works the same when an ordinary user starts it (the issue asks for both, and CI runs as root): as a user
 * the test creates, the agent keeps that user's uid, sees only {@code lo}, reaches an allowed WireMock upstream only
 * through the proxy, its exit code passes through and its files belong to that user; a fork bomb is stopped by
 * RLIMIT_NPROC (not the pids cgroup the root launcher uses). Runs only as root, which it needs to create the user.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class UnprivilegedUserTest {
    static final String USER = "agentjail-it";

    @RegisterExtension
    static WireMockExtension upstream = WireMockExtension.newInstance()
            .options(wireMockConfig().bindAddress("127.0.0.1").dynamicPort())
            .build();

    @TempDir
    static Path shared;

    static Path jar;
    static int uid;

    @TempDir
    Path dir;

    @BeforeAll
    static void createUserAndCopyTheJar() throws IOException {
        assumeTrue(AgentjailRun.isRoot(), "creating the unprivileged user needs root");
        AgentjailRun.requireBwrap();
        uid = RootLaunchTest.ensureUser(USER);
        jar = jarFor(USER, shared);
    }

    /**
     * A copy of the launcher jar in {@code shared} that {@code user} can read (/root is usually 0700, and so is a
     * temporary directory), once that user is known to be able to run the tests' java.
     */
    static Path jarFor(String user, Path shared) throws IOException {
        Files.setPosixFilePermissions(shared, PosixFilePermissions.fromString("rwxr-xr-x"));
        Path copy = shared.resolve("agentjail.jar");
        Files.copy(AgentjailRun.jar(), copy, StandardCopyOption.REPLACE_EXISTING);
        Files.setPosixFilePermissions(copy, PosixFilePermissions.fromString("rw-r--r--"));
        Command.Result java = Command.run(
                Duration.ofSeconds(10),
                List.of(
                        "runuser",
                        "-u",
                        user,
                        "--",
                        "test",
                        "-x",
                        AgentjailRun.java().toString()));
        Prerequisites.require(java.exitCode() == 0, user + " cannot run " + AgentjailRun.java());
        return copy;
    }

    /** A run in {@code dir} as {@code user}: its project, home and audit directory belong to the user, who can read its other files. */
    static AgentjailRun runAs(String user, Path dir, Path jar) throws IOException {
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
        AgentjailRun run = AgentjailRun.in(dir).asUser(user, jar);
        UserPrincipal owner =
                dir.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName(user);
        for (Path p : List.of(run.project(), run.home(), run.auditLog().getParent())) {
            try (Stream<Path> tree = Files.walk(p)) {
                for (Path f : tree.toList()) {
                    Files.setOwner(f, owner);
                }
            }
        }
        return run;
    }

    @BeforeEach
    void stub() {
        upstream.stubFor(any(anyUrl()).willReturn(aResponse().withStatus(200).withBody("hello user")));
    }

    @Test
    void theBasicSessionWorksForAnOrdinaryUser() throws IOException {
        int port = upstream.getPort();
        AgentjailRun run = runAsUser().policy("""
                version: 1
                network:
                  allow: ["upstream.test:%d"]
                  resolve: {upstream.test: 127.0.0.1}
                """.formatted(port));

        AgentjailRun.Outcome o = run.bash("""
                echo "uid=$(id -u)"
                echo "links=$(ip -o link show | awk -F': ' '{print $2}' | tr '\\n' ' ')"
                echo "http=$(curl -q -sS -m 20 -w ' %%{http_code}' http://upstream.test:%1$d/as-user)"
                curl -q -sS -m 5 --noproxy '*' http://127.0.0.1:%1$d/direct >/dev/null 2>&1; echo "direct=$?"
                echo made > made-by-agent
                exit 7
                """.formatted(port));

        assertEquals(7, o.exitCode(), o::describe);
        assertAll(
                () -> assertEquals(String.valueOf(uid), o.probe("uid"), "the agent keeps the user's uid"),
                () -> assertEquals("lo", o.probe("links").strip(), o::describe),
                () -> assertEquals("hello user 200", o.probe("http"), o::describe),
                () -> assertNotEquals("0", o.probe("direct"), "curl --noproxy to the host's loopback"));
        assertEquals(
                List.of("/as-user"),
                upstream.getAllServeEvents().stream()
                        .map(e -> e.getRequest().getUrl())
                        .toList());
        assertEquals(uid, (Integer) Files.getAttribute(run.project().resolve("made-by-agent"), "unix:uid"));
        JsonNode end = o.only(AuditRecord.KIND_SESSION_END);
        assertAll(
                () -> assertEquals(7, end.path("exit_code").asInt(), end::toString),
                () -> assertEquals(1, end.path("requests").asInt(), end::toString),
                () -> assertEquals(0, end.path("denials").asInt(), end::toString));
    }

    @Test
    void aForkBombIsStoppedByTheProcessLimit() throws IOException {
        String marker = ResourceLimitsTest.uniqueSleep();
        AgentjailRun.Outcome o = runAsUser()
                .policy("""
                        version: 1
                        limits:
                          processes: %d
                        """.formatted(ResourceLimitsTest.MAX_PROCESSES))
                .timeout("30s")
                .bash(ResourceLimitsTest.forkBombScript(marker));

        ResourceLimitsTest.assertForkBombContained(o, marker);
    }

    /**
     * Without a delegated cgroup (this v1 host has none for an ordinary user; neither does a runuser login) the default
     * memory limit is reported on stderr and in the start record and the session runs; one the policy asks for
     * refuses the session, naming the limit, the reason and how to get delegation.
     */
    @Test
    void withoutDelegationTheDefaultMemoryLimitIsReportedAndAnExplicitOneRefused() throws IOException {
        AgentjailRun.Outcome defaults = runAsUser().policy("version: 1\n").bash("echo ran=yes");

        assertEquals(0, defaults.exitCode(), defaults::describe);
        assertEquals("yes", defaults.probe("ran"));
        assertTrue(
                defaults.err().contains("agentjail: warning: the default limits.memory (16g) is not enforced: "),
                defaults::describe);
        assertTrue(
                MemoryLimitsTest.strings(defaults.only(AuditRecord.KIND_SESSION_START), "limits")
                        .contains("memory 16g: not enforced (default)"),
                defaults::describe);

        AgentjailRun.Outcome explicit = runAs(USER, Files.createDirectories(dir.resolve("explicit")), jar)
                .policy("""
                        version: 1
                        limits:
                          memory: 512m
                        """)
                .bash("echo ran=yes");
        MemoryLimitsTest.assertRefusedWithoutDelegation(
                explicit, "limits.memory: 512m cannot be enforced: no writable" + " memory controller");
        assertTrue(!explicit.out().contains("ran=yes"), explicit::describe);
    }

    private AgentjailRun runAsUser() throws IOException {
        return runAs(USER, dir, jar);
    }
}

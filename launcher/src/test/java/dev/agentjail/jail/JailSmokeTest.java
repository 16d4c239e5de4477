package dev.agentjail.jail;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.jail.JailHarness.Result;
import dev.agentjail.proxy.handoff.HandedOffListener;
import dev.agentjail.proxy.handoff.ListenerSink;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.util.ReferenceCountUtil;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The real thing: bwrap, agentjail-init, the hand-off, and a host-side responder on the handed-off listener. */
class JailSmokeTest {
    private static final String BODY = "hello-from-host";

    private static EventLoopGroup group;

    @TempDir
    Path root;

    private JailHarness jail;
    private final List<Channel> listeners = new CopyOnWriteArrayList<>();
    private final AtomicInteger served = new AtomicInteger();

    @BeforeAll
    static void startGroup() {
        JailPrerequisites.requireBwrap();
        group = new MultiThreadIoEventLoopGroup(2, EpollIoHandler.newFactory());
    }

    @AfterAll
    static void stopGroup() {
        if (group != null) {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }

    @BeforeEach
    void setUp() throws Exception {
        jail = new JailHarness(root, group);
    }

    @AfterEach
    void closeListeners() throws InterruptedException {
        for (Channel channel : listeners) {
            channel.close().sync();
        }
    }

    @Test
    void curlInsideReachesTheHostHandlerThroughTheHandedOffPort() throws Exception {
        JailPrerequisites.requireCurl();
        Result result =
                jail.run(proxySink(), "curl", "-s", "--max-time", "10", "http://127.0.0.1:" + JailHarness.PORT + "/");
        assertEquals(0, result.exit(), result::toString);
        assertEquals(BODY, result.stdout());
        assertEquals(1, served.get(), "the host handler answered");
        // 127.0.0.1 and, where the jail has IPv6, [::1].
        int handedOff = result.handoff().get(5, TimeUnit.SECONDS);
        assertTrue(handedOff == 1 || handedOff == 2, "listeners handed off: " + handedOff);
        assertEquals(handedOff, listeners.size());
    }

    @Test
    void aServiceOnTheHostLoopbackIsUnreachableWithoutTheProxy() throws Exception {
        JailPrerequisites.requireCurl();
        try (ServerSocket host = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            host.setSoTimeout(1);
            String url = "http://127.0.0.1:" + host.getLocalPort() + "/";
            Result result = jail.run(proxySink(), "curl", "-s", "--noproxy", "*", "--max-time", "5", url);
            assertNotEquals(0, result.exit(), result::toString);
            assertThrows(java.net.SocketTimeoutException.class, host::accept, "nothing reached the host service");
        }
    }

    @Test
    void onlyLoopbackExistsInside() throws Exception {
        Result result = jail.run(proxySink(), "cat", "/proc/net/dev");
        assertEquals(0, result.exit(), result::toString);
        List<String> interfaces = result.stdout()
                .lines()
                .skip(2)
                .map(line -> line.substring(0, line.indexOf(':')).trim())
                .toList();
        assertEquals(List.of("lo"), interfaces);
    }

    @Test
    void exitCodesPassThrough() throws Exception {
        assertEquals(7, jail.run(proxySink(), "sh", "-c", "exit 7").exit());
        assertEquals(0, jail.run(proxySink(), "true").exit());
        Result missing = jail.run(proxySink(), "/nonexistent/agent");
        assertEquals(InitExitCodes.NOT_FOUND, missing.exit(), missing::toString);
        assertTrue(missing.stderr().contains("agentjail-init: exec /nonexistent/agent"), missing::toString);
    }

    @Test
    void signalsSentToTheAgentsPidReachItAndItsExitCodeComesBack() throws Exception {
        Path ready = jail.project().resolve("ready");
        JailHarness.Started started = jail.start(
                proxySink(),
                SeccompFilter.program(),
                "sh",
                "-c",
                "trap 'exit 42' TERM; touch ready; while :; do sleep 0.05; done");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!Files.exists(ready) && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertTrue(Files.exists(ready), "the agent started");
        long childPid = started.status().childPid().orElseThrow();
        List<Long> agents = BwrapStatus.agentPids(childPid);
        assertEquals(1, agents.size(), agents::toString);
        assertTrue(ProcessHandle.of(agents.get(0)).orElseThrow().destroy(), "SIGTERM sent");
        Result result = started.finish();
        assertEquals(42, result.exit(), result::toString);
        assertEquals(42, started.status().exitCode().orElseThrow());
    }

    @Test
    void homeIsEmptyExceptForListedEntries() throws Exception {
        Files.createDirectories(jail.home().resolve(".ssh"));
        Files.writeString(jail.home().resolve(".ssh/id_ed25519"), "secret");
        Files.writeString(jail.home().resolve(".gitconfig"), "[user]\n");
        jail.homeEntries = List.of(new HomeEntry(Path.of(".gitconfig"), Access.READ_ONLY));
        Result result = jail.run(
                proxySink(),
                "sh",
                "-c",
                "test ! -e \"$HOME/.ssh\" && test ! -e /root/.ssh && test -r \"$HOME/.gitconfig\""
                        + " && ! echo x >> \"$HOME/.gitconfig\" && echo hidden");
        assertEquals("hidden\n", result.stdout(), result::toString);
        assertEquals("[user]\n", Files.readString(jail.home().resolve(".gitconfig")));
    }

    @Test
    void theAgentRunsUnprivilegedWithSeccompAndNoNewPrivileges() throws Exception {
        Result result =
                jail.run(proxySink(), "sh", "-c", "id -u; grep -E '^(CapEff|NoNewPrivs|Seccomp):' /proc/self/status");
        assertEquals(0, result.exit(), result::toString);
        List<String> lines = result.stdout().lines().toList();
        assertEquals(Integer.toString(JailHarness.insideIdentity().uid()), lines.get(0));
        assertNotEquals("0", lines.get(0));
        assertTrue(lines.contains("CapEff:\t0000000000000000"), result::toString);
        assertTrue(lines.contains("NoNewPrivs:\t1"), result::toString);
        assertTrue(lines.contains("Seccomp:\t2"), result::toString);
    }

    @Test
    void onlyTheProjectAndTheCappedScratchMountsAreWritable() throws Exception {
        jail.limits = new Limits(8192, 4096, Limits.UNLIMITED, Limits.UNLIMITED, 4 << 20, 4 << 20, 4 << 20);
        Result result = jail.run(
                proxySink(),
                "sh",
                "-c",
                String.join(
                        "; ",
                        "touch /x && echo root-writable",
                        "touch /dev/x && echo dev-writable",
                        "touch /usr/x && echo usr-writable",
                        "touch /etc/x && echo etc-writable",
                        "touch /tmp/x && echo tmp-writable",
                        "touch \"$HOME/x\" && echo home-writable",
                        "touch /dev/shm/x && echo shm-writable",
                        "dd if=/dev/zero of=/tmp/fill bs=1M count=8 2>/dev/null || echo tmp-capped",
                        "dd if=/dev/zero of=\"$HOME/fill\" bs=1M count=8 2>/dev/null || echo home-capped",
                        "dd if=/dev/zero of=/dev/shm/fill bs=1M count=8 2>/dev/null || echo shm-capped"));
        assertEquals(
                List.of("tmp-writable", "home-writable", "shm-writable", "tmp-capped", "home-capped", "shm-capped"),
                result.stdout().lines().toList(),
                result::toString);
    }

    @Test
    void resourceLimitsApplyToTheAgent() throws Exception {
        Result result = jail.run(proxySink(), "cat", "/proc/self/limits");
        assertEquals(0, result.exit(), result::toString);
        Limits limits = Limits.DEFAULTS;
        assertLimit(result.stdout(), "Max open files", limits.openFiles());
        assertLimit(result.stdout(), "Max processes", limits.processes());
        assertLimit(result.stdout(), "Max address space", limits.addressSpaceBytes());
        assertLimit(result.stdout(), "Max file size", limits.fileSizeBytes());
        assertLimit(result.stdout(), "Max core file size", 0);
    }

    private static void assertLimit(String procLimits, String name, long expected) {
        String line = procLimits
                .lines()
                .filter(l -> l.startsWith(name))
                .findFirst()
                .orElseThrow(() -> new AssertionError(name + " missing from\n" + procLimits));
        String[] values = line.substring(name.length()).trim().split("\\s+");
        String shown = expected == Limits.UNLIMITED ? "unlimited" : Long.toString(expected);
        assertEquals(shown, values[0], "soft " + line);
        assertEquals(shown, values[1], "hard " + line);
    }

    @Test
    void protectedPathsCannotBeChangedOrCreated() throws Exception {
        Path project = jail.project();
        Files.createDirectories(project.resolve(".git/hooks"));
        Files.writeString(project.resolve(".git/config"), "[core]\n");
        Files.writeString(project.resolve(".env"), "API_KEY=canary\n");
        jail.protectedPaths = ProtectedPaths.resolve(project, ProtectedPaths.DEFAULTS);
        jail.maskedFiles = MaskedFiles.find(project, List.of(".env"), 8, 10_000);
        Result result = jail.run(
                proxySink(),
                "sh",
                "-c",
                String.join(
                        "; ",
                        "echo bad > .git/hooks/post-checkout && echo hook-created",
                        "echo '[core] fsmonitor=x' >> .git/config && echo config-changed",
                        "echo '{}' > .mcp.json && echo mcp-created",
                        "mkdir -p .vscode/x && echo vscode-created",
                        "mkdir -p .claude && echo '{}' > .claude/settings.json && echo claude-created",
                        "echo x > README && echo project-writable",
                        "cat .env; echo masked"));
        assertEquals("project-writable\nmasked\n", result.stdout(), result::toString);
        assertFalse(Files.exists(project.resolve(".git/hooks/post-checkout")));
        assertEquals("[core]\n", Files.readString(project.resolve(".git/config")));
        assertEquals("API_KEY=canary\n", Files.readString(project.resolve(".env")));

        // bwrap left empty mount points on the host for the paths that did not exist; they are cleaned up.
        assertTrue(Files.exists(project.resolve(".mcp.json")));
        assertEquals(List.of(), ProtectedPaths.removePlaceholders(project, jail.protectedPaths));
        assertFalse(Files.exists(project.resolve(".mcp.json")));
        assertFalse(Files.exists(project.resolve(".vscode")));
        assertFalse(Files.exists(project.resolve(".claude")));
        assertTrue(Files.exists(project.resolve(".git/hooks")));
    }

    @Test
    void aRefusedHandoffStopsTheJailBeforeTheAgentRuns() throws Exception {
        ListenerSink refusing = fd -> {
            throw new IllegalStateException("proxy refuses");
        };
        Result result = jail.run(refusing, "sh", "-c", "echo agent-ran");
        assertEquals(InitExitCodes.HANDOFF, result.exit(), result::toString);
        assertEquals("", result.stdout());
        assertTrue(
                result.stderr().contains("agentjail-init: host proxy did not acknowledge the listener"),
                result::toString);
        assertThrows(ExecutionException.class, () -> result.handoff().get(5, TimeUnit.SECONDS));
    }

    @Test
    void aBrokenSeccompProgramStopsTheJail() throws Exception {
        byte[] broken = new byte[] {1, 2, 3, 4, 5, 6, 7};
        Result result = jail.run(proxySink(), broken, "sh", "-c", "echo agent-ran");
        // agentjail-init loads the deny filter itself (after the audit's): 7 bytes are no whole instruction.
        assertEquals(InitExitCodes.LIMITS, result.exit(), result::toString);
        assertTrue(result.stderr().contains("not a whole number of instructions"), result::toString);
        assertEquals("", result.stdout());
    }

    /** The proxy's side: wrap each handed-off descriptor and answer every connection with a fixed response. */
    private ListenerSink proxySink() {
        return fd ->
                listeners.add(HandedOffListener.register(responder(), fd).sync().channel());
    }

    private ServerBootstrap responder() {
        return new ServerBootstrap().group(group).childHandler(new ChannelInitializer<SocketChannel>() {
            @Override
            protected void initChannel(SocketChannel ch) {
                ch.pipeline().addLast(new ChannelInboundHandlerAdapter() {
                    @Override
                    public void channelRead(ChannelHandlerContext ctx, Object msg) {
                        ReferenceCountUtil.release(msg);
                        if (served.getAndIncrement() >= 0) {
                            String response = "HTTP/1.1 200 OK\r\nContent-Length: " + BODY.length()
                                    + "\r\nConnection: close\r\n\r\n" + BODY;
                            ctx.writeAndFlush(Unpooled.copiedBuffer(response, StandardCharsets.US_ASCII))
                                    .addListener(ChannelFutureListener.CLOSE);
                        }
                    }
                });
            }
        });
    }
}

package dev.agentjail.jail.audit;

import dev.agentjail.jail.AuditScope;
import dev.agentjail.jail.InitCommand;
import dev.agentjail.proxy.audit.AuditRecord;
import dev.agentjail.proxy.audit.AuditSink;
import dev.agentjail.proxy.audit.AuditUnavailableException;
import dev.agentjail.proxy.handoff.NotifierSink;
import dev.agentjail.proxy.redact.Redactor;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.epoll.EpollDomainSocketChannel;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.netty.channel.unix.DomainSocketAddress;
import io.netty.channel.unix.FileDescriptor;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.ScheduledFuture;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The launcher's half of the exec and file audit (docs/jail.md "Exec and file audit"). It starts agentjail-init's
 * supervisor on the host before the jail, takes the seccomp notifier the jail hands over with its listeners ({@link
 * NotifierSink}), passes it to the supervisor over a Unix socket of the session's private directory, and turns the
 * supervisor's frames into records of the session's log ({@link JailActivity}).
 *
 * <p>When the supervisor fails while the jail runs: an {@code audit-gap} record and a line on stderr, then under {@code
 * audit.failure: closed} the jail is stopped (the launcher kept no copy of the notifier, so until it is stopped the
 * audited syscalls fail with ENOSYS, none goes on unrecorded), under {@code open} a pass-through supervisor takes over
 * the copy the launcher kept, and the events it lets go on are counted in {@code audit-gap} records.
 */
public final class ExecFileAudit implements NotifierSink, AutoCloseable {
    private static final ByteBufAllocator LINK_ALLOCATOR = new PooledByteBufAllocator(true, 0, 1, 4096, 4, 0, 0, true);

    /** The socket's name in the hand-off socket's directory. */
    public static final String SOCKET_NAME = "audit.sock";

    /** Exit codes of {@code agentjail-init supervise}, kept in sync with audit.c. */
    static final int SUPERVISE_DONE = 0;

    static final int SUPERVISE_STALLED = 3;

    /** How long a supervisor may take to connect once started. */
    static final long CONNECT_SECONDS = 10;

    /** How long the supervisor may take to see the jail's end, once the jail is over. */
    static final long FINISH_MILLIS = 2_000;

    /**
     * How long the link rests after a read that brought frames. A burst's frames then come some dozens to a read
     * instead of one read and one wake-up each: that halved the launcher's CPU time per event in a burst of opens
     * (docs/benchmarks.md run 26). A quiet link waits on epoll as any other; a frame is at most this much later.
     */
    static final long READ_PAUSE_MICROS = 1_000;

    /** How long the session's end waits for a log that refuses the last records, trying every {@link #HELD_RETRY_MILLIS}. */
    static final Duration HELD_AT_END = Duration.ofSeconds(30);

    static final long HELD_RETRY_MILLIS = 200;

    /** What to run and as whom. */
    public record Settings(
            AuditScope scope,
            boolean failClosed,
            int stallSeconds,
            Path init,
            Optional<int[]> runAs,
            int expectedUid,
            Path project,
            Path home) {}

    private final Settings settings;
    private final Path socket;
    private final AuditSink sink;
    private final PrintWriter err;
    private final Runnable stopJail;
    private final EventLoopGroup group;
    private final EventLoop loop;
    private final JailActivity activity;
    private final CompletableFuture<Void> connected = new CompletableFuture<>();
    private Channel server;
    private ScheduledFuture<?> ticks;

    // Owned by the loop.
    private Process supervisor;
    private Channel link;
    private FileDescriptor notifier;
    private boolean forwarded;
    private boolean passThrough;
    private boolean finishing;
    private String failure;
    /** Records wait in {@link #batch} because the log refused them; the link is not read meanwhile. */
    private boolean held;

    private String lastSinkError;

    private ExecFileAudit(
            Settings settings,
            Path socket,
            String session,
            Redactor redactor,
            AuditSink sink,
            PrintWriter err,
            Runnable stopJail) {
        this.settings = settings;
        this.socket = socket;
        this.sink = sink;
        this.err = err;
        this.stopJail = stopJail;
        this.group = new EpollEventLoopGroup(1, new DefaultThreadFactory("agentjail-audit", true));
        this.loop = group.next();
        this.activity =
                new JailActivity(session, new PathView(settings.project(), settings.home()), redactor, this::write);
    }

    /**
     * Binds the supervisor's socket at {@code socketDir}/{@value #SOCKET_NAME} and starts the supervisor; returns once
     * it has connected. {@code stopJail} is called (from another thread) when the jail must stop because auditing
     * failed under {@code audit.failure: closed}.
     */
    public static ExecFileAudit start(
            Settings settings,
            Path socketDir,
            String session,
            Redactor redactor,
            AuditSink sink,
            PrintWriter err,
            Runnable stopJail)
            throws IOException {
        ExecFileAudit audit =
                new ExecFileAudit(settings, socketDir.resolve(SOCKET_NAME), session, redactor, sink, err, stopJail);
        try {
            audit.bind();
            audit.loop.submit(() -> audit.startSupervisor(false)).sync();
            audit.connected.get(CONNECT_SECONDS, TimeUnit.SECONDS);
            audit.ticks = audit.loop.scheduleAtFixedRate(audit::tick, 1, 1, TimeUnit.SECONDS);
            return audit;
        } catch (Exception e) {
            audit.close();
            throw new IOException("cannot start the exec and file audit's supervisor: " + describe(e), e);
        }
    }

    private static String describe(Throwable e) {
        Throwable cause =
                e instanceof java.util.concurrent.ExecutionException && e.getCause() != null ? e.getCause() : e;
        if (cause instanceof java.util.concurrent.TimeoutException) {
            return "it did not connect within " + CONNECT_SECONDS + " s";
        }
        return cause.getMessage() == null ? cause.toString() : cause.getMessage();
    }

    private void bind() throws IOException, InterruptedException {
        Files.deleteIfExists(socket);
        ServerBootstrap bootstrap = new ServerBootstrap()
                .group(group)
                .channel(EpollServerDomainSocketChannel.class)
                // The launcher runs Netty unpooled (bin/agentjail); this link reads once or more per exec event, and
                // a fresh direct buffer each time was 7 % of its audit thread's CPU on a build (docs/benchmarks.md
                // run 29). One small pool for it: a 64 KiB chunk, no thread caches.
                .childOption(ChannelOption.ALLOCATOR, LINK_ALLOCATOR)
                .childHandler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        ch.pipeline()
                                .addLast(new LengthFieldBasedFrameDecoder(
                                        ByteOrder.LITTLE_ENDIAN, 1 << 20, 0, 4, 0, 4, true))
                                .addLast(new LinkHandler());
                    }
                });
        server = bootstrap.bind(new DomainSocketAddress(socket.toFile())).sync().channel();
        int owner = (Integer) Files.getAttribute(socket.getParent(), "unix:uid", LinkOption.NOFOLLOW_LINKS);
        int own = (Integer) Files.getAttribute(socket, "unix:uid", LinkOption.NOFOLLOW_LINKS);
        if (own != owner) {
            // Root serving a jail of another user: connect(2) needs the socket to be that user's.
            Files.setAttribute(socket, "unix:uid", owner, LinkOption.NOFOLLOW_LINKS);
        }
    }

    private void startSupervisor(boolean passThroughMode) {
        List<String> supervise = new ArrayList<>(List.of(
                settings.init().toString(),
                "supervise",
                "--connect",
                socket.toString(),
                "--failure",
                settings.failClosed() ? "closed" : "open",
                "--stall-seconds",
                Integer.toString(settings.stallSeconds()),
                "--scope",
                settings.scope().initArgument()));
        if (passThroughMode) {
            supervise.add("--pass-through");
        }
        List<String> argv = supervise;
        if (settings.runAs().isPresent()) {
            int[] ids = settings.runAs().get();
            argv = new ArrayList<>(InitCommand.execWithFds(settings.init(), List.of(), supervise));
            argv.addAll(2, List.of("--user", Integer.toString(ids[0]), Integer.toString(ids[1])));
        }
        ProcessBuilder pb = new ProcessBuilder(argv)
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectError(ProcessBuilder.Redirect.INHERIT);
        pb.environment().clear();
        Process started;
        try {
            started = pb.start();
        } catch (IOException e) {
            connected.completeExceptionally(e);
            return;
        }
        supervisor = started;
        passThrough = passThroughMode;
        started.onExit().thenAccept(p -> loop.execute(() -> supervisorExited(p)));
    }

    /** From the hand-off's event loop: the jail's notifier. */
    @Override
    public void accept(int fd) {
        FileDescriptor descriptor = new FileDescriptor(fd);
        loop.execute(() -> {
            if (notifier != null) {
                closeQuietly(descriptor);
                return;
            }
            notifier = descriptor;
            forward();
        });
    }

    private void forward() {
        if (forwarded || link == null || notifier == null) {
            return;
        }
        forwarded = true;
        FileDescriptor handed = notifier;
        link.writeAndFlush(handed).addListener(f -> {
            if (!f.isSuccess()) {
                failed("audit-supervisor-stopped", "cannot hand the notifier to the supervisor: " + f.cause());
            }
            if (settings.failClosed()) {
                // The supervisor's copy is then the only one: its end fails the audited syscalls, none goes unrecorded.
                closeQuietly(handed);
            }
        });
    }

    /** What the session's end waits for: the supervisor to exit, then its link to be read to its end. */
    private record Ending(Process supervisor, Channel link) {}

    private final class LinkHandler extends ChannelInboundHandlerAdapter {
        private boolean greeted;
        private boolean readFrames;

        @Override
        public void channelActive(ChannelHandlerContext ctx) throws Exception {
            EpollDomainSocketChannel ch = (EpollDomainSocketChannel) ctx.channel();
            int uid = ch.peerCredentials().uid();
            int pid = ch.peerCredentials().pid();
            // Only the process this launcher started, as the jail's user; a later one replaces an ended one's link.
            if (supervisor == null || pid != supervisor.pid() || uid != settings.expectedUid()) {
                ctx.close();
                return;
            }
            if (link != null) {
                link.close();
            }
            link = ctx.channel();
            super.channelActive(ctx);
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            try {
                if (ctx.channel() != link || !(msg instanceof ByteBuf body)) {
                    return;
                }
                if (greeted) {
                    readFrames = true;
                    activity.frame(body);
                    return;
                }
                AuditFrame frame = AuditFrame.parse(body);
                if (frame.type() != AuditFrame.HELLO
                        || !AuditFrame.FORMAT_VERSION.equals(frame.text(AuditFrame.VERSION))) {
                    throw new IOException("the supervisor speaks another frame format: " + frame.type());
                }
                greeted = true;
                connected.complete(null);
                forward();
            } catch (Exception e) {
                exceptionCaught(ctx, e);
            } finally {
                ReferenceCountUtil.release(msg);
            }
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            if (!(held && finishing)) {
                // Held records at the session's end: the link is read to its end first, close() tries them after.
                flush();
            }
            if (readFrames && ctx.channel() == link && !finishing) {
                readFrames = false;
                Channel ch = ctx.channel();
                ch.config().setAutoRead(false);
                ctx.executor()
                        .schedule(
                                () -> {
                                    if (!held) {
                                        ch.config().setAutoRead(true);
                                    }
                                },
                                READ_PAUSE_MICROS,
                                TimeUnit.MICROSECONDS);
            }
            ctx.fireChannelReadComplete();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            connected.completeExceptionally(cause);
            if (ctx.channel() == link && supervisor != null) {
                // A supervisor that sends what does not parse is not one to trust with the jail's record.
                err.println("agentjail: the audit supervisor sent a malformed frame: " + cause.getMessage());
                supervisor.destroyForcibly();
            }
            ctx.close();
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            if (ctx.channel() == link) {
                link = null;
            }
        }
    }

    private void supervisorExited(Process p) {
        if (p != supervisor) {
            return;
        }
        int code = p.exitValue();
        supervisor = null;
        connected.completeExceptionally(new IOException("the supervisor exited with " + code + " before it connected"));
        if (finishing || code == SUPERVISE_DONE) {
            return;
        }
        String how = code > 128 ? "killed by signal " + (code - 128) : "exited with " + code;
        failed(
                code == SUPERVISE_STALLED ? "audit-supervisor-behind" : "audit-supervisor-stopped",
                "agentjail-init supervise " + how);
    }

    private void failed(String reason, String error) {
        if (failure != null && settings.failClosed()) {
            return;
        }
        failure = error;
        boolean closed = settings.failClosed() || notifier == null;
        activity.gap(reason, 0, true, error, Instant.now());
        flush();
        if (closed) {
            err.println("agentjail: the exec and file audit failed (" + error + "); stopping the jail, as"
                    + " audit.failure is closed");
            err.flush();
            stopRequested = true;
            Thread.ofVirtual().start(stopJail);
        } else if (!passThrough) {
            err.println("agentjail: the exec and file audit failed (" + error + "); the agent goes on unrecorded"
                    + " (audit.failure: open), and the log counts what it misses");
            err.flush();
            forwarded = false;
            startSupervisor(true);
        }
    }

    private void tick() {
        try {
            activity.tick();
        } catch (RuntimeException e) {
            err.println("agentjail: cannot make the exec and file records of the last window: " + e);
            err.flush();
        }
        if (!(held && finishing)) {
            // At the session's end a refused append would keep the loop from reading the link to its end (it waits
            // for the log's lock): close() tries the held records once the link is read.
            flush();
        }
    }

    /**
     * Records wait here until the frames read together are all taken, then go to the log in one append ({@link
     * #flush}): at the end of each read, of each window and of a failure's record, and every {@link #BATCH} records.
     */
    private final List<AuditRecord> batch = new ArrayList<>();

    static final int BATCH = 256;

    private void write(AuditRecord record) {
        batch.add(record);
        if (batch.size() >= BATCH && !held) {
            flush();
        }
    }

    /**
     * Appends the batch. When the log refuses it (another writer held its lock too long, the disk is full), the records
     * stay in the batch and the link is not read until they are written: frames wait in the socket and then in the
     * supervisor, whose audited calls wait for their frames under {@code audit.failure: closed} (and after its stall
     * limit end the session as falling behind), while under {@code open} it counts what it lets go on. Each tick and
     * each read tries again. Nothing the supervisor already let go on is dropped here: a record is late or the session
     * says it is missing.
     */
    private void flush() {
        if (batch.isEmpty()) {
            return;
        }
        try {
            sink.appendAll(batch);
        } catch (AuditUnavailableException | RuntimeException e) {
            sinkFailed(e);
            return;
        }
        batch.clear();
        if (held) {
            held = false;
            err.println("agentjail: the exec and file records are written again");
            err.flush();
            if (link != null) {
                link.config().setAutoRead(true);
            }
        }
    }

    private void sinkFailed(Exception e) {
        lastSinkError = e.getMessage();
        if (!held) {
            held = true;
            err.println("agentjail: cannot write the exec and file records (" + e.getMessage() + "); the jail's audited"
                    + " calls wait until they are written");
            err.flush();
        }
        if (link != null && !finishing) {
            // At the session's end the link is read to its end whatever the log does: its frames are then held here.
            link.config().setAutoRead(false);
        }
    }

    /** What the session's audit saw: its exec events, its distinct changed paths, and why it failed if it did. */
    public record Activity(long programs, long filesChanged, long redacted, Optional<String> failure) {}

    private volatile Activity finished;

    /**
     * True once auditing failed while the jail ran (the jail is then being stopped under {@code closed}), or, under
     * {@code closed}, when records of what ran could not be written by the session's end.
     */
    public boolean failedClosed() {
        return stopRequested || (recordsLost && settings.failClosed());
    }

    private volatile boolean recordsLost;

    private volatile boolean stopRequested;

    /** {@link #close()}, then what it saw. */
    public Activity finish() {
        close();
        return finished;
    }

    /**
     * After the jail has exited: lets the supervisor see the end (it exits once no process is left under the
     * filter), writes the counts still owed, and stops.
     */
    @Override
    public void close() {
        if (finished != null) {
            return;
        }
        Process running;
        Channel lastLink;
        try {
            var state = loop.submit(() -> {
                        finishing = true;
                        if (link != null) {
                            link.config().setAutoRead(true);
                        }
                        return new Ending(supervisor, link);
                    })
                    .get(10, TimeUnit.SECONDS);
            running = state.supervisor();
            lastLink = state.link();
        } catch (Exception e) {
            running = null;
            lastLink = null;
        }
        if (running != null) {
            try {
                if (!running.waitFor(FINISH_MILLIS, TimeUnit.MILLISECONDS)) {
                    running.destroyForcibly().waitFor(FINISH_MILLIS, TimeUnit.MILLISECONDS);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (lastLink != null) {
            // Its frames are all in the socket once the supervisor is gone: read them to its end before the last count.
            lastLink.closeFuture().awaitUninterruptibly(FINISH_MILLIS);
        }
        try {
            loop.submit(() -> {
                        if (ticks != null) {
                            ticks.cancel(false);
                        }
                        tick();
                        if (notifier != null && !settings.failClosed()) {
                            closeQuietly(notifier);
                        }
                        if (link != null) {
                            link.close();
                        }
                        if (server != null) {
                            server.close();
                        }
                    })
                    .get(10, TimeUnit.SECONDS);
            // Records the log refused wait for it a while longer: the session's end is late rather than its record
            // short.
            long until = System.nanoTime() + HELD_AT_END.toNanos();
            while (loop.submit(() -> held).get(10, TimeUnit.SECONDS) && System.nanoTime() - until < 0) {
                Thread.sleep(HELD_RETRY_MILLIS);
                loop.submit(this::flush).get(10, TimeUnit.SECONDS);
            }
            loop.submit(() -> {
                        if (!batch.isEmpty()) {
                            String lost =
                                    batch.size() + " exec and file records could not be written to the audit log ("
                                            + lastSinkError + ")";
                            err.println("agentjail: " + lost);
                            err.flush();
                            batch.clear();
                            recordsLost = true;
                            if (failure == null) {
                                failure = lost;
                            }
                        }
                        finished = new Activity(
                                activity.programs(),
                                activity.filesChanged(),
                                activity.redacted(),
                                Optional.ofNullable(failure));
                    })
                    .get(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            err.println("agentjail: interrupted while finishing the exec and file records");
        } catch (Exception e) {
            err.println("agentjail: cannot finish the exec and file records: " + e);
        }
        if (finished == null) {
            finished = new Activity(0, 0, 0, Optional.of("the audit did not finish"));
        }
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        try {
            Files.deleteIfExists(socket);
        } catch (IOException ignored) {
            // The session directory goes with it.
        }
    }

    private static void closeQuietly(FileDescriptor descriptor) {
        try {
            descriptor.close();
        } catch (IOException ignored) {
            // Already closed.
        }
    }
}

package dev.agentjail.jail;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.proxy.handoff.ListenerHandoff;
import dev.agentjail.proxy.handoff.ListenerSink;
import io.netty.channel.EventLoopGroup;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** Runs commands in a real jail built from a {@link JailSpec}, the way the launcher will (test tier H5). */
final class JailHarness {
    static final int PORT = 3128;

    private final Path root;
    private final Path init;
    private final EventLoopGroup group;
    private final SessionFiles files;
    private final Path project;
    private final Path home;
    private int sessions;

    List<ProtectedPath> protectedPaths = List.of();
    List<Path> maskedFiles = List.of();
    List<HomeEntry> homeEntries = List.of();
    Limits limits = Limits.DEFAULTS;

    JailHarness(Path root, EventLoopGroup group) throws IOException {
        this.root = root;
        this.group = group;
        this.init = InitBinary.extract(root.resolve("cache"));
        this.project = Files.createDirectories(root.resolve("project")).toRealPath();
        this.home = Files.createDirectories(root.resolve("home")).toRealPath();
        Path shared = Files.createDirectory(root.resolve("files"), privateDir());
        this.files = SessionFiles.write(
                shared, "agent", insideIdentity().uid(), insideIdentity().gid(), home, "agentjail");
    }

    Path project() {
        return project;
    }

    Path home() {
        return home;
    }

    static int outsideUid() throws IOException {
        return (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
    }

    static Identity insideIdentity() throws IOException {
        int uid = outsideUid();
        return Identity.forOutsideUid(uid).orElse(new Identity(uid, uid));
    }

    /** Runs {@code command} in a fresh jail whose proxy port is handed to {@code sink}. */
    Result run(ListenerSink sink, String... command) throws Exception {
        return run(sink, SeccompFilter.program(), command);
    }

    Result run(ListenerSink sink, byte[] seccomp, String... command) throws Exception {
        return start(sink, seccomp, command).finish();
    }

    /** Starts a jail and returns at once; {@link Started#finish()} waits for it. */
    Started start(ListenerSink sink, byte[] seccomp, String... command) throws Exception {
        Path session = Files.createDirectory(root.resolve("session-" + sessions++), privateDir());
        ListenerHandoff handoff = ListenerHandoff.bind(group, session.resolve("handoff.sock"), PORT, sink);
        try {
            JailSpec spec = spec(handoff.socketPath(), List.of(command));
            Process process = new ProcessBuilder(BwrapInvocation.prepare(spec, session, seccomp))
                    .redirectInput(ProcessBuilder.Redirect.PIPE)
                    .start();
            process.getOutputStream().close();
            return new Started(
                    process, session, handoff, drain(process.getInputStream()), drain(process.getErrorStream()));
        } catch (Exception e) {
            handoff.close();
            throw e;
        }
    }

    /** A running jail. */
    record Started(
            Process process,
            Path session,
            ListenerHandoff handoff,
            CompletableFuture<String> stdout,
            CompletableFuture<String> stderr) {
        Result finish() throws Exception {
            try (handoff) {
                assertTrue(process.waitFor(60, TimeUnit.SECONDS), "jail did not finish in 60 s");
                return new Result(
                        process.exitValue(),
                        stdout.get(5, TimeUnit.SECONDS),
                        stderr.get(5, TimeUnit.SECONDS),
                        handoff.completion());
            }
        }

        BwrapStatus status() throws IOException {
            return BwrapStatus.read(session.resolve(BwrapInvocation.STATUS_FILE));
        }
    }

    JailSpec spec(Path socket, List<String> command) throws IOException {
        Map<String, String> env = new LinkedHashMap<>();
        env.put("PATH", "/usr/local/bin:/usr/bin:/bin");
        env.put("HOME", home.toString());
        env.put("HTTP_PROXY", "http://127.0.0.1:" + PORT);
        env.put("LANG", "C.UTF-8");
        return new JailSpec(
                JailPrerequisites.BWRAP,
                init,
                HostLayout.probe(),
                files,
                project,
                home,
                homeEntries,
                List.of(),
                protectedPaths,
                maskedFiles,
                "agentjail",
                env,
                true,
                socket,
                PORT,
                Optional.empty(),
                limits,
                Identity.forOutsideUid(outsideUid()),
                3,
                OptionalInt.of(4),
                new ArrayList<>(command),
                List.of());
    }

    private static FileAttribute<?> privateDir() {
        return PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------"));
    }

    private static CompletableFuture<String> drain(InputStream in) {
        return CompletableFuture.supplyAsync(() -> {
            try (in) {
                return new String(in.readAllBytes(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
    }

    /** What a jailed command left behind. */
    record Result(int exit, String stdout, String stderr, CompletableFuture<Integer> handoff) {
        @Override
        public String toString() {
            return "exit " + exit + "\n--- stdout\n" + stdout + "--- stderr\n" + stderr;
        }
    }
}

package dev.agentjail.proxy.mcp.host;

import dev.agentjail.policy.McpServer;
import io.netty.channel.EventLoop;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;

/**
 * One configured host-side MCP server: starts a process per session on demand (the first {@code initialize}), at
 * most {@link #MAX_SESSIONS} at a time, and finds sessions by their unguessable ids.
 */
final class HostServer {
    static final int MAX_SESSIONS = 8;

    private final McpServer config;
    private final Map<String, String> hostEnv;
    private final SecureRandom random;
    private final Map<String, McpSession> sessions = new ConcurrentHashMap<>();
    private final Semaphore slots = new Semaphore(MAX_SESSIONS);
    private final Map<McpSession, Boolean> holding = new ConcurrentHashMap<>();
    private volatile boolean closed;

    HostServer(McpServer config, Map<String, String> hostEnv, SecureRandom random) {
        this.config = config;
        this.hostEnv = Map.copyOf(hostEnv);
        this.random = random;
    }

    String name() {
        return config.name();
    }

    McpSession session(String id) {
        return sessions.get(id);
    }

    /** The live sessions (tests). */
    List<McpSession> sessions() {
        return List.copyOf(sessions.values());
    }

    /**
     * Starts a process for a new session whose state lives on {@code loop}. Completes with the session (registered
     * under its id), or fails with a {@link HostServerException} whose message can be shown to the agent.
     */
    CompletableFuture<McpSession> open(EventLoop loop) {
        CompletableFuture<McpSession> result = new CompletableFuture<>();
        if (closed) {
            result.completeExceptionally(new HostServerException("the proxy is shutting down"));
            return result;
        }
        if (!slots.tryAcquire()) {
            result.completeExceptionally(
                    new HostServerException("already has " + MAX_SESSIONS + " sessions; end one first"));
            return result;
        }
        McpSession session = new McpSession(newId(), this, loop);
        holding.put(session, Boolean.TRUE);
        // Starting a process blocks (fork, exec): never on an event loop.
        Thread.ofPlatform().daemon().name("mcp-" + name() + "-start").start(() -> {
            try {
                Map<String, String> env = ChildEnvironment.build(hostEnv, config.env(), name());
                List<String> argv = new ArrayList<>(config.command());
                argv.set(0, program(argv.get(0), env.get("PATH")));
                ChildProcess child = ChildProcess.start(argv, env, workingDirectory(), name(), session);
                loop.execute(() -> {
                    session.attach(child);
                    if (closed) {
                        session.end();
                    } else if (!session.ended()) {
                        sessions.put(session.id(), session);
                    }
                    result.complete(session);
                });
            } catch (HostServerException e) {
                release(session);
                result.completeExceptionally(e);
            } catch (IOException e) {
                release(session);
                result.completeExceptionally(new HostServerException("cannot be started: " + e.getMessage()));
            }
        });
        return result;
    }

    /** The session ends: its id is forgotten at once (404 from now on) and its slot is free. */
    void remove(McpSession session) {
        sessions.remove(session.id(), session);
        release(session);
    }

    /** Ends every session (the proxy stops); the futures complete when the processes are gone. */
    List<CompletableFuture<Void>> close() {
        closed = true;
        List<CompletableFuture<Void>> stops = new ArrayList<>();
        for (McpSession s : sessions.values()) {
            s.loop().execute(s::end);
            ChildProcess child = s.child();
            if (child != null) {
                stops.add(child.stop());
            }
        }
        return stops;
    }

    private void release(McpSession session) {
        if (holding.remove(session) != null) {
            slots.release();
        }
    }

    private String newId() {
        byte[] bytes = new byte[32];
        random.nextBytes(bytes);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }

    /**
     * Resolves a bare program name on the server's PATH, so that a missing program is a clear error rather than an
     * exit status of setsid; names with a '/' are used as given.
     */
    private String program(String name, String path) throws HostServerException {
        if (name.contains("/")) {
            return name;
        }
        for (String dir : (path == null ? "" : path).split(File.pathSeparator)) {
            if (dir.isEmpty()) {
                continue;
            }
            Path candidate = Path.of(dir, name);
            if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                return candidate.toString();
            }
        }
        throw new HostServerException("cannot be started: program " + name + " not found on PATH");
    }

    /** The user's home, not the project: a cloned repository's config files (.npmrc, ...) must not steer the server. */
    private Path workingDirectory() {
        String home = hostEnv.get("HOME");
        if (home != null && Files.isDirectory(Path.of(home))) {
            return Path.of(home);
        }
        return Path.of("/");
    }
}

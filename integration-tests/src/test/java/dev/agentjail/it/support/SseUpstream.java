package dev.agentjail.it.support;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;

/**
 * An upstream that serves one {@code text/event-stream} at {@code /events}: it sends the first event, then holds the
 * stream open until the test calls {@link #release()}, then sends the second event and ends. A first event that
 * reaches the client before {@link #release()} proves the proxy streams instead of buffering.
 */
public final class SseUpstream implements AutoCloseable {
    public static final String FIRST = "id: 1\nevent: tick\ndata: first\n\n";
    public static final String SECOND = "id: 2\nevent: tick\ndata: second\n\n";

    private final HttpServer server;
    private final ExecutorService executor;
    private final CountDownLatch release = new CountDownLatch(1);
    private final CountDownLatch finished = new CountDownLatch(1);

    private SseUpstream(HttpServer server, ExecutorService executor) {
        this.server = server;
        this.executor = executor;
    }

    /** Over plain HTTP. */
    public static SseUpstream plain() throws IOException {
        return start(HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0));
    }

    /** Over HTTPS with {@code tls} as the server's context. */
    public static SseUpstream https(SSLContext tls) throws IOException {
        HttpsServer server = HttpsServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.setHttpsConfigurator(new HttpsConfigurator(tls));
        return start(server);
    }

    private static SseUpstream start(HttpServer server) {
        ExecutorService executor =
                Executors.newCachedThreadPool(Thread.ofPlatform().daemon().factory());
        SseUpstream upstream = new SseUpstream(server, executor);
        server.createContext("/events", upstream::serve);
        server.setExecutor(executor);
        server.start();
        return upstream;
    }

    public int port() {
        return server.getAddress().getPort();
    }

    /** Lets the upstream send the second event and end the stream. */
    public void release() {
        release.countDown();
    }

    /** Whether the upstream has finished writing the whole stream. */
    public boolean finished() {
        return finished.getCount() == 0;
    }

    private void serve(HttpExchange exchange) throws IOException {
        try (exchange) {
            exchange.getResponseHeaders().set("Content-Type", "text/event-stream");
            exchange.getResponseHeaders().set("Cache-Control", "no-cache");
            exchange.sendResponseHeaders(200, 0); // 0: chunked, length unknown
            OutputStream body = exchange.getResponseBody();
            body.write(FIRST.getBytes(StandardCharsets.UTF_8));
            body.flush();
            try {
                // Bounded, so a broken test never leaves this thread behind for long.
                release.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            body.write(SECOND.getBytes(StandardCharsets.UTF_8));
            body.flush();
        } finally {
            finished.countDown();
        }
    }

    @Override
    public void close() {
        release.countDown();
        server.stop(0);
        executor.shutdownNow();
    }
}

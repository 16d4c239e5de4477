package dev.agentjail.proxy.testing;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import javax.net.ssl.SSLContext;

/**
 * Corpus harness H2: a plain HTTP/1.1 upstream on 127.0.0.1, port 0, that records every byte it receives, how many
 * connections were opened and closed, and every complete request, and answers each request with whatever its
 * {@link Responder} returns (by default a fixed {@code 200} with a Content-Length).
 */
public final class RecordingUpstream implements AutoCloseable {
    public static final String OK_BODY = "upstream-ok";
    public static final String OK = "HTTP/1.1 200 OK\r\nContent-Length: " + OK_BODY.length() + "\r\n\r\n" + OK_BODY;

    /** The raw bytes (ISO-8859-1) to send back for one request. */
    @FunctionalInterface
    public interface Responder {
        String respond(RecordedRequest request);
    }

    /** One request as the upstream read it: the head exactly as received, and the de-framed body. */
    public record RecordedRequest(int connection, String head, String body) {
        public String requestLine() {
            return head.substring(0, head.indexOf("\r\n"));
        }

        /** Values of header {@code name} (case-insensitive) in order. */
        public List<String> headers(String name) {
            List<String> values = new ArrayList<>();
            String[] lines = head.split("\r\n");
            for (int i = 1; i < lines.length; i++) {
                int colon = lines[i].indexOf(':');
                if (colon > 0 && lines[i].substring(0, colon).equalsIgnoreCase(name)) {
                    values.add(lines[i].substring(colon + 1).strip());
                }
            }
            return values;
        }

        /** Names of all header fields, in order, as spelled on the wire. */
        public List<String> headerNames() {
            List<String> names = new ArrayList<>();
            String[] lines = head.split("\r\n");
            for (int i = 1; i < lines.length; i++) {
                int colon = lines[i].indexOf(':');
                names.add(colon < 0 ? lines[i] : lines[i].substring(0, colon));
            }
            return names;
        }
    }

    private final ServerSocket server;
    private final Responder responder;
    private final boolean answerBeforeBody;
    private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    private final AtomicInteger connections = new AtomicInteger();
    private final AtomicInteger closed = new AtomicInteger();
    private final List<RecordedRequest> requests = new CopyOnWriteArrayList<>();
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final Thread acceptor;

    private RecordingUpstream(Responder responder, boolean answerBeforeBody) throws IOException {
        this(responder, answerBeforeBody, null);
    }

    private RecordingUpstream(Responder responder, boolean answerBeforeBody, SSLContext tls) throws IOException {
        this.responder = responder;
        this.answerBeforeBody = answerBeforeBody;
        this.server =
                tls == null ? new ServerSocket() : tls.getServerSocketFactory().createServerSocket();
        server.bind(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), 0));
        this.acceptor = Thread.ofPlatform().daemon().name("recording-upstream").start(this::acceptLoop);
    }

    /** Answers every request with {@link #OK}. */
    public static RecordingUpstream start() throws IOException {
        return new RecordingUpstream(r -> OK, false);
    }

    public static RecordingUpstream start(Responder responder) throws IOException {
        return new RecordingUpstream(responder, false);
    }

    /** An HTTPS upstream: TLS with {@code tls}'s key and certificate; records the decrypted bytes. */
    public static RecordingUpstream startTls(SSLContext tls, Responder responder) throws IOException {
        return new RecordingUpstream(responder, false, tls);
    }

    /** Answers as soon as a request head has arrived, before reading its body (an "early response"). */
    public static RecordingUpstream startAnsweringBeforeBody(Responder responder) throws IOException {
        return new RecordingUpstream(responder, true);
    }

    public int port() {
        return server.getLocalPort();
    }

    /** Connections accepted so far. */
    public int connections() {
        return connections.get();
    }

    /** Connections that have ended (closed by the proxy, or reset). */
    public int closedConnections() {
        return closed.get();
    }

    /** Complete requests (head and body) received so far. */
    public List<RecordedRequest> requests() {
        return List.copyOf(requests);
    }

    /** Every byte received on every connection, in arrival order per connection, as ISO-8859-1. */
    public String received() {
        synchronized (bytes) {
            return bytes.toString(StandardCharsets.ISO_8859_1);
        }
    }

    /** Waits up to {@code timeout} for {@code condition}; returns whether it became true. */
    public static boolean await(BooleanSupplier condition, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            Thread.sleep(5);
        }
        return true;
    }

    /**
     * Fails unless nothing reached this upstream. Waits a short settle time first, so that a connection or bytes sent
     * at the same moment as the proxy's answer are not missed.
     */
    public void assertUntouched() throws InterruptedException {
        Thread.sleep(100);
        if (connections() != 0 || !received().isEmpty()) {
            throw new AssertionError(
                    "the upstream was reached: " + connections() + " connection(s), bytes: " + received());
        }
    }

    private void acceptLoop() {
        while (!server.isClosed()) {
            try {
                Socket socket = server.accept();
                sockets.add(socket);
                int index = connections.incrementAndGet();
                Thread.ofPlatform().daemon().name("recording-upstream-" + index).start(() -> serve(socket, index));
            } catch (IOException e) {
                return;
            }
        }
    }

    private void serve(Socket socket, int index) {
        try (socket) {
            InputStream in = new BufferedInputStream(new Recording(socket.getInputStream()));
            OutputStream out = socket.getOutputStream();
            while (true) {
                String head = readHead(in);
                if (head == null) {
                    drain(in);
                    return;
                }
                RecordedRequest early = new RecordedRequest(index, head, "");
                if (answerBeforeBody) {
                    write(out, responder.respond(early));
                }
                String body = readBody(in, head);
                if (body == null) {
                    drain(in);
                    return;
                }
                RecordedRequest request = new RecordedRequest(index, head, body);
                requests.add(request);
                if (!answerBeforeBody) {
                    write(out, responder.respond(request));
                }
            }
        } catch (IOException e) {
            // The proxy closed or reset the connection.
        } finally {
            closed.incrementAndGet();
        }
    }

    private static void write(OutputStream out, String response) throws IOException {
        if (response != null && !response.isEmpty()) {
            out.write(response.getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
        }
    }

    /** The head up to and including the empty line, or null at the end of the stream or on a malformed head. */
    private static String readHead(InputStream in) throws IOException {
        StringBuilder head = new StringBuilder();
        int c;
        while ((c = in.read()) >= 0) {
            head.append((char) c);
            if (head.length() >= 4 && head.substring(head.length() - 4).equals("\r\n\r\n")) {
                return head.toString();
            }
            if (head.length() > 256 * 1024) {
                return null;
            }
        }
        return null;
    }

    /** The body framed as the head says, or null when the stream ended first or the framing is not understood. */
    private static String readBody(InputStream in, String head) throws IOException {
        RecordedRequest parsed = new RecordedRequest(0, head, "");
        List<String> te = parsed.headers("Transfer-Encoding");
        List<String> cl = parsed.headers("Content-Length");
        if (!te.isEmpty()) {
            return te.size() == 1 && te.getFirst().toLowerCase(Locale.ROOT).equals("chunked") ? readChunked(in) : null;
        }
        if (cl.size() > 1) {
            return null;
        }
        int length = cl.isEmpty() ? 0 : Integer.parseInt(cl.getFirst());
        byte[] body = in.readNBytes(length);
        return body.length == length ? new String(body, StandardCharsets.ISO_8859_1) : null;
    }

    private static String readChunked(InputStream in) throws IOException {
        StringBuilder body = new StringBuilder();
        while (true) {
            String line = readLine(in);
            if (line == null) {
                return null;
            }
            int semicolon = line.indexOf(';');
            int size = Integer.parseInt((semicolon < 0 ? line : line.substring(0, semicolon)).strip(), 16);
            if (size == 0) {
                String trailer;
                do {
                    trailer = readLine(in);
                    if (trailer == null) {
                        return null;
                    }
                } while (!trailer.isEmpty());
                return body.toString();
            }
            byte[] data = in.readNBytes(size);
            if (data.length != size || readLine(in) == null) {
                return null;
            }
            body.append(new String(data, StandardCharsets.ISO_8859_1));
        }
    }

    private static String readLine(InputStream in) throws IOException {
        StringBuilder line = new StringBuilder();
        int c;
        while ((c = in.read()) >= 0) {
            if (c == '\n' && !line.isEmpty() && line.charAt(line.length() - 1) == '\r') {
                return line.substring(0, line.length() - 1);
            }
            line.append((char) c);
        }
        return null;
    }

    private static void drain(InputStream in) throws IOException {
        byte[] buffer = new byte[8192];
        while (in.read(buffer) >= 0) {
            // recorded by the Recording stream
        }
    }

    @Override
    public void close() throws IOException {
        server.close();
        for (Socket s : sockets) {
            s.close();
        }
        try {
            acceptor.join(2_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Copies every byte read from the socket into the shared record. */
    private final class Recording extends FilterInputStream {
        Recording(InputStream in) {
            super(in);
        }

        @Override
        public int read() throws IOException {
            int c = super.read();
            if (c >= 0) {
                synchronized (bytes) {
                    bytes.write(c);
                }
            }
            return c;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            int n = super.read(b, off, len);
            if (n > 0) {
                synchronized (bytes) {
                    bytes.write(b, off, n);
                }
            }
            return n;
        }
    }
}

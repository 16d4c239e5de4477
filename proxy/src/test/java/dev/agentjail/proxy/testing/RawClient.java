package dev.agentjail.proxy.testing;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

/**
 * Corpus harness H1: writes exact bytes to a TCP socket and reads the raw answer, with no HTTP library in between to
 * normalise either side. Every read is bounded by a timeout.
 */
public final class RawClient implements AutoCloseable {
    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;
    private final ByteArrayOutputStream received = new ByteArrayOutputStream();
    private boolean closedByPeer;

    private RawClient(Socket socket) throws IOException {
        this.socket = socket;
        this.in = socket.getInputStream();
        this.out = socket.getOutputStream();
    }

    public static RawClient connect(InetSocketAddress address) throws IOException {
        Socket socket = new Socket();
        socket.connect(address, 5_000);
        socket.setTcpNoDelay(true);
        return new RawClient(socket);
    }

    /** Sends {@code text} as ISO-8859-1, so each char below 256 is one byte. */
    public RawClient send(String text) throws IOException {
        return send(text.getBytes(StandardCharsets.ISO_8859_1));
    }

    public RawClient send(byte[] bytes) throws IOException {
        out.write(bytes);
        out.flush();
        return this;
    }

    /** Half-closes the sending side, as {@code socat -t} does after its input ends. */
    public void shutdownOutput() throws IOException {
        socket.shutdownOutput();
    }

    /** Reads until the peer closes the connection or {@code timeout} passes; returns everything received so far. */
    public String readUntilClose(Duration timeout) throws IOException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!closedByPeer && readSome(deadline)) {
            // keep reading
        }
        return received();
    }

    /** Reads until {@code text} has arrived, the peer closes, or {@code timeout} passes. */
    public String readUntil(String text, Duration timeout) throws IOException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!received().contains(text) && !closedByPeer && readSome(deadline)) {
            // keep reading
        }
        return received();
    }

    /**
     * Reads until {@code count} complete responses have arrived, the peer closes, or {@code timeout} passes, and returns
     * the complete responses received so far (possibly fewer than {@code count}).
     */
    public List<RawResponse> readResponses(int count, Duration timeout) throws IOException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (RawResponse.parseAll(received(), closedByPeer).size() < count && !closedByPeer && readSome(deadline)) {
            // keep reading
        }
        return RawResponse.parseAll(received(), closedByPeer);
    }

    /** Reads one response; fails if none arrives within {@code timeout}. */
    public RawResponse readResponse(Duration timeout) throws IOException {
        List<RawResponse> responses = readResponses(1, timeout);
        if (responses.isEmpty()) {
            throw new AssertionError("no complete response within " + timeout + "; received: " + received());
        }
        return responses.getFirst();
    }

    /** Whether the peer closed (or reset) the connection, waiting at most {@code timeout} for it to happen. */
    public boolean awaitClose(Duration timeout) throws IOException {
        readUntilClose(timeout);
        return closedByPeer;
    }

    /** Everything received so far, as ISO-8859-1. */
    public String received() {
        return received.toString(StandardCharsets.ISO_8859_1);
    }

    public boolean closedByPeer() {
        return closedByPeer;
    }

    /** Reads what is available before the deadline; false when the deadline passed. */
    private boolean readSome(long deadline) throws IOException {
        long remainingMillis = (deadline - System.nanoTime()) / 1_000_000;
        if (remainingMillis <= 0) {
            return false;
        }
        socket.setSoTimeout((int) Math.max(1, remainingMillis));
        byte[] buffer = new byte[8192];
        try {
            int n = in.read(buffer);
            if (n < 0) {
                closedByPeer = true;
            } else {
                received.write(buffer, 0, n);
            }
            return true;
        } catch (SocketTimeoutException e) {
            return false;
        } catch (SocketException e) {
            // A reset is also the peer closing the connection.
            closedByPeer = true;
            return true;
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}

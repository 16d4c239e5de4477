package dev.agentjail.cli;

import dev.agentjail.certs.TrustBundle;
import java.io.IOException;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;

/**
 * The system's root certificates as one PEM text, read once per process: {@link Prewarm} starts reading them while
 * the command line is parsed, and the session's set-up takes the result (or reads them itself if it gets there first).
 */
final class SystemRoots {
    // A named Callable rather than a method reference: the JDK 25 AOT cache fails to assemble with lambdas held in
    // static state (see Main).
    private static final FutureTask<String> PEM = new FutureTask<>(new Read());

    private SystemRoots() {}

    /** Starts reading on this thread unless another thread already is; returns when the text is read. */
    static void prefetch() {
        PEM.run();
    }

    /** The roots' PEM text; read on this thread unless another thread has read them or is reading them. */
    static String pem() throws IOException {
        PEM.run();
        try {
            return PEM.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while reading the system's CA certificates", e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof IOException io) {
                throw io;
            }
            throw new IOException(String.valueOf(e.getCause().getMessage()), e.getCause());
        }
    }

    private static final class Read implements Callable<String> {
        @Override
        public String call() throws IOException {
            return TrustBundle.systemRootsPem();
        }
    }
}

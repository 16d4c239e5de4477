package dev.agentjail.cli;

import io.netty.channel.epoll.Epoll;
import org.slf4j.LoggerFactory;

/**
 * A head start for a session's set-up on the second core: while picocli builds and parses the command line (a good
 * part of a cold start, on one thread), this thread reads the system's root certificates, configures logging and
 * loads Netty's native transport, work the session needs whatever its arguments say. Everything here is idempotent
 * and creates no files; a failure only means the session does the work itself, and reports it then.
 */
final class Prewarm {
    private Prewarm() {}

    /** Starts the head start for a command that sets up a proxy ({@code run}). */
    static void start() {
        Thread thread = new Thread(new Work(), "agentjail-prewarm");
        thread.setDaemon(true);
        thread.start();
    }

    private static final class Work implements Runnable {
        @Override
        public void run() {
            try {
                SystemRoots.prefetch();
                LoggerFactory.getLogger(Prewarm.class);
                Epoll.isAvailable();
            } catch (RuntimeException | LinkageError e) {
                // Only a head start: the session runs the same steps and reports what fails.
            }
        }
    }
}

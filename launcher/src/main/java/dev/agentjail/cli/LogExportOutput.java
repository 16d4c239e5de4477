package dev.agentjail.cli;

import dev.agentjail.policy.IoErrors;
import java.io.BufferedWriter;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * Writes an output file all at once or not at all: into a temporary file (mode 0600: exports and reports hold what the
 * audit log holds) next to the target, then renamed over it, so a failed run never leaves half a file behind.
 */
final class LogExportOutput {
    private LogExportOutput() {}

    /** What produces the content; it may throw a {@link CliException} to abandon the file. */
    @FunctionalInterface
    interface Content {
        void writeTo(PrintWriter out) throws IOException;
    }

    /** Remembers the first failure of the stream under a PrintWriter, which swallows it. */
    private static final class FailureKeeping extends FilterOutputStream {
        IOException failure;

        FailureKeeping(OutputStream out) {
            super(out);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            try {
                out.write(b, off, len);
            } catch (IOException e) {
                failure = failure == null ? e : failure;
                throw e;
            }
        }

        @Override
        public void flush() throws IOException {
            try {
                out.flush();
            } catch (IOException e) {
                failure = failure == null ? e : failure;
                throw e;
            }
        }
    }

    static void write(Path target, Content content) {
        Path absolute = target.toAbsolutePath();
        Path dir = absolute.getParent();
        Path tmp;
        try {
            tmp = Files.createTempFile(
                    dir,
                    "." + absolute.getFileName() + ".",
                    ".tmp",
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        } catch (IOException e) {
            // The temporary file's random name would say nothing: the directory it is made in does.
            throw new CliException(
                    ExitCodes.FAILURE,
                    "cannot write " + target + ": " + IoErrors.reason(e) + " (creating a file in " + dir + ")",
                    e);
        }
        boolean done = false;
        try {
            FailureKeeping file = new FailureKeeping(Files.newOutputStream(tmp));
            try (PrintWriter out =
                    new PrintWriter(new BufferedWriter(new OutputStreamWriter(file, StandardCharsets.UTF_8)))) {
                content.writeTo(out);
                out.flush();
                if (out.checkError()) {
                    // PrintWriter keeps only that something failed; the stream kept what (no space left on device).
                    throw file.failure != null ? file.failure : new IOException("write failed");
                }
            }
            try {
                Files.move(tmp, absolute, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, absolute, StandardCopyOption.REPLACE_EXISTING);
            }
            done = true;
        } catch (IOException e) {
            throw new CliException(
                    ExitCodes.FAILURE, "cannot write " + target + ": " + IoErrors.describe(target, e), e);
        } finally {
            if (!done) {
                try {
                    Files.deleteIfExists(tmp);
                } catch (IOException e) {
                    // Best effort: the message about the failure matters more.
                }
            }
        }
    }
}

package dev.agentjail.cli;

import java.io.BufferedWriter;
import java.io.IOException;
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
            throw new CliException(ExitCodes.FAILURE, "cannot write " + target + ": " + e.getMessage(), e);
        }
        boolean done = false;
        try {
            try (PrintWriter out = new PrintWriter(
                    new BufferedWriter(new OutputStreamWriter(Files.newOutputStream(tmp), StandardCharsets.UTF_8)))) {
                content.writeTo(out);
                out.flush();
                if (out.checkError()) {
                    throw new IOException("write failed");
                }
            }
            try {
                Files.move(tmp, absolute, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, absolute, StandardCopyOption.REPLACE_EXISTING);
            }
            done = true;
        } catch (IOException e) {
            throw new CliException(ExitCodes.FAILURE, "cannot write " + target + ": " + e.getMessage(), e);
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

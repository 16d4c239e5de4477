package dev.agentjail.jail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * Writes what the jail reads in place of a missing read-only home file (see {@code Session.homePlaceholders}): an empty
 * JSON object for a {@code .json} name, so that the agent inside still parses its settings, else an empty file.
 */
public final class HomePlaceholders {
    private HomePlaceholders() {}

    /** Writes the placeholder for {@code relative} into {@code sessionDir} (0444) and returns its path. */
    public static Path write(Path sessionDir, Path relative) throws IOException {
        String name = relative.getFileName().toString();
        Path file = sessionDir.resolve("home-placeholder-"
                + Integer.toHexString(relative.toString().hashCode()) + "-" + name.replaceAll("[^A-Za-z0-9._-]", "_"));
        Files.writeString(
                file, name.endsWith(".json") ? "{}\n" : "", StandardCharsets.UTF_8, StandardOpenOption.CREATE_NEW);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("r--r--r--"));
        return file;
    }
}

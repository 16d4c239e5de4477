package dev.agentjail.cli;

import dev.agentjail.policy.IoErrors;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** The launcher's own uid and gid, read from /proc (the JDK has no API for them). */
final class Uids {
    private Uids() {}

    static int current() {
        return field("Uid:");
    }

    static int currentGid() {
        return field("Gid:");
    }

    private static int field(String name) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith(name)) {
                    // Real, effective, saved, filesystem: the effective id decides what we may do.
                    return Integer.parseInt(line.substring(name.length()).trim().split("\\s+")[1]);
                }
            }
        } catch (IOException | RuntimeException e) {
            throw new CliException(
                    ExitCodes.ENVIRONMENT,
                    "cannot read /proc/self/status: "
                            + (e instanceof IOException io
                                    ? IoErrors.describe(Path.of("/proc/self/status"), io)
                                    : e.toString()));
        }
        throw new CliException(ExitCodes.ENVIRONMENT, "no " + name + " line in /proc/self/status");
    }
}

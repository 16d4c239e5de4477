package dev.agentjail.cli;

import dev.agentjail.policy.Policy;
import dev.agentjail.proxy.audit.Sha256;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** A policy together with where it came from and the SHA-256 of its file, for the session record. */
record LoadedPolicy(Policy policy, String source, String sha256) {
    static LoadedPolicy of(Policy policy, Path file) {
        try {
            byte[] bytes = Files.readAllBytes(file);
            return new LoadedPolicy(policy, file.toString(), sha256(bytes));
        } catch (IOException e) {
            throw new CliException(ExitCodes.USAGE, "cannot read " + file + ": " + e.getMessage());
        }
    }

    static LoadedPolicy builtIn() {
        return new LoadedPolicy(Policy.denyAll(), "built-in deny-all", sha256(new byte[0]));
    }

    private static String sha256(byte[] bytes) {
        return Sha256.hex(bytes, 0, bytes.length);
    }
}

package dev.agentjail.cli;

import dev.agentjail.policy.MalformedEntryException;
import dev.agentjail.policy.Quantities;
import dev.agentjail.proxy.audit.AuditHmacKey;
import dev.agentjail.proxy.audit.FileAuditLog;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import picocli.CommandLine.Option;

/** The audit log's rotation and HMAC flags, shared by the commands that write an audit log (a picocli mixin). */
final class AuditChainOptions {
    /** Smaller files would rotate every few records. */
    static final long MIN_MAX_SIZE = 64L << 10;

    @Option(
            names = "--audit-max-size",
            paramLabel = "SIZE",
            defaultValue = "64m",
            description = "Rotate the audit log once it reaches SIZE (like 64m or 1g; 0 never rotates): the full file"
                    + " is renamed FILE.1, FILE.2, … (never deleted) and the hash chain goes on in a new FILE"
                    + " (default: ${DEFAULT-VALUE}).")
    String maxSize = "64m";

    @Option(
            names = "--audit-hmac-key",
            paramLabel = "FILE",
            description = "Sign every audit record with HMAC-SHA256 under the key in FILE (at least 32 bytes, not"
                    + " readable by group or others; keep it where agents cannot see it). Check with: agentjail log"
                    + " verify --hmac-key FILE.")
    Path hmacKey;

    /** The key file, if one was given; callers that run a jail must keep it out of the jail's sight. */
    Optional<Path> hmacKeyFile() {
        return Optional.ofNullable(hmacKey);
    }

    /**
     * The writer's options: {@code syncInterval} from the caller, rotation and key from these flags.
     *
     * @throws CliException with {@link ExitCodes#USAGE} for a malformed size or an unusable key
     */
    FileAuditLog.Options toOptions(Duration syncInterval) {
        FileAuditLog.Options options =
                FileAuditLog.Options.defaults().withSyncInterval(syncInterval).withMaxFileBytes(parseMaxSize(maxSize));
        if (hmacKey == null) {
            return options;
        }
        try {
            return options.withHmacKey(AuditHmacKey.load(hmacKey));
        } catch (IOException e) {
            throw new CliException(
                    ExitCodes.USAGE,
                    "--audit-hmac-key: " + CliException.unreadable(hmacKey, e).getMessage(),
                    e);
        }
    }

    static long parseMaxSize(String text) {
        String value = text.strip();
        if (value.equals("0")) {
            return 0;
        }
        long bytes;
        try {
            bytes = Quantities.parseSize(value);
        } catch (MalformedEntryException e) {
            throw new CliException(
                    ExitCodes.USAGE, "--audit-max-size: " + e.getMessage() + " or 0, got '" + text + "'");
        }
        if (bytes < MIN_MAX_SIZE) {
            throw new CliException(ExitCodes.USAGE, "--audit-max-size: at least 64k (or 0 to never rotate)");
        }
        return bytes;
    }
}

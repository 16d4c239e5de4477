package dev.agentjail.cli;

import dev.agentjail.policy.IoErrors;
import dev.agentjail.proxy.audit.AuditChain;
import dev.agentjail.proxy.audit.AuditHmacKey;
import dev.agentjail.proxy.audit.ChainVerifier;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code agentjail log verify}: checks the hash chain (and the HMAC) of audit logs and names the first broken link. */
@Command(
        name = "verify",
        mixinStandardHelpOptions = true,
        description = {
            "Checks that audit logs are complete and unmodified: each record's seq",
            "follows the one before, and its prev_hash is the SHA-256 of the line",
            "before it, across rotated files (FILE.1, FILE.2, … are found and checked",
            "first, in order). With --hmac-key, each record's HMAC is checked too, so",
            "that even someone who rewrote the whole file cannot pass.",
            "",
            "Exit status: 0 when every log is intact; 1 when one is not, printing the",
            "first broken link as FILE:LINE: KIND: explanation, where KIND is deleted,",
            "modified, reordered, inserted, truncated or bad-hmac; 2 when a file or",
            "the key cannot be read (as every command does for a missing input).",
            "",
            "Without a key, the chain shows that no record inside the log was removed,",
            "changed or moved. It cannot show that records were not cut off at the",
            "end, nor resist someone who recomputes every hash: that takes the key.",
            "See docs/audit-log.md, \"Tamper evidence\"."
        },
        sortOptions = false)
final class LogVerify implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(
            arity = "1..*",
            paramLabel = "FILE",
            description = "An audit log (e.g. ~/.local/state/agentjail/audit.jsonl) or one of its rotated files.")
    List<Path> files = new ArrayList<>();

    @Option(
            names = "--hmac-key",
            paramLabel = "FILE",
            description = "The key the log was written with (agentjail proxy --audit-hmac-key): every record must"
                    + " carry a valid HMAC.")
    Path hmacKey;

    @Option(
            names = "--partial",
            description = "Accept a chain that does not start at seq 1, because older rotated files were archived or"
                    + " removed on purpose; the first seq found is reported.")
    boolean partial;

    @Option(
            names = "--no-rotated",
            description = "Check exactly the FILEs given, in the order given, as one chain, without looking for"
                    + " rotated files.")
    boolean noRotated;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        AuditHmacKey key = null;
        if (hmacKey != null) {
            try {
                key = AuditHmacKey.load(hmacKey);
            } catch (IOException e) {
                throw new CliException(
                        ExitCodes.USAGE,
                        "--hmac-key: " + CliException.unreadable(hmacKey, e).getMessage(),
                        e);
            }
        }
        ChainVerifier verifier = new ChainVerifier(key, partial);
        boolean allIntact = true;
        for (List<Path> log : logs()) {
            Path name = noRotated ? log.get(log.size() - 1) : AuditChain.liveFile(log.get(0));
            ChainVerifier.Report report;
            try {
                report = verifier.verify(log);
            } catch (IOException e) {
                throw new CliException(
                        ExitCodes.USAGE,
                        "cannot read "
                                + String.join(
                                        ", ", log.stream().map(Path::toString).toList()) + ": " + IoErrors.describe(e),
                        e);
            }
            print(out, name, log.size(), report, key != null);
            allIntact &= report.intact();
        }
        out.flush();
        return allIntact ? ExitCodes.OK : ExitCodes.FAILURE;
    }

    /** The logs to check, each as its files in chain order. */
    private List<List<Path>> logs() {
        for (Path f : files) {
            if (!Files.isRegularFile(f)) {
                String why = Files.isDirectory(f) ? "is a directory" : Files.exists(f) ? "not a regular file" : null;
                if (why == null) {
                    throw CliException.unreadable(f, new NoSuchFileException(f.toString()));
                }
                throw new CliException(ExitCodes.USAGE, "cannot read " + f + ": " + why);
            }
        }
        if (noRotated) {
            return List.of(List.copyOf(files));
        }
        Set<Path> lives = new LinkedHashSet<>();
        for (Path f : files) {
            lives.add(AuditChain.liveFile(f.toAbsolutePath().normalize()));
        }
        List<List<Path>> logs = new ArrayList<>();
        for (Path live : lives) {
            try {
                logs.add(AuditChain.rotationSet(live));
            } catch (IOException e) {
                throw new CliException(
                        ExitCodes.USAGE, "cannot list the files of " + live + ": " + IoErrors.describe(e));
            }
        }
        return logs;
    }

    private static void print(
            PrintWriter out, Path name, int fileCount, ChainVerifier.Report report, boolean keyGiven) {
        for (ChainVerifier.Finding note : report.notes()) {
            out.println("note: " + (note.file() == null ? name + ": " + note : note));
        }
        String files = fileCount == 1 ? "" : fileCount + " files, ";
        String seqs = report.records() == 0 ? "" : " (seq " + report.firstSeq() + "–" + report.lastSeq() + ")";
        if (report.broken().isPresent()) {
            out.println(report.broken().get());
            out.printf(
                    "%s: BROKEN after %d intact record%s%s%n",
                    name, report.records(), report.records() == 1 ? "" : "s", seqs);
            return;
        }
        String hmac = keyGiven ? ", HMAC verified" : "";
        out.printf(
                "%s: intact: %s%d record%s%s%s%n",
                name, files, report.records(), report.records() == 1 ? "" : "s", seqs, hmac);
    }
}

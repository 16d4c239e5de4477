package dev.agentjail.cli;

import dev.agentjail.certs.CaException;
import dev.agentjail.certs.CertificateAuthority;
import dev.agentjail.policy.IoErrors;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code agentjail ca}: creates, shows, exports and rotates the local CA that TLS interception signs with. */
@Command(
        name = "ca",
        mixinStandardHelpOptions = true,
        description = {
            "Manages agentjail's local certificate authority. The proxy signs a short-lived certificate",
            "per host with it; jails trust it through a CA bundle; the host's own trust store is never",
            "changed. The key (ca-key.pem, mode 0600) is never visible inside a jail."
        },
        subcommands = {CaCommand.Init.class, CaCommand.Show.class, CaCommand.Export.class, CaCommand.Rotate.class})
final class CaCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        spec.commandLine().usage(spec.commandLine().getOut());
        return ExitCodes.OK;
    }

    /** The CA directory option shared by the subcommands. */
    static final class DirOption {
        @Option(
                names = "--dir",
                paramLabel = "DIR",
                description = "CA directory (default: $XDG_DATA_HOME/agentjail/ca, else ~/.local/share/agentjail/ca).")
        Path dir;

        Path resolve() {
            return dir != null ? dir : CertificateAuthority.defaultDirectory(System.getenv());
        }
    }

    /** A CA that cannot be created or read is a host problem, not bad usage. */
    static CliException failure(CaException e) {
        return new CliException(ExitCodes.ENVIRONMENT, IoErrors.message(e), e);
    }

    static CertificateAuthority loadExisting(Path dir) {
        if (!CertificateAuthority.exists(dir)) {
            throw new CliException(
                    ExitCodes.ENVIRONMENT, "no agentjail CA in " + dir + "; create one with: agentjail ca init");
        }
        try {
            return CertificateAuthority.load(dir);
        } catch (CaException e) {
            throw failure(e);
        }
    }

    static void printSummary(PrintWriter out, CertificateAuthority ca) {
        out.printf("  certificate:  %s%n", ca.certificateFile());
        out.printf("  key:          %s (0600, never visible inside a jail)%n", ca.keyFile());
        out.printf("  SHA-256:      %s%n", ca.sha256Fingerprint());
    }

    @Command(name = "init", mixinStandardHelpOptions = true, description = "Creates the CA if there is none yet.")
    static final class Init implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Mixin
        DirOption dir;

        @Override
        public Integer call() {
            PrintWriter out = spec.commandLine().getOut();
            Path path = dir.resolve();
            boolean existed = CertificateAuthority.exists(path);
            CertificateAuthority ca;
            try {
                ca = CertificateAuthority.loadOrCreate(path, Clock.systemUTC());
            } catch (CaException e) {
                throw failure(e);
            }
            out.println((existed ? "The agentjail CA already exists in " : "Created the agentjail CA in ") + path);
            printSummary(out, ca);
            out.flush();
            return ExitCodes.OK;
        }
    }

    @Command(
            name = "show",
            mixinStandardHelpOptions = true,
            description = "Shows the CA's subject, fingerprint, validity and files.")
    static final class Show implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Mixin
        DirOption dir;

        @Override
        public Integer call() {
            PrintWriter out = spec.commandLine().getOut();
            CertificateAuthority ca = loadExisting(dir.resolve());
            boolean expired = !Instant.now().isBefore(ca.notAfter());
            out.println("agentjail CA in " + ca.directory());
            out.printf(
                    "  subject:      %s%n",
                    ca.certificate().getSubjectX500Principal().getName());
            out.printf(
                    "  serial:       %s%n", ca.certificate().getSerialNumber().toString(16));
            out.printf("  valid from:   %s%n", ca.notBefore());
            out.printf(
                    "  valid until:  %s%s%n",
                    ca.notAfter(), expired ? "  EXPIRED (replace it with: agentjail ca rotate)" : "");
            printSummary(out, ca);
            out.flush();
            return ExitCodes.OK;
        }
    }

    @Command(
            name = "export",
            mixinStandardHelpOptions = true,
            description = "Prints the CA certificate as PEM (or writes it to --pem FILE), to trust it elsewhere.")
    static final class Export implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Mixin
        DirOption dir;

        @Option(names = "--pem", paramLabel = "FILE", description = "Write the PEM certificate to FILE.")
        Path pemFile;

        @Override
        public Integer call() {
            PrintWriter out = spec.commandLine().getOut();
            CertificateAuthority ca = loadExisting(dir.resolve());
            if (pemFile == null) {
                out.print(ca.certificatePem());
                out.flush();
                return ExitCodes.OK;
            }
            try {
                Files.writeString(pemFile, ca.certificatePem(), StandardCharsets.US_ASCII);
            } catch (IOException e) {
                throw new CliException(
                        ExitCodes.FAILURE, "cannot write " + pemFile + ": " + IoErrors.describe(pemFile, e), e);
            }
            out.println("Wrote the agentjail CA certificate (SHA-256 " + ca.sha256Fingerprint() + ") to " + pemFile);
            out.flush();
            return ExitCodes.OK;
        }
    }

    @Command(
            name = "rotate",
            mixinStandardHelpOptions = true,
            description = {
                "Replaces the CA with a new key and certificate. The old certificate is kept as",
                "ca.pem.<timestamp>.old; the old key is deleted. Running jails must be restarted."
            })
    static final class Rotate implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Mixin
        DirOption dir;

        @Override
        public Integer call() {
            PrintWriter out = spec.commandLine().getOut();
            PrintWriter err = spec.commandLine().getErr();
            Path path = dir.resolve();
            String oldFingerprint = null;
            if (CertificateAuthority.exists(path)) {
                try {
                    oldFingerprint = CertificateAuthority.load(path).sha256Fingerprint();
                } catch (CaException e) {
                    // An unreadable CA is exactly what rotate replaces.
                    err.println("agentjail: replacing an unusable CA: " + IoErrors.message(e));
                }
            }
            CertificateAuthority ca;
            try {
                ca = CertificateAuthority.rotate(path, Clock.systemUTC());
            } catch (CaException e) {
                throw failure(e);
            }
            out.println("Rotated the agentjail CA in " + path);
            if (oldFingerprint != null) {
                out.printf("  old SHA-256:  %s%n", oldFingerprint);
            }
            printSummary(out, ca);
            out.flush();
            err.println(
                    "agentjail: warning: running jails and proxies still use the old CA; restart them."
                            + " Anything you set up by hand to trust the old CA must now trust the new one (agentjail ca export).");
            err.flush();
            return ExitCodes.OK;
        }
    }
}

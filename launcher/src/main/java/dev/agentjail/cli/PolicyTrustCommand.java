package dev.agentjail.cli;

import dev.agentjail.policy.EffectivePolicy;
import dev.agentjail.policy.IoErrors;
import dev.agentjail.policy.PolicyException;
import dev.agentjail.policy.ProjectPolicies;
import dev.agentjail.policy.ProjectRequest;
import dev.agentjail.policy.ProjectSnapshot;
import dev.agentjail.policy.ProjectTrust;
import dev.agentjail.policy.TrustedProjects;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.function.UnaryOperator;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code agentjail policy trust}: lists what the project policy asks for outside the jail and the project, then
 * records the user's trust in exactly these files (or, with {@code --revoke}, withdraws it).
 */
@Command(
        name = "trust",
        mixinStandardHelpOptions = true,
        description = {
            "Trusts the project's policy (every .agentjail.yaml from the repository root down to the",
            "project directory, and the files and presets they extend) with what it widens: hosts,",
            "report mode, tunnels, ports, address pins, MCP servers, credentials, env.forward/set,",
            "binds, devices, pre_start commands, raised limits, jail options, weakened redaction,",
            "upstream CAs and the audit log's place. Denies, masks, protected paths, locks and lower",
            "limits apply without trust. agentjail run refuses a project policy that widens the jail",
            "until you trust it. Prints what each file widens, grouped, then records the SHA-256 of",
            "every project policy file in $XDG_STATE_HOME/agentjail/" + TrustedProjects.FILE_NAME + ";",
            "a change to a file lapses the trust in its entries. A team policy can forbid it",
            "(trust.projects: never). agentjail policy check lists the same entries without trusting."
        })
final class PolicyTrustCommand implements Callable<Integer> {
    private static final Set<PosixFilePermission> PRIVATE_DIR = PosixFilePermissions.fromString("rwx------");
    private static final Set<PosixFilePermission> PRIVATE_FILE = PosixFilePermissions.fromString("rw-------");

    @Spec
    CommandSpec spec;

    @Option(
            names = "--project",
            paramLabel = "DIR",
            description = "Project directory whose .agentjail.yaml to trust (default: the current directory).")
    Path project;

    @Option(names = "--revoke", description = "Withdraw the trust in this project's policy instead.")
    boolean revoke;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        Map<String, String> env = System.getenv();
        Path store = LoadedPolicy.trustStore(env);
        Path dir = PolicyCommand.StackOptions.projectDir(project);
        int exit = revoke ? revoke(out, dir, store) : trust(out, env, dir, store);
        out.flush();
        return exit;
    }

    private int trust(PrintWriter out, Map<String, String> env, Path dir, Path store) {
        LoadedPolicy loaded = LoadedPolicy.review(env, Paths.home(env), Optional.of(dir), List.of(), List.of());
        Optional<ProjectSnapshot> snapshot = loaded.effective().flatMap(EffectivePolicy::projectSnapshot);
        if (snapshot.isEmpty()) {
            throw new CliException(
                    ExitCodes.USAGE,
                    "no " + ProjectPolicies.FILE_NAME + " in " + dir
                            + " or its parents up to the repository root: nothing to trust");
        }
        Path root = snapshot.get().root();
        List<ProjectRequest> requests = loaded.effective().get().projectRequests();
        if (requests.isEmpty()) {
            out.println("The project policy of " + root + " widens nothing: it only narrows the jail.");
        } else {
            out.println("The project policy of " + root + " widens the jail:");
            Map<String, List<ProjectRequest>> groups = new java.util.LinkedHashMap<>();
            GROUPS.keySet().forEach(g -> groups.put(g, new java.util.ArrayList<>()));
            requests.forEach(r -> groups.computeIfAbsent(section(r.key()), g -> new java.util.ArrayList<>())
                    .add(r));
            groups.forEach((group, entries) -> {
                if (!entries.isEmpty()) {
                    out.println("  " + GROUPS.getOrDefault(group, group) + ":");
                    entries.forEach(r -> out.println("    " + r));
                }
            });
        }
        if (loaded.trust().status() == ProjectTrust.Status.FORBIDDEN) {
            out.flush();
            throw new CliException(
                    ExitCodes.USAGE, "not trusted: " + loaded.trust().reason());
        }
        Instant now = Clock.systemUTC().instant().truncatedTo(ChronoUnit.SECONDS);
        update(store, trusted -> trusted.with(snapshot.get(), now));
        out.println("Trusted " + root + " (recorded in " + store + "); agentjail run uses these entries until one"
                + " of these files changes:");
        snapshot.get().files().forEach((file, sha) -> out.println("  " + file + "  sha256:" + sha));
        return ExitCodes.OK;
    }

    /** The headings the trust prompt groups entries under, by policy section, in the order shown. */
    private static final Map<String, String> GROUPS = orderedGroups();

    private static Map<String, String> orderedGroups() {
        Map<String, String> groups = new java.util.LinkedHashMap<>();
        groups.put("network", "Network: hosts, report mode, tunnels, ports and address pins");
        groups.put("mcp", "MCP servers");
        groups.put("credentials", "Credentials handed to requests");
        groups.put("env", "Environment of the jail");
        groups.put("filesystem", "Host paths bound into the jail");
        groups.put("jail", "Jail options, devices and commands");
        groups.put("limits", "Limits raised");
        groups.put("redaction", "Redaction weakened");
        groups.put("tls", "Upstream TLS");
        groups.put("audit", "Audit log");
        return java.util.Collections.unmodifiableMap(groups);
    }

    /** The section a request's key is in: {@code network} for {@code network.allow[0]}. */
    private static String section(String key) {
        int end = key.length();
        for (char c : new char[] {'.', '['}) {
            int i = key.indexOf(c);
            if (i >= 0 && i < end) {
                end = i;
            }
        }
        return key.substring(0, end);
    }

    private int revoke(PrintWriter out, Path dir, Path store) {
        Path root = root(dir);
        boolean[] was = new boolean[1];
        boolean[] none = new boolean[1];
        update(store, trusted -> {
            was[0] = trusted.grant(root).isPresent();
            none[0] = trusted.roots().isEmpty();
            return was[0] ? trusted.without(root) : null;
        });
        if (was[0]) {
            out.println("Revoked the trust in the project policy of " + root);
        } else if (none[0]) {
            out.println(root + " was not trusted, nor is any project policy (" + store + " lists none); nothing to"
                    + " revoke");
        } else {
            out.println(root + " was not trusted; nothing to revoke");
        }
        return ExitCodes.OK;
    }

    /**
     * The project directory trust is keyed by: where the first project policy file is (the one nearest the repository
     * root, as the policy loader finds them), else the directory itself; revoking works even when the policy no longer
     * loads or is gone.
     */
    private static Path root(Path dir) {
        try {
            List<Path> chain = ProjectPolicies.chain(dir);
            Path root = chain.isEmpty() ? dir : chain.get(0).getParent();
            return root.toRealPath();
        } catch (IOException e) {
            throw new CliException(ExitCodes.USAGE, "--project: " + IoErrors.describe(e));
        }
    }

    private static TrustedProjects read(Path store) {
        try {
            return TrustedProjects.read(store);
        } catch (PolicyException e) {
            throw new CliException(ExitCodes.USAGE, e.getMessage());
        }
    }

    /**
     * Reads the trust file, applies {@code change} and writes the result, holding an exclusive lock on a file next to
     * it the whole time: two trust commands at once (two terminals, a script) each see the other's update instead of
     * one silently dropping it. {@code change} returning null writes nothing.
     */
    private static void update(Path store, UnaryOperator<TrustedProjects> change) {
        Path absolute = store.toAbsolutePath().normalize();
        Path dir = absolute.getParent();
        Path lockFile = dir.resolve("." + TrustedProjects.FILE_NAME + ".lock");
        // FileChannel.lock is per process: threads of one JVM (tests) queue here first.
        synchronized (PolicyTrustCommand.class) {
            try {
                Files.createDirectories(dir, PosixFilePermissions.asFileAttribute(PRIVATE_DIR));
                try (FileChannel lock = FileChannel.open(
                                lockFile,
                                Set.of(StandardOpenOption.CREATE, StandardOpenOption.WRITE),
                                PosixFilePermissions.asFileAttribute(PRIVATE_FILE));
                        FileLock held = lock.lock()) {
                    TrustedProjects changed = change.apply(read(absolute));
                    if (changed != null) {
                        write(changed, absolute);
                    }
                }
            } catch (IOException e) {
                throw new CliException(
                        ExitCodes.FAILURE, "cannot write " + store + ": " + IoErrors.describe(store, e), e);
            }
        }
    }

    /**
     * Writes the trust file, readable and writable by the user only, replacing the old one atomically: the new text
     * is on disk before the rename, and the rename before this returns.
     */
    private static void write(TrustedProjects trusted, Path absolute) throws IOException {
        Path dir = absolute.getParent();
        Path temp = Files.createTempFile(
                dir, "." + TrustedProjects.FILE_NAME, ".tmp", PosixFilePermissions.asFileAttribute(PRIVATE_FILE));
        try {
            try (FileChannel out = FileChannel.open(temp, StandardOpenOption.WRITE)) {
                ByteBuffer bytes = ByteBuffer.wrap(trusted.json().getBytes(StandardCharsets.UTF_8));
                while (bytes.hasRemaining()) {
                    out.write(bytes);
                }
                out.force(true);
            }
            Files.move(temp, absolute, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            try (FileChannel directory = FileChannel.open(dir, StandardOpenOption.READ)) {
                directory.force(true);
            }
        } finally {
            Files.deleteIfExists(temp);
        }
    }
}

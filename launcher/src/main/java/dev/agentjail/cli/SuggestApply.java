package dev.agentjail.cli;

import dev.agentjail.policy.AllowListEdit;
import dev.agentjail.policy.Decision;
import dev.agentjail.policy.HostPattern;
import dev.agentjail.policy.IoErrors;
import dev.agentjail.policy.MalformedTargetException;
import dev.agentjail.policy.PolicyException;
import dev.agentjail.policy.ProjectPolicies;
import dev.agentjail.policy.Reasons;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * {@code policy suggest --apply}: writes the proposals into the project's {@code .agentjail.yaml} (created with {@code
 * version: 1} when there is none), edited as text so the user's comments and layout stay. The merged stack is checked
 * before anything is written and again after, loaded from disk: it must allow exactly the proposals more than before,
 * or the old bytes go back.
 */
final class SuggestApply {
    /** What a new project policy file is created with, as {@code agentjail init} would leave it under umask 022. */
    private static final Set<PosixFilePermission> NEW_FILE_MODE = PosixFilePermissions.fromString("rw-r--r--");

    /** The file written, the diff applied, and the stack as loaded back from disk. */
    record Applied(Path file, String diff, LoadedPolicy after) {}

    private final PolicyCommand.StackOptions stack;
    private final Map<String, String> env;
    private final LoadedPolicy before;
    private final List<SuggestPlan.Proposal> proposals;

    private SuggestApply(
            PolicyCommand.StackOptions stack,
            Map<String, String> env,
            LoadedPolicy before,
            List<SuggestPlan.Proposal> proposals) {
        this.stack = stack;
        this.env = env;
        this.before = before;
        this.proposals = List.copyOf(proposals);
    }

    /**
     * Applies {@code proposals} to the project policy of {@code stack} (its files found from {@code env}), whose merged
     * policy is {@code before} now.
     *
     * @throws CliException exit code 2, with nothing written, when the file cannot be edited faithfully or the edited
     *     stack would not load or not allow the proposals; exit code 1 on an I/O failure, or when the file as written
     *     does not load as checked (then its old bytes are back)
     */
    static Applied apply(
            PolicyCommand.StackOptions stack,
            Map<String, String> env,
            LoadedPolicy before,
            List<SuggestPlan.Proposal> proposals) {
        if (proposals.isEmpty()) {
            throw new IllegalArgumentException("nothing to apply");
        }
        return new SuggestApply(stack, env, before, proposals).run();
    }

    private Applied run() {
        Path dir = PolicyCommand.StackOptions.projectDir(stack.project);
        Optional<Path> found;
        Path file;
        try {
            found = ProjectPolicies.find(dir);
            file = found.orElse(dir.toRealPath().resolve(ProjectPolicies.FILE_NAME));
        } catch (IOException e) {
            throw new CliException(
                    ExitCodes.FAILURE, "--apply: cannot look for the project policy: " + IoErrors.describe(e));
        }
        List<String> entries =
                proposals.stream().map(SuggestPlan.Proposal::entry).toList();
        byte[] old = found.isPresent() ? readRegularFile(file) : null;
        String oldText = old == null ? "" : utf8(old, file);
        String newText;
        try {
            newText = old == null
                    ? AllowListEdit.newPolicy(entries)
                    : AllowListEdit.append(oldText, file.toString(), entries);
        } catch (PolicyException e) {
            throw refused(e.getMessage());
        }
        LoadedPolicy trial;
        try {
            trial = stack.loadEdited(env, file, newText);
        } catch (CliException e) {
            throw new CliException(e.exitCode(), "--apply: " + e.getMessage() + "; nothing written", e);
        }
        mismatch(trial).ifPresent(problem -> {
            throw refused(file + ": " + problem);
        });
        Set<PosixFilePermission> mode = old == null ? NEW_FILE_MODE : mode(file);
        write(file, newText.getBytes(StandardCharsets.UTF_8), mode, old);
        LoadedPolicy after;
        try {
            after = stack.load(env);
        } catch (CliException e) {
            restore(file, old, mode);
            throw new CliException(
                    ExitCodes.FAILURE, "--apply: " + e.getMessage() + "; " + file + " is back as it was", e);
        }
        Optional<String> problem = mismatch(after);
        if (problem.isPresent()) {
            restore(file, old, mode);
            throw new CliException(
                    ExitCodes.FAILURE, "--apply: " + file + " as written " + problem.get() + "; it is back as it was");
        }
        String diff = UnifiedDiff.of(oldText, newText, old == null ? "/dev/null" : file.toString(), file.toString());
        return new Applied(file, diff, after);
    }

    private static CliException refused(String message) {
        return new CliException(ExitCodes.USAGE, "--apply: " + message + "; nothing written");
    }

    /**
     * Why {@code after} is not {@link #before} with exactly the proposals allowed in addition, if it is not: its
     * allow list must be the old one plus the proposals, and each proposal's requests must now be allowed by it.
     */
    private Optional<String> mismatch(LoadedPolicy after) {
        Set<String> expected = keys(before.policy().network().allow());
        for (SuggestPlan.Proposal p : proposals) {
            try {
                expected.add(key(HostPattern.parse(p.entry())));
            } catch (MalformedTargetException e) {
                throw new IllegalStateException("a proposal is always an entry", e);
            }
        }
        Set<String> actual = keys(after.policy().network().allow());
        if (!expected.equals(actual)) {
            return Optional.of("would make network.allow " + actual + " instead of " + expected);
        }
        for (SuggestPlan.Proposal p : proposals) {
            for (SuggestPlan.Probe probe : p.probes()) {
                Decision decision = after.policy().network().decide(probe.target(), probe.defaultPort());
                if (!decision.allowed() || !Reasons.ALLOWED.equals(decision.reason())) {
                    return Optional.of("would still not allow " + probe.target().authority() + " (" + decision.reason()
                            + " " + decision.rule() + ")");
                }
            }
        }
        return Optional.empty();
    }

    private static Set<String> keys(List<HostPattern> patterns) {
        Set<String> keys = new TreeSet<>();
        patterns.forEach(p -> keys.add(key(p)));
        return keys;
    }

    private static String key(HostPattern pattern) {
        String port = pattern.port().isPresent() ? ":" + pattern.port().getAsInt() : "";
        return (pattern.kind() == HostPattern.Kind.WILDCARD ? "*." : "") + pattern.host() + port;
    }

    /** The file's bytes, refusing a symbolic link (its target may lie outside the project) and anything not a file. */
    private static byte[] readRegularFile(Path file) {
        if (Files.isSymbolicLink(file)) {
            throw refused(file + " is a symbolic link; --apply edits only a regular file (edit its target by hand)");
        }
        if (!Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
            throw refused(file + " is not a regular file");
        }
        try (InputStream in = Files.newInputStream(file, LinkOption.NOFOLLOW_LINKS)) {
            return in.readAllBytes();
        } catch (IOException e) {
            throw new CliException(
                    ExitCodes.FAILURE, "--apply: cannot read " + file + ": " + IoErrors.describe(file, e), e);
        }
    }

    private static String utf8(byte[] bytes, Path file) {
        try {
            return StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes))
                    .toString();
        } catch (CharacterCodingException e) {
            throw refused(file + " is not valid UTF-8");
        }
    }

    private static Set<PosixFilePermission> mode(Path file) {
        try {
            return Files.getPosixFilePermissions(file, LinkOption.NOFOLLOW_LINKS);
        } catch (IOException e) {
            throw new CliException(ExitCodes.FAILURE, "--apply: cannot read the mode of " + file, e);
        }
    }

    /**
     * Replaces {@code file} with {@code bytes}, or creates it when {@code expected} is {@code null}: a temporary file
     * in the same directory with the file's mode, on disk before it is renamed over the file (never through a link
     * at the file's name). Refuses when the file changed since it was read, or appeared since it was found missing.
     */
    private static void write(Path file, byte[] bytes, Set<PosixFilePermission> mode, byte[] expected) {
        Path dir = file.getParent();
        Path temp = null;
        try {
            temp = Files.createTempFile(
                    dir, "." + file.getFileName() + ".", ".tmp", PosixFilePermissions.asFileAttribute(mode));
            // The umask may have taken bits the file had; set them exactly.
            Files.setPosixFilePermissions(temp, mode);
            try (FileChannel out = FileChannel.open(temp, StandardOpenOption.WRITE)) {
                ByteBuffer buffer = ByteBuffer.wrap(bytes);
                while (buffer.hasRemaining()) {
                    out.write(buffer);
                }
                out.force(true);
            }
            if (expected == null) {
                // A link is created only where nothing is: what appeared meanwhile is never replaced.
                Files.createLink(file, temp);
            } else {
                if (!Arrays.equals(expected, readRegularFile(file))) {
                    throw new CliException(
                            ExitCodes.FAILURE, "--apply: " + file + " changed while it was edited; nothing written");
                }
                try {
                    Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                } catch (AtomicMoveNotSupportedException e) {
                    Files.move(temp, file, StandardCopyOption.REPLACE_EXISTING);
                }
            }
            try (FileChannel directory = FileChannel.open(dir, StandardOpenOption.READ)) {
                directory.force(true);
            }
        } catch (IOException e) {
            throw new CliException(
                    ExitCodes.FAILURE, "--apply: cannot write " + file + ": " + IoErrors.describe(file, e), e);
        } finally {
            if (temp != null) {
                try {
                    Files.deleteIfExists(temp);
                } catch (IOException e) {
                    // The failure, if any, is what the user needs to hear about.
                }
            }
        }
    }

    /** Puts the old bytes back, or removes the file that was created. */
    private static void restore(Path file, byte[] old, Set<PosixFilePermission> mode) {
        try {
            if (old == null) {
                Files.deleteIfExists(file);
            } else {
                byte[] now = readRegularFile(file);
                write(file, old, mode, now);
            }
        } catch (IOException | CliException e) {
            throw new CliException(
                    ExitCodes.FAILURE,
                    "--apply: the edit of " + file + " failed its check and could not be undone: "
                            + IoErrors.message(e));
        }
    }
}

package dev.agentjail.policy;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Reads the machine policy, {@code /etc/agentjail/policy.yaml} then {@code /etc/agentjail/policy.d/*.yaml} in name
 * order, from files nobody but root can have written ({@link RootOnlyPaths}), as the stack's most authoritative layer.
 *
 * <p>Each file is checked, then opened and read once, and looked at again afterwards: the text handed to the stack is
 * the one read from the file that was checked, unchanged meanwhile (same file, owner, mode, size and time), and the
 * stack never reads the file again.
 */
final class MachinePolicy {
    /** Where the machine policy lives; nothing (no variable, option or property) moves or disables it. */
    static final Path DIRECTORY = Path.of("/etc/agentjail");

    static final String FILE = "policy.yaml";
    static final String DROP_INS = "policy.d";

    /** As many files as the team directory may hold. */
    static final int MAX_FILES = 64;

    /** What agentjail itself reads. */
    static final MachinePolicy SYSTEM = new MachinePolicy(DIRECTORY, RootOnlyPaths.SYSTEM);

    private final Path directory;
    private final RootOnlyPaths paths;

    /** Tests pass another directory and checks; agentjail uses {@link #SYSTEM}. */
    MachinePolicy(Path directory, RootOnlyPaths paths) {
        if (!directory.isAbsolute()) {
            throw new IllegalArgumentException("not an absolute path: " + directory);
        }
        this.directory = directory.normalize();
        this.paths = Objects.requireNonNull(paths, "paths");
    }

    /** The machine layer's inputs, in merge order; none when the directory does not exist. */
    List<PolicyStack.Input> inputs() throws MachinePolicyException, PolicyException {
        String name = directory.toString();
        try {
            Files.readAttributes(directory, "unix:mode", LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
            // A host without a machine policy: none of its directories needs to pass the checks then.
            return List.of();
        } catch (IOException e) {
            throw RootOnlyPaths.unreadable(name, directory, e);
        }
        Optional<RootOnlyPaths.Entry> dir = paths.resolve(directory, name);
        if (dir.isEmpty()) {
            return List.of(); // Removed meanwhile.
        }
        Path real = dir.get().path();
        if (!dir.get().attributes().isDirectory()) {
            throw RootOnlyPaths.problem(name, "not a directory");
        }
        List<PolicyStack.Input> inputs = new ArrayList<>();
        Path file = directory.resolve(FILE);
        read(real.resolve(FILE), file)
                .ifPresent(text -> inputs.add(PolicyStack.Input.read(PolicyLayer.MACHINE, file, text)));
        Path dropIns = directory.resolve(DROP_INS);
        Optional<RootOnlyPaths.Entry> dropInDir = paths.resolve(real.resolve(DROP_INS), dropIns.toString());
        if (dropInDir.isPresent()) {
            if (!dropInDir.get().attributes().isDirectory()) {
                throw RootOnlyPaths.problem(dropIns.toString(), "not a directory");
            }
            for (String entry : dropInNames(dropInDir.get().path(), dropIns.toString())) {
                Path dropIn = dropIns.resolve(entry);
                String text = read(dropInDir.get().path().resolve(entry), dropIn)
                        .orElseThrow(() -> RootOnlyPaths.problem(dropIn.toString(), "removed while agentjail read it"));
                inputs.add(PolicyStack.Input.read(PolicyLayer.MACHINE, dropIn, text));
            }
        }
        return inputs;
    }

    /**
     * The {@code *.yaml} and {@code *.yml} names in {@code dir}, sorted. Names starting with a dot are left out: they
     * are editors' and deployment tools' temporary files (a tool writing {@code 10-net.yaml} may first write {@code
     * .tmp1234-10-net.yaml} next to it), never meant to be read.
     */
    private static List<String> dropInNames(Path dir, String name) throws MachinePolicyException {
        List<String> names = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
            for (Path entry : entries) {
                String file = entry.getFileName().toString();
                if (file.startsWith(".") || !(file.endsWith(".yaml") || file.endsWith(".yml"))) {
                    continue;
                }
                if (names.size() == MAX_FILES) {
                    throw RootOnlyPaths.problem(name, "more than " + MAX_FILES + " policy files");
                }
                names.add(file);
            }
        } catch (IOException e) {
            throw RootOnlyPaths.unreadable(name, Path.of(name), e);
        }
        names.sort(null);
        return names;
    }

    /**
     * The text of the file at {@code real} (the same directory as {@code file}, with links resolved), once it and
     * every entry on the way passed the checks; empty when there is no such file. Messages name {@code file}.
     */
    private Optional<String> read(Path real, Path file) throws MachinePolicyException, PolicyException {
        String name = file.toString();
        Optional<RootOnlyPaths.Entry> found = paths.resolve(real, name);
        if (found.isEmpty()) {
            return Optional.empty();
        }
        RootOnlyPaths.Entry entry = found.get();
        if (!entry.attributes().isRegularFile()) {
            // Checked before opening: a FIFO would block the open, a device could be anything.
            throw RootOnlyPaths.problem(name, "not a regular file");
        }
        String text;
        try (InputStream in = Files.newInputStream(entry.path(), LinkOption.NOFOLLOW_LINKS)) {
            text = PolicyDocument.read(in, name);
        } catch (AccessDeniedException e) {
            throw RootOnlyPaths.problem(
                    name, "cannot read: permission denied; everyone who runs agentjail must be able to read it");
        } catch (IOException e) {
            throw RootOnlyPaths.unreadable(name, Path.of(name), e);
        }
        RootOnlyPaths.Attributes after;
        try {
            after = RootOnlyPaths.Attributes.of(entry.path());
        } catch (IOException e) {
            throw RootOnlyPaths.unreadable(name, Path.of(name), e);
        }
        if (!after.equals(entry.attributes())) {
            throw RootOnlyPaths.problem(name, "changed while agentjail read it; run agentjail again");
        }
        return Optional.of(text);
    }
}

package dev.agentjail.jail;

import dev.agentjail.jail.InitCommand.FdFile;
import dev.agentjail.jail.InitCommand.Mode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;

/**
 * Writes what bwrap reads from descriptors (the seccomp program and the argv) into the session's private
 * directory and returns the host command that starts the jail: agentjail-init's {@code exec-with-fds} opening
 * those files and the bind sources an agent could have changed (following no link), then exec'ing bwrap. Start it with {@link ProcessBuilder}, stdio inherited.
 */
public final class BwrapInvocation {
    /** The seccomp program's file in the session directory. */
    public static final String SECCOMP_FILE = "seccomp.bpf";
    /** The NUL-separated bwrap argv's file; deleted by agentjail-init right after opening it. */
    public static final String ARGS_FILE = "bwrap.args";
    /** Where bwrap writes its JSON status when the spec asks for it. */
    public static final String STATUS_FILE = "bwrap-status.json";

    private BwrapInvocation() {}

    /**
     * Prepares a jail start. {@code sessionDir} must be private (0700) to the launcher: the argv file holds the
     * environment values.
     */
    public static List<String> prepare(JailSpec spec, Path sessionDir) throws IOException {
        return prepare(spec, sessionDir, SeccompFilter.program());
    }

    /** As above with an explicit seccomp program; tests pass a broken one to see the jail refuse to start. */
    static List<String> prepare(JailSpec spec, Path sessionDir, byte[] seccompProgram) throws IOException {
        int argsFd = Math.max(spec.seccompFd(), spec.statusFd().orElse(0)) + 1;
        int firstBindFd = argsFd + 1;
        Path seccomp = writePrivate(sessionDir.resolve(SECCOMP_FILE), seccompProgram);
        BwrapCommand.WithDescriptors options = BwrapCommand.options(spec, firstBindFd);
        Path args = writePrivate(sessionDir.resolve(ARGS_FILE), BwrapArgsFile.encode(options.options()));
        List<FdFile> files = new ArrayList<>();
        files.add(new FdFile(spec.seccompFd(), Mode.READ_UNLINK, seccomp));
        spec.statusFd().ifPresent(fd -> files.add(new FdFile(fd, Mode.WRITE, sessionDir.resolve(STATUS_FILE))));
        files.add(new FdFile(argsFd, Mode.READ_UNLINK, args));
        // The policy's binds and the protected paths come from descriptors opened without following links.
        List<Path> sources = options.sources();
        for (int i = 0; i < sources.size(); i++) {
            files.add(new FdFile(firstBindFd + i, Mode.PATH, sources.get(i)));
        }
        List<String> bwrap =
                new ArrayList<>(List.of(spec.bwrap().toString(), "--args", Integer.toString(argsFd), "--"));
        bwrap.addAll(BwrapCommand.command(spec));
        return InitCommand.execWithFds(spec.initBinary(), files, bwrap);
    }

    private static Path writePrivate(Path file, byte[] content) throws IOException {
        Files.deleteIfExists(file);
        Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        return Files.write(file, content, StandardOpenOption.TRUNCATE_EXISTING);
    }
}

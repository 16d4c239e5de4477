package dev.agentjail.cli;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * Refuses a project directory that is not a project: the home directory, {@code /}, a directory every user shares
 * ({@code /tmp}) or one of the system's. The jail binds the project read-write, so any of these would hand the agent
 * far more than one project; {@code run} says so before anything starts, with {@code --project DIR} as the way out.
 */
final class ProjectDirectories {
    /** Shared by every user and program on the host (sockets, other users' files). */
    private static final List<Path> SHARED = List.of(Path.of("/tmp"), Path.of("/var/tmp"), Path.of("/dev/shm"));

    /** System directories, and everything in them: the host runs, boots or configures itself from them. */
    private static final List<Path> SYSTEM_TREES = List.of(
            Path.of("/usr"),
            Path.of("/etc"),
            Path.of("/bin"),
            Path.of("/sbin"),
            Path.of("/lib"),
            Path.of("/lib32"),
            Path.of("/lib64"),
            Path.of("/libx32"),
            Path.of("/boot"),
            Path.of("/proc"),
            Path.of("/sys"),
            Path.of("/dev"));

    /**
     * Directories that hold other things than one project, though a project may live inside them (a CI workspace
     * under /var/lib/jenkins, a checkout under /srv or /opt).
     */
    private static final List<Path> SYSTEM_DIRS = List.of(
            Path.of("/var"),
            Path.of("/var/lib"),
            Path.of("/var/log"),
            Path.of("/var/cache"),
            Path.of("/var/spool"),
            Path.of("/opt"),
            Path.of("/srv"),
            Path.of("/home"),
            Path.of("/root"),
            Path.of("/mnt"),
            Path.of("/media"),
            Path.of("/run"),
            Path.of("/snap"),
            Path.of("/nix"));

    static final String WAY_OUT = "start agentjail in your project's directory, or name it with --project DIR";

    private ProjectDirectories() {}

    /** Throws, with the reason and the way out, when {@code project} (a real path) is no project's directory. */
    static void refuseWhole(Path project, Path home) {
        Optional<String> why = why(project, home);
        if (why.isPresent()) {
            throw new CliException(
                    ExitCodes.USAGE, "refusing " + project + " as the project: " + why.get() + "; " + WAY_OUT);
        }
    }

    /** Why {@code project} (a real path) is not a project's directory, if it is not. */
    static Optional<String> why(Path project, Path home) {
        if (project.getParent() == null) {
            return Optional.of("the project would be the host's whole file system, read-write to the agent");
        }
        Path realHome = real(home);
        if (project.equals(realHome) || project.equals(home)) {
            return Optional.of("the project would be your whole home directory, read-write to the agent (~/.ssh,"
                    + " your shell's startup files and every other project included)");
        }
        if (realHome.startsWith(project) || home.startsWith(project)) {
            return Optional.of("the project would hold your whole home directory (" + home + ")");
        }
        for (Path shared : SHARED) {
            if (project.equals(shared) || project.equals(real(shared))) {
                return Optional.of("the project would be all of the host's " + shared
                        + ", shared with every user and program on it");
            }
        }
        for (Path shared : SHARED) {
            if (project.startsWith(shared) || project.startsWith(real(shared))) {
                return Optional.empty(); // a directory of its own in /tmp (or /dev/shm) is one project's
            }
        }
        for (Path system : SYSTEM_TREES) {
            if (project.startsWith(system) || project.startsWith(real(system))) {
                return Optional.of("the project would be " + (project.equals(system) ? "" : "in ") + system
                        + ", a system directory the host runs from");
            }
        }
        for (Path system : SYSTEM_DIRS) {
            if (project.equals(system) || project.equals(real(system))) {
                return Optional.of("the project would be " + system + ", a system directory that holds far more than"
                        + " one project");
            }
        }
        return Optional.empty();
    }

    private static Path real(Path path) {
        try {
            return path.toRealPath();
        } catch (IOException | SecurityException e) {
            return path;
        }
    }
}

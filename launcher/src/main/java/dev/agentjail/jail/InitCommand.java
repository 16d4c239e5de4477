package dev.agentjail.jail;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Builds agentjail-init's two argv forms: {@code jail} (inside the jail) and {@code exec-with-fds} (on the host). */
public final class InitCommand {
    private InitCommand() {}

    /** How {@code exec-with-fds} opens a file at a descriptor. */
    public enum Mode {
        /** Open read-only. */
        READ("--read"),
        /** Open read-only, then delete the file, so nothing is left on disk even if the launcher is killed. */
        READ_UNLINK("--read-unlink"),
        /** Create or truncate (mode 0600) and open write-only. */
        WRITE("--write"),
        /**
         * Open as a path ({@code O_PATH}) one component at a time, following no symbolic link anywhere in it: a bind
         * source for bwrap's {@code --bind-fd}, which a link swapped in after the launcher's check cannot redirect.
         */
        PATH("--path");

        private final String option;

        Mode(String option) {
            this.option = option;
        }
    }

    /** One file to open at descriptor {@code fd} before the exec. */
    public record FdFile(int fd, Mode mode, Path file) {
        public FdFile {
            if (fd < 3) {
                throw new IllegalArgumentException("descriptors 0-2 are the terminal's: " + fd);
            }
            JailPaths.absolute(file, "descriptor file");
        }
    }

    /**
     * {@code init jail --port P --handoff S --audit A --seccomp-fd F --nofile N --nproc N --as N --fsize N --
     * command...}: run inside the jail as bwrap's command.
     */
    public static List<String> jail(
            Path init, int port, Path handoff, AuditScope audit, int seccompFd, Limits limits, List<String> command) {
        List<String> argv = new ArrayList<>(List.of(
                init.toString(),
                "jail",
                "--port",
                Integer.toString(port),
                "--handoff",
                handoff.toString(),
                "--audit",
                audit.initArgument(),
                "--seccomp-fd",
                Integer.toString(seccompFd),
                "--nofile",
                Limits.initArgument(limits.openFiles()),
                "--nproc",
                Limits.initArgument(limits.processes()),
                "--as",
                Limits.initArgument(limits.addressSpaceBytes()),
                "--fsize",
                Limits.initArgument(limits.fileSizeBytes()),
                "--"));
        argv.addAll(command);
        return List.copyOf(argv);
    }

    /**
     * {@code init exec-with-fds --read 3 FILE ... -- program...}: run on the host in place of bwrap, because
     * ProcessBuilder cannot hand a child any descriptor beyond 0-2.
     */
    public static List<String> execWithFds(Path init, List<FdFile> files, List<String> program) {
        if (program.isEmpty()) {
            throw new IllegalArgumentException("no program to exec");
        }
        if (files.stream().map(FdFile::fd).distinct().count() != files.size()) {
            throw new IllegalArgumentException("a descriptor is given twice: " + files);
        }
        List<String> argv = new ArrayList<>(List.of(init.toString(), "exec-with-fds"));
        for (FdFile file : files) {
            argv.addAll(List.of(
                    file.mode().option, Integer.toString(file.fd()), file.file().toString()));
        }
        argv.add("--");
        argv.addAll(program);
        return List.copyOf(argv);
    }
}

package dev.agentjail.jail;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The /proc covers come from each entry's type and mode, and land right after the jail's /proc is mounted. */
class HostLayoutProcTest {
    @TempDir
    Path proc;

    @Test
    void directoriesAndWritableFilesAreBoundReadOnlyOwnerOnlyFilesHiddenProcessesAndLinksLeftAlone()
            throws IOException {
        Files.createDirectory(proc.resolve("sys"));
        Files.createDirectory(proc.resolve("4711"));
        file("mtrr", "rw-r--r--");
        file("sysrq-trigger", "-w-------");
        file("kmsg", "r--------");
        file("cpuinfo", "r--r--r--");
        Files.createSymbolicLink(proc.resolve("self"), Path.of("4711"));

        assertEquals(
                List.of(
                        new HostLayout.ProcCover(Path.of("/proc/kmsg"), true),
                        new HostLayout.ProcCover(Path.of("/proc/mtrr"), false),
                        new HostLayout.ProcCover(Path.of("/proc/sys"), false),
                        new HostLayout.ProcCover(Path.of("/proc/sysrq-trigger"), false)),
                HostLayout.procCovers(proc));
    }

    @Test
    void theHostsOwnProcHasCoversForSysAndEveryWritableEntry() {
        List<HostLayout.ProcCover> covers = HostLayout.probe().procCovers();
        assertEquals(true, covers.contains(new HostLayout.ProcCover(Path.of("/proc/sys"), false)), covers::toString);
    }

    private void file(String name, String mode) throws IOException {
        Path f = Files.createFile(proc.resolve(name));
        Files.setPosixFilePermissions(f, PosixFilePermissions.fromString(mode));
    }
}

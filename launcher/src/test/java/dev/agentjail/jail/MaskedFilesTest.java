package dev.agentjail.jail;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MaskedFilesTest {
    @TempDir
    Path dir;

    @Test
    void findsMatchesAtAnyDepthAndResolvesLinksInsideTheProject() throws IOException {
        Path project = dir.resolve("p");
        Files.createDirectories(project.resolve("svc/config"));
        Files.createDirectories(project.resolve(".git"));
        Files.writeString(project.resolve(".env"), "A=1");
        Files.writeString(project.resolve("svc/.env.local"), "B=2");
        Files.writeString(project.resolve("svc/config/prod.pem"), "key");
        Files.writeString(project.resolve("svc/config/dev.pem"), "key");
        Files.writeString(project.resolve(".git/.env"), "inside .git is not walked");
        Files.writeString(project.resolve("secrets.txt"), "C=3");
        Files.createSymbolicLink(project.resolve("svc/.env"), Path.of("../secrets.txt"));
        Files.writeString(dir.resolve("outside"), "D=4");
        Files.createSymbolicLink(project.resolve("svc/config/.env"), dir.resolve("outside"));
        Files.createSymbolicLink(project.resolve("dangling.env"), Path.of("nowhere"));

        List<Path> found =
                MaskedFiles.find(project, List.of(".env", ".env.*", "*.env", "svc/config/prod.pem"), 16, 1000);

        assertEquals(
                List.of(
                        project.resolve(".env"),
                        project.resolve("secrets.txt"),
                        project.resolve("svc/.env.local"),
                        project.resolve("svc/config/prod.pem")),
                found);
    }

    @Test
    void failsRatherThanSearchingForever() throws IOException {
        Path project = Files.createDirectories(dir.resolve("big"));
        for (int i = 0; i < 20; i++) {
            Files.createFile(project.resolve("f" + i));
        }
        assertThrows(IOException.class, () -> MaskedFiles.find(project, List.of(".env"), 4, 10));
        assertEquals(List.of(), MaskedFiles.find(project, List.of(), 4, 10));
    }
}

package dev.agentjail.jail;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
    void aLinkIsMaskedWhereItFinallyLeadsAndNotFollowedWhileWalking() throws IOException {
        Path project = Files.createDirectories(dir.resolve("p"));
        Path outside = Files.createDirectories(dir.resolve("outside"));
        Files.writeString(outside.resolve(".env"), "not the project's");
        Files.createDirectories(project.resolve("real"));
        Files.writeString(project.resolve("real/secret"), "E=5");
        // Through a linked directory inside the project: masked at the path without links.
        Files.createSymbolicLink(project.resolve("alias"), Path.of("real"));
        Files.createSymbolicLink(project.resolve(".env"), Path.of("alias/secret"));
        // A linked directory is not walked: the .env outside is not the project's to mask.
        Files.createSymbolicLink(project.resolve("linked"), outside);
        // A link to a directory is nothing to mask.
        Files.createSymbolicLink(project.resolve("dir.env"), Path.of("real"));

        assertEquals(
                List.of(project.resolve("real/secret")), MaskedFiles.find(project, List.of(".env", "*.env"), 16, 1000));
    }

    @Test
    void theScanFindsNestedRepositoriesAndWithoutMasksABoundOnlyMakesItIncomplete() throws IOException {
        Path project = Files.createDirectories(dir.resolve("p"));
        Files.createDirectories(project.resolve(".git"));
        Files.createDirectories(project.resolve("vendor/lib/.git"));
        Files.createDirectories(project.resolve("sub"));
        Files.writeString(project.resolve("sub/.git"), "gitdir: ../.git/modules/sub\n");
        for (int i = 0; i < 20; i++) {
            Files.writeString(project.resolve("f" + i), "");
        }

        MaskedFiles.Scan all = MaskedFiles.scan(project, List.of(), 64, 1000);
        MaskedFiles.Scan cut = MaskedFiles.scan(project, List.of(), 64, 5);

        assertEquals(
                List.of(Path.of("sub/.git"), Path.of("vendor/lib/.git")),
                all.nestedGit().stream().sorted().toList());
        assertTrue(all.incomplete().isEmpty(), all::toString);
        assertTrue(cut.incomplete().isPresent(), cut::toString);
        assertThrows(IOException.class, () -> MaskedFiles.scan(project, List.of(".env"), 64, 5));
    }

    @Test
    void aMaskThatMatchesADirectoryRefusesRatherThanHidingNothing() throws IOException {
        Path project = Files.createDirectories(dir.resolve("p"));
        Files.createDirectories(project.resolve("secrets"));
        Files.writeString(project.resolve("secrets/key"), "S2");

        IOException e = assertThrows(IOException.class, () -> MaskedFiles.find(project, List.of("secrets"), 64, 1000));

        assertTrue(e.getMessage().contains("matches the directory " + project.resolve("secrets")), e.getMessage());
        assertEquals(
                List.of(project.resolve("secrets/key")), MaskedFiles.find(project, List.of("secrets/**"), 64, 1000));
    }

    @Test
    void theDefaultDepthReachesDeepTrees() throws IOException {
        Path project = Files.createDirectories(dir.resolve("p"));
        Path deep = project;
        for (int i = 0; i < 14; i++) {
            deep = deep.resolve("d" + i);
        }
        Files.createDirectories(deep);
        Files.writeString(deep.resolve(".env"), "F=6");

        assertEquals(
                List.of(deep.resolve(".env")),
                MaskedFiles.find(
                        project, List.of(".env"), MaskedFiles.DEFAULT_MAX_DEPTH, MaskedFiles.DEFAULT_MAX_ENTRIES));
    }

    @Test
    void aTreeDeeperThanTheBoundIsRefusedNotSkipped() throws IOException {
        Path project = Files.createDirectories(dir.resolve("p"));
        Path deep = project;
        for (int i = 0; i < 14; i++) {
            deep = deep.resolve("d" + i);
        }
        Files.createDirectories(deep);
        Files.writeString(deep.resolve(".env"), "G=7");

        IOException e = assertThrows(IOException.class, () -> MaskedFiles.find(project, List.of(".env"), 12, 1000));
        assertTrue(e.getMessage().contains("depth limit of 12"), e.getMessage());
        assertTrue(
                e.getMessage()
                        .contains(project.resolve("d0/d1/d2/d3/d4/d5/d6/d7/d8/d9/d10/d11")
                                .toString()),
                e.getMessage());
        assertTrue(e.getMessage().contains("the jail does not start"), e.getMessage());
    }

    @Test
    void failsRatherThanSearchingForever() throws IOException {
        Path project = Files.createDirectories(dir.resolve("big"));
        for (int i = 0; i < 20; i++) {
            Files.createFile(project.resolve("f" + i));
        }
        IOException e = assertThrows(IOException.class, () -> MaskedFiles.find(project, List.of(".env"), 4, 10));
        assertTrue(e.getMessage().contains("entry limit of 10"), e.getMessage());
        assertEquals(List.of(), MaskedFiles.find(project, List.of(), 4, 10));
    }
}

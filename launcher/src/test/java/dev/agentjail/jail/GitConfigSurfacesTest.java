package dev.agentjail.jail;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class GitConfigSurfacesTest {
    @TempDir
    Path dir;

    @Test
    void whatTheConfigurationNamesInsideTheProjectIsProtectedAndNothingOutsideIt() throws IOException {
        Path project = Files.createDirectories(dir.resolve("p"));
        Files.createDirectories(project.resolve("scripts"));
        Files.writeString(project.resolve("scripts/clean.sh"), "cat\n");
        Files.writeString(project.resolve("scripts/fsmon"), "exit 0\n");
        Path home = Files.createDirectories(dir.resolve("home"));
        String listing = String.join(
                "\0",
                "file:" + project + "/.git/config",
                "core.hookspath\n.husky/_",
                "file:" + project + "/.git/config",
                "include.path\n../team.gitconfig",
                "file:" + project + "/.git/config",
                "filter.x.clean\n./scripts/clean.sh --quiet",
                "file:" + project + "/.git/config",
                "core.fsmonitor\nscripts/fsmon",
                "file:" + project + "/.git/config",
                "alias.up\n!sh scripts/missing.sh",
                "file:" + home + "/.gitconfig",
                "core.pager\nless -R",
                "file:" + home + "/.gitconfig",
                "core.attributesfile\n~/.gitattributes",
                "file:" + home + "/.gitconfig",
                "core.fsmonitor\ntrue",
                "");

        assertEquals(
                List.of(".husky/_/", ".husky/", "team.gitconfig", "scripts/clean.sh", "scripts/fsmon"),
                GitConfigSurfaces.fromListing(project, home, listing));
    }

    @Test
    void realGitReportsTheRepositorysHooksPath() throws IOException, InterruptedException {
        Path project = Files.createDirectories(dir.resolve("repo")).toRealPath();
        Process init = new ProcessBuilder("git", "init", "-q", project.toString()).start();
        assertEquals(0, init.waitFor());
        Process set =
                new ProcessBuilder("git", "-C", project.toString(), "config", "core.hooksPath", ".githooks").start();
        assertEquals(0, set.waitFor());

        List<String> found =
                GitConfigSurfaces.find(project, dir, System.getenv().getOrDefault("PATH", "/usr/bin"));

        assertEquals(true, found.contains(".githooks/"), found::toString);
    }
}

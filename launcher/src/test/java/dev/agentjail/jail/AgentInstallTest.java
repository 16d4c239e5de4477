package dev.agentjail.jail;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AgentInstallTest {
    private static final List<Path> SYSTEM = List.of(Path.of("/usr"));

    @TempDir
    Path dir;

    private Path home() throws IOException {
        return Files.createDirectories(dir.resolve("home")).toRealPath();
    }

    private static Path executable(Path file, String text) throws IOException {
        Files.createDirectories(file.getParent());
        Files.writeString(file, text);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
        return file;
    }

    /** An npm global prefix in the home: bin/x links into lib/node_modules/@s/pkg, run by nvm's node. */
    private Path npmLayout(Path home) throws IOException {
        Path pkg = home.resolve(".npm-global/lib/node_modules/@s/pkg");
        Files.createDirectories(pkg);
        Files.writeString(pkg.resolve("package.json"), "{\"name\":\"@s/pkg\"}");
        executable(pkg.resolve("cli.js"), "#!/usr/bin/env node\nconsole.log('x')\n");
        Files.createDirectories(home.resolve(".npm-global/bin"));
        Files.createSymbolicLink(home.resolve(".npm-global/bin/x"), Path.of("../lib/node_modules/@s/pkg/cli.js"));
        executable(home.resolve(".nvm/versions/node/v20.1.0/bin/node"), "binary");
        Files.createDirectories(home.resolve(".nvm/versions/node/v20.1.0/lib/node_modules"));
        return pkg;
    }

    @Test
    void anNpmInstallBindsItsPackageAndTheNodeItRunsWithAndLinksTheProgramOnPath() throws IOException {
        Path home = home();
        Path pkg = npmLayout(home);
        String path = home.resolve(".npm-global/bin") + ":" + home.resolve(".nvm/versions/node/v20.1.0/bin")
                + ":/usr/bin:/bin";

        AgentInstall.Plan plan = AgentInstall.resolve("x", path, home, SYSTEM, List.of(), argv -> Optional.empty())
                .orElseThrow();

        assertEquals(home.resolve(".npm-global/bin/x"), plan.program());
        assertEquals(List.of(pkg, home.resolve(".nvm/versions/node/v20.1.0")), plan.readOnly());
        assertEquals(
                List.of(new AgentInstall.Link(home.resolve(".npm-global/bin/x"), pkg.resolve("cli.js"))), plan.links());
        assertEquals(
                List.of(home.resolve(".npm-global/bin"), home.resolve(".nvm/versions/node/v20.1.0/bin")),
                plan.pathDirs());
        assertEquals(
                home.resolve(".npm-global/bin") + ":" + home.resolve(".nvm/versions/node/v20.1.0/bin") + ":/usr/bin",
                plan.jailPath("/usr/bin"));
        assertEquals(path, plan.jailPath(path));
    }

    @Test
    void aProgramNotOnPathIsNotFound() throws IOException {
        Path home = home();
        npmLayout(home);
        assertEquals(
                Optional.empty(),
                AgentInstall.resolve("x", "/usr/bin:/bin", home, SYSTEM, List.of(), argv -> Optional.empty()));
    }

    @Test
    void aSharedPrefixIsNeverBoundOnlyTheFile() throws IOException {
        Path home = home();
        Path tool = executable(home.resolve(".local/bin/tool"), "binary");
        Files.createDirectories(home.resolve(".local/lib/python3.12"));

        AgentInstall.Plan plan = AgentInstall.resolve(
                        "tool",
                        home.resolve(".local/bin").toString(),
                        home,
                        SYSTEM,
                        List.of(),
                        argv -> Optional.empty())
                .orElseThrow();

        assertEquals(List.of(tool), plan.readOnly());
        assertEquals(List.of(), plan.links());
    }

    @Test
    void aProgramInACredentialStoreIsRefused() throws IOException {
        Path home = home();
        executable(home.resolve(".ssh/bin/x"), "binary");
        IOException e = assertThrows(
                IOException.class,
                () -> AgentInstall.resolve(
                        "x",
                        home.resolve(".ssh/bin").toString(),
                        home,
                        SYSTEM,
                        List.of(home.resolve(".ssh")),
                        argv -> Optional.empty()));
        assertTrue(e.getMessage().contains("always hides"), e.getMessage());
    }

    @Test
    void aShimIsResolvedByItsVersionManager() throws IOException {
        Path home = home();
        executable(home.resolve(".asdf/shims/x"), "#!/usr/bin/env bash\nexec asdf exec x \"$@\"\n");
        Path real = executable(home.resolve(".asdf/installs/tool/1.0/bin/x"), "binary");
        Files.createDirectories(home.resolve(".asdf/installs/tool/1.0/lib"));
        List<List<String>> asked = new ArrayList<>();

        AgentInstall.Plan plan = AgentInstall.resolve(
                        "x", home.resolve(".asdf/shims").toString(), home, SYSTEM, List.of(), argv -> {
                            asked.add(argv);
                            return Optional.of(real.toString());
                        })
                .orElseThrow();

        assertEquals(List.of(List.of(home.resolve(".asdf/bin/asdf").toString(), "which", "x")), asked);
        assertEquals(List.of(home.resolve(".asdf/installs/tool/1.0")), plan.readOnly());
        assertEquals(List.of(home.resolve(".asdf/installs/tool/1.0/bin")), plan.pathDirs());
    }

    @Test
    void aShimItsManagerCannotResolveIsAnErrorThatSaysWhatToDo() throws IOException {
        Path home = home();
        executable(home.resolve(".asdf/shims/x"), "#!/bin/sh\n");
        IOException e = assertThrows(
                IOException.class,
                () -> AgentInstall.resolve(
                        "x",
                        home.resolve(".asdf/shims").toString(),
                        home,
                        SYSTEM,
                        List.of(),
                        argv -> Optional.empty()));
        assertTrue(e.getMessage().contains("is a shim"), e.getMessage());
    }

    @Test
    void aSystemProgramNeedsNothing() throws IOException {
        AgentInstall.Plan plan = AgentInstall.resolve(
                        "sh",
                        "/usr/bin:/bin",
                        home(),
                        List.of(Path.of("/usr").toRealPath(), Path.of("/bin").toRealPath()),
                        List.of(),
                        argv -> Optional.empty())
                .orElseThrow();
        assertEquals(List.of(), plan.readOnly());
        assertEquals(List.of(), plan.links());
    }

    @Test
    void noLinkIsPlannedInsideABindAlreadyThere() throws IOException {
        Path home = home();
        npmLayout(home);
        AgentInstall.Plan plan = AgentInstall.resolve(
                        "x",
                        home.resolve(".npm-global/bin") + ":" + home.resolve(".nvm/versions/node/v20.1.0/bin"),
                        home,
                        SYSTEM,
                        List.of(),
                        argv -> Optional.empty())
                .orElseThrow()
                .without(List.of(home.resolve(".npm-global")));
        assertEquals(List.of(), plan.links());
        assertEquals(2, plan.readOnly().size());
    }
}

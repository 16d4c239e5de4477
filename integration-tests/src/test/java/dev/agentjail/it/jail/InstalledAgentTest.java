package dev.agentjail.it.jail;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.cli.ExitCodes;
import dev.agentjail.it.support.Prerequisites;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Arrays;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code agentjail run AGENT} finds the agent where the user installed it under their home, as npm lays out a global
 * install in a user prefix (run by nvm's node), binds that installation read-only and runs it; an agent that is not
 * installed is named, with its install hint, before any jail starts.
 */
@Timeout(120)
class InstalledAgentTest {
    private static final String PACKAGE = "lib/node_modules/@mariozechner/pi-coding-agent";

    @TempDir
    Path dir;

    /** A fake pi under HOME: {@code ~/.npm-global/bin/pi} links into the package, which requires a file of its own. */
    private static String installFakePi(Path home, Path node) throws IOException {
        Path prefix = home.resolve(".npm-global");
        Path pkg = prefix.resolve(PACKAGE);
        Files.createDirectories(pkg.resolve("lib"));
        Files.writeString(
                pkg.resolve("package.json"), "{\"name\":\"@mariozechner/pi-coding-agent\",\"bin\":\"cli.js\"}");
        Files.writeString(pkg.resolve("lib/version.js"), "module.exports = '9.8.7';\n");
        Path cli = pkg.resolve("cli.js");
        Files.writeString(
                cli,
                "#!/usr/bin/env node\n"
                        + "const fs = require('fs');\n"
                        + "console.log('fake-pi ' + process.argv.slice(2).join(' ') + ' ' + require('./lib/version.js'));\n"
                        + "let writable = true; try { fs.writeFileSync(__filename, 'x'); } catch (e) { writable = false; }\n"
                        + "console.log('install-writable=' + writable);\n"
                        + "const state = process.env.HOME + '/.pi/agent';\n"
                        + "if (process.argv[2] === 'save') {\n"
                        + "  fs.writeFileSync(state + '/state.txt', process.argv[3]);\n"
                        + "  try { fs.writeFileSync(state + '/settings.json', '{\"hooks\":1}'); console.log('settings-made'); }\n"
                        + "  catch (e) { console.log('settings-refused ' + e.code); }\n"
                        + "}\n"
                        + "if (process.argv[2] === 'load') console.log('state=' + fs.readFileSync(state + '/state.txt'));\n");
        Files.setPosixFilePermissions(cli, PosixFilePermissions.fromString("rwxr-xr-x"));
        Files.createDirectories(prefix.resolve("bin"));
        Files.createSymbolicLink(prefix.resolve("bin/pi"), Path.of("../" + PACKAGE + "/cli.js"));
        // nvm's layout: the node the script's env finds lives under the home too (here a link to the system's).
        Path nvmBin = Files.createDirectories(home.resolve(".nvm/versions/node/v22.0.0/bin"));
        Files.createDirectories(home.resolve(".nvm/versions/node/v22.0.0/lib"));
        Files.createSymbolicLink(nvmBin.resolve("node"), node);
        return prefix.resolve("bin") + ":" + nvmBin + ":" + AgentjailRun.STANDARD_PATH;
    }

    private static Optional<Path> systemNode() {
        return Arrays.stream(AgentjailRun.STANDARD_PATH.split(":"))
                .map(d -> Path.of(d, "node"))
                .filter(Files::isExecutable)
                .findFirst();
    }

    @Test
    void anAgentInstalledWithNpmInAUserPrefixRunsReadOnlyFromThere() throws IOException {
        AgentjailRun.requireBwrap();
        Optional<Path> node = systemNode();
        Prerequisites.require(node.isPresent(), "node on " + AgentjailRun.STANDARD_PATH);
        AgentjailRun run = AgentjailRun.in(dir);
        String path = installFakePi(run.home(), node.get());

        AgentjailRun.Outcome o = run.env("PATH", path).withoutSeparator().run("pi", "--version");

        assertEquals(0, o.exitCode(), o::describe);
        assertTrue(o.out().contains("fake-pi --version 9.8.7"), o::describe);
        assertTrue(o.out().contains("install-writable=false"), o::describe);
        assertTrue(o.err().contains("agentjail: preset pi\n"), o::describe);
        assertTrue(Files.readString(run.home().resolve(".npm-global/" + PACKAGE + "/cli.js"))
                .startsWith("#!"));
    }

    @Test
    void theAgentsMissingConfigDirectoryIsCreatedSoItsStateIsThereNextSession() throws IOException {
        AgentjailRun.requireBwrap();
        Optional<Path> node = systemNode();
        Prerequisites.require(node.isPresent(), "node on " + AgentjailRun.STANDARD_PATH);
        AgentjailRun run = AgentjailRun.in(dir);
        String path = installFakePi(run.home(), node.get());
        Path config = run.home().resolve(".pi/agent");
        assertFalse(Files.exists(run.home().resolve(".pi")));

        AgentjailRun.Outcome saved = run.env("PATH", path).withoutSeparator().run("pi", "save", "remembered");

        assertEquals(0, saved.exitCode(), saved::describe);
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(config)));
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(config.getParent())));
        assertEquals("remembered", Files.readString(config.resolve("state.txt")));
        // The read-only settings file is not the agent's to create: made neutral before the jail, and kept.
        assertTrue(saved.out().contains("settings-refused"), saved::describe);
        assertEquals("{}\n", Files.readString(config.resolve("settings.json")), saved::describe);

        AgentjailRun.Outcome loaded = run.withoutSeparator().run("pi", "load");

        assertEquals(0, loaded.exitCode(), loaded::describe);
        assertTrue(loaded.out().contains("state=remembered"), loaded::describe);
    }

    @Test
    void aMissingAgentIsNamedWithItsPresetAndInstallHintBeforeAnyJail() {
        AgentjailRun.requireBwrap();
        AgentjailRun run = AgentjailRun.in(dir);

        AgentjailRun.Outcome o = run.withoutSeparator().run("pi", "--version");

        assertEquals(ExitCodes.NOT_FOUND, o.exitCode(), o::describe);
        assertTrue(
                o.err()
                        .contains("agentjail: pi (preset pi) not found on PATH; install it with npm install -g"
                                + " @mariozechner/pi-coding-agent"),
                o::describe);
        assertFalse(o.err().contains("agentjail-init"), o::describe);
        assertFalse(Files.exists(run.auditLog()), "no session started: " + o.describe());
    }
}

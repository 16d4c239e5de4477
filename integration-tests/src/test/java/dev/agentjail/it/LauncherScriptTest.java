package dev.agentjail.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.it.support.Command;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code bin/agentjail} picks a JDK ≥ 21 by itself: JAVA_HOME when it is new enough (read from the JDK's
 * {@code release} file, without starting a JVM), else the newest JDK under /usr/lib/jvm. The script runs from a copy
 * of the repository's layout that holds only the script and the built jar, so it never decides to rebuild.
 */
class LauncherScriptTest {
    private static final Duration LIMIT = Duration.ofSeconds(60);

    @TempDir
    Path dir;

    private Path script;

    @BeforeEach
    void layout() throws IOException {
        Path repo = Files.createDirectories(dir.resolve("repo"));
        script = Files.createDirectories(repo.resolve("bin")).resolve("agentjail");
        Files.copy(Path.of("..", "bin", "agentjail"), script);
        Path jar = Files.createDirectories(repo.resolve("launcher/target")).resolve("agentjail.jar");
        Files.copy(Path.of("..", "launcher", "target", "agentjail.jar"), jar);
    }

    /** A JDK directory whose java prints {@code marker} and its arguments; its release file names {@code version}. */
    private Path fakeJdk(String name, String version, String marker) throws IOException {
        Path home = Files.createDirectories(dir.resolve(name));
        Path bin = Files.createDirectories(home.resolve("bin"));
        var exec = PosixFilePermissions.fromString("rwxr-xr-x");
        Files.writeString(bin.resolve("java"), "#!/bin/sh\necho " + marker + " \"$@\"\n");
        Files.writeString(bin.resolve("javac"), "#!/bin/sh\nexit 0\n");
        Files.setPosixFilePermissions(bin.resolve("java"), exec);
        Files.setPosixFilePermissions(bin.resolve("javac"), exec);
        Files.writeString(home.resolve("release"), "IMPLEMENTOR=\"test\"\nJAVA_VERSION=\"" + version + "\"\n");
        return home;
    }

    private Command.Result agentjail(Path javaHome, String... args) {
        List<String> argv = new java.util.ArrayList<>(List.of(script.toString()));
        argv.addAll(List.of(args));
        return Command.run(
                LIMIT,
                argv,
                Map.of(
                        "JAVA_HOME",
                        javaHome.toString(),
                        "XDG_CACHE_HOME",
                        dir.resolve("cache").toString()),
                dir);
    }

    @Test
    void aJavaHomeOfAtLeast21IsUsedAsItIs() throws IOException {
        Path jdk = fakeJdk("jdk21", "21.0.4", "fake-jdk-21");

        Command.Result r = agentjail(jdk, "--version");

        assertEquals(0, r.exitCode(), r::describe);
        assertTrue(r.out().startsWith("fake-jdk-21 "), r::describe);
        assertTrue(
                r.out()
                        .contains(" -jar " + script.getParent().getParent().resolve("launcher/target/agentjail.jar")
                                + " --version"),
                r::describe);
    }

    @Test
    void anOlderJavaHomeIsPassedOverForTheNewestJdkUnderUsrLibJvm() throws IOException {
        Path jdk = fakeJdk("jdk17", "17.0.12", "fake-jdk-17");

        Command.Result r = agentjail(jdk, "--version");

        assertEquals(0, r.exitCode(), r::describe);
        assertTrue(!r.out().contains("fake-jdk-17"), r::describe);
        assertTrue(r.out().toLowerCase(java.util.Locale.ROOT).contains("agentjail"), r::describe);
    }
}

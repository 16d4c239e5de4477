package dev.agentjail.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.it.support.Await;
import dev.agentjail.it.support.Command;
import dev.agentjail.it.support.Prerequisites;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code bin/agentjail} picks a JDK ≥ 21 by itself: JAVA_HOME when it is new enough (read from the JDK's
 * {@code release} file, without starting a JVM), else the newest JDK under /usr/lib/jvm. The script runs from a copy
 * of the repository's layout that holds only the script and the built jar, so it never decides to rebuild. It loads
 * archives and native libraries from its cache only when no other user can have written them: each directory from /
 * to the cache is a real one that nobody else can write (root's sticky ones aside), and the cache and its files are
 * the user's; anything else stops it with exit code 3 before a JVM starts.
 */
class LauncherScriptTest {
    private static final Duration LIMIT = Duration.ofSeconds(60);
    /** A uid no test machine has an account for: chown to it needs no passwd entry. */
    private static final int OTHER_UID = 4242;

    private static final int REFUSED = 3;

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
        return agentjail(javaHome, dir.resolve("cache"), args);
    }

    private Command.Result agentjail(Path javaHome, Path xdgCacheHome, String... args) {
        return agentjail(javaHome, Map.of("XDG_CACHE_HOME", xdgCacheHome.toString()), args);
    }

    private Command.Result agentjail(Path javaHome, Map<String, String> env, String... args) {
        List<String> argv = new ArrayList<>(List.of(script.toString()));
        argv.addAll(List.of(args));
        Map<String, String> all = new HashMap<>(env);
        all.put("JAVA_HOME", javaHome.toString());
        return Command.run(LIMIT, argv, all, dir);
    }

    /** The JDK running the tests: a real one, for the runs that must get as far as the JVM. */
    private static Path realJdk() {
        Path home = Path.of(System.getProperty("java.home"));
        assertTrue(Files.isExecutable(home.resolve("bin/javac")), home + " is not a JDK");
        return home;
    }

    /** Changing a file's owner to another uid needs root; the tests run as root in CI. */
    private static void requireRoot() {
        try {
            int uid = (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
            Prerequisites.require(uid == 0, "root, to give a directory to uid " + OTHER_UID);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Path directory(Path path, String mode) throws IOException {
        Files.createDirectories(path);
        Files.setPosixFilePermissions(path, PosixFilePermissions.fromString(mode));
        return path;
    }

    private static String mode(Path path) throws IOException {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(path, LinkOption.NOFOLLOW_LINKS));
    }

    /** Waits for the script's detached extraction of Netty's libraries, which writes into the cache. */
    private static void awaitBackgroundWork(Path cache) {
        Await.until(
                Duration.ofSeconds(60),
                () -> !Files.exists(cache.resolve("native-extract.lock")),
                () -> "bin/agentjail's background work in " + cache + " did not finish");
    }

    private static void assertRefused(Command.Result r, String line) {
        assertEquals(REFUSED, r.exitCode(), r::describe);
        assertEquals(line + ", or set AGENTJAIL_NO_CACHE=1 to run without a cache\n", r.stderr(), r::describe);
        assertEquals("", r.out(), r::describe);
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

    @Test
    void aCacheUnderADirectoryAnotherUserOwnsAndAnyoneCanWriteIsRefused() throws IOException {
        requireRoot();
        Path shared = directory(dir.resolve("shared"), "rwxrwxrwx");
        Files.setAttribute(shared, "unix:uid", OTHER_UID);

        Command.Result r = agentjail(realJdk(), shared, "--version");

        assertRefused(
                r,
                "agentjail: refusing the cache directory " + shared.resolve("agentjail") + ": " + shared
                        + " is writable by other users (mode 0777, owner " + OTHER_UID
                        + "); set XDG_CACHE_HOME to a private directory");
        assertFalse(Files.exists(shared.resolve("agentjail"), LinkOption.NOFOLLOW_LINKS), "made the cache there");
    }

    @Test
    void aCacheItsGroupCanWriteIsRefused() throws IOException {
        Path cache = directory(dir.resolve("cache/agentjail"), "rwxrwx---");

        Command.Result r = agentjail(realJdk(), "--version");

        assertRefused(
                r,
                "agentjail: refusing the cache directory " + cache + ": " + cache
                        + " is writable by its group (mode 0770); remove it (everything in it is rebuilt on demand)");
    }

    @Test
    void aCacheThatIsASymbolicLinkIsRefused() throws IOException {
        Path target = directory(dir.resolve("elsewhere"), "rwx------");
        Path cache = Files.createSymbolicLink(
                Files.createDirectories(dir.resolve("cache")).resolve("agentjail"), target);

        Command.Result r = agentjail(realJdk(), "--version");

        assertRefused(
                r,
                "agentjail: refusing the cache directory " + cache + ": " + cache
                        + " is a symbolic link; remove it (everything in it is rebuilt on demand)");
    }

    @Test
    void anArchiveAnotherUserOwnsIsRefused() throws IOException {
        requireRoot();
        Path cache = dir.resolve("cache/agentjail");
        Path jar = script.getParent().getParent().resolve("launcher/target/agentjail.jar");
        Path archive = cache.resolve(
                "agentjail-" + Files.getLastModifiedTime(jar).to(TimeUnit.SECONDS) + "-" + Files.size(jar) + ".jsa");
        Command.Result first = agentjail(realJdk(), "--version");
        awaitBackgroundWork(cache);
        assertEquals(0, first.exitCode(), first::describe);
        assertTrue(Files.size(archive) > 0, "no archive at " + archive);

        Files.setAttribute(archive, "unix:uid", OTHER_UID);
        Command.Result r = agentjail(realJdk(), "--version");

        assertRefused(
                r,
                "agentjail: refusing the cache directory " + cache + ": " + archive + " belongs to uid " + OTHER_UID
                        + ", not to you (uid 0); remove it (it is rebuilt on demand)");
    }

    @Test
    void aMissingCacheIsMadePrivateAndUsed() throws IOException {
        Path xdg = dir.resolve("fresh/xdg");
        Path cache = xdg.resolve("agentjail");

        Command.Result first = agentjail(realJdk(), xdg, "--version");
        awaitBackgroundWork(cache);
        Command.Result second = agentjail(realJdk(), xdg, "--version");
        awaitBackgroundWork(cache);

        for (Command.Result r : List.of(first, second)) {
            assertEquals(0, r.exitCode(), r::describe);
            assertTrue(r.out().toLowerCase(java.util.Locale.ROOT).contains("agentjail"), r::describe);
        }
        // umask 077 for every directory mkdir -p made, not only the last one.
        for (Path made : List.of(dir.resolve("fresh"), xdg, cache)) {
            assertEquals("rwx------", mode(made), made.toString());
        }
        try (var files = Files.list(cache)) {
            List<Path> natives = files.filter(f -> f.getFileName().toString().startsWith("native-"))
                    .toList();
            assertEquals(1, natives.size(), natives::toString);
            assertEquals("rwx------", mode(natives.get(0)), natives.get(0).toString());
        }
    }

    @Test
    void withoutHomeOrWithAgentjailNoCacheNoCacheIsUsed() throws IOException {
        Path jdk = fakeJdk("jdk21", "21.0.4", "fake-jdk-21");
        // A cache that would be refused: the switch must not even look at it.
        directory(dir.resolve("cache/agentjail"), "rwxrwxrwx");
        List<String> withoutHome = List.of("env", "-u", "HOME", "-u", "XDG_CACHE_HOME", script.toString(), "--version");

        Command.Result noHome = Command.run(LIMIT, withoutHome, Map.of("JAVA_HOME", jdk.toString()), dir);
        Command.Result switchedOff = agentjail(
                jdk, Map.of("XDG_CACHE_HOME", dir.resolve("cache").toString(), "AGENTJAIL_NO_CACHE", "1"), "--version");

        for (Command.Result r : List.of(noHome, switchedOff)) {
            assertEquals(0, r.exitCode(), r::describe);
            assertTrue(r.out().startsWith("fake-jdk-21 "), r::describe);
            assertFalse(r.out().contains("SharedArchiveFile") || r.out().contains("java.library.path"), r::describe);
        }
    }
}

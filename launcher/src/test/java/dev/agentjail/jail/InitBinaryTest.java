package dev.agentjail.jail;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class InitBinaryTest {
    @TempDir
    Path dir;

    @Test
    void extractsOnceUnderAContentHashNameAndReusesIt() throws IOException {
        Path cache = dir.resolve("cache/agentjail");
        Path first = InitBinary.extract(cache);
        assertTrue(first.getFileName().toString().matches("agentjail-init-linux-(x86_64|aarch64)-[0-9a-f]{16}"));
        assertEquals("rwxr-xr-x", PosixFilePermissions.toString(Files.getPosixFilePermissions(first)));
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(cache)));
        assertArrayEquals(shipped(), Files.readAllBytes(first));
        long modified = Files.getLastModifiedTime(first).toMillis();
        assertEquals(first, InitBinary.extract(cache));
        assertEquals(modified, Files.getLastModifiedTime(first).toMillis());
        try (var entries = Files.list(cache)) {
            assertEquals(List.of(first), entries.toList(), "no temp files left behind");
        }
    }

    @Test
    void replacesATamperedCopy() throws IOException {
        Path cache = dir.resolve("agentjail");
        Path installed = InitBinary.extract(cache);
        Files.writeString(installed, "#!/bin/sh\necho owned\n");
        assertEquals(installed, InitBinary.extract(cache));
        assertArrayEquals(shipped(), Files.readAllBytes(installed));
        // The same length, one byte changed deep inside: still caught, and replaced.
        byte[] flipped = shipped();
        flipped[flipped.length / 2] ^= 0x01;
        Files.write(installed, flipped);
        assertEquals(installed, InitBinary.extract(cache));
        assertArrayEquals(shipped(), Files.readAllBytes(installed));
    }

    @Test
    void writingANewBuildRemovesOlderBuildsBinariesButNotRecentOnes() throws IOException {
        Path cache = dir.resolve("agentjail");
        Path current = InitBinary.extract(cache);
        String name = InitBinary.resourceName(System.getProperty("os.arch"));
        Path old = cache.resolve(name + "-00000000000aa000");
        Path recent = cache.resolve(name + "-00000000000bb000");
        Path unrelated = cache.resolve("agentjail-1-2.jsa");
        for (Path p : List.of(old, recent, unrelated)) {
            Files.writeString(p, "x");
        }
        FileTime longAgo =
                FileTime.from(Instant.now().minus(InitBinary.STALE_AFTER).minus(Duration.ofHours(1)));
        Files.setLastModifiedTime(old, longAgo);
        Files.setLastModifiedTime(unrelated, longAgo);
        // Reusing the intact binary tidies nothing.
        assertEquals(current, InitBinary.extract(cache));
        assertTrue(Files.exists(old));
        // A new build's binary (here: the shipped one, after it was tampered with) is written: the old one goes.
        Files.writeString(current, "tampered");
        assertEquals(current, InitBinary.extract(cache));
        assertFalse(Files.exists(old), "an earlier build's binary, written long ago, is removed");
        assertTrue(Files.exists(recent), "a binary written within a day may be in use by another installed version");
        assertTrue(Files.exists(unrelated), "only init binaries are tidied");
        assertArrayEquals(shipped(), Files.readAllBytes(current));
    }

    @Test
    void refusesACacheDirectoryOthersCanWrite() throws IOException {
        Path cache = Files.createDirectory(dir.resolve("agentjail"));
        Files.setPosixFilePermissions(cache, PosixFilePermissions.fromString("rwxrwxrwx"));
        IOException e = assertThrows(IOException.class, () -> InitBinary.extract(cache));
        assertTrue(e.getMessage().contains("only its owner can write"), e.getMessage());
    }

    @Test
    void resourceNamesAndCacheLocation() {
        assertEquals("agentjail-init-linux-x86_64", InitBinary.resourceName("amd64"));
        assertEquals("agentjail-init-linux-aarch64", InitBinary.resourceName("aarch64"));
        assertThrows(IllegalStateException.class, () -> InitBinary.resourceName("riscv64"));
        Path home = Path.of("/home/u");
        assertEquals(Path.of("/home/u/.cache/agentjail"), InitBinary.defaultCacheDir(Map.of(), home));
        assertEquals(Path.of("/x/agentjail"), InitBinary.defaultCacheDir(Map.of("XDG_CACHE_HOME", "/x"), home));
        assertEquals(
                Path.of("/home/u/.cache/agentjail"),
                InitBinary.defaultCacheDir(Map.of("XDG_CACHE_HOME", "relative"), home));
    }

    @Test
    void execWithFdsOpensFilesAtTheirDescriptors() throws Exception {
        Path init = InitBinary.extract(dir.resolve("c"));
        Path input = Files.writeString(dir.resolve("in"), "from-fd-3");
        Path secret = Files.writeString(dir.resolve("args"), "from-fd-4");
        Path output = dir.resolve("out");
        Run run = run(InitCommand.execWithFds(
                init,
                List.of(
                        new InitCommand.FdFile(3, InitCommand.Mode.READ, input),
                        new InitCommand.FdFile(4, InitCommand.Mode.READ_UNLINK, secret),
                        new InitCommand.FdFile(5, InitCommand.Mode.WRITE, output)),
                List.of("sh", "-c", "cat <&3; echo; cat <&4; echo written >&5")));
        assertEquals(0, run.exit(), run.stderr());
        assertEquals("from-fd-3\nfrom-fd-4", run.stdout());
        assertFalse(Files.exists(secret), "--read-unlink deletes the file once open");
        assertEquals("written\n", Files.readString(output));
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(output)));
    }

    @Test
    void aPathDescriptorIsOpenedOnlyWhenNoComponentIsASymbolicLink() throws Exception {
        Path init = InitBinary.extract(dir.resolve("c"));
        Path real = dir.toRealPath();
        Path directory = Files.createDirectories(real.resolve("real/dir"));
        Path file = Files.writeString(directory.resolve("file"), "x");
        Files.createSymbolicLink(real.resolve("link"), Path.of("real"));
        Files.createSymbolicLink(directory.resolve("file-link"), Path.of("file"));

        for (Path path : List.of(directory, file)) {
            Run opened = run(InitCommand.execWithFds(
                    init,
                    List.of(new InitCommand.FdFile(7, InitCommand.Mode.PATH, path)),
                    List.of("readlink", "/proc/self/fd/7")));
            assertEquals(0, opened.exit(), opened.stderr());
            assertEquals(path.toString(), opened.stdout().strip());
        }
        // A link as the last component, and one in the middle: neither is followed.
        for (Path path : List.of(directory.resolve("file-link"), real.resolve("link/dir/file"))) {
            Run refused = run(InitCommand.execWithFds(
                    init, List.of(new InitCommand.FdFile(7, InitCommand.Mode.PATH, path)), List.of("true")));
            assertEquals(InitExitCodes.FD_FILE, refused.exit(), path::toString);
            assertTrue(
                    refused.stderr().startsWith("agentjail-init: open " + path + " without following links: "),
                    refused.stderr());
        }
    }

    @Test
    void exitCodesAreDistinctAndDocumented() throws Exception {
        Path init = InitBinary.extract(dir.resolve("c"));
        Path notExecutable = Files.writeString(dir.resolve("data.txt"), "x");

        Run usage = run(List.of(init.toString()));
        assertEquals(InitExitCodes.USAGE, usage.exit());
        assertTrue(usage.stderr().startsWith("agentjail-init: usage"), usage.stderr());
        assertEquals(
                InitExitCodes.USAGE,
                run(List.of(init.toString(), "jail", "--port", "0", "--handoff", "/x", "--", "true"))
                        .exit());
        assertEquals(
                InitExitCodes.USAGE,
                run(List.of(init.toString(), "jail", "--port", "80", "--handoff", "/x", "--nofile", "-1", "--", "true"))
                        .exit());
        assertEquals(
                InitExitCodes.USAGE,
                run(List.of(init.toString(), "exec-with-fds", "--read", "1", "/x", "--", "true"))
                        .exit());

        Run noFile = run(List.of(
                init.toString(),
                "exec-with-fds",
                "--read",
                "3",
                dir.resolve("missing").toString(),
                "--",
                "true"));
        assertEquals(InitExitCodes.FD_FILE, noFile.exit());
        assertTrue(noFile.stderr().contains("No such file or directory"), noFile.stderr());

        Run notFound = run(List.of(init.toString(), "exec-with-fds", "--", "/nonexistent/agent"));
        assertEquals(InitExitCodes.NOT_FOUND, notFound.exit());
        assertEquals("agentjail-init: exec /nonexistent/agent: No such file or directory\n", notFound.stderr());
        assertEquals(
                InitExitCodes.NOT_EXECUTABLE,
                run(List.of(init.toString(), "exec-with-fds", "--", notExecutable.toString()))
                        .exit());

        Run noHandoff = run(List.of(
                init.toString(),
                "jail",
                "--port",
                Integer.toString(freePort()),
                "--handoff",
                dir.resolve("none.sock").toString(),
                "--",
                "true"));
        assertEquals(InitExitCodes.HANDOFF, noHandoff.exit());
        assertTrue(
                noHandoff.stderr().startsWith("agentjail-init: connect " + dir.resolve("none.sock")),
                noHandoff.stderr());
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    private static byte[] shipped() throws IOException {
        String name = InitBinary.resourceName(System.getProperty("os.arch"));
        try (InputStream in = InitBinary.class.getResourceAsStream(InitBinary.RESOURCE_DIR + name)) {
            assertTrue(in != null, "the build put agentjail-init into the classpath");
            return in.readAllBytes();
        }
    }

    private record Run(int exit, String stdout, String stderr) {}

    private static Run run(List<String> argv) throws Exception {
        Process process = new ProcessBuilder(new ArrayList<>(argv)).start();
        process.getOutputStream().close();
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String err = new String(process.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(process.waitFor(30, TimeUnit.SECONDS));
        return new Run(process.exitValue(), out, err);
    }
}

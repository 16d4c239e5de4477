package dev.agentjail.jail;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Indexes real git wrote, then edited as an agent would, checked as the mirror checks them. */
class IndexPathsTest {
    @TempDir
    Path dir;

    private void git(String... args) throws IOException, InterruptedException {
        List<String> argv = new ArrayList<>(List.of("git", "-C", dir.toString()));
        argv.addAll(List.of(args));
        Process p = new ProcessBuilder(argv).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0, () -> argv + ": " + out);
    }

    private byte[] index(int version, String... paths) throws Exception {
        git("init", "-q");
        Files.writeString(dir.resolve("blob"), "x\n");
        for (String path : paths) {
            git("update-index", "--add", "--cacheinfo", "100644,587be6b4c3f93f93c489c0111bba5596147a26cb," + path);
        }
        git("update-index", "--index-version", Integer.toString(version));
        return Files.readAllBytes(dir.resolve(".git/index"));
    }

    private static Optional<String> check(byte[] index) throws IOException {
        return IndexPaths.check(new ByteArrayInputStream(index), index.length, 20);
    }

    /** Replaces equal-length bytes, then the SHA-1 trailer, as a crafted index would be made. */
    private static byte[] craft(byte[] index, String from, String to) throws Exception {
        byte[] f = from.getBytes(StandardCharsets.UTF_8);
        byte[] t = to.getBytes(StandardCharsets.UTF_8);
        assertEquals(f.length, t.length);
        byte[] out = index.clone();
        boolean replaced = false;
        for (int i = 0; i + f.length <= out.length - 20; i++) {
            boolean match = true;
            for (int j = 0; j < f.length && match; j++) {
                match = out[i + j] == f[j];
            }
            if (match) {
                System.arraycopy(t, 0, out, i, t.length);
                replaced = true;
            }
        }
        assertTrue(replaced, "no " + from + " in the index");
        byte[] sum = MessageDigest.getInstance("SHA-1").digest(java.util.Arrays.copyOf(out, out.length - 20));
        System.arraycopy(sum, 0, out, out.length - 20, 20);
        return out;
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 3, 4})
    void anIndexGitWroteWithOrdinaryPathsPasses(int version) throws Exception {
        assertEquals(
                Optional.empty(), check(index(version, "a.txt", "src/main.c", "src/x/.gitignore", "docs/.github")));
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                ".git/config",
                ".GIT/config",
                "sub/.git/hooks/x",
                ".git./config",
                "git~1/config",
                "a/../b",
                "a/./b"
            })
    void anEntryGitWouldWriteIntoMetadataIsRefused(String path) throws Exception {
        String placeholder = "q".repeat(path.length());
        for (int version : new int[] {2, 4}) {
            byte[] crafted = craft(index(version, "a.txt", placeholder), placeholder, path);
            Optional<String> problem = check(crafted);
            assertTrue(problem.isPresent() && problem.get().contains(path), () -> path + ": " + problem);
        }
    }

    @Test
    void somethingThatIsNoIndexIsRefused() throws IOException {
        assertTrue(check("[core]\n".getBytes(StandardCharsets.UTF_8)).isPresent());
        assertTrue(
                check(new byte[] {'D', 'I', 'R', 'C', 0, 0, 0, 2, 0, 0, 0, 5}).isPresent(), "truncated");
    }
}

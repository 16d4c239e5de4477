package dev.agentjail.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class HostPathTest {
    private static final Path HOME = Path.of("/home/u");

    static Stream<Arguments> accepted() {
        return Stream.of(
                arguments("~/.gitconfig", HostPath.Anchor.HOME, ".gitconfig", "/home/u/.gitconfig"),
                arguments("~/.cache/pip/", HostPath.Anchor.HOME, ".cache/pip", "/home/u/.cache/pip"),
                arguments("~//.config/./git", HostPath.Anchor.HOME, ".config/git", "/home/u/.config/git"),
                arguments("~/~", HostPath.Anchor.HOME, "~", "/home/u/~"),
                arguments("~/...", HostPath.Anchor.HOME, "...", "/home/u/..."),
                arguments("/opt/tools", HostPath.Anchor.ROOT, "/opt/tools", "/opt/tools"),
                arguments("//opt//tools//", HostPath.Anchor.ROOT, "/opt/tools", "/opt/tools"),
                arguments("/sys", HostPath.Anchor.ROOT, "/sys", "/sys"),
                arguments("/procfs", HostPath.Anchor.ROOT, "/procfs", "/procfs"),
                arguments("/opt/dev", HostPath.Anchor.ROOT, "/opt/dev", "/opt/dev"));
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("accepted")
    void pathIsParsedCanonicallyAndResolved(String text, HostPath.Anchor anchor, String path, String resolved)
            throws Exception {
        HostPath parsed = HostPath.parse(text);
        assertEquals(new HostPath(anchor, Path.of(path)), parsed);
        assertEquals(Path.of(resolved), parsed.resolve(HOME));
        assertEquals(parsed, HostPath.parse(parsed.text()));
    }

    static Stream<Arguments> rejected() {
        return Stream.of(
                arguments("", "empty path"),
                arguments("relative/path", "must be absolute or start with '~/'"),
                arguments("./x", "must be absolute or start with '~/'"),
                arguments("~user", "'~user' is not supported; write '~/' for your own home"),
                arguments("~", "'~' alone would expose the whole home directory"),
                arguments("~/", "'~' alone would expose the whole home directory"),
                arguments("~/.//.", "'~' alone would expose the whole home directory"),
                arguments("/", "'/' would expose the whole file system"),
                arguments("/./", "'/' would expose the whole file system"),
                arguments("~/..", "'..' is not allowed"),
                arguments("~/a/../.ssh", "'..' is not allowed"),
                arguments("/opt/..", "'..' is not allowed"),
                arguments("/proc", "'/proc' is mounted by the jail itself"),
                arguments("/proc/self/root", "'/proc' is mounted by the jail itself"),
                arguments("//dev/shm", "'/dev' is mounted by the jail itself"),
                arguments("/opt/a\0b", "NUL and other control characters are not allowed"),
                arguments("~/a\nb", "NUL and other control characters are not allowed"));
    }

    @ParameterizedTest(name = "[{index}] {1}")
    @MethodSource("rejected")
    void badPathIsRefusedWithAReason(String text, String reason) {
        MalformedEntryException e = assertThrows(MalformedEntryException.class, () -> HostPath.parse(text));
        assertEquals(reason, e.getMessage());
    }

    @Test
    void constructorKeepsTheInvariants() {
        assertThrows(IllegalArgumentException.class, () -> new HostPath(HostPath.Anchor.HOME, Path.of("/etc")));
        assertThrows(IllegalArgumentException.class, () -> new HostPath(HostPath.Anchor.ROOT, Path.of("etc")));
        assertThrows(IllegalArgumentException.class, () -> new HostPath(HostPath.Anchor.ROOT, Path.of("/")));
        assertThrows(IllegalArgumentException.class, () -> new HostPath(HostPath.Anchor.HOME, Path.of("")));
        assertThrows(IllegalArgumentException.class, () -> new HostPath(HostPath.Anchor.HOME, Path.of("a/../b")));
        assertThrows(IllegalArgumentException.class, () -> new HostPath(HostPath.Anchor.HOME, Path.of("./a")));
        assertThrows(IllegalArgumentException.class, () -> new HostPath(HostPath.Anchor.ROOT, Path.of("/dev/kvm")));
        assertThrows(NullPointerException.class, () -> new HostPath(null, Path.of("a")));
    }

    @Test
    void resolveNeedsAnAbsoluteHome() throws Exception {
        HostPath path = HostPath.parse("~/.claude");
        assertThrows(IllegalArgumentException.class, () -> path.resolve(Path.of("home/u")));
        assertEquals("~/.claude", path.text());
        assertEquals("/opt/x", HostPath.parse("/opt/x/").text());
    }
}

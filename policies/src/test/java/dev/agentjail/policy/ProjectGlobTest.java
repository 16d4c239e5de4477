package dev.agentjail.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class ProjectGlobTest {
    /** Pattern, relative path, whether it matches. */
    static Stream<Arguments> matching() {
        return Stream.of(
                // anchored at the project directory
                arguments(".env", ".env", true),
                arguments(".env", "app/.env", false),
                arguments(".env", ".env.local", false),
                arguments("**/.env", ".env", true),
                arguments("**/.env", "app/web/.env", true),
                arguments("Makefile", "Makefile", true),
                arguments("Makefile", "sub/Makefile", false),
                // '*' and '?' stay within a segment; '*' includes dot files
                arguments(".env.*", ".env.local", true),
                arguments(".env.*", ".env.", true),
                arguments(".env.*", ".env", false),
                arguments("*.pem", "server.pem", true),
                arguments("*.pem", ".pem", true),
                arguments("*.pem", "certs/server.pem", false),
                arguments("*.pem", "server.pem.bak", false),
                arguments("*", "anything", true),
                arguments("*", "a/b", false),
                arguments("key?.pem", "key1.pem", true),
                arguments("key?.pem", "key.pem", false),
                arguments("key?.pem", "key12.pem", false),
                arguments("a*b*c", "abc", true),
                arguments("a*b*c", "axxbyyc", true),
                arguments("a*b*c", "axxbyy", false),
                arguments("*a", "bab", false),
                arguments("*a", "baba", true),
                // '**' is zero or more whole segments
                arguments("secrets/**", "secrets", true),
                arguments("secrets/**", "secrets/a", true),
                arguments("secrets/**", "secrets/a/b/.hidden", true),
                arguments("secrets/**", "other/secrets/a", false),
                arguments("secrets/**", "secretsx/a", false),
                arguments("**", "", true),
                arguments("**", "a/b/c", true),
                arguments("a/**/b", "a/b", true),
                arguments("a/**/b", "a/x/y/b", true),
                arguments("a/**/b", "a/x/y/c", false),
                arguments("**/config/*.json", "x/config/a.json", true),
                arguments("**/config/*.json", "config/a.json", true),
                arguments("**/config/*.json", "config/sub/a.json", false),
                arguments(".claude/settings*.json", ".claude/settings.local.json", true),
                arguments(".git/hooks", ".git/hooks", true),
                arguments(".git/hooks", ".git/hooks/pre-commit", false));
    }

    @ParameterizedTest(name = "[{index}] {0} ~ {1}: {2}")
    @MethodSource("matching")
    void globMatchesRelativePaths(String pattern, String path, boolean expected) throws Exception {
        ProjectGlob glob = ProjectGlob.parse(pattern);
        assertEquals(expected, glob.matches(path));
        assertEquals(expected, glob.matches(Path.of(path)));
    }

    static Stream<Arguments> rejected() {
        return Stream.of(
                arguments("", "empty pattern"),
                arguments("/", "must be relative to the project directory (no leading '/')"),
                arguments("/etc/passwd", "must be relative to the project directory (no leading '/')"),
                arguments("..", "'..' is not allowed"),
                arguments("a/../b", "'..' is not allowed"),
                arguments("a/..", "'..' is not allowed"),
                arguments(".", "'.' segments are not allowed; write the path without './'"),
                arguments("a/./b", "'.' segments are not allowed; write the path without './'"),
                arguments("a//b", "empty path segment"),
                arguments("a//", "empty path segment"),
                arguments("!a", "negation ('!') is not supported"),
                arguments("[ab]", "character classes, braces and escapes are not supported"),
                arguments("a]", "character classes, braces and escapes are not supported"),
                arguments("{a,b}", "character classes, braces and escapes are not supported"),
                arguments("a\\*", "character classes, braces and escapes are not supported"),
                arguments("**.pem", "'**' must be a whole path segment"),
                arguments("a/***", "'**' must be a whole path segment"),
                arguments("a\0b", "NUL and other control characters are not allowed"));
    }

    @ParameterizedTest(name = "[{index}] {0}: {1}")
    @MethodSource("rejected")
    void badGlobIsRefusedWithAReason(String pattern, String reason) {
        MalformedEntryException e = assertThrows(MalformedEntryException.class, () -> ProjectGlob.parse(pattern));
        assertEquals(reason, e.getMessage());
    }

    @Test
    void trailingSlashIsDroppedByParseOnly() throws Exception {
        assertEquals(new ProjectGlob(".vscode"), ProjectGlob.parse(".vscode/"));
        assertThrows(IllegalArgumentException.class, () -> new ProjectGlob(".vscode/"));
        assertThrows(IllegalArgumentException.class, () -> new ProjectGlob("../x"));
    }

    @Test
    void literalPatternsAreRecognised() throws Exception {
        assertEquals(true, ProjectGlob.parse(".git/config").isLiteral());
        assertEquals(false, ProjectGlob.parse("*.pem").isLiteral());
        assertEquals(false, ProjectGlob.parse("key?").isLiteral());
    }

    @Test
    void absolutePathsAreNotProjectPaths() throws Exception {
        ProjectGlob glob = ProjectGlob.parse("**");
        assertThrows(IllegalArgumentException.class, () -> glob.matches(Path.of("/etc/passwd")));
        assertEquals(true, glob.matches(Path.of("")));
    }

    @Test
    @Timeout(5)
    void manyStarsStayCheap() throws Exception {
        ProjectGlob glob = ProjectGlob.parse("**/**/**/**/**/**/**/**/*a*a*a*a*a*a*a*a*b");
        String path = String.join("/", java.util.Collections.nCopies(200, "a".repeat(200)));
        assertEquals(false, glob.matches(path));
    }
}

package dev.agentjail.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class FilesystemSectionTest {
    private static FilesystemPolicy load(String section) throws PolicyException {
        return PolicyLoader.parse("version: 1\nfilesystem:\n" + section, "p.yaml")
                .filesystem();
    }

    @Test
    void pathsAreCanonicalised() throws Exception {
        FilesystemPolicy filesystem = load("""
                  read: ["~//.config/./git/", "/opt/tools/", "~/caf\u00e9"]
                  write:
                    - ~/.cache/pip
                  mask: ["secrets/"]
                """);
        assertEquals(
                List.of("~/.config/git", "/opt/tools", "~/caf\u00e9"),
                filesystem.read().stream().map(HostPath::text).toList());
        assertEquals(List.of(HostPath.parse("~/.cache/pip")), filesystem.write());
        assertEquals(List.of(new ProjectGlob("secrets")), filesystem.mask());
        assertEquals(List.of(), filesystem.protectedPaths());
    }

    @Test
    void credentialPathsCanBeNamed() throws Exception {
        FilesystemPolicy filesystem = load("  read: [\"~/.ssh/known_hosts\", \"~/.gnupg\"]\n  write: [\"~/.kube\"]\n");
        assertEquals(List.of(HostPath.parse("~/.ssh/known_hosts"), HostPath.parse("~/.gnupg")), filesystem.read());
        assertEquals(List.of(HostPath.parse("~/.kube")), filesystem.write());
    }

    /** Each bad entry and the exact message: FILE:LINE: KEY: problem. */
    static Stream<Arguments> badSections() {
        return Stream.of(
                // keys and shapes
                arguments("  reed: []\n", "p.yaml:3: filesystem.reed: unknown key 'reed' (did you mean 'read'?)"),
                arguments(
                        "  protect: []\n",
                        "p.yaml:3: filesystem.protect: unknown key 'protect' (did you mean 'protected'?)"),
                arguments(
                        "  hide: []\n",
                        "p.yaml:3: filesystem.hide: unknown key 'hide' (expected one of: deny, mask, protected,"
                                + " read, write)"),
                arguments("  - ~/.x\n", "p.yaml:3: filesystem: expected a mapping, got a list"),
                arguments("  read: ~/.gitconfig\n", "p.yaml:3: filesystem.read: expected a list, got '~/.gitconfig'"),
                arguments("  read: [[a]]\n", "p.yaml:3: filesystem.read[0]: expected a string, got a list"),
                arguments("  write:\n    -\n", "p.yaml:4: filesystem.write[0]: expected a string, got null"),
                // host paths: absolute or ~/, never the whole home or root, no '..'
                arguments(
                        "  read: [.gitconfig]\n",
                        "p.yaml:3: filesystem.read[0]: invalid path '.gitconfig': must be absolute or start with '~/'"),
                arguments(
                        "  read: [$HOME/.x]\n",
                        "p.yaml:3: filesystem.read[0]: invalid path '$HOME/.x': must be absolute or start with '~/'"),
                arguments("  read: [\"\"]\n", "p.yaml:3: filesystem.read[0]: invalid path '': empty path"),
                arguments(
                        "  read: [\"~\"]\n",
                        "p.yaml:3: filesystem.read[0]: invalid path '~': '~' alone would expose the whole home"
                                + " directory"),
                arguments(
                        "  write: [\"~/./\"]\n",
                        "p.yaml:3: filesystem.write[0]: invalid path '~/./': '~' alone would expose the whole home"
                                + " directory"),
                arguments(
                        "  read: [/]\n",
                        "p.yaml:3: filesystem.read[0]: invalid path '/': '/' would expose the whole file system"),
                arguments(
                        "  write: [//]\n",
                        "p.yaml:3: filesystem.write[0]: invalid path '//': '/' would expose the whole file system"),
                arguments(
                        "  read: [\"~/../etc\"]\n",
                        "p.yaml:3: filesystem.read[0]: invalid path '~/../etc': '..' is not allowed"),
                arguments(
                        "  read: [/opt/tools/../../etc]\n",
                        "p.yaml:3: filesystem.read[0]: invalid path '/opt/tools/../../etc': '..' is not allowed"),
                arguments(
                        "  read: [\"~root/.ssh\"]\n",
                        "p.yaml:3: filesystem.read[0]: invalid path '~root/.ssh': '~user' is not supported; write"
                                + " '~/' for your own home"),
                arguments(
                        "  read: [/proc/1/root]\n",
                        "p.yaml:3: filesystem.read[0]: invalid path '/proc/1/root': '/proc' is mounted by the jail"
                                + " itself"),
                arguments(
                        "  write: [/dev]\n",
                        "p.yaml:3: filesystem.write[0]: invalid path '/dev': '/dev' is mounted by the jail itself"),
                arguments(
                        "  read: [\"~/a\\0b\"]\n",
                        "p.yaml:3: filesystem.read[0]: invalid path '~/a\\x00b': NUL and other control characters"
                                + " are not allowed"),
                // a host path is bound once: read-only or read-write
                arguments(
                        "  read: [/opt/x, \"/opt//x/\"]\n",
                        "p.yaml:3: filesystem.read[1]: '/opt/x' is already listed at filesystem.read[0]"),
                arguments(
                        "  read: [\"~/.claude\"]\n  write:\n    - ~/.cache\n    - ~/.claude/\n",
                        "p.yaml:6: filesystem.write[1]: '~/.claude' is already listed at filesystem.read[0]"),
                // project globs: relative, no '..', no syntax we do not implement
                arguments(
                        "  mask: [/etc/passwd]\n",
                        "p.yaml:3: filesystem.mask[0]: invalid pattern '/etc/passwd': must be relative to the project"
                                + " directory (no leading '/')"),
                arguments(
                        "  mask: [/]\n",
                        "p.yaml:3: filesystem.mask[0]: invalid pattern '/': must be relative to the project directory"
                                + " (no leading '/')"),
                arguments("  mask: [\"\"]\n", "p.yaml:3: filesystem.mask[0]: invalid pattern '': empty pattern"),
                arguments(
                        "  mask: [../.env]\n",
                        "p.yaml:3: filesystem.mask[0]: invalid pattern '../.env': '..' is not allowed"),
                arguments(
                        "  protected: [a/../../b]\n",
                        "p.yaml:3: filesystem.protected[0]: invalid pattern 'a/../../b': '..' is not allowed"),
                arguments(
                        "  mask: [./.env]\n",
                        "p.yaml:3: filesystem.mask[0]: invalid pattern './.env': '.' segments are not allowed; write"
                                + " the path without './'"),
                arguments(
                        "  mask: [a//b]\n", "p.yaml:3: filesystem.mask[0]: invalid pattern 'a//b': empty path segment"),
                arguments(
                        "  mask: [\"[ab].pem\"]\n",
                        "p.yaml:3: filesystem.mask[0]: invalid pattern '[ab].pem': character classes, braces and"
                                + " escapes are not supported"),
                arguments(
                        "  mask: [\"*.{pem,key}\"]\n",
                        "p.yaml:3: filesystem.mask[0]: invalid pattern '*.{pem,key}': character classes, braces and"
                                + " escapes are not supported"),
                arguments(
                        "  protected: [\"!Makefile\"]\n",
                        "p.yaml:3: filesystem.protected[0]: invalid pattern '!Makefile': negation ('!') is not"
                                + " supported"),
                arguments(
                        "  mask: [\"secrets**\"]\n",
                        "p.yaml:3: filesystem.mask[0]: invalid pattern 'secrets**': '**' must be a whole path"
                                + " segment"),
                arguments(
                        "  mask: [\"a\\tb\"]\n",
                        "p.yaml:3: filesystem.mask[0]: invalid pattern 'a\\x09b': NUL and other control characters"
                                + " are not allowed"),
                arguments(
                        "  protected: [.vscode, .vscode/]\n",
                        "p.yaml:3: filesystem.protected[1]: '.vscode' is already listed at filesystem.protected[0]"),
                arguments("  protected: .git\n", "p.yaml:3: filesystem.protected: expected a list, got '.git'"));
    }

    @ParameterizedTest(name = "[{index}] {1}")
    @MethodSource("badSections")
    void badSectionIsRefusedWithFileLineAndKey(String section, String message) {
        PolicyException e = assertThrows(PolicyException.class, () -> load(section));
        assertEquals(message, e.getMessage());
    }
}

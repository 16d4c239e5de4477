package dev.agentjail.jail;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.jail.HostLayout.RootLink;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;

class BwrapCommandTest {
    private static final HostLayout MERGED_USR = new HostLayout(
            List.of(Path.of("/usr")),
            List.of(new RootLink(Path.of("/bin"), "usr/bin"), new RootLink(Path.of("/lib"), "usr/lib")),
            List.of(Path.of("/etc/ssl/certs")));
    private static final SessionFiles FILES =
            new SessionFiles(Path.of("/s/empty"), Path.of("/s/passwd"), Path.of("/s/group"), Path.of("/s/hosts"));
    private static final Limits LIMITS = new Limits(1024, 512, Limits.UNLIMITED, 1 << 20, 100, 200, 50);

    @Test
    void rootLauncherWithDefaults() {
        Map<String, String> env = new LinkedHashMap<>();
        env.put("PATH", "/usr/bin:/bin");
        env.put("HTTPS_PROXY", "http://127.0.0.1:3128");
        env.put("HOME", "/root");
        JailSpec spec = new JailSpec(
                Path.of("/usr/bin/bwrap"),
                Path.of("/root/.cache/agentjail/agentjail-init-linux-x86_64-0123456789abcdef"),
                MERGED_USR,
                FILES,
                Path.of("/root/src/app"),
                Path.of("/root"),
                List.of(),
                List.of(),
                List.of(),
                List.of(),
                "agentjail",
                env,
                true,
                Path.of("/run/user/0/agentjail-x/handoff.sock"),
                3128,
                Optional.empty(),
                LIMITS,
                Identity.forOutsideUid(0),
                3,
                OptionalInt.empty(),
                List.of("claude"),
                List.of());

        assertEquals(
                List.of(
                        "/usr/bin/bwrap",
                        "--unshare-user",
                        "--unshare-pid",
                        "--unshare-ipc",
                        "--unshare-uts",
                        "--unshare-net",
                        "--as-pid-1",
                        "--unshare-cgroup-try",
                        "--uid",
                        "1000",
                        "--gid",
                        "1000",
                        "--die-with-parent",
                        "--new-session",
                        "--cap-drop",
                        "ALL",
                        "--hostname",
                        "agentjail",
                        "--clearenv",
                        "--setenv",
                        "HOME",
                        "/root",
                        "--setenv",
                        "HTTPS_PROXY",
                        "http://127.0.0.1:3128",
                        "--setenv",
                        "PATH",
                        "/usr/bin:/bin",
                        "--ro-bind-try",
                        "/usr",
                        "/usr",
                        "--symlink",
                        "usr/bin",
                        "/bin",
                        "--symlink",
                        "usr/lib",
                        "/lib",
                        "--ro-bind-try",
                        "/etc/ssl/certs",
                        "/etc/ssl/certs",
                        "--ro-bind",
                        "/s/passwd",
                        "/etc/passwd",
                        "--ro-bind",
                        "/s/group",
                        "/etc/group",
                        "--ro-bind",
                        "/s/hosts",
                        "/etc/hosts",
                        "--proc",
                        "/proc",
                        "--dev",
                        "/dev",
                        "--size",
                        "50",
                        "--perms",
                        "1777",
                        "--tmpfs",
                        "/dev/shm",
                        "--size",
                        "100",
                        "--perms",
                        "1777",
                        "--tmpfs",
                        "/tmp",
                        "--size",
                        "200",
                        "--perms",
                        "0700",
                        "--tmpfs",
                        "/root",
                        "--bind",
                        "/root/src/app",
                        "/root/src/app",
                        "--ro-bind",
                        "/root/.cache/agentjail/agentjail-init-linux-x86_64-0123456789abcdef",
                        "/run/agentjail/agentjail-init",
                        "--ro-bind",
                        "/run/user/0/agentjail-x/handoff.sock",
                        "/run/agentjail/handoff.sock",
                        "--remount-ro",
                        "/dev",
                        "--remount-ro",
                        "/",
                        "--chdir",
                        "/root/src/app",
                        "--",
                        "/run/agentjail/agentjail-init",
                        "jail",
                        "--port",
                        "3128",
                        "--handoff",
                        "/run/agentjail/handoff.sock",
                        "--audit",
                        "none",
                        "--seccomp-fd",
                        "3",
                        "--nofile",
                        "1024",
                        "--nproc",
                        "512",
                        "--as",
                        "unlimited",
                        "--fsize",
                        "1048576",
                        "--",
                        "claude"),
                BwrapCommand.argv(spec));
    }

    @Test
    void userLauncherWithPolicyBindsProtectionsAndMasks() {
        JailSpec spec = new JailSpec(
                Path.of("/usr/bin/bwrap"),
                Path.of("/c/init"),
                new HostLayout(List.of(Path.of("/usr"), Path.of("/lib64")), List.of(), List.of()),
                FILES,
                Path.of("/home/u/p"),
                Path.of("/home/u"),
                List.of(
                        new HomeEntry(Path.of(".gitconfig"), Access.READ_ONLY),
                        new HomeEntry(Path.of(".cache/pip"), Access.READ_WRITE)),
                List.of(
                        new Bind(Path.of("/s/ca.pem"), Path.of("/etc/agentjail/ca.pem"), Access.READ_ONLY, false),
                        new Bind(Path.of("/opt/sdk"), Path.of("/opt/sdk"), Access.READ_WRITE, true)),
                List.of(
                        new ProtectedPath(Path.of(".git/hooks"), ProtectedPath.State.EXISTS),
                        new ProtectedPath(Path.of(".mcp.json"), ProtectedPath.State.MISSING_FILE),
                        new ProtectedPath(Path.of(".vscode"), ProtectedPath.State.MISSING_DIR)),
                List.of(Path.of("/home/u/p/.env")),
                "box",
                Map.of("TERM", "xterm"),
                false,
                Path.of("/run/user/1000/a/h.sock"),
                40000,
                Optional.of(new TrustFiles(
                        Path.of("/run/user/1000/a/ca-bundle.pem"), Path.of("/run/user/1000/a/truststore.p12"))),
                LIMITS,
                Optional.empty(),
                3,
                OptionalInt.of(5),
                List.of("sh", "-c", "exit 7"),
                List.of());

        List<String> expected = new ArrayList<>(List.of(
                "/usr/bin/bwrap",
                "--unshare-user",
                "--unshare-pid",
                "--unshare-ipc",
                "--unshare-uts",
                "--unshare-net",
                "--as-pid-1",
                "--unshare-cgroup-try",
                "--die-with-parent",
                "--cap-drop",
                "ALL",
                "--hostname",
                "box",
                "--clearenv",
                "--setenv",
                "TERM",
                "xterm",
                "--json-status-fd",
                "5",
                "--ro-bind-try",
                "/usr",
                "/usr",
                "--ro-bind-try",
                "/lib64",
                "/lib64",
                "--ro-bind",
                "/s/passwd",
                "/etc/passwd",
                "--ro-bind",
                "/s/group",
                "/etc/group",
                "--ro-bind",
                "/s/hosts",
                "/etc/hosts",
                "--proc",
                "/proc",
                "--dev",
                "/dev",
                "--size",
                "50",
                "--perms",
                "1777",
                "--tmpfs",
                "/dev/shm",
                "--size",
                "100",
                "--perms",
                "1777",
                "--tmpfs",
                "/tmp",
                "--size",
                "200",
                "--perms",
                "0700",
                "--tmpfs",
                "/home/u",
                "--ro-bind-try",
                "/home/u/.gitconfig",
                "/home/u/.gitconfig",
                "--bind-try",
                "/home/u/.cache/pip",
                "/home/u/.cache/pip",
                "--bind",
                "/home/u/p",
                "/home/u/p",
                "--ro-bind",
                "/s/ca.pem",
                "/etc/agentjail/ca.pem",
                "--bind-try",
                "/opt/sdk",
                "/opt/sdk",
                "--ro-bind",
                "/home/u/p/.git/hooks",
                "/home/u/p/.git/hooks",
                "--ro-bind",
                "/s/empty",
                "/home/u/p/.mcp.json",
                "--perms",
                "0555",
                "--tmpfs",
                "/home/u/p/.vscode",
                "--remount-ro",
                "/home/u/p/.vscode",
                "--ro-bind",
                "/s/empty",
                "/home/u/p/.env",
                "--ro-bind",
                "/c/init",
                "/run/agentjail/agentjail-init",
                "--ro-bind",
                "/run/user/1000/a/h.sock",
                "/run/agentjail/handoff.sock",
                "--ro-bind",
                "/run/user/1000/a/ca-bundle.pem",
                "/run/agentjail/ca-bundle.pem",
                "--ro-bind",
                "/run/user/1000/a/truststore.p12",
                "/run/agentjail/truststore.p12",
                "--remount-ro",
                "/dev",
                "--remount-ro",
                "/",
                "--chdir",
                "/home/u/p",
                "--"));
        expected.addAll(InitCommand.jail(
                JailPaths.INIT,
                40000,
                JailPaths.HANDOFF_SOCKET,
                AuditScope.NONE,
                3,
                LIMITS,
                List.of("sh", "-c", "exit 7")));
        assertEquals(expected, BwrapCommand.argv(spec));
        int separator = expected.indexOf("--");
        assertEquals(expected.subList(1, separator), BwrapCommand.options(spec));
        assertEquals(expected.subList(separator + 1, expected.size()), BwrapCommand.command(spec));
    }

    @Test
    void aHomeEntryWithAResolvedSourceIsBoundFromItAtItsOwnPath() {
        JailSpec spec = withBinds(
                List.of(new HomeEntry(
                        Path.of(".gitconfig"), Access.READ_ONLY, Optional.of(Path.of("/home/u/dotfiles/gitconfig")))),
                List.of());
        List<String> options = BwrapCommand.options(spec);
        int at = options.indexOf("/home/u/dotfiles/gitconfig");
        assertEquals(
                List.of("--ro-bind-try", "/home/u/dotfiles/gitconfig", "/home/u/.gitconfig"),
                options.subList(at - 1, at + 2));
        assertTrue(BwrapCommand.bindSources(spec).contains(Path.of("/home/u/dotfiles/gitconfig")));
        assertFalse(BwrapCommand.bindSources(spec).contains(Path.of("/home/u/.gitconfig")));
    }

    @Test
    void bindsOfPathsAnAgentCouldChangeCanComeFromDescriptorsInTheOrderOfTheirSources() {
        JailSpec base = withBinds(
                List.of(
                        new HomeEntry(Path.of(".gitconfig"), Access.READ_ONLY),
                        new HomeEntry(
                                Path.of(".local/bin/tool"),
                                Access.READ_ONLY,
                                Optional.of(Path.of("/home/u/.local/share/tool/1.0"))),
                        new HomeEntry(Path.of(".cache/pip"), Access.READ_WRITE)),
                List.of(
                        new Bind(Path.of("/opt/sdk-1.2"), Path.of("/opt/sdk"), Access.READ_WRITE, true),
                        new Bind(Path.of("/s/ca.pem"), Path.of("/etc/ca.pem"), Access.READ_ONLY, false)));
        JailSpec spec = withProtections(
                base,
                List.of(
                        new ProtectedPath(Path.of(".git/hooks"), ProtectedPath.State.EXISTS),
                        new ProtectedPath(Path.of(".mcp.json"), ProtectedPath.State.MISSING_FILE)));

        List<String> byPath = BwrapCommand.options(spec);
        BwrapCommand.WithDescriptors byFd = BwrapCommand.options(spec, 9);

        assertEquals(
                List.of(
                        Path.of("/home/u/.gitconfig"),
                        Path.of("/home/u/.local/share/tool/1.0"),
                        Path.of("/home/u/.cache/pip"),
                        Path.of("/opt/sdk-1.2"),
                        Path.of("/s/ca.pem"),
                        Path.of("/home/u/p/.git/hooks")),
                byFd.sources());
        List<List<String>> replaced = List.of(
                List.of("--ro-bind-try", "/home/u/.gitconfig", "/home/u/.gitconfig"),
                List.of("--ro-bind-try", "/home/u/.local/share/tool/1.0", "/home/u/.local/bin/tool"),
                List.of("--bind-try", "/home/u/.cache/pip", "/home/u/.cache/pip"),
                List.of("--bind-try", "/opt/sdk-1.2", "/opt/sdk"),
                List.of("--ro-bind", "/s/ca.pem", "/etc/ca.pem"),
                List.of("--ro-bind", "/home/u/p/.git/hooks", "/home/u/p/.git/hooks"));
        List<List<String>> withFds = List.of(
                List.of("--ro-bind-fd", "9", "/home/u/.gitconfig"),
                List.of("--ro-bind-fd", "10", "/home/u/.local/bin/tool"),
                List.of("--bind-fd", "11", "/home/u/.cache/pip"),
                List.of("--bind-fd", "12", "/opt/sdk"),
                List.of("--ro-bind-fd", "13", "/etc/ca.pem"),
                List.of("--ro-bind-fd", "14", "/home/u/p/.git/hooks"));
        List<String> expected = new ArrayList<>(byPath);
        for (int i = 0; i < replaced.size(); i++) {
            int at = java.util.Collections.indexOfSubList(expected, replaced.get(i));
            assertTrue(at >= 0, () -> "missing from the path form: " + byPath);
            for (int j = 0; j < 3; j++) {
                expected.set(at + j, withFds.get(i).get(j));
            }
        }
        assertEquals(expected, byFd.options());
        // The missing protected path's placeholder is the session's own empty file, bound by path.
        assertTrue(java.util.Collections.indexOfSubList(
                        byFd.options(), List.of("--ro-bind", FILES.emptyFile().toString(), "/home/u/p/.mcp.json"))
                >= 0);
        assertThrows(IllegalArgumentException.class, () -> BwrapCommand.options(spec, 2));
    }

    @Test
    void bindSourcesAreReadBackFromTheArgv() {
        JailSpec spec = withBinds(
                List.of(new HomeEntry(Path.of(".gitconfig"), Access.READ_ONLY)),
                List.of(new Bind(Path.of("/opt/sdk"), Path.of("/sdk"), Access.READ_WRITE, true)));
        assertEquals(
                List.of(
                        Path.of("/usr"),
                        Path.of("/etc/ssl/certs"),
                        Path.of("/s/passwd"),
                        Path.of("/s/group"),
                        Path.of("/s/hosts"),
                        Path.of("/home/u/.gitconfig"),
                        Path.of("/home/u/p"),
                        Path.of("/opt/sdk"),
                        Path.of("/c/init"),
                        Path.of("/r/h.sock"),
                        Path.of("/r/ca-bundle.pem"),
                        Path.of("/r/truststore.p12")),
                BwrapCommand.bindSources(spec));
        assertEquals(List.of(Path.of("/home/u/p"), Path.of("/opt/sdk")), BwrapCommand.writableBindSources(spec));
    }

    @Test
    void noBindSourceIsInsideTheCaDirectoryOfAnOrdinaryJail() {
        Path caDir = Path.of("/home/u/.local/share/agentjail/ca");
        JailSpec spec = withBinds(
                List.of(
                        new HomeEntry(Path.of(".gitconfig"), Access.READ_ONLY),
                        new HomeEntry(Path.of(".local/share/pnpm"), Access.READ_WRITE)),
                List.of(new Bind(Path.of("/opt/sdk"), Path.of("/opt/sdk"), Access.READ_ONLY, true)));
        assertTrue(BwrapCommand.bindSources(spec).stream().noneMatch(source -> source.startsWith(caDir)));
        assertEquals(Optional.empty(), BwrapCommand.exposing(spec, caDir));
    }

    @Test
    void aBindOfTheCaDirectoryItsKeyOrAParentExposesIt() {
        Path caDir = Path.of("/home/u/.local/share/agentjail/ca");
        assertEquals(
                Optional.of(Path.of("/home/u/.local/share")),
                BwrapCommand.exposing(
                        withBinds(List.of(new HomeEntry(Path.of(".local/share"), Access.READ_ONLY)), List.of()),
                        caDir));
        assertEquals(
                Optional.of(caDir.resolve("ca-key.pem")),
                BwrapCommand.exposing(
                        withBinds(
                                List.of(),
                                List.of(new Bind(
                                        caDir.resolve("ca-key.pem"), Path.of("/k.pem"), Access.READ_ONLY, false))),
                        caDir));
        // A CA directory inside the project is bound with it.
        assertEquals(
                Optional.of(Path.of("/home/u/p")),
                BwrapCommand.exposing(withBinds(List.of(), List.of()), Path.of("/home/u/p/.ca")));
        // A sibling whose name merely starts with the same characters is not inside.
        assertEquals(
                Optional.empty(),
                BwrapCommand.exposing(
                        withBinds(
                                List.of(new HomeEntry(Path.of(".local/share/agentjail/cache"), Access.READ_ONLY)),
                                List.of()),
                        caDir));
    }

    @Test
    void refusesAProjectThatContainsTheHome() {
        IllegalArgumentException e = assertThrows(
                IllegalArgumentException.class, () -> withProjectAndHome(Path.of("/home"), Path.of("/home/u")));
        assertTrue(e.getMessage().contains("must not be / or contain the home"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> withProjectAndHome(Path.of("/home/u"), Path.of("/home/u")));
        assertThrows(IllegalArgumentException.class, () -> withProjectAndHome(Path.of("/"), Path.of("/home/u")));
        withProjectAndHome(Path.of("/home/u2"), Path.of("/home/u"));
    }

    @Test
    void refusesRelativeOrUnnormalizedPaths() {
        assertThrows(IllegalArgumentException.class, () -> withProjectAndHome(Path.of("p"), Path.of("/home/u")));
        assertThrows(
                IllegalArgumentException.class, () -> withProjectAndHome(Path.of("/home/u/../x"), Path.of("/home/u")));
        assertThrows(IllegalArgumentException.class, () -> new HomeEntry(Path.of("../.ssh"), Access.READ_ONLY));
        assertThrows(IllegalArgumentException.class, () -> new HomeEntry(Path.of("/root/.ssh"), Access.READ_ONLY));
    }

    @Test
    void refusesBadEnvironmentNamesAndValues() {
        assertThrows(IllegalArgumentException.class, () -> withEnv(Map.of("A=B", "x")));
        assertThrows(IllegalArgumentException.class, () -> withEnv(Map.of("A", "x\0y")));
        assertEquals(
                List.of("A", "B", "C"),
                List.copyOf(withEnv(Map.of("C", "", "A", "", "B", "")).env().keySet()));
    }

    private static JailSpec withBinds(List<HomeEntry> homeEntries, List<Bind> binds) {
        return new JailSpec(
                Path.of("/usr/bin/bwrap"),
                Path.of("/c/init"),
                new HostLayout(List.of(Path.of("/usr")), List.of(), List.of(Path.of("/etc/ssl/certs"))),
                FILES,
                Path.of("/home/u/p"),
                Path.of("/home/u"),
                homeEntries,
                binds,
                List.of(),
                List.of(),
                "agentjail",
                Map.of(),
                true,
                Path.of("/r/h.sock"),
                3128,
                Optional.of(new TrustFiles(Path.of("/r/ca-bundle.pem"), Path.of("/r/truststore.p12"))),
                Limits.DEFAULTS,
                Optional.empty(),
                3,
                OptionalInt.empty(),
                List.of("true"),
                List.of());
    }

    private static JailSpec withProtections(JailSpec s, List<ProtectedPath> protectedPaths) {
        return new JailSpec(
                s.bwrap(),
                s.initBinary(),
                s.hostLayout(),
                s.sessionFiles(),
                s.project(),
                s.home(),
                s.homeEntries(),
                s.extraBinds(),
                protectedPaths,
                s.maskedFiles(),
                s.hostname(),
                s.env(),
                s.newSession(),
                s.handoffSocket(),
                s.port(),
                s.trust(),
                s.limits(),
                s.identity(),
                s.seccompFd(),
                s.statusFd(),
                s.command(),
                s.devices());
    }

    private static JailSpec withEnv(Map<String, String> env) {
        return spec(Path.of("/w/p"), Path.of("/home/u"), env);
    }

    private static JailSpec withProjectAndHome(Path project, Path home) {
        return spec(project, home, Map.of());
    }

    private static JailSpec spec(Path project, Path home, Map<String, String> env) {
        return new JailSpec(
                Path.of("/usr/bin/bwrap"),
                Path.of("/c/init"),
                new HostLayout(List.of(), List.of(), List.of()),
                FILES,
                project,
                home,
                List.of(),
                List.of(),
                List.of(),
                List.of(),
                "agentjail",
                env,
                true,
                Path.of("/r/h.sock"),
                3128,
                Optional.empty(),
                Limits.DEFAULTS,
                Optional.empty(),
                3,
                OptionalInt.empty(),
                List.of("true"),
                List.of());
    }
}

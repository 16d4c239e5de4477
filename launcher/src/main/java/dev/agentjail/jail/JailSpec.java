package dev.agentjail.jail;

import java.nio.file.Path;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * Everything that decides the shape of one jail, already resolved against the host, so that {@link
 * BwrapCommand} can turn it into an argv without touching the file system.
 *
 * @param bwrap the bwrap executable
 * @param initBinary the host path of agentjail-init (see {@link InitBinary}), bound read-only at {@link
 *     JailPaths#INIT}
 * @param hostLayout the read-only system part (/usr, /lib*, the minimum of /etc)
 * @param sessionFiles the empty file and the synthetic passwd, group and hosts
 * @param project the project directory, bound read-write at its real path and used as the working directory
 * @param home the home directory inside the jail: an empty tmpfs holding only {@code homeEntries}
 * @param homeEntries paths of the real home made visible below {@code home}
 * @param extraBinds further host paths the policy binds
 * @param protectedPaths project paths made read-only after the project bind (see {@link ProtectedPaths})
 * @param maskedFiles existing files hidden behind the empty read-only file, such as the project's .env
 * @param hostname the jail's hostname
 * @param env the complete environment of the agent (already filtered; the jail starts from an empty one); kept
 *     sorted by name
 * @param newSession detach the agent from the terminal's session ({@code --new-session}); turn off only for a TUI
 *     that needs job control, which the seccomp filter's TIOCSTI/TIOCLINUX block then has to carry alone
 * @param handoffSocket the host path of the proxy's hand-off socket, bound read-only at {@link
 *     JailPaths#HANDOFF_SOCKET}
 * @param port the TCP port agentjail-init listens on inside the jail (127.0.0.1 and [::1])
 * @param trust the CA bundle and JVM trust store bound read-only under /run/agentjail (see {@link TrustFiles});
 *     empty for a jail that trusts only the system roots
 * @param limits rlimits and tmpfs sizes
 * @param identity the uid/gid inside; empty keeps the caller's own ids (see {@link Identity#forOutsideUid})
 * @param seccompFd the descriptor agentjail-init reads the jail's deny filter from ({@code --seccomp-fd}); bwrap
 *     passes it through
 * @param statusFd where bwrap writes its JSON status ({@code --json-status-fd}), which tells a bwrap setup error
 *     apart from the agent's own exit code; empty for none
 * @param command the agent's argv
 * @param devices host device nodes or directories the policy opts into (GPU, camera, audio), bound with device
 *     access at the same path under the jail's minimal /dev; only paths under /dev
 * @param links symbolic links made in the jail after the binds, where nothing is bound (the agent's program where
 *     the jail's PATH finds it, see {@link AgentInstall})
 * @param audit what agentjail-init's notifying filter reports to the host's audit supervisor
 */
public record JailSpec(
        Path bwrap,
        Path initBinary,
        HostLayout hostLayout,
        SessionFiles sessionFiles,
        Path project,
        Path home,
        List<HomeEntry> homeEntries,
        List<Bind> extraBinds,
        List<ProtectedPath> protectedPaths,
        List<Path> maskedFiles,
        String hostname,
        Map<String, String> env,
        boolean newSession,
        Path handoffSocket,
        int port,
        Optional<TrustFiles> trust,
        Limits limits,
        Optional<Identity> identity,
        int seccompFd,
        OptionalInt statusFd,
        List<String> command,
        List<Path> devices,
        List<AgentInstall.Link> links,
        AuditScope audit) {
    private static final Pattern HOSTNAME = Pattern.compile("[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?");
    private static final Pattern ENV_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

    public JailSpec {
        JailPaths.absolute(bwrap, "bwrap");
        JailPaths.absolute(initBinary, "agentjail-init");
        JailPaths.absolute(project, "project directory");
        JailPaths.absolute(home, "home directory");
        JailPaths.absolute(handoffSocket, "hand-off socket");
        maskedFiles.forEach(p -> JailPaths.absolute(p, "masked file"));
        if (hostLayout == null
                || audit == null
                || sessionFiles == null
                || trust == null
                || limits == null
                || identity == null
                || statusFd == null) {
            throw new IllegalArgumentException(
                    "hostLayout, sessionFiles, trust, limits, identity, statusFd and audit are required");
        }
        // The project is bound read-write over the tmpfs home; containing the home would undo the home's emptiness.
        if (project.getNameCount() == 0 || home.startsWith(project)) {
            throw new IllegalArgumentException(
                    "the project directory " + project + " must not be / or contain the home directory " + home);
        }
        if (home.getNameCount() == 0) {
            throw new IllegalArgumentException("the home directory must not be /");
        }
        if (!HOSTNAME.matcher(hostname == null ? "" : hostname).matches()) {
            throw new IllegalArgumentException("invalid hostname: " + hostname);
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("port out of range: " + port);
        }
        if (seccompFd < 3 || statusFd.orElse(3) < 3 || statusFd.orElse(-1) == seccompFd) {
            throw new IllegalArgumentException("seccompFd and statusFd must be distinct descriptors >= 3");
        }
        if (command == null || command.isEmpty()) {
            throw new IllegalArgumentException("the command is empty");
        }
        env = copyEnv(env);
        homeEntries = List.copyOf(homeEntries);
        extraBinds = List.copyOf(extraBinds);
        protectedPaths = List.copyOf(protectedPaths);
        maskedFiles = List.copyOf(maskedFiles);
        command = List.copyOf(command);
        devices = List.copyOf(devices);
        links = List.copyOf(links);
        for (Path device : devices) {
            if (!device.isAbsolute()
                    || !device.normalize().equals(device)
                    || !device.startsWith("/dev")
                    || device.getNameCount() < 2) {
                throw new IllegalArgumentException("a device must be a normalised path below /dev: " + device);
            }
        }
        if (command.stream().anyMatch(arg -> arg.indexOf('\0') >= 0)) {
            throw new IllegalArgumentException("the command contains a NUL byte");
        }
    }

    /** A jail without links of its own. */
    public JailSpec(
            Path bwrap,
            Path initBinary,
            HostLayout hostLayout,
            SessionFiles sessionFiles,
            Path project,
            Path home,
            List<HomeEntry> homeEntries,
            List<Bind> extraBinds,
            List<ProtectedPath> protectedPaths,
            List<Path> maskedFiles,
            String hostname,
            Map<String, String> env,
            boolean newSession,
            Path handoffSocket,
            int port,
            Optional<TrustFiles> trust,
            Limits limits,
            Optional<Identity> identity,
            int seccompFd,
            OptionalInt statusFd,
            List<String> command,
            List<Path> devices) {
        this(
                bwrap,
                initBinary,
                hostLayout,
                sessionFiles,
                project,
                home,
                homeEntries,
                extraBinds,
                protectedPaths,
                maskedFiles,
                hostname,
                env,
                newSession,
                handoffSocket,
                port,
                trust,
                limits,
                identity,
                seccompFd,
                statusFd,
                command,
                devices,
                List.of(),
                AuditScope.NONE);
    }

    private static SortedMap<String, String> copyEnv(Map<String, String> env) {
        // Sorted, so that the argv (and its exact-argv tests) do not depend on map iteration order.
        TreeMap<String, String> copy = new TreeMap<>();
        env.forEach((name, value) -> {
            if (!ENV_NAME.matcher(name).matches()) {
                throw new IllegalArgumentException("invalid environment variable name: " + name);
            }
            if (value.indexOf('\0') >= 0) {
                throw new IllegalArgumentException("environment variable " + name + " contains a NUL byte");
            }
            copy.put(name, value);
        });
        return Collections.unmodifiableSortedMap(copy);
    }
}

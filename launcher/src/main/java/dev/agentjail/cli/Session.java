package dev.agentjail.cli;

import dev.agentjail.jail.Access;
import dev.agentjail.jail.AgentInstall;
import dev.agentjail.jail.AuditScope;
import dev.agentjail.jail.Bind;
import dev.agentjail.jail.BindSources;
import dev.agentjail.jail.BwrapCommand;
import dev.agentjail.jail.BwrapInvocation;
import dev.agentjail.jail.BwrapStatus;
import dev.agentjail.jail.CgroupHost;
import dev.agentjail.jail.GitConfigSurfaces;
import dev.agentjail.jail.GitStages;
import dev.agentjail.jail.HomeEntry;
import dev.agentjail.jail.HomePlaceholders;
import dev.agentjail.jail.HostDevices;
import dev.agentjail.jail.HostLayout;
import dev.agentjail.jail.HostUser;
import dev.agentjail.jail.Identity;
import dev.agentjail.jail.InitBinary;
import dev.agentjail.jail.JailPaths;
import dev.agentjail.jail.JailSpec;
import dev.agentjail.jail.Limits;
import dev.agentjail.jail.LiveGitGuard;
import dev.agentjail.jail.MaskedFiles;
import dev.agentjail.jail.ModeGuard;
import dev.agentjail.jail.OomWatch;
import dev.agentjail.jail.Placeholders;
import dev.agentjail.jail.PreStart;
import dev.agentjail.jail.ProtectedPath;
import dev.agentjail.jail.ProtectedPaths;
import dev.agentjail.jail.Quarantine;
import dev.agentjail.jail.Repositories;
import dev.agentjail.jail.SessionFiles;
import dev.agentjail.jail.SessionLimits;
import dev.agentjail.jail.StateDirs;
import dev.agentjail.jail.SurfaceReview;
import dev.agentjail.jail.TrustFiles;
import dev.agentjail.jail.UnnamedLinkException;
import dev.agentjail.jail.audit.ExecFileAudit;
import dev.agentjail.policy.CredentialPaths;
import dev.agentjail.policy.HostPath;
import dev.agentjail.policy.IoErrors;
import dev.agentjail.policy.Policy;
import dev.agentjail.policy.PolicyDiscovery;
import dev.agentjail.policy.Preset;
import dev.agentjail.policy.Presets;
import dev.agentjail.policy.ProjectGlob;
import dev.agentjail.proxy.ProxyConfig;
import dev.agentjail.proxy.Timeouts;
import dev.agentjail.proxy.audit.AuditRecord;
import dev.agentjail.proxy.audit.AuditUnavailableException;
import dev.agentjail.proxy.audit.FileAuditLog;
import dev.agentjail.proxy.audit.SessionDetails;
import dev.agentjail.proxy.handoff.ListenerHandoff;
import dev.agentjail.proxy.http.HttpLimits;
import dev.agentjail.proxy.inspect.Inspector;
import dev.agentjail.proxy.mcp.host.HostEndpoints;
import dev.agentjail.proxy.net.SystemResolver;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * One jailed session: starts the proxy in this process, hands it the jail's listening socket, starts
 * bwrap, waits for the agent (or the timeout), and writes the session's start and end records.
 */
final class Session {
    private static final int SECCOMP_FD = 3;
    /** How long the audit supervisor waits for the launcher to take a frame before it gives up (closed). */
    private static final int AUDIT_STALL_SECONDS = 30;

    private static final String PRESET_SOURCE = "preset:";
    private static final int STATUS_FD = 4;
    /** How long after the jail starts interception warms up: short commands are over by then. */
    private static final Duration WARM_UP_DELAY = Duration.ofMillis(500);

    private final LoadedPolicy loaded;
    private final Path caDir;
    private final Path project;
    private final Path auditLog;
    private final FileAuditLog.Options auditOptions;
    private final Optional<Path> hmacKey;
    private final int port;
    private final Duration timeout;
    private final List<String> command;
    private final PrintWriter err;
    private final Map<String, String> hostEnv = System.getenv();
    private final String id;
    /** This session's claim on its project (taken by RunCommand before the policy was read). */
    private final PlaceholderJournal.Claim claim;
    /** agentjail-init as extracted in the user's cache (RunCommand's, which holds the project with it). */
    private final Path initBinary;

    private CountingAuditSink audit;
    /** The exec and file audit of the running jail; null when the policy turns both off. */
    private volatile ExecFileAudit execAudit;
    /** Set once a failed audit stops the jail (audit.failure: closed). */
    private volatile boolean auditStop;

    private boolean startRecorded;

    Session(
            LoadedPolicy loaded,
            Path caDir,
            Path project,
            Path auditLog,
            FileAuditLog.Options auditOptions,
            Optional<Path> hmacKey,
            int port,
            Duration timeout,
            List<String> command,
            PrintWriter err,
            PlaceholderJournal.Claim claim,
            Path initBinary) {
        this.claim = claim;
        this.initBinary = initBinary;
        this.id = claim.session();
        this.loaded = loaded;
        this.caDir = caDir;
        this.project = project;
        this.auditLog = auditLog;
        this.auditOptions = auditOptions;
        this.hmacKey = hmacKey;
        this.port = port;
        this.timeout = timeout;
        this.command = command;
        this.err = err;
    }

    int run() throws Exception {
        // From here on Netty and the audit log log: logging must be configured first (see Prewarm).
        Prewarm.awaitLogging();
        Policy policy = loaded.policy();
        Path bwrap = Executables.find("bwrap", hostEnv)
                .orElseThrow(() -> new CliException(
                        ExitCodes.ENVIRONMENT,
                        "bwrap (bubblewrap) not found on PATH; install it, e.g. apt-get install bubblewrap"));
        Path home = Paths.home(hostEnv);
        Optional<HostUser> hostUser;
        try {
            hostUser = HostUser.forProject(
                    Uids.current(), project, Path.of("/etc/passwd"), note -> err.println("agentjail: " + note));
        } catch (IOException e) {
            throw new CliException(ExitCodes.USAGE, IoErrors.describe(e), e);
        }
        // Started by root for a user's project, the jail runs as that user, in that user's home.
        Path jailHome = hostUser.map(HostUser::home).orElse(home);
        if (!jailHome.equals(home)) {
            // The launcher's own home was refused already (RunCommand); the user's is the jail's.
            ProjectDirectories.refuseWhole(project, jailHome);
        }
        refuseCoveredCredentials(policy, jailHome);
        refuseCredentialProject(home);
        if (!jailHome.equals(home)) {
            refuseCredentialProject(jailHome);
        }
        refuseVisibleAuditLog(policy, jailHome);
        for (Path base : SessionDirs.bases(hostEnv)) {
            refuseProjectOverlap(base, "agentjail's session directories", "they hold other sessions' hand-off sockets");
        }
        refuseProjectOverlap(
                Paths.stateHome(hostEnv), "agentjail's state", "it holds the audit log and the trust record");
        refuseProjectOverlap(caDir, "agentjail's CA directory", "it holds the CA's private key");
        refuseProjectOverlap(
                PolicyDiscovery.configDirectory(hostEnv, home),
                "agentjail's user configuration",
                "it holds the policy of every later session");
        refuseProjectOverlap(InitBinary.defaultCacheDir(hostEnv, home), "agentjail's cache", "it runs on the host");
        refuseUnfinishedReview();
        refuseBareRepository();
        // An agent a preset runs is looked for now: where the user installed it is bound in, and a missing one is
        // named before anything starts.
        Optional<AgentInstall.Plan> install = Optional.empty();
        Optional<Preset> agent = agentPreset();
        if (agent.isPresent()) {
            install = Optional.of(findAgent(agent.get(), jailHome));
        }
        InspectionSetup.skippedCredentials(policy, hostEnv).forEach(note -> err.println("agentjail: " + note));
        try (InspectionSetup inspection = InspectionSetup.open(
                policy,
                hostEnv,
                caDir,
                Clock.systemUTC(),
                new SecureRandom(),
                policy.credentials().isEmpty()
                        ? Optional.empty()
                        : Optional.of(CredentialPlaceholders.forProject(caDir, project, new SecureRandom())))) {
            return run(policy, bwrap, home, jailHome, hostUser, inspection, install);
        }
    }

    /**
     * {@code home} is the launcher's (agentjail's own cache and configuration); {@code jailHome} the jail's, where
     * the policy's {@code ~} paths are read from: the same unless root starts the jail as {@code hostUser}.
     */
    private int run(
            Policy policy,
            Path bwrap,
            Path home,
            Path jailHome,
            Optional<HostUser> hostUser,
            InspectionSetup inspection,
            Optional<AgentInstall.Plan> install)
            throws Exception {
        StartupTrace.mark("inspection set up");
        // git's configuration is read by a git process: it starts now and runs while the rest is prepared.
        CompletableFuture<GitConfigSurfaces.Found> gitConfig = CompletableFuture.supplyAsync(
                () -> {
                    try {
                        return GitConfigSurfaces.find(
                                project, project, jailHome, hostEnv.getOrDefault("PATH", "/usr/bin:/bin"), hostEnv);
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                },
                runnable -> Thread.ofVirtual().name("git-config").start(runnable));
        Path sessionDir = hostUser.isPresent()
                ? SessionDirs.createForUser(id, hostUser.get().uid())
                : SessionDirs.create(hostEnv, id);
        FileAuditLog file;
        try {
            file = FileAuditLog.open(auditLog, auditOptions);
        } catch (IOException e) {
            SessionDirs.delete(sessionDir);
            throw new CliException(
                    ExitCodes.ENVIRONMENT,
                    "cannot open audit log " + auditLog + ": " + IoErrors.describe(auditLog, e)
                            + ProxyCommand.auditLogWayOut(e),
                    e);
        }
        audit = new CountingAuditSink(file);
        StartupTrace.mark("audit log open");
        ExecutorService dns = DnsExecutors.create();
        Path handoffSocket = (hostUser.isPresent() ? sessionDir.resolve(SessionDirs.HANDOFF_DIR) : sessionDir)
                .resolve("handoff.sock");
        // The proxy comes up on a thread of its own while this one prepares the jail; bwrap starts once both are done.
        ProxyStart proxy = ProxyStart.begin(
                new ProxyConfig(
                        policy.network(),
                        id,
                        audit,
                        new SystemResolver(dns),
                        HttpLimits.defaults(),
                        Timeouts.defaults(),
                        Clock.systemUTC(),
                        Math.min(2, Runtime.getRuntime().availableProcessors()),
                        inspection.interception(),
                        inspection.inspection(),
                        policy.mcp(),
                        hostEnv),
                handoffSocket,
                port,
                auditScope(policy) == AuditScope.NONE
                        ? null
                        : fd -> {
                            ExecFileAudit taker = execAudit;
                            if (taker == null) {
                                throw new IOException("a seccomp notifier arrived before the audit was ready");
                            }
                            taker.accept(fd);
                        });
        SessionLimits sessionLimits = null;
        OomWatch oomWatch = null;
        List<ProtectedPath> protectedPaths = List.of();
        List<ProtectedPath> homePlaceholders = List.of();
        SurfaceReview review = new SurfaceReview(SurfaceReview.Limits.DEFAULTS, Clock.systemUTC());
        SurfaceReview.Snapshot surfaces = null;
        ModeGuard modes = null;
        LiveGitGuard liveGuard = null;
        GitStages gitStages = null;
        long started = System.nanoTime();
        Integer exitCode = null;
        try {
            Path init = initBinary;
            if (hostUser.isPresent()) {
                // bwrap runs as the jail's user and binds init by path: root's cache is not theirs to search.
                init = InitBinary.copyInto(init, sessionDir);
            }
            int uid = Uids.current();
            Optional<Identity> identity = hostUser.isPresent() ? Optional.empty() : Identity.forOutsideUid(uid);
            int insideUid = hostUser.map(HostUser::uid)
                    .orElseGet(() -> identity.map(Identity::uid).orElse(uid));
            int insideGid = hostUser.map(HostUser::gid)
                    .orElseGet(() -> identity.map(Identity::gid).orElse(Uids.currentGid()));
            String hostname = policy.jail().hostname();
            SessionFiles files = SessionFiles.write(
                    sessionDir,
                    hostUser.map(HostUser::name).orElse(hostEnv.getOrDefault("USER", "agent")),
                    insideUid,
                    insideGid,
                    jailHome,
                    hostname);
            // One walk of the project: the masked files, and the repositories nested in it.
            MaskedFiles.Scan scan = MaskedFiles.scan(
                    project,
                    policy.filesystem().mask().stream()
                            .map(ProjectGlob::pattern)
                            .toList(),
                    MaskedFiles.DEFAULT_MAX_DEPTH,
                    MaskedFiles.DEFAULT_MAX_ENTRIES);
            List<Path> masked = scan.masked();
            for (Path maskedFile : masked) {
                // Another name for a masked file would show its content: the mask hides a path, not the file.
                ProtectedPaths.refuseLinked(project, maskedFile);
            }
            scan.incomplete()
                    .ifPresent(m -> err.println("agentjail: warning: repositories nested in the project were looked for"
                            + " only in part (" + m + "); those past the bound are not read-only in this session"));
            List<String> patterns = protectedPatterns(policy);
            // What each repository's effective git configuration has git run or read from the working tree, on the
            // host.
            List<Repositories.Repository> repositories = Repositories.find(project, scan.nestedGit());
            List<ProtectedPaths.HookDir> hookDirs = new ArrayList<>();
            // Root starting a user's jail: the user's global config and root's both (either may run git there later).
            List<Path> gitHomes = jailHome.equals(home) ? List.of(jailHome) : List.of(jailHome, home);
            for (Repositories.Repository repo : repositories) {
                for (Path gitHome : gitHomes) {
                    GitConfigSurfaces.Found found = repo.worktree().equals(project) && gitHome.equals(jailHome)
                            ? gitConfig(gitConfig)
                            : GitConfigSurfaces.find(
                                    project,
                                    repo.worktree(),
                                    gitHome,
                                    hostEnv.getOrDefault("PATH", "/usr/bin:/bin"),
                                    hostEnv);
                    patterns.addAll(found.patterns());
                    found.hookDirs().forEach(dir -> hookDirs.add(new ProtectedPaths.HookDir(dir, repo.worktree())));
                }
            }
            protectedPaths = ProtectedPaths.resolve(project, patterns, repositories, hookDirs);
            // The jail's git passes over the session's placeholders (git add -A would commit an empty .bashrc).
            Optional<String> exclude = ProtectedPaths.excludeWithPlaceholders(project, protectedPaths);
            if (exclude.isPresent()) {
                Path excludeFile = sessionDir.resolve("git-exclude");
                Files.writeString(excludeFile, exclude.get(), StandardOpenOption.CREATE_NEW);
                Files.setPosixFilePermissions(excludeFile, PosixFilePermissions.fromString("r--r--r--"));
                List<ProtectedPath> withExclude = new ArrayList<>(protectedPaths);
                withExclude.add(new ProtectedPath(
                        Path.of(".git/info/exclude"), ProtectedPath.State.REPLACED, Optional.of(excludeFile)));
                protectedPaths = List.copyOf(withExclude);
            }
            // Each repository metadata directory in the project is read-only as a whole: the jail writes a copy.
            GitStages.Plan staged = GitStages.prepare(
                    project,
                    protectedPaths,
                    repositories,
                    id,
                    hostUser.map(HostUser::uid).orElseGet(Uids::current),
                    hostUser.map(HostUser::gid).orElseGet(Uids::currentGid),
                    m -> {
                        err.println("agentjail: " + LogRecordText.printable(m));
                        err.flush();
                    });
            protectedPaths = staged.protectedPaths();
            gitStages = staged.stages();
            gitStages.startMirror();
            List<Path> stagedDirs =
                    gitStages.staged().stream().map(project::resolve).toList();
            // What cannot be blocked in advance (a new commondir) is moved out the moment it appears, where a
            // metadata directory could not be staged.
            liveGuard = LiveGitGuard.start(
                    project,
                    repositories.stream()
                            .filter(r -> !stagedDirs.contains(
                                    r.gitDir().toAbsolutePath().normalize()))
                            .toList(),
                    ReviewCommand.quarantineDir(hostEnv).resolve(id).resolve("live"),
                    m -> {
                        err.println("agentjail: " + LogRecordText.printable(m));
                        err.flush();
                    });
            if (hostUser.isEmpty() && Uids.current() == 0) {
                // Kernel uid 0 in the jail owns the project's files: what it opens up to other users is taken back.
                try {
                    modes = ModeGuard.recordTree(project, protectedPaths, MaskedFiles.DEFAULT_MAX_ENTRIES);
                } catch (IOException tooLarge) {
                    err.println("agentjail: warning: the project is too large to check every file's permissions after"
                            + " the session (" + tooLarge.getMessage() + "); only the protected paths' are");
                    modes = ModeGuard.record(project, protectedPaths);
                }
            }
            StartupTrace.mark("files written");
            TrustFiles trust = inspection.writeTrustFiles(sessionDir, InitBinary.defaultCacheDir(hostEnv, home));
            HostLayout layout = HostLayout.probe();
            // Before the binds are resolved: a preset's config directory that does not exist yet is made, so what the
            // agent keeps there outlives the session (and its read-only settings file gets its placeholder).
            createStateDirs(
                    jailHome,
                    hostUser.map(HostUser::uid).orElseGet(Uids::current),
                    hostUser.map(HostUser::gid).orElseGet(Uids::currentGid));
            createProtectedHomeFiles(
                    policy,
                    jailHome,
                    hostUser.map(HostUser::uid).orElseGet(Uids::current),
                    hostUser.map(HostUser::gid).orElseGet(Uids::currentGid));
            BindSources.Resolved resolved = resolveBinds(policy, jailHome, layout);
            homePlaceholders = homePlaceholders(policy, jailHome, resolved.homeEntries());
            List<HomeEntry> homeEntries = new ArrayList<>(resolved.homeEntries());
            for (ProtectedPath placeholder : homePlaceholders) {
                homeEntries.add(new HomeEntry(
                        placeholder.relative(),
                        Access.READ_ONLY,
                        Optional.of(HomePlaceholders.write(sessionDir, placeholder.relative()))));
            }
            for (Path named : namedByHomeSettings(policy, jailHome, resolved.homeEntries())) {
                ProtectedPaths.refuseLinked(jailHome, jailHome.resolve(named));
                homeEntries.add(new HomeEntry(named, Access.READ_ONLY));
                // Its directories below the writable bind are pinned, as a protected path's are in the project.
                for (int i = 1; i < named.getNameCount(); i++) {
                    Path dir = named.subpath(0, i);
                    boolean bound =
                            homeEntries.stream().anyMatch(e -> e.relative().equals(dir));
                    if (!bound && Files.isDirectory(jailHome.resolve(dir), LinkOption.NOFOLLOW_LINKS)) {
                        homeEntries.add(new HomeEntry(dir, Access.READ_WRITE));
                    }
                }
            }
            homeEntries.sort(Comparator.comparingInt(e -> e.relative().getNameCount()));
            List<Bind> extraBinds = new ArrayList<>(resolved.extraBinds());
            Map<String, String> env = new LinkedHashMap<>(
                    JailEnvironment.build(hostEnv, policy.env(), port, jailHome, id, inspection.placeholders()));
            List<AgentInstall.Link> links = List.of();
            if (install.isPresent()) {
                // Read-only, after the policy's binds; no link where something is bound already (it would be made
                // inside that bind, on the host).
                List<Path> occupied = new ArrayList<>(List.of(project));
                homeEntries.forEach(e -> occupied.add(jailHome.resolve(e.relative())));
                extraBinds.forEach(b -> occupied.add(b.target()));
                AgentInstall.Plan plan = install.get().without(occupied);
                plan.readOnly().forEach(p -> extraBinds.add(new Bind(p, p, Access.READ_ONLY, false)));
                links = plan.links();
                env.put("PATH", plan.jailPath(env.get("PATH")));
            }
            BindSources.Resolved binds = new BindSources.Resolved(homeEntries, extraBinds);
            // Where each host-side MCP server is reached (through the proxy): a URL, never a credential.
            env.putAll(HostEndpoints.jailVariables(policy.mcp()));
            JailSpec spec = new JailSpec(
                    bwrap,
                    init,
                    layout,
                    files,
                    project,
                    jailHome,
                    binds.homeEntries(),
                    binds.extraBinds(),
                    protectedPaths,
                    masked,
                    hostname,
                    env,
                    policy.jail().newSession(),
                    handoffSocket,
                    port,
                    Optional.of(trust),
                    limits(policy),
                    identity,
                    SECCOMP_FD,
                    OptionalInt.of(STATUS_FD),
                    PreStart.wrap(policy.jail().preStart(), command),
                    HostDevices.find(policy.jail().devices()),
                    links,
                    auditScope(policy));
            refuseVisibleCa(spec, inspection.authority().directory());
            refuseVisibleTrustStore(spec, LoadedPolicy.trustStore(hostEnv));
            // What the jail can write through, read back once from the argv (see refuseWritable).
            List<Path> writable = BwrapCommand.writableBindSources(spec);
            refuseWritable(
                    writable,
                    true,
                    InitBinary.defaultCacheDir(hostEnv, home),
                    "agentjail's cache",
                    "the launcher runs programs and loads libraries and class data from it on the host");
            refuseWritable(
                    writable,
                    true,
                    PolicyDiscovery.configDirectory(hostEnv, home),
                    "agentjail's user configuration",
                    "it holds the policy of every later session");
            refuseWritable(
                    writable,
                    true,
                    Path.of(System.getProperty("java.home")),
                    "the JDK agentjail runs on",
                    "it runs on the host next time");
            // The project may hold agentjail's own checkout: that is working on agentjail, whose code the user then
            // chooses to run, as with any project. A policy bind that hands it to the agent is refused.
            for (Path installed : installation()) {
                refuseWritable(
                        writable,
                        false,
                        installed,
                        "agentjail's installation",
                        "it is what runs on the host next time");
            }
            // Every policy file this session read: in the project they are read-only (protected paths); through
            // another writable bind the agent could rewrite the policy of every later session.
            for (Path policyFile : policyFilesRead()) {
                refuseWritable(
                        writable,
                        false,
                        policyFile,
                        "the policy file",
                        "agentjail reads it for every later session; keep policy files out of writable binds");
            }
            refuseWritable(
                    writable,
                    true,
                    ReviewCommand.quarantineDir(hostEnv),
                    "agentjail's quarantine",
                    "review --restore moves its items to the paths its manifest names");
            if (hmacKey.isPresent()) {
                refuseExposedKey(spec, hmacKey.get());
            }
            // What the host runs after the session, as it is before the agent starts (see docs/review.md).
            surfaces = review.snapshot(project, jailHome, writable);
            surfaces.incomplete()
                    .forEach(m ->
                            err.println("agentjail: warning: the review after this session will be incomplete: " + m));
            StartupTrace.mark("jail spec built");
            List<String> argv = new ArrayList<>(BwrapInvocation.prepare(spec, sessionDir));
            // Memory, processes and CPU for the whole jail: its own cgroup (docs/jail.md, "Limits").
            try {
                sessionLimits = SessionLimits.apply(CgroupHost.system(), "agentjail-" + id, policy.limits(), uid == 0);
            } catch (SessionLimits.Refused e) {
                throw new CliException(ExitCodes.ENVIRONMENT, e.getMessage(), e);
            }
            reportOnce(sessionLimits.warnings());
            argv.addAll(2, sessionLimits.joinArguments());
            if (hostUser.isPresent()) {
                // Every descriptor is opened and the cgroup joined as root; bwrap and the jail run as the user.
                argv.addAll(2, List.of("--user", Integer.toString(insideUid), Integer.toString(insideGid)));
            }
            ProxyStart.Running running = proxy.await();
            StartupTrace.mark("proxy listening");
            if (auditScope(policy) != AuditScope.NONE) {
                execAudit = ExecFileAudit.start(
                        new ExecFileAudit.Settings(
                                auditScope(policy),
                                policy.audit().failClosed(),
                                AUDIT_STALL_SECONDS,
                                spec.initBinary(),
                                hostUser.map(u -> new int[] {insideUid, insideGid}),
                                hostUser.map(HostUser::uid).orElse(uid),
                                project,
                                jailHome),
                        handoffSocket.getParent(),
                        id,
                        Inspector.of(inspection.inspection()).redactor(),
                        audit,
                        err,
                        () -> auditStop = true);
                StartupTrace.mark("audit supervisor connected");
            }
            record(AuditRecord.builder()
                    .kind(AuditRecord.KIND_SESSION_START)
                    .ts(Instant.now())
                    .session(id)
                    .sessionDetails(SessionDetails.start(
                                    loaded.sha256(),
                                    loaded.source(),
                                    describeCommand(command),
                                    describeBinds(spec),
                                    List.copyOf(env.keySet()))
                            .withLimits(sessionLimits.enforced(), null))
                    .build());
            startRecorded = true;
            StartupTrace.mark("argv prepared, start recorded");
            oomWatch = sessionLimits.oomWatch().map(OomWatch::start).orElse(null);
            // bwrap makes the placeholders' mount points now: noted first, for a next session to remove should this
            // launcher be killed before it can.
            try {
                PlaceholderJournal.note(claim, PlaceholderJournal.placeholders(outsideStaged(protectedPaths)));
            } catch (IOException e) {
                err.println("agentjail: cannot note the session's placeholders (" + IoErrors.describe(e)
                        + "): should this launcher be killed, remove the empty ones it leaves in " + project);
            }
            exitCode = runJail(argv, sessionDir.resolve(BwrapInvocation.STATUS_FILE), running.handoff(), inspection);
        } catch (IOException e) {
            throw new CliException(ExitCodes.JAIL_SETUP, "cannot set up the jail: " + IoErrors.describe(e), e);
        } finally {
            long seconds = (System.nanoTime() - started) / 1_000_000;
            // The jail has exited: its placeholders go, then what it left for the host to run is reviewed (after the
            // placeholders: an empty one left behind would read as new), before the end record names the findings.
            List<String> liveMoves = new ArrayList<>();
            if (liveGuard != null) {
                liveGuard.close();
                liveGuard
                        .moved()
                        .forEach(p -> liveMoves.add("new git-metadata " + p + " quarantined while the jail ran"));
            }
            List<String> stageFindings = new ArrayList<>();
            if (gitStages != null) {
                try {
                    stageFindings.addAll(gitStages.finish(
                            new Quarantine(ReviewCommand.quarantineDir(hostEnv), Clock.systemUTC()), id));
                } catch (RuntimeException | Error e) {
                    // Whatever happened there, the review below still runs.
                    err.println("agentjail: cannot finish the metadata copies: " + e);
                    stageFindings.add("git-metadata not finished: " + e);
                }
            }
            removePlaceholders(project, outsideStaged(protectedPaths));
            // Gone: nothing for a sweep to remove should this launcher be killed now. The claim itself holds until the
            // review below is done (RunCommand releases it), so that no session makes placeholders it would read.
            try {
                PlaceholderJournal.note(claim, List.of());
            } catch (IOException e) {
                // The next session's sweep finds nothing left to remove.
            }
            removePlaceholders(jailHome, homePlaceholders);
            if (modes != null) {
                List<Path> opened = modes.restore();
                opened.stream()
                        .limit(10)
                        .forEach(p -> err.println("agentjail: took back the group and other write permission the agent"
                                + " gave " + LogRecordText.printable(p.toString())));
                if (opened.size() > 10) {
                    err.println("agentjail: ... and from " + (opened.size() - 10) + " more");
                }
                modes.incomplete()
                        .ifPresent(m -> err.println("agentjail: warning: not every file's permissions were checked"
                                + " after the session: " + LogRecordText.printable(m)));
            }
            List<String> limitHits = oomWatch == null ? List.of() : oomWatch.hits();
            limitHits.forEach(h -> err.println("agentjail: limit reached: " + LogRecordText.printable(h)));
            List<String> findings = new ArrayList<>(liveMoves);
            findings.addAll(stageFindings);
            if (surfaces != null) {
                findings.addAll(reviewSurfaces(review, surfaces));
            }
            StartupTrace.mark("jail exited");
            ExecFileAudit.Activity activity = null;
            if (execAudit != null) {
                activity = execAudit.finish();
                // Its end can still fail the session under audit.failure: closed: records of what ran that the log
                // never took, or a supervisor that gave up while the agent was ending.
                if (exitCode != null && execAudit.failedClosed()) {
                    exitCode = ExitCodes.FAILURE;
                }
            }
            // The proxy closes first: every connection the jail left open ends, and each exchange and tunnel writes its
            // record, so the session-end record comes last and its counts are the log's.
            try {
                proxy.close();
            } catch (IOException e) {
                err.println("agentjail: cannot close the jail's proxy socket: " + IoErrors.describe(e));
            }
            dns.shutdownNow();
            try {
                if (startRecorded) {
                    record(AuditRecord.builder()
                            .kind(AuditRecord.KIND_SESSION_END)
                            .ts(Instant.now())
                            .session(id)
                            .durationMs(seconds)
                            .sessionDetails(SessionDetails.end(
                                            exitCode == null ? -1 : exitCode,
                                            audit.requests(),
                                            audit.denials(),
                                            bounded(findings))
                                    .withLimits(sessionLimits.enforced(), limitHits)
                                    .withActivity(
                                            activity == null
                                                            || !auditScope(loaded.policy())
                                                                    .exec()
                                                    ? null
                                                    : activity.programs(),
                                            activity == null
                                                            || !auditScope(loaded.policy())
                                                                    .files()
                                                    ? null
                                                    : activity.filesChanged()))
                            .build());
                }
            } catch (RuntimeException e) {
                err.println("agentjail: cannot write the session-end record: " + IoErrors.message(e));
            }
            audit.close();
            if (sessionLimits != null) {
                sessionLimits
                        .cgroup()
                        .remove()
                        .forEach(m -> err.println("agentjail: warning: " + LogRecordText.printable(m)));
            }

            SessionDirs.delete(sessionDir);
            if (startRecorded) {
                // A session refused before its start record is in no log: its id would lead nowhere.
                SessionSummary.print(
                        err,
                        id,
                        auditLog,
                        audit.requests(),
                        audit.denials(),
                        activity == null || !auditScope(loaded.policy()).exec() ? null : activity.programs(),
                        activity == null || !auditScope(loaded.policy()).files() ? null : activity.filesChanged(),
                        activity == null ? 0 : activity.redacted());
            }
            err.flush();
            StartupTrace.mark("session closed");
        }
        return exitCode;
    }

    private int runJail(List<String> argv, Path statusFile, ListenerHandoff handoff, InspectionSetup inspection)
            throws Exception {
        ProcessBuilder pb = new ProcessBuilder(argv).inheritIO();
        pb.environment().clear();
        pb.environment().put("PATH", hostEnv.getOrDefault("PATH", "/usr/bin:/bin"));
        Process bwrap = pb.start();
        StartupTrace.mark("bwrap started");
        // While the agent starts (agents take seconds): its first HTTPS request then finds interception ready.
        inspection.warmUp(WARM_UP_DELAY);
        SignalForwarder signals =
                SignalForwarder.install(statusFile, loaded.policy().jail().newSession());
        try {
            long deadline = System.nanoTime() + timeout.toNanos();
            boolean finished = false;
            // In steps: a failed audit under audit.failure: closed stops the jail as the timeout does.
            while (!finished && !auditStop && System.nanoTime() < deadline) {
                long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
                finished = bwrap.waitFor(Math.max(1, Math.min(left, 200)), TimeUnit.MILLISECONDS);
            }
            if (!finished && auditStop) {
                bwrap.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                return ExitCodes.FAILURE;
            }
            if (!finished) {
                err.println("agentjail: session timed out after " + Durations.format(timeout) + "; stopping the jail");
                err.flush();
                bwrap.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                return ExitCodes.TIMEOUT;
            }
        } finally {
            signals.uninstall();
        }
        int code = bwrap.exitValue();
        BwrapStatus status = Files.exists(statusFile) ? BwrapStatus.read(statusFile) : null;
        if (status == null || status.childPid().isEmpty()) {
            // bwrap never started the jail: its own message is already on stderr.
            err.println("agentjail: the jail could not be set up (bwrap exited with " + code + ")");
            return ExitCodes.JAIL_SETUP;
        }
        if (handoff.completion().isCompletedExceptionally()) {
            err.println("agentjail: the jail's proxy socket was not handed over; see the message above");
        }
        ExecFileAudit audited = execAudit;
        if (auditStop || (audited != null && audited.failedClosed())) {
            // Its audited syscalls failed from then on: what the agent's exit code says is not its own doing.
            return ExitCodes.FAILURE;
        }
        return status.exitCode().orElse(code);
    }

    /** What the policy asks the jail's audit to be told of. */
    private static AuditScope auditScope(Policy policy) {
        return AuditScope.of(policy.audit().exec(), policy.audit().files());
    }

    private void record(AuditRecord record) {
        // Session records go through the same sink as requests, so they share its durability.
        try {
            audit.append(record);
        } catch (AuditUnavailableException e) {
            throw new CliException(ExitCodes.ENVIRONMENT, "cannot write the audit log: " + IoErrors.message(e), e);
        }
    }

    /**
     * A project laid out as a repository's metadata (a bare clone: HEAD, objects/ and refs/ at its top) would hand the
     * agent that repository's config and hooks, which git on the host runs; it is refused, not guessed at.
     */
    private void refuseBareRepository() {
        if (Files.isRegularFile(project.resolve("HEAD"), LinkOption.NOFOLLOW_LINKS)
                && Files.isDirectory(project.resolve("objects"), LinkOption.NOFOLLOW_LINKS)
                && Files.isDirectory(project.resolve("refs"), LinkOption.NOFOLLOW_LINKS)) {
            throw new CliException(
                    ExitCodes.USAGE,
                    "the project " + project + " is a bare git repository (HEAD, objects/ and refs/ at its top): its"
                            + " config and hooks would be the agent's to write; run the agent in a working tree"
                            + " (git clone " + project + " DIR, or git worktree add DIR) and pass --project DIR");
        }
    }

    /**
     * Prints each default limit that cannot be enforced the first time only (remembered in the state directory by the
     * text before its first colon: "the default limits.memory (16g) is not enforced"); the session-start record names
     * it in every session.
     */
    private void reportOnce(List<String> warnings) {
        if (warnings.isEmpty()) {
            return;
        }
        Path file = Paths.stateHome(hostEnv).resolve("unenforced-defaults");
        java.util.Set<String> said = new java.util.LinkedHashSet<>();
        try {
            if (Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS) && Files.size(file) < 64 * 1024) {
                said.addAll(Files.readAllLines(file));
            }
        } catch (IOException unreadable) {
            // Said again, then.
        }
        boolean added = false;
        for (String w : warnings) {
            int colon = w.indexOf(':');
            String key = colon > 0 ? w.substring(0, colon) : w;
            if (said.add(key)) {
                err.println("agentjail: warning: " + w + " (said once; every session-start record lists it)");
                added = true;
            }
        }
        if (added) {
            try {
                Files.createDirectories(file.getParent());
                Path temp = file.resolveSibling(file.getFileName() + ".tmp");
                Files.write(temp, said);
                Files.move(
                        temp,
                        file,
                        java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                        java.nio.file.StandardCopyOption.ATOMIC_MOVE);
            } catch (IOException e) {
                // Best effort: the warning is said again next time.
            }
        }
    }

    /** The most findings the session-end record lists; the quarantine's manifest keeps every one. */
    static final int MAX_RECORDED_FINDINGS = 100;

    /** At most {@link #MAX_RECORDED_FINDINGS}, then one line that says how many more (a record line stays small). */
    static List<String> bounded(List<String> findings) {
        if (findings.size() <= MAX_RECORDED_FINDINGS) {
            return findings;
        }
        List<String> kept = new ArrayList<>(findings.subList(0, MAX_RECORDED_FINDINGS));
        kept.add("... and " + (findings.size() - MAX_RECORDED_FINDINGS) + " more: agentjail review lists them");
        return kept;
    }

    /**
     * Moves what the agent wrote that the host would run (a new nested repository, .envrc, hook or agent settings) into
     * the quarantine, and names each on stderr.
     */
    private List<String> reviewSurfaces(SurfaceReview review, SurfaceReview.Snapshot surfaces) {
        try {
            List<SurfaceReview.Finding> findings =
                    review.afterSession(surfaces, ReviewCommand.quarantineDir(hostEnv), id);
            // Paths come from the agent: printed with their control characters escaped, as the log's are.
            findings.stream()
                    .limit(MAX_RECORDED_FINDINGS)
                    .forEach(f -> err.println("agentjail: " + LogRecordText.printable(f.describe())));
            if (findings.size() > MAX_RECORDED_FINDINGS) {
                err.println("agentjail: ... and " + (findings.size() - MAX_RECORDED_FINDINGS) + " more");
            }
            if (findings.stream().anyMatch(f -> f.quarantinedTo().isPresent())) {
                err.println("agentjail: `agentjail review` lists what was quarantined; --restore puts an item back");
            }
            // The record keeps what a reviewer needs to find each: kind, path and where it went, not the reasons.
            return findings.stream()
                    .map(f -> f.change() == SurfaceReview.Change.INCOMPLETE
                            ? "incomplete: " + f.detail()
                            : f.change().name().toLowerCase(Locale.ROOT) + " "
                                    + f.kind().code() + " "
                                    + f.root().dir().resolve(f.path())
                                    + f.quarantinedTo()
                                            .map(q -> " quarantined " + q)
                                            .orElse(" kept"))
                    .toList();
        } catch (RuntimeException e) {
            err.println("agentjail: cannot review the session's surfaces: " + IoErrors.message(e));
            return List.of("review failed: " + IoErrors.message(e));
        }
    }

    /**
     * A review that stopped at its bounds left what lies past them unchecked: until {@code agentjail review --finish}
     * has swept it, no session starts on the project (the next agent would find and could build on what the last one
     * planted).
     */
    private void refuseUnfinishedReview() {
        List<Quarantine.Pending> pending;
        try {
            pending = new Quarantine(ReviewCommand.quarantineDir(hostEnv), Clock.systemUTC()).pending();
        } catch (IOException e) {
            throw new CliException(
                    ExitCodes.ENVIRONMENT,
                    "cannot read the quarantine's unfinished reviews: " + IoErrors.describe(e),
                    e);
        }
        for (Quarantine.Pending p : pending) {
            if (ReviewCommand.concerns(p, project)) {
                throw new CliException(
                        ExitCodes.USAGE,
                        "the review after session " + p.session() + " on " + p.project() + " did not finish ("
                                + LogRecordText.printable(p.reason()) + "); run `agentjail review --finish --project "
                                + p.project() + "` first: it looks at what that session left past the review's bounds");
            }
        }
    }

    /** The protected paths not below a staged metadata directory: placeholders there were made in the copy. */
    private static List<ProtectedPath> outsideStaged(List<ProtectedPath> paths) {
        List<Path> staged = paths.stream()
                .filter(p -> p.state() == ProtectedPath.State.STAGED)
                .map(ProtectedPath::relative)
                .toList();
        return paths.stream()
                .filter(p -> staged.stream()
                        .noneMatch(
                                s -> p.relative().startsWith(s) && !p.relative().equals(s)))
                .toList();
    }

    /**
     * Removes the placeholders bwrap made on the host below {@code root} (never following a link the agent may have
     * swapped in); one the host user filled meanwhile stays, and is named.
     */
    private void removePlaceholders(Path root, List<ProtectedPath> placeholders) {
        if (placeholders.isEmpty()) {
            return;
        }
        try {
            for (Path kept : Placeholders.remove(root, placeholders)) {
                err.println("agentjail: kept " + kept + ": it was made for the session and is no longer empty");
            }
        } catch (IOException e) {
            err.println("agentjail: cannot remove placeholders: " + IoErrors.describe(e));
        }
    }

    /**
     * The policy's read-only home files that do not exist yet but lie in a directory it binds writable (a preset's
     * {@code ~/.claude/settings.json} inside {@code ~/.claude}): the agent could create them, and the agent outside the
     * jail runs the hooks and commands they name. Each gets a read-only placeholder, made on the host by bwrap and
     * removed afterwards while it is still empty.
     */
    static List<ProtectedPath> homePlaceholders(Policy policy, Path home, List<HomeEntry> bound) {
        List<ProtectedPath> placeholders = new ArrayList<>();
        for (HostPath p : policy.filesystem().read()) {
            if (p.anchor() != HostPath.Anchor.HOME) {
                continue;
            }
            Path relative = p.path();
            Path parent = home.resolve(relative).getParent();
            boolean inWritable = bound.stream()
                    .anyMatch(e -> e.access() == Access.READ_WRITE
                            && relative.startsWith(e.relative())
                            && !relative.equals(e.relative()));
            Path file = home.resolve(relative);
            if (inWritable
                    && parent != null
                    && Files.isDirectory(parent, LinkOption.NOFOLLOW_LINKS)
                    && !Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
                placeholders.add(new ProtectedPath(relative, ProtectedPath.State.MISSING_FILE));
            } else if (inWritable) {
                // Another name for it in the writable directory would change it from inside, read-only bind or not.
                try {
                    ProtectedPaths.refuseLinked(home, file);
                } catch (IOException e) {
                    throw new CliException(ExitCodes.USAGE, IoErrors.describe(e), e);
                }
            }
        }
        return List.copyOf(placeholders);
    }

    /**
     * The home files that a preset's read-only settings file names (Claude Code's {@code statusLine.command:
     * ~/.claude/statusline.sh}, a Codex {@code notify} script) and that lie in a directory bound writable: the agent
     * outside the jail runs them, so they are read-only too. A word counts when it is {@code ~/...}, {@code
     * $HOME/...}, {@code ${HOME}/...} or the home's absolute path and names an existing regular file.
     */
    static List<Path> namedByHomeSettings(Policy policy, Path home, List<HomeEntry> bound) {
        List<Path> named = new ArrayList<>();
        List<Path> writable = bound.stream()
                .filter(e -> e.access() == Access.READ_WRITE)
                .map(HomeEntry::relative)
                .toList();
        for (HostPath p : policy.filesystem().read()) {
            Path settings = home.resolve(p.path());
            if (p.anchor() != HostPath.Anchor.HOME
                    || !Files.isRegularFile(settings, LinkOption.NOFOLLOW_LINKS)
                    || writable.stream()
                            .noneMatch(w -> p.path().startsWith(w) && !p.path().equals(w))) {
                continue;
            }
            String text;
            try {
                if (Files.size(settings) > 256 * 1024) {
                    continue;
                }
                text = Files.readString(settings);
            } catch (IOException | java.io.UncheckedIOException e) {
                continue;
            }
            for (String word : text.split("[\\s\"'`,;|&()<>=\\[\\]{}]+")) {
                String rest = null;
                for (String prefix : List.of("~/", "$HOME/", "${HOME}/", home + "/")) {
                    if (word.startsWith(prefix)) {
                        rest = word.substring(prefix.length());
                    }
                }
                if (rest == null || rest.isEmpty()) {
                    continue;
                }
                Path relative = Path.of(rest).normalize();
                Path file = home.resolve(relative).normalize();
                if (file.startsWith(home)
                        && !relative.startsWith("..")
                        && Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)
                        && writable.stream().anyMatch(relative::startsWith)
                        && !named.contains(relative)) {
                    named.add(relative);
                }
            }
        }
        return List.copyOf(named);
    }

    private static GitConfigSurfaces.Found gitConfig(CompletableFuture<GitConfigSurfaces.Found> reading)
            throws IOException {
        try {
            return reading.join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof UncheckedIOException io) {
                throw io.getCause();
            }
            throw e;
        }
    }

    /** The team policy's directory, when the team policy named is one. */
    private Optional<Path> teamPolicyDirectory() {
        try {
            return PolicyDiscovery.teamPolicy(hostEnv, Paths.home(hostEnv))
                    .filter(p -> Files.isDirectory(p))
                    .map(p -> p.toAbsolutePath().normalize());
        } catch (dev.agentjail.policy.PolicyException e) {
            return Optional.empty(); // It loaded a moment ago; an error now is the discovery's to report.
        }
    }

    /** The policy files this session read (and the team directory), which the jail must not be able to write. */
    private List<Path> policyFilesRead() {
        List<Path> files = new ArrayList<>();
        loaded.effective().ifPresent(effective -> {
            for (dev.agentjail.policy.PolicySource source : effective.sources()) {
                Path file = Path.of(source.name());
                if (file.isAbsolute() || Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
                    files.add(file.toAbsolutePath().normalize());
                }
            }
        });
        teamPolicyDirectory().ifPresent(files::add);
        return files;
    }

    /** The presets in this session's policy stack. */
    private List<Preset> presetsApplied() {
        return loaded.effective().stream()
                .flatMap(e -> e.sources().stream())
                .map(dev.agentjail.policy.PolicySource::name)
                .filter(n -> n.startsWith(PRESET_SOURCE))
                .map(n -> Presets.named(n.substring(PRESET_SOURCE.length())))
                .flatMap(Optional::stream)
                .toList();
    }

    /**
     * Creates the presets' writable home directories that are missing (see {@link StateDirs}), owned by the jail's
     * user; a parent that is a link or another user's stops the session.
     */
    private void createStateDirs(Path jailHome, int uid, int gid) {
        if (!Files.isDirectory(jailHome, LinkOption.NOFOLLOW_LINKS)) {
            return; // A home of its own that does not exist on the host (see HostUser): nothing persists.
        }
        List<Path> dirs = new ArrayList<>();
        for (Preset preset : presetsApplied()) {
            try {
                for (HostPath p : preset.policy(jailHome).filesystem().write()) {
                    if (p.anchor() == HostPath.Anchor.HOME && !dirs.contains(p.path())) {
                        dirs.add(p.path());
                    }
                }
            } catch (dev.agentjail.policy.PolicyException e) {
                throw new IllegalStateException("built-in preset " + preset.name() + " does not load", e);
            }
        }
        try {
            for (Path created : StateDirs.create(jailHome, dirs, uid, gid)) {
                err.println("agentjail: created ~/" + created + " (mode 0700) for the agent's state");
            }
        } catch (IOException e) {
            throw new CliException(ExitCodes.USAGE, IoErrors.describe(e), e);
        }
    }

    /**
     * Makes the policy's read-only home files that do not exist yet in a home directory it binds writable (a preset's
     * {@code ~/.claude/settings.json} in {@code ~/.claude}), with neutral content ({@code {}} for a JSON or YAML
     * name, empty for TOML; a name without such an extension as an empty directory), and leaves them: the agent could otherwise create them, and the agent outside the jail
     * runs the hooks and commands they name. They used to be placeholders removed after the session, which sessions
     * on other projects share: the removal by the first session to end (or its review, or a rename by a host tool)
     * took the read-only mount off the others' jails, whose agents could then write the host's file (found by attack;
     * docs/jail.md "Home files a preset protects"). A made file is bound read-only like any existing one.
     */
    private void createProtectedHomeFiles(Policy policy, Path jailHome, int uid, int gid) {
        if (!Files.isDirectory(jailHome, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        List<Path> writable = policy.filesystem().write().stream()
                .filter(w -> w.anchor() == HostPath.Anchor.HOME)
                .map(HostPath::path)
                .toList();
        for (HostPath p : policy.filesystem().read()) {
            Path relative = p.path();
            if (p.anchor() != HostPath.Anchor.HOME
                    || writable.stream().noneMatch(w -> relative.startsWith(w) && !relative.equals(w))) {
                continue;
            }
            String name = relative.getFileName().toString();
            refuseUnbindable(jailHome, relative);
            try {
                if (name.matches(".*\\.(json|jsonc|yaml|yml|toml)")) {
                    String content = name.endsWith(".toml") ? "" : "{}\n";
                    if (StateDirs.createFile(jailHome, relative, content, uid, gid)) {
                        err.println("agentjail: created ~/" + relative + " (" + (content.isEmpty() ? "empty" : "{}")
                                + ", mode 0600) so that the jail can keep it read-only; it stays");
                    }
                } else if (Files.isDirectory(jailHome.resolve(relative).getParent(), LinkOption.NOFOLLOW_LINKS)
                        && !Files.exists(jailHome.resolve(relative), LinkOption.NOFOLLOW_LINKS)) {
                    // A name without a settings file's extension: a directory the agent outside runs from (opencode's
                    // plugin directory).
                    for (Path created : StateDirs.create(jailHome, List.of(relative), uid, gid)) {
                        err.println("agentjail: created ~/" + created + "/ (mode 0700) so that the jail can keep it"
                                + " read-only; it stays");
                    }
                }
            } catch (IOException e) {
                throw new CliException(ExitCodes.USAGE, IoErrors.describe(e), e);
            }
        }
    }

    /**
     * Refuses a protected home path that a read-only bind cannot keep: a symbolic link to nothing (nothing is bound, and
     * the agent can replace the link with the file) or a FIFO, socket or device (a read-only mount of one still lets
     * the agent write to whatever reads it on the host). Found by attack.
     */
    private static void refuseUnbindable(Path home, Path relative) {
        Path file = home.resolve(relative);
        java.nio.file.attribute.BasicFileAttributes attributes;
        try {
            attributes = Files.readAttributes(
                    file, java.nio.file.attribute.BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (IOException missing) {
            return;
        }
        if (attributes.isSymbolicLink() && !Files.exists(file)) {
            throw new CliException(
                    ExitCodes.USAGE,
                    "~/" + relative + " is a symbolic link to a file that does not exist: the jail cannot keep it"
                            + " read-only, and the agent could replace the link with the file the agent outside the"
                            + " jail reads; remove the link, or create the file it names");
        }
        if (attributes.isOther()) {
            throw new CliException(
                    ExitCodes.USAGE,
                    "~/" + relative + " is not a regular file (a FIFO, socket or device): a read-only mount of it"
                            + " still lets the agent write to whatever reads it on the host; remove it");
        }
    }

    /** The preset in this session's policy stack that runs the command's program, if one does. */
    private Optional<Preset> agentPreset() {
        return presetsApplied().stream().filter(p -> p.runs(command.get(0))).findFirst();
    }

    /**
     * Where the host's PATH finds the agent {@code preset} runs, and what the jail needs to run it from there
     * (see {@link AgentInstall}); a missing agent stops the session here, with the preset's install hint.
     */
    private AgentInstall.Plan findAgent(Preset preset, Path jailHome) {
        String program = command.get(0);
        List<Path> visible = new ArrayList<>(List.of(project));
        for (Path dir : dev.agentjail.jail.HostLayout.SYSTEM_CANDIDATES) {
            try {
                visible.add(dir.toRealPath());
            } catch (IOException missing) {
                // Not on this host: nothing shown there.
            }
        }
        List<Path> hidden = new ArrayList<>();
        CredentialPaths.ALWAYS_HIDDEN.forEach(c -> hidden.add(c.resolve(jailHome)));
        hidden.add(Paths.stateHome(hostEnv).toAbsolutePath().normalize());
        hidden.add(caDir.toAbsolutePath().normalize());
        Optional<AgentInstall.Plan> plan;
        try {
            plan = program.contains("/")
                    ? Optional.empty()
                    : AgentInstall.resolve(
                            program,
                            hostEnv.getOrDefault("PATH", "/usr/bin:/bin"),
                            jailHome,
                            visible,
                            hidden,
                            Session::firstLine);
        } catch (IOException e) {
            throw new CliException(
                    ExitCodes.USAGE, "cannot bind " + program + " into the jail: " + IoErrors.describe(e), e);
        }
        if (plan.isEmpty() && program.contains("/") && Files.isExecutable(Path.of(program))) {
            return new AgentInstall.Plan(Path.of(program), List.of(), List.of(), List.of());
        }
        return plan.orElseThrow(() -> new CliException(
                ExitCodes.NOT_FOUND,
                program + " (preset " + preset.name() + ") not found on "
                        + (program.contains("/") ? "the host" : "PATH")
                        + (preset.install().isEmpty() ? "" : "; install it with " + preset.install())));
    }

    /** A version manager's answer to {@code which NAME}: its first line of output, when it exits 0 within 10 s. */
    private static Optional<String> firstLine(List<String> argv) {
        try {
            Process p = new ProcessBuilder(argv)
                    .redirectError(ProcessBuilder.Redirect.DISCARD)
                    .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                    .start();
            byte[] out = p.getInputStream().readNBytes(4096);
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return Optional.empty();
            }
            String text = new String(out, java.nio.charset.StandardCharsets.UTF_8).strip();
            return p.exitValue() == 0 && !text.isEmpty()
                    ? Optional.of(text.lines().findFirst().orElse(""))
                    : Optional.empty();
        } catch (IOException e) {
            return Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
    }

    private List<String> protectedPatterns(Policy policy) {
        List<String> patterns = new ArrayList<>(ProtectedPaths.DEFAULTS);
        policy.filesystem().protectedPaths().forEach(g -> patterns.add(g.pattern()));
        // Every policy file this session read that lies in the project (a file the .agentjail.yaml extends, a
        // --policy or team file kept in the repository): the agent must not rewrite what the next session's policy is
        // made of.
        Path realProject = project.toAbsolutePath().normalize();
        List<Path> files = new ArrayList<>();
        loaded.effective()
                .flatMap(dev.agentjail.policy.EffectivePolicy::projectSnapshot)
                .ifPresent(s -> s.files().keySet().forEach(f -> files.add(Path.of(f))));
        policyFilesRead().forEach(file -> files.add(JailPaths.realPrefix(file)));
        Optional<Path> teamDir = teamPolicyDirectory().map(JailPaths::realPrefix);
        for (Path file : files) {
            if (file.startsWith(realProject) && !file.equals(realProject)) {
                // A team policy directory in the project is protected whole: a file the agent added there would be
                // read as team policy.
                String relative = realProject.relativize(file) + (teamDir.equals(Optional.of(file)) ? "/" : "");
                if (!patterns.contains(relative)) {
                    patterns.add(relative);
                }
            }
        }
        return patterns;
    }

    /**
     * The policy's home paths as binds below the jail's home, parents first: bwrap mounts in order, so a
     * read-only entry inside a writable directory (a preset's hook-bearing settings file inside the
     * agent's config dir) is mounted over it and stays read-only.
     */
    static List<HomeEntry> homeEntries(Policy policy) {
        List<HomeEntry> entries = new ArrayList<>();
        for (HostPath p : policy.filesystem().read()) {
            if (p.anchor() == HostPath.Anchor.HOME) {
                entries.add(new HomeEntry(p.path(), Access.READ_ONLY));
            }
        }
        for (HostPath p : policy.filesystem().write()) {
            if (p.anchor() == HostPath.Anchor.HOME) {
                entries.add(new HomeEntry(p.path(), Access.READ_WRITE));
            }
        }
        entries.sort(Comparator.comparingInt(e -> e.relative().getNameCount()));
        return entries;
    }

    /** The policy's absolute paths as binds, parents first (see {@link #homeEntries}). */
    static List<Bind> extraBinds(Policy policy, Path home) {
        List<Bind> binds = new ArrayList<>();
        for (HostPath p : policy.filesystem().read()) {
            if (p.anchor() == HostPath.Anchor.ROOT) {
                binds.add(new Bind(p.resolve(home), p.resolve(home), Access.READ_ONLY, true));
            }
        }
        for (HostPath p : policy.filesystem().write()) {
            if (p.anchor() == HostPath.Anchor.ROOT) {
                binds.add(new Bind(p.resolve(home), p.resolve(home), Access.READ_WRITE, true));
            }
        }
        binds.sort(Comparator.comparingInt(b -> b.target().getNameCount()));
        return binds;
    }

    /**
     * The policy's home entries and binds with their real sources; a bind that leads through a link the agent could
     * have made, to a path the policy does not name, stops the session here (see {@link BindSources}).
     */
    private BindSources.Resolved resolveBinds(Policy policy, Path home, HostLayout layout) throws IOException {
        try {
            return BindSources.resolve(
                    home, project, layout.systemDirs(), homeEntries(policy), extraBinds(policy, home));
        } catch (UnnamedLinkException e) {
            throw new CliException(ExitCodes.USAGE, e.getMessage(), e);
        }
    }

    static Limits limits(Policy policy) {
        var l = policy.limits();
        return new Limits(
                l.openFiles(),
                l.processes(),
                l.addressSpaceBytes() > 0 ? l.addressSpaceBytes() : Limits.UNLIMITED,
                l.fileSizeBytes(),
                l.tmpSizeBytes(),
                Limits.DEFAULTS.homeBytes(),
                Limits.DEFAULTS.shmBytes());
    }

    private static void refuseCoveredCredentials(Policy policy, Path home) {
        List<Path> covered = policy.filesystem().coveredCredentials(home);
        if (!covered.isEmpty()) {
            throw new CliException(
                    ExitCodes.USAGE,
                    "the policy's filesystem binds would expose " + covered
                            + " without naming them; bind narrower paths, or name the credential path itself");
        }
    }

    /**
     * The project is bound read-write at its real path: it must not be, lie inside, or hold a credential path the jail
     * always hides (~/.ssh, ~/.config/gcloud, ...). A project directory replaced by a link to one would otherwise
     * give the agent write access to it, as would starting a session in ~/.config.
     */
    private void refuseCredentialProject(Path home) {
        for (HostPath credential : CredentialPaths.ALWAYS_HIDDEN) {
            Path path = credential.resolve(home);
            for (Path candidate : List.of(path, JailPaths.realPrefix(path))) {
                boolean inside = project.startsWith(candidate);
                if (inside || (candidate.startsWith(project) && Files.exists(candidate, LinkOption.NOFOLLOW_LINKS))) {
                    throw new CliException(
                            ExitCodes.USAGE,
                            "the project directory " + project + (inside ? " lies inside " : " holds ") + candidate
                                    + ", which the jail always hides; start agentjail in (or pass --project) a"
                                    + " directory of its own");
                }
            }
        }
    }

    /**
     * The audit log, its rotated files and lock file, and the HMAC key must stay out of the agent's reach: not in
     * the project, nor under anything bound in, nor bound themselves.
     */
    private void refuseVisibleAuditLog(Policy policy, Path home) {
        List<Path> visible = new ArrayList<>();
        visible.add(project);
        for (HostPath p : policy.filesystem().read()) {
            visible.add(p.resolve(home));
        }
        for (HostPath p : policy.filesystem().write()) {
            visible.add(p.resolve(home));
        }
        Path log = auditLog.toAbsolutePath().normalize();
        for (Path v : visible) {
            if (exposesLog(v, log) || exposesLog(v, JailPaths.realPrefix(log))) {
                throw new CliException(
                        ExitCodes.USAGE,
                        "the audit log " + auditLog + " would be visible inside the jail (through " + v
                                + "); choose a path outside the project and the policy's binds");
            }
            if (hmacKey.isPresent()) {
                Path key = hmacKey.get().toAbsolutePath().normalize();
                if (key.startsWith(v) || JailPaths.realPrefix(key).startsWith(v)) {
                    throw new CliException(
                            ExitCodes.USAGE,
                            "the audit HMAC key " + hmacKey.get() + " would be visible inside the jail (under " + v
                                    + "); keep it outside the project and the policy's binds");
                }
            }
        }
    }

    /**
     * Whether binding {@code bound} shows the log or one of its siblings (rotated files {@code LOG.N}, the lock file
     * {@code .LOG.lock}): it contains the log's directory, or is such a sibling.
     */
    static boolean exposesLog(Path bound, Path log) {
        Path dir = log.getParent();
        if (dir == null || dir.startsWith(bound)) {
            return true;
        }
        Path parent = bound.getParent();
        if (parent == null || !parent.equals(dir) || bound.getFileName() == null) {
            return false;
        }
        String name = bound.getFileName().toString();
        String logName = log.getFileName().toString();
        return name.startsWith(logName) || name.startsWith("." + logName);
    }

    /**
     * The project is bound read-write: it must not be, hold or lie inside a directory of agentjail's own ({@code dir},
     * compared as given and by its real path), or the agent could change what agentjail runs or trusts next.
     */
    private void refuseProjectOverlap(Path dir, String what, String why) {
        Path absolute = dir.toAbsolutePath().normalize();
        for (Path candidate : List.of(absolute, JailPaths.realPrefix(absolute))) {
            boolean inside = project.startsWith(candidate);
            if (inside || candidate.startsWith(project)) {
                throw new CliException(
                        ExitCodes.USAGE,
                        "the project directory " + project + (inside ? " lies inside " : " holds ") + what + " ("
                                + dir + "; " + why + "); start agentjail in (or pass --project) a directory of its"
                                + " own");
            }
        }
    }

    /** The HMAC key signs the log: no bind may show it to the agent. */
    private static void refuseExposedKey(JailSpec spec, Path key) {
        refuseVisible(spec, key, "the audit HMAC key " + key, "keep it outside the project and the policy's binds");
    }

    /** The CA directory holds the CA's private key: no bind may show it, or anything inside it, to the jail. */
    private static void refuseVisibleCa(JailSpec spec, Path caDir) {
        refuseVisible(
                spec,
                caDir,
                "the agentjail CA directory " + caDir + " (it holds the CA's private key)",
                "keep it outside the project and the policy's binds (see --ca-dir)");
    }

    /**
     * The record of trusted project policies: an agent that could write it (or the directory it is in) could trust
     * its own next policy, and one that could read it learns which projects the user trusts.
     */
    private static void refuseVisibleTrustStore(JailSpec spec, Path store) {
        refuseVisible(
                spec,
                store,
                "agentjail's record of trusted project policies " + store,
                "keep $XDG_STATE_HOME/agentjail out of the policy's binds");
    }

    /**
     * Refuses to start when one of the {@code writable} bind sources (the project's only with {@code project}) would let
     * the agent change {@code dir} or anything in it (a read-only view is harmless): what agentjail itself runs or
     * reads later on the host.
     */
    private void refuseWritable(List<Path> writable, boolean project, Path dir, String what, String why) {
        Path absolute = dir.toAbsolutePath().normalize();
        for (Path candidate : List.of(absolute, JailPaths.realPrefix(absolute))) {
            for (Path source : writable) {
                // The project's own binds (it, and the pins of protected paths' parents inside it) count as the
                // project.
                if (!project && source.startsWith(this.project)) {
                    continue;
                }
                if (source.startsWith(candidate) || candidate.startsWith(source)) {
                    throw new CliException(
                            ExitCodes.USAGE,
                            what + " " + dir + " would be writable inside the jail through the bind of " + source
                                    + " (" + why + "); bind narrower paths, such as ~/.cache/pip instead of ~/.cache"
                                    + (project ? ", and keep it out of the project" : ""));
                }
            }
        }
    }

    /**
     * Where the launcher itself comes from: its jar (or class directory) and, when it sits in a checkout that {@code
     * bin/agentjail} builds it in ({@code launcher/target/agentjail.jar}), that checkout, whose sources and script
     * run on the host at the next start.
     */
    static List<Path> installation() {
        try {
            Path code = Path.of(Session.class
                    .getProtectionDomain()
                    .getCodeSource()
                    .getLocation()
                    .toURI());
            List<Path> paths = new ArrayList<>(List.of(code));
            Path target = code.getParent();
            Path root = target == null || target.getParent() == null
                    ? null
                    : target.getParent().getParent();
            if (root != null && Files.isRegularFile(root.resolve("bin").resolve("agentjail"))) {
                paths.add(root);
            }
            return List.copyOf(paths);
        } catch (java.net.URISyntaxException | RuntimeException e) {
            return List.of();
        }
    }

    /** Refuses to start when a bind would show {@code path} (as given, or through a symlink in it) inside the jail. */
    private static void refuseVisible(JailSpec spec, Path path, String what, String advice) {
        Path absolute = path.toAbsolutePath().normalize();
        for (Path candidate : List.of(absolute, JailPaths.realPrefix(absolute))) {
            Optional<Path> bind = BwrapCommand.exposing(spec, candidate);
            if (bind.isPresent()) {
                throw new CliException(
                        ExitCodes.USAGE,
                        what + " would be visible inside the jail through the bind of " + bind.get() + "; " + advice);
            }
        }
    }

    /** The program and the number of its arguments: arguments can carry secrets, and redaction is not applied here. */
    private static List<String> describeCommand(List<String> command) {
        return List.of(command.get(0), "(" + (command.size() - 1) + " arguments)");
    }

    private static List<String> describeBinds(JailSpec spec) {
        List<String> binds = new ArrayList<>();
        binds.add("rw " + spec.project());
        spec.homeEntries()
                .forEach(e -> binds.add((e.access() == Access.READ_WRITE ? "rw ~/" : "ro ~/")
                        + e.relative()
                        + e.source().map(s -> " (from " + s + ")").orElse("")));
        spec.extraBinds()
                .forEach(b -> binds.add((b.access() == Access.READ_WRITE ? "rw " : "ro ")
                        + b.target()
                        + (b.source().equals(b.target()) ? "" : " (from " + b.source() + ")")));
        spec.maskedFiles().forEach(m -> binds.add("masked " + m));
        spec.links().forEach(l -> binds.add("link " + l.path() + " -> " + l.target()));
        return binds;
    }
}

package dev.agentjail.jail;

import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

/**
 * Decides, by name and place alone, which entries below a project or an agent's home directory are host-executed
 * surfaces for {@link SurfaceReview}, and which directories it walks to find them.
 */
final class SurfaceRules {
    /** How the entries of a directory are judged. */
    enum Mode {
        /** A project directory: surfaces are found by name, at any depth. */
        PROJECT,
        /** Inside a surface directory: everything is part of it. */
        SURFACE,
        /** A git directory: what ordinary git work does not create is a surface. */
        GIT_DIR,
        /** A linked worktree's administrative directory ({@code worktrees/<id>}): a git directory with two names more. */
        GIT_WORKTREE,
        /** {@code worktrees}: each entry is a worktree's administrative directory. */
        GIT_WORKTREES,
        /** {@code modules}: each directory is a submodule's git directory, or a level of a submodule name with "/". */
        GIT_MODULES,
        /** {@code objects}: only {@code info} is looked into. */
        GIT_OBJECTS,
        /** {@code objects/info}: only the alternates files are surfaces. */
        GIT_OBJECTS_INFO,
        /** {@code rebase-merge} and {@code sequencer}: only the todo lists are surfaces. */
        GIT_SEQUENCER,
        /** An agent's home directory: settings and code at its top level are surfaces. */
        HOME
    }

    /**
     * How a directory's entries are judged, and the kind a surface among them is recorded as (null in a project or
     * home directory, where the name decides).
     */
    record Context(Mode mode, SurfaceKind kind) {}

    /**
     * What to do with one entry: record it as a surface of {@code kind} (null: it is none), and, if it is a directory,
     * walk its entries in context {@code inner} (null: do not walk them).
     */
    record Decision(SurfaceKind kind, Context inner) {}

    static final Context PROJECT = new Context(Mode.PROJECT, null);
    static final Context HOME = new Context(Mode.HOME, null);

    /** Surfaces a project may hold at any depth, by exact name (the rest by prefix, see {@link #projectKind}). */
    private static final Map<String, SurfaceKind> PROJECT_NAMES = Map.ofEntries(
            Map.entry(".envrc", SurfaceKind.ENVRC),
            Map.entry(".gitmodules", SurfaceKind.GITMODULES),
            Map.entry(".vscode", SurfaceKind.EDITOR_SETTINGS),
            Map.entry(".idea", SurfaceKind.EDITOR_SETTINGS),
            Map.entry(".cursor", SurfaceKind.EDITOR_SETTINGS),
            Map.entry(".claude", SurfaceKind.AGENT_SETTINGS),
            Map.entry(".mcp.json", SurfaceKind.AGENT_SETTINGS),
            Map.entry(".gemini", SurfaceKind.AGENT_SETTINGS),
            Map.entry(".codex", SurfaceKind.AGENT_SETTINGS),
            Map.entry(".pi", SurfaceKind.AGENT_SETTINGS),
            Map.entry(".husky", SurfaceKind.HOOK_MANAGER),
            Map.entry(".pre-commit-config.yaml", SurfaceKind.HOOK_MANAGER));

    /** Names git itself writes in a git directory in ordinary work (gitrepository-layout(5)); not surfaces. */
    private static final Set<String> GIT_NAMES = Set.of(
            "HEAD",
            "ORIG_HEAD",
            "FETCH_HEAD",
            "MERGE_HEAD",
            "MERGE_MSG",
            "MERGE_MODE",
            "MERGE_RR",
            "MERGE_AUTOSTASH",
            "CHERRY_PICK_HEAD",
            "REVERT_HEAD",
            "REBASE_HEAD",
            "AUTO_MERGE",
            "COMMIT_EDITMSG",
            "SQUASH_MSG",
            "TAG_EDITMSG",
            "NOTES_EDITMSG",
            "index",
            "packed-refs",
            "refs",
            "logs",
            "reftable",
            "rebase-apply",
            "rr-cache",
            "description",
            "shallow",
            "gc.log",
            "gc.pid",
            "lfs",
            "gitk.cache",
            "fsmonitor--daemon",
            "fsmonitor--daemon.ipc");

    /** Names an agent's home directory holds at its top level that its agent loads as settings or runs as code. */
    private static final Set<String> HOME_NAMES = Set.of(
            "config.toml",
            "config.yaml",
            "crush.json",
            "extensions",
            "plugins",
            "plugin",
            "hooks",
            "commands",
            "agents",
            "skills");

    private SurfaceRules() {}

    /**
     * The decision for the entry at {@code relative} (below the root) in a directory judged by {@code parent};
     * {@code isGitDir} tells whether a directory holds a HEAD (a submodule's git directory under {@code modules}).
     */
    static Decision classify(Context parent, Path relative, BasicFileAttributes attributes, Predicate<Path> isGitDir) {
        String name = relative.getFileName().toString();
        boolean dir = attributes.isDirectory();
        SurfaceKind kind = parent.kind();
        return switch (parent.mode()) {
            case PROJECT -> project(relative, name, attributes);
            case SURFACE -> new Decision(kind, dir ? parent : null);
            case GIT_DIR, GIT_WORKTREE -> gitDir(parent, name, dir);
            case GIT_WORKTREES -> new Decision(kind, dir ? new Context(Mode.GIT_WORKTREE, kind) : null);
            case GIT_MODULES ->
                new Decision(
                        kind,
                        dir ? new Context(isGitDir.test(relative) ? Mode.GIT_DIR : Mode.GIT_MODULES, kind) : null);
            case GIT_OBJECTS ->
                new Decision(null, dir && name.equals("info") ? new Context(Mode.GIT_OBJECTS_INFO, kind) : null);
            case GIT_OBJECTS_INFO ->
                name.equals("alternates") || name.equals("http-alternates")
                        ? new Decision(kind, dir ? new Context(Mode.SURFACE, kind) : null)
                        : new Decision(null, null);
            case GIT_SEQUENCER ->
                name.equals("git-rebase-todo") || name.equals("todo")
                        ? new Decision(
                                SurfaceKind.REBASE_EXEC,
                                dir ? new Context(Mode.SURFACE, SurfaceKind.REBASE_EXEC) : null)
                        : new Decision(null, null);
            case HOME ->
                isHomeSurface(name)
                        ? new Decision(
                                SurfaceKind.HOME_AGENT_SETTINGS,
                                dir ? new Context(Mode.SURFACE, SurfaceKind.HOME_AGENT_SETTINGS) : null)
                        : new Decision(null, null);
        };
    }

    private static Decision project(Path relative, String name, BasicFileAttributes attributes) {
        boolean dir = attributes.isDirectory();
        if (name.equals(".git")) {
            SurfaceKind kind = relative.getNameCount() == 1 ? SurfaceKind.GIT_METADATA : SurfaceKind.NESTED_GIT;
            return new Decision(kind, dir ? new Context(Mode.GIT_DIR, kind) : null);
        }
        if (name.equals(".gitattributes") && !dir) {
            return new Decision(SurfaceKind.GITATTRIBUTES_DRIVER, null);
        }
        SurfaceKind kind = projectKind(name);
        if (kind != null) {
            return new Decision(kind, dir ? new Context(Mode.SURFACE, kind) : null);
        }
        return new Decision(null, dir ? PROJECT : null);
    }

    private static SurfaceKind projectKind(String name) {
        SurfaceKind kind = PROJECT_NAMES.get(name);
        if (kind != null) {
            return kind;
        }
        if (name.startsWith("opencode.json") || name.startsWith(".opencode")) {
            return SurfaceKind.AGENT_SETTINGS;
        }
        if (name.startsWith(".lefthook")
                || (name.startsWith("lefthook") && (name.endsWith(".yml") || name.endsWith(".yaml")))) {
            return SurfaceKind.HOOK_MANAGER;
        }
        return null;
    }

    private static Decision gitDir(Context parent, String name, boolean dir) {
        SurfaceKind kind = parent.kind();
        switch (name) {
            case "objects":
                return new Decision(null, dir ? new Context(Mode.GIT_OBJECTS, kind) : null);
            case "rebase-merge", "sequencer":
                return new Decision(null, dir ? new Context(Mode.GIT_SEQUENCER, kind) : null);
            case "modules":
                return new Decision(kind, dir ? new Context(Mode.GIT_MODULES, kind) : null);
            case "worktrees":
                return new Decision(kind, dir ? new Context(Mode.GIT_WORKTREES, kind) : null);
            default:
                break;
        }
        if (isGitName(name)
                || (parent.mode() == Mode.GIT_WORKTREE && (name.equals("gitdir") || name.equals("locked")))) {
            return new Decision(null, null);
        }
        // config, config.worktree, commondir, hooks, info, branches, remotes, and anything git does not write.
        return new Decision(kind, dir ? new Context(Mode.SURFACE, kind) : null);
    }

    private static boolean isGitName(String name) {
        return GIT_NAMES.contains(name)
                || name.startsWith("BISECT_")
                || name.startsWith("NOTES_MERGE_")
                || name.startsWith("sharedindex.")
                || name.endsWith(".lock");
    }

    private static boolean isHomeSurface(String name) {
        return HOME_NAMES.contains(name)
                || (name.startsWith("settings") && name.endsWith(".json"))
                || name.startsWith("opencode.json");
    }
}

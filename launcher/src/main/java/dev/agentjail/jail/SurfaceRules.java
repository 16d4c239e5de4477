package dev.agentjail.jail;

import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
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
        /**
         * A project directory that git takes for a repository by its layout (see {@link SurfaceReview}): HEAD and the
         * names git reads there are surfaces; the rest may be the user's own files and is not.
         */
        GIT_LAYOUT,
        /** An agent's home directory: the settings and code its agent loads, at its top level, are surfaces. */
        HOME
    }

    /** What a surface is recorded as: its kind, and why it matters, as the user is told. */
    record Rule(SurfaceKind kind, String reason) {
        Rule {
            Objects.requireNonNull(kind);
            Objects.requireNonNull(reason);
        }

        /** A rule whose reason is its kind's. */
        static Rule of(SurfaceKind kind) {
            return new Rule(kind, kind.reason());
        }
    }

    /**
     * How a directory's entries are judged; the rule a surface among them is recorded by (null in a project or home
     * directory, where the name decides); in an agent's home directory, which names count there.
     */
    record Context(Mode mode, Rule rule, AgentDir agentDir) {
        Context(Mode mode, Rule rule) {
            this(mode, rule, null);
        }
    }

    /**
     * What to do with one entry: record it as a surface by {@code rule} (null: it is none), and, if it is a directory,
     * walk its entries in context {@code inner} (null: do not walk them).
     */
    record Decision(Rule rule, Context inner) {
        static final Decision NONE = new Decision(null, null);

        SurfaceKind kind() {
            return rule == null ? null : rule.kind();
        }
    }

    /**
     * An agent's directory below the home, and the entries at its top level that its agent loads as settings or runs
     * as code: name patterns ({@code *} stands for any run of characters), each with why it matters.
     */
    record AgentDir(Path dir, Map<String, String> names) {
        AgentDir {
            names = Map.copyOf(names);
        }

        /** The rule for the top-level entry {@code name}, or null when it is none of the names. */
        Rule rule(String name) {
            for (Map.Entry<String, String> e : names.entrySet()) {
                if (matches(e.getKey(), name)) {
                    return new Rule(SurfaceKind.HOME_AGENT_SETTINGS, e.getValue());
                }
            }
            return null;
        }
    }

    static final Context PROJECT = new Context(Mode.PROJECT, null);
    /** The context of a directory that git takes for a repository by its layout. */
    static final Context GIT_LAYOUT = new Context(Mode.GIT_LAYOUT, Rule.of(SurfaceKind.BARE_REPOSITORY));

    private static final String HOME_REASON = SurfaceKind.HOME_AGENT_SETTINGS.reason();

    /** What every agent's directory holds that its agent loads: settings, hooks, plugins, extensions. */
    private static final Map<String, String> COMMON_HOME_NAMES = Map.ofEntries(
            Map.entry("settings*.json", HOME_REASON),
            Map.entry("config.toml", HOME_REASON),
            Map.entry("config.yaml", HOME_REASON),
            Map.entry("crush.json", HOME_REASON),
            Map.entry("opencode.json*", HOME_REASON),
            Map.entry("extensions", HOME_REASON),
            Map.entry("plugins", HOME_REASON),
            Map.entry("plugin", HOME_REASON),
            Map.entry("hooks", HOME_REASON),
            Map.entry("commands", HOME_REASON),
            Map.entry("agents", HOME_REASON),
            Map.entry("skills", HOME_REASON));

    private static final String BUN_REGISTRY = "the bun install opencode runs here at every start fetches packages"
            + " from the registry or the URLs named here, and opencode imports what it installed";

    /** The agents' directories whose top-level settings and code {@link SurfaceReview} checks, in that order. */
    static final List<AgentDir> AGENT_DIRS = List.of(
            agentDir(
                    ".claude",
                    Map.of(
                            "local",
                            "Claude Code's local install: the claude alias outside the jail runs local/claude",
                            "statusline.sh",
                            "the status line command settings.json names usually lives here; Claude Code runs it at"
                                    + " every prompt")),
            agentDir(
                    ".codex",
                    Map.of("rules", "Codex's command rules: what they allow runs without asking outside the jail")),
            agentDir(
                    ".gemini",
                    Map.of(
                            ".env",
                            "Gemini CLI loads it into its environment (when the project has no .env), which every"
                                    + " command and MCP server it starts inherits: NODE_OPTIONS or PATH there run"
                                    + " code")),
            agentDir(
                    ".pi/agent",
                    Map.of(
                            "npm",
                            "pi loads the packages `pi install` put here (its settings name them): their code runs in"
                                    + " pi",
                            "git",
                            "pi loads the packages `pi install` cloned here (its settings name them): their code runs"
                                    + " in pi")),
            agentDir(
                    ".config/opencode",
                    Map.ofEntries(
                            Map.entry(
                                    "config.json",
                                    "opencode loads it as global config, as it does opencode.json: the plugins it"
                                            + " imports, the MCP servers and commands it runs"),
                            Map.entry(
                                    "config",
                                    "opencode imports this legacy TOML config into config.json at start: the plugins"
                                            + " it imports, the MCP servers and commands it runs"),
                            Map.entry("tool", "opencode imports the .js and .ts files here as custom tools at start"),
                            Map.entry("tools", "opencode imports the .js and .ts files here as custom tools at start"),
                            Map.entry("mode", "opencode loads these agent modes: their prompts and tool permissions"),
                            Map.entry("modes", "opencode loads these agent modes: their prompts and tool permissions"),
                            Map.entry(
                                    "package.json",
                                    "opencode runs bun install here at every start, which runs the scripts it names"
                                            + " and installs the packages it lists"),
                            Map.entry(
                                    "node_modules",
                                    "opencode's plugins and custom tools import the packages here at every start"),
                            Map.entry("bun.lock", BUN_REGISTRY),
                            Map.entry("bun.lockb", BUN_REGISTRY),
                            Map.entry("bunfig.toml", BUN_REGISTRY),
                            Map.entry(".npmrc", BUN_REGISTRY))),
            agentDir(
                    ".config/crush",
                    Map.of("crushrc", "Crush runs this Bash file as its global configuration at every start")),
            agentDir(
                    ".config/goose",
                    Map.of("mcp-hermit", "Goose runs the node and npx wrappers it keeps here for its MCP servers")),
            new AgentDir(
                    Path.of(".cache/opencode"),
                    Map.ofEntries(
                            Map.entry(
                                    "node_modules",
                                    "opencode imports the npm plugins it installed here at every start: their code"
                                            + " runs in opencode"),
                            Map.entry(
                                    "bin",
                                    "opencode runs the programs it downloaded here (ripgrep, language servers) in"
                                            + " place of missing ones"),
                            Map.entry(
                                    "package.json",
                                    "opencode skips installing a plugin whose version it lists, and bun add, which"
                                            + " opencode runs here, runs the scripts it names"),
                            Map.entry("bun.lock", BUN_REGISTRY),
                            Map.entry("bun.lockb", BUN_REGISTRY),
                            Map.entry("bunfig.toml", BUN_REGISTRY),
                            Map.entry(".npmrc", BUN_REGISTRY))),
            new AgentDir(
                    Path.of(".local/share/opencode"),
                    Map.of(
                            "bin",
                            "opencode runs the programs it keeps here (ripgrep, language servers) in place of missing"
                                    + " ones")),
            new AgentDir(
                    Path.of(".local/share/crush"),
                    Map.of(
                            "crush.json",
                            "Crush loads it over ~/.config/crush/crush.json at every start: the MCP and language"
                                    + " servers it starts and the hooks it runs")),
            new AgentDir(
                    Path.of(".aider"),
                    Map.of(
                            "oauth-keys.env",
                            "aider loads it into its environment at every start: AIDER_LINT_CMD, AIDER_TEST_CMD and"
                                    + " the other AIDER_ variables set commands it runs")));

    /** Surfaces a project may hold at any depth, by exact name (the rest by pattern, see {@link #PROJECT_PATTERNS}). */
    private static final Map<String, Rule> PROJECT_NAMES = Map.ofEntries(
            Map.entry(".envrc", Rule.of(SurfaceKind.ENVRC)),
            Map.entry(".agentjail.yaml", Rule.of(SurfaceKind.AGENTJAIL_POLICY)),
            Map.entry(".gitmodules", Rule.of(SurfaceKind.GITMODULES)),
            Map.entry(".vscode", Rule.of(SurfaceKind.EDITOR_SETTINGS)),
            Map.entry(".idea", Rule.of(SurfaceKind.EDITOR_SETTINGS)),
            Map.entry(".cursor", Rule.of(SurfaceKind.EDITOR_SETTINGS)),
            Map.entry(
                    ".zed",
                    new Rule(
                            SurfaceKind.EDITOR_SETTINGS,
                            "Zed starts the language servers and context (MCP) servers its settings.json names, and"
                                    + " offers the commands of tasks.json and debug.json, when you open the folder")),
            Map.entry(".claude", Rule.of(SurfaceKind.AGENT_SETTINGS)),
            Map.entry(".mcp.json", Rule.of(SurfaceKind.AGENT_SETTINGS)),
            Map.entry(".gemini", Rule.of(SurfaceKind.AGENT_SETTINGS)),
            Map.entry(".codex", Rule.of(SurfaceKind.AGENT_SETTINGS)),
            Map.entry(".pi", Rule.of(SurfaceKind.AGENT_SETTINGS)),
            Map.entry(".crush.json", crush("its MCP and language servers and hooks")),
            Map.entry("crush.json", crush("its MCP and language servers and hooks")),
            Map.entry(".crushrc", crush("this Bash file as its configuration")),
            Map.entry("crushrc", crush("this Bash file as its configuration")),
            Map.entry(
                    ".aider.conf.yml",
                    new Rule(
                            SurfaceKind.AGENT_SETTINGS,
                            "aider runs the lint and test commands it names (lint-cmd, test-cmd) when it starts in"
                                    + " this repository outside a jail")),
            Map.entry(".husky", Rule.of(SurfaceKind.HOOK_MANAGER)),
            Map.entry(".pre-commit-config.yaml", Rule.of(SurfaceKind.HOOK_MANAGER)),
            Map.entry(
                    ".yarnrc.yml",
                    new Rule(
                            SurfaceKind.PACKAGE_MANAGER_CONFIG,
                            "yarn runs the JavaScript file its yarnPath names, and loads the plugins it lists, on"
                                    + " every yarn command in this directory")),
            Map.entry(
                    ".yarnrc",
                    new Rule(
                            SurfaceKind.PACKAGE_MANAGER_CONFIG,
                            "yarn 1 runs the file its yarn-path names on every yarn command in this directory")),
            Map.entry(
                    ".npmrc",
                    new Rule(
                            SurfaceKind.PACKAGE_MANAGER_CONFIG,
                            "npm and pnpm run package scripts with the script-shell and node-options it sets, and"
                                    + " install from the registry it names")),
            Map.entry("mise.toml", mise()),
            Map.entry(".mise.toml", mise()),
            Map.entry(".rtx.toml", mise()),
            Map.entry(".miserc.toml", mise()),
            Map.entry(".mise", mise()),
            Map.entry(
                    ".tool-versions",
                    new Rule(
                            SurfaceKind.VERSION_MANAGER,
                            "asdf and mise put the tool versions it names on your PATH in this directory; a path:"
                                    + " version runs the programs of any directory")));

    /** Surfaces a project may hold at any depth, by name pattern ({@code *}: any run of characters). */
    private static final Map<String, Rule> PROJECT_PATTERNS = Map.ofEntries(
            Map.entry("opencode.json*", Rule.of(SurfaceKind.AGENT_SETTINGS)),
            Map.entry(".opencode*", Rule.of(SurfaceKind.AGENT_SETTINGS)),
            Map.entry(".lefthook*", Rule.of(SurfaceKind.HOOK_MANAGER)),
            Map.entry("lefthook*.yml", Rule.of(SurfaceKind.HOOK_MANAGER)),
            Map.entry("lefthook*.yaml", Rule.of(SurfaceKind.HOOK_MANAGER)),
            Map.entry(".lintstagedrc*", lintStaged()),
            Map.entry("lint-staged.config.*", lintStaged()),
            Map.entry(".huskyrc*", husky4()),
            Map.entry("husky.config.*", husky4()),
            Map.entry("mise.*.toml", mise()),
            Map.entry(".mise.*.toml", mise()));

    /** The names of a git directory that git reads to decide what to run or where to look, besides HEAD. */
    private static final Set<String> GIT_LAYOUT_NAMES =
            Set.of("HEAD", "config", "config.worktree", "commondir", "hooks", "info", "branches", "remotes");

    private SurfaceRules() {}

    /** The context of the top level of the agent's directory {@code dir} (below the home). */
    static Context home(Path dir) {
        AgentDir agentDir = AGENT_DIRS.stream()
                .filter(a -> a.dir().equals(dir))
                .findFirst()
                .orElseGet(() -> new AgentDir(dir, COMMON_HOME_NAMES));
        return new Context(Mode.HOME, null, agentDir);
    }

    /**
     * The decision for the entry at {@code relative} (below the root) in a directory judged by {@code parent};
     * {@code isGitDir} tells whether a directory holds a HEAD (a submodule's git directory under {@code modules}).
     */
    static Decision classify(Context parent, Path relative, BasicFileAttributes attributes, Predicate<Path> isGitDir) {
        String name = relative.getFileName().toString();
        boolean dir = attributes.isDirectory();
        Rule rule = parent.rule();
        return switch (parent.mode()) {
            case PROJECT -> project(relative, name, dir);
            case SURFACE -> new Decision(rule, dir ? parent : null);
            case GIT_DIR, GIT_WORKTREE -> gitDir(parent, name, dir);
            case GIT_LAYOUT -> GIT_LAYOUT_NAMES.contains(name) ? surface(rule, dir) : layoutDir(parent, name, dir);
            case GIT_WORKTREES -> new Decision(rule, dir ? new Context(Mode.GIT_WORKTREE, rule) : null);
            case GIT_MODULES ->
                new Decision(
                        rule,
                        dir ? new Context(isGitDir.test(relative) ? Mode.GIT_DIR : Mode.GIT_MODULES, rule) : null);
            case GIT_OBJECTS ->
                new Decision(null, dir && name.equals("info") ? new Context(Mode.GIT_OBJECTS_INFO, rule) : null);
            case GIT_OBJECTS_INFO ->
                name.equals("alternates") || name.equals("http-alternates") ? surface(rule, dir) : Decision.NONE;
            case GIT_SEQUENCER ->
                name.equals("git-rebase-todo") || name.equals("todo")
                        ? surface(Rule.of(SurfaceKind.REBASE_EXEC), dir)
                        : Decision.NONE;
            case HOME -> {
                Rule home = parent.agentDir().rule(name);
                yield home == null ? Decision.NONE : surface(home, dir);
            }
        };
    }

    private static Decision surface(Rule rule, boolean dir) {
        return new Decision(rule, dir ? new Context(Mode.SURFACE, rule) : null);
    }

    private static Decision project(Path relative, String name, boolean dir) {
        if (name.equals(".git")) {
            Rule rule = Rule.of(relative.getNameCount() == 1 ? SurfaceKind.GIT_METADATA : SurfaceKind.NESTED_GIT);
            return new Decision(rule, dir ? new Context(Mode.GIT_DIR, rule) : null);
        }
        if (name.equals(".gitattributes") && !dir) {
            return new Decision(Rule.of(SurfaceKind.GITATTRIBUTES_DRIVER), null);
        }
        Rule rule = projectRule(relative, name);
        if (rule != null) {
            return surface(rule, dir);
        }
        return new Decision(null, dir ? PROJECT : null);
    }

    private static Rule projectRule(Path relative, String name) {
        Rule rule = PROJECT_NAMES.get(name);
        if (rule != null) {
            return rule;
        }
        for (Map.Entry<String, Rule> e : PROJECT_PATTERNS.entrySet()) {
            if (matches(e.getKey(), name)) {
                return e.getValue();
            }
        }
        // mise also reads mise/config.toml and everything in .config/mise.
        Path parent = relative.getParent();
        String parentName = parent == null ? "" : parent.getFileName().toString();
        if ((name.equals("config.toml") && parentName.equals("mise"))
                || (name.equals("mise") && parentName.equals(".config"))) {
            return mise();
        }
        return null;
    }

    private static Decision gitDir(Context parent, String name, boolean dir) {
        Rule rule = parent.rule();
        switch (name) {
            case "objects":
                return new Decision(null, dir ? new Context(Mode.GIT_OBJECTS, rule) : null);
            case "rebase-merge", "sequencer":
                return new Decision(null, dir ? new Context(Mode.GIT_SEQUENCER, rule) : null);
            case "modules":
                return new Decision(rule, dir ? new Context(Mode.GIT_MODULES, rule) : null);
            case "worktrees":
                return new Decision(rule, dir ? new Context(Mode.GIT_WORKTREES, rule) : null);
            default:
                break;
        }
        if (GitLayout.isGitName(name)
                || (parent.mode() == Mode.GIT_WORKTREE && (name.equals("gitdir") || name.equals("locked")))) {
            return Decision.NONE;
        }
        // config, config.worktree, commondir, hooks, info, branches, remotes, and anything git does not write.
        return surface(rule, dir);
    }

    /** In a directory laid out as a repository: the git directories git reads there; not the user's other files. */
    private static Decision layoutDir(Context parent, String name, boolean dir) {
        return switch (name) {
            case "objects", "rebase-merge", "sequencer", "modules", "worktrees" -> gitDir(parent, name, dir);
            default -> Decision.NONE;
        };
    }

    /** Whether {@code name} matches {@code pattern}, in which one {@code *} stands for any run of characters. */
    static boolean matches(String pattern, String name) {
        int star = pattern.indexOf('*');
        if (star < 0) {
            return pattern.equals(name);
        }
        String prefix = pattern.substring(0, star);
        String suffix = pattern.substring(star + 1);
        return name.length() >= prefix.length() + suffix.length() && name.startsWith(prefix) && name.endsWith(suffix);
    }

    private static AgentDir agentDir(String dir, Map<String, String> extra) {
        Map<String, String> names = new HashMap<>(COMMON_HOME_NAMES);
        names.putAll(extra);
        return new AgentDir(Path.of(dir), names);
    }

    private static Rule crush(String what) {
        return new Rule(
                SurfaceKind.AGENT_SETTINGS, "Crush runs " + what + " when it starts in this directory outside a jail");
    }

    private static Rule mise() {
        return new Rule(
                SurfaceKind.VERSION_MANAGER,
                "mise, active in your shell, runs the hooks and env scripts it names on cd and puts the tools it names"
                        + " on your PATH (once you trusted the file's path)");
    }

    private static Rule lintStaged() {
        return new Rule(
                SurfaceKind.HOOK_MANAGER,
                "lint-staged runs the commands it names on git commit, from a pre-commit hook");
    }

    private static Rule husky4() {
        return new Rule(SurfaceKind.HOOK_MANAGER, "husky 4 runs the hook commands it names on git commit and push");
    }
}

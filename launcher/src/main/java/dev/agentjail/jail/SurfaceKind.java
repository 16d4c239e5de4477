package dev.agentjail.jail;

/**
 * The kinds of host-executed surface that {@link SurfaceReview} checks after a session, each with the reason it matters:
 * what on the host later runs, or lets run, what the agent wrote there.
 */
public enum SurfaceKind {
    GIT_METADATA(
            "git-metadata",
            "git reads it in this repository: config and hooks run commands, info/attributes names drivers, and"
                    + " alternates, commondir, worktrees and modules point git at other repositories"),
    NESTED_GIT(
            "nested-git",
            "a repository inside the project: its config (core.fsmonitor, core.hooksPath, aliases) and hooks run"
                    + " when you, your editor or your shell prompt run git below it"),
    BARE_REPOSITORY(
            "bare-repository",
            "git takes this directory for a repository (a HEAD, objects and refs, as in a bare clone) when you, your"
                    + " editor or your shell prompt run git in it or below it, and runs what its config names"
                    + " (core.fsmonitor, core.hooksPath, aliases); without its HEAD it is none"),
    REBASE_EXEC("rebase-exec", "an interrupted rebase's todo list with exec lines: git rebase --continue runs them"),
    ENVRC(
            "envrc",
            "direnv runs it in your shell when you enter the directory and allow it, or at once under a whitelist"),
    AGENTJAIL_POLICY(
            "agentjail-policy",
            "agentjail merges it into the policy of every later session started in its directory or below: its denies"
                    + " and locks apply at once, and what it widens once you trust it"),
    GITATTRIBUTES_DRIVER(
            "gitattributes-driver",
            "names a filter, diff or merge driver: git runs the configured command for matching files on checkout,"
                    + " add, diff or merge"),
    GITMODULES("gitmodules", "names the submodule URLs and paths that git submodule update clones and checks out"),
    EDITOR_SETTINGS(
            "editor-settings",
            "editors run the tasks, launch configurations and programs named there when you open the folder"),
    AGENT_SETTINGS(
            "agent-settings",
            "coding agents run the hooks, MCP servers and commands configured there when they start in this project"
                    + " outside a jail"),
    HOOK_MANAGER("hook-manager", "husky, lefthook and pre-commit run the hooks it defines on git commit and push"),
    PACKAGE_MANAGER_CONFIG(
            "package-manager-config",
            "a package manager reads it on every command in this directory: it names programs and scripts to run, or"
                    + " where the packages it installs come from"),
    VERSION_MANAGER(
            "version-manager",
            "mise or asdf reads it when you enter the directory: it names the tools put on your PATH and, for mise,"
                    + " hooks and scripts that run in your shell"),
    HOME_AGENT_SETTINGS(
            "home-agent-settings",
            "the agent loads these settings, hooks, plugins and extensions in every later session, outside a jail"
                    + " too"),
    REVIEW_INCOMPLETE(
            "review-incomplete", "a bound was reached or an entry could not be read: what lies beyond was not checked");

    private final String code;
    private final String reason;

    SurfaceKind(String code, String reason) {
        this.code = code;
        this.reason = reason;
    }

    /** The kind as the manifest and the CLI name it. */
    public String code() {
        return code;
    }

    /** Why a new or changed surface of this kind is quarantined. */
    public String reason() {
        return reason;
    }

    /** The kind whose {@link #code()} is {@code code}. */
    public static SurfaceKind ofCode(String code) {
        for (SurfaceKind k : values()) {
            if (k.code.equals(code)) {
                return k;
            }
        }
        throw new IllegalArgumentException("unknown surface kind " + code);
    }
}

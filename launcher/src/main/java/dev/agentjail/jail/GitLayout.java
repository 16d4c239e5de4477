package dev.agentjail.jail;

import java.util.Set;

/**
 * What git writes in the top level of a repository's metadata directory in ordinary work (gitrepository-layout(5)),
 * sorted by how the jail lets the agent write it: the one list both the staged metadata directory ({@link GitStages})
 * and the session-end review ({@link SurfaceRules}) judge names by.
 */
final class GitLayout {
    /** Data directories git and its common extensions write all the time; bound writable from the host. */
    static final Set<String> WRITABLE_DIRS =
            Set.of("objects", "refs", "logs", "reftable", "rr-cache", "modules", "worktrees", "lfs", "annex");

    /**
     * Files git replaces by lock-and-rename or writes afresh: the jail writes the session's copy, which is mirrored to
     * the host while the jail runs (and back, for a host git working at the same time).
     */
    static final Set<String> MIRRORED_FILES = Set.of(
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
            "shallow");

    /** Directories of an operation in progress, removed when it ends: copied in, and copied back after the session. */
    static final Set<String> STATE_DIRS = Set.of("rebase-merge", "rebase-apply", "sequencer", "NOTES_MERGE_WORKTREE");

    /** Names git writes that are neither config nor code, but that the jail does not stage. */
    private static final Set<String> OTHER_GIT_NAMES =
            Set.of("description", "gc.log", "gc.pid", "gitk.cache", "fsmonitor--daemon", "fsmonitor--daemon.ipc");

    private GitLayout() {}

    /** Whether git writes {@code name} as a file the jail's copy mirrors. */
    static boolean mirrored(String name) {
        return MIRRORED_FILES.contains(name)
                || name.startsWith("BISECT_")
                || (name.startsWith("NOTES_MERGE_") && !name.equals("NOTES_MERGE_WORKTREE"))
                || name.startsWith("sharedindex.");
    }

    /** Left behind by a git process that ended (locks, gc's notes, a stash's temporary index): never copied back. */
    static boolean ephemeral(String name) {
        return name.endsWith(".lock")
                || name.equals("gc.pid")
                || name.equals("gc.log")
                || name.startsWith("index.stash.")
                || name.equals("fsmonitor--daemon.ipc");
    }

    /**
     * Whether git itself writes {@code name} in ordinary work (or it is a session's copy, which git never reads): never
     * a surface of the review.
     */
    static boolean isGitName(String name) {
        return mirrored(name)
                || WRITABLE_DIRS.contains(name)
                || STATE_DIRS.contains(name)
                || OTHER_GIT_NAMES.contains(name)
                || name.endsWith(".lock")
                || name.startsWith(GitStages.STAGE_PREFIX);
    }
}

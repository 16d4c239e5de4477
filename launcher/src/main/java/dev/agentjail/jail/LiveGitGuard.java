package dev.agentjail.jail;

import dev.agentjail.policy.IoErrors;
import java.io.IOException;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchEvent;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;

/**
 * While the jail runs, moves out of each repository's metadata directory the entries that point git at other
 * configuration and that cannot be blocked in advance ({@code commondir}: git refuses a repository whose commondir is
 * an empty placeholder), the moment the agent creates them: the user's shell prompt runs {@code git status} in the
 * project while the session is still going, and the session-end review would come too late for that. What it moves
 * goes into the session's quarantine directory ({@code SESSION/live/}), named on stderr and in the session-end record;
 * move it back by hand to restore it.
 */
public final class LiveGitGuard implements AutoCloseable {
    /** The names watched for: git reads them to find config and hooks elsewhere. */
    static final Set<String> NAMES = Set.of("commondir", "config.worktree", "info");

    private final Path project;
    private final Path quarantine;
    private final WatchService watcher;
    private final Thread thread;
    private final List<Path> moved = Collections.synchronizedList(new ArrayList<>());
    private final Consumer<String> warnings;

    private LiveGitGuard(Path project, Path quarantine, WatchService watcher, Consumer<String> warnings) {
        this.project = project;
        this.quarantine = quarantine;
        this.watcher = watcher;
        this.warnings = warnings;
        this.thread = Thread.ofPlatform().daemon().name("live-git-guard").unstarted(this::run);
    }

    /**
     * Starts watching the metadata directories of {@code repositories} that lie inside {@code project} (real paths) for
     * new {@link #NAMES}; what appears is moved to {@code quarantine} (created on demand, below the session's
     * quarantine directory). Entries that exist already are protected read-only, not watched for.
     */
    public static LiveGitGuard start(
            Path project, List<Repositories.Repository> repositories, Path quarantine, Consumer<String> warnings)
            throws IOException {
        WatchService watcher = FileSystems.getDefault().newWatchService();
        LiveGitGuard guard = new LiveGitGuard(project, quarantine, watcher, warnings);
        for (Repositories.Repository repo : repositories) {
            Path dir = repo.gitDir();
            if (dir.startsWith(project) && Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
                // A rename into the directory arrives as ENTRY_CREATE too.
                dir.register(watcher, StandardWatchEventKinds.ENTRY_CREATE);
            }
        }
        guard.thread.start();
        return guard;
    }

    /** What was moved while the jail ran (host paths where it had appeared). */
    public List<Path> moved() {
        synchronized (moved) {
            return List.copyOf(moved);
        }
    }

    private void run() {
        try {
            while (true) {
                WatchKey key = watcher.take();
                Path dir = (Path) key.watchable();
                for (WatchEvent<?> event : key.pollEvents()) {
                    if (event.kind() == StandardWatchEventKinds.OVERFLOW) {
                        // Events were lost (the agent made many entries at once): look for every name instead.
                        NAMES.forEach(n -> quarantine(dir.resolve(n)));
                    } else if (event.context() instanceof Path name && NAMES.contains(name.toString())) {
                        quarantine(dir.resolve(name));
                    }
                }
                key.reset();
            }
        } catch (InterruptedException | ClosedWatchServiceException stopped) {
            // close() ends the watch; the session-end review looks at what is left.
        }
    }

    private void quarantine(Path path) {
        try {
            if (!Files.exists(path, LinkOption.NOFOLLOW_LINKS)) {
                return;
            }
            Path relative = project.relativize(path);
            Path target = quarantine.resolve(relative);
            Files.createDirectories(target.getParent());
            if (Files.exists(target, LinkOption.NOFOLLOW_LINKS)) {
                target = target.resolveSibling(target.getFileName() + "." + System.nanoTime());
            }
            ProjectFiles.of(project)
                    .move(relative, ProjectFiles.of(quarantine), quarantine.relativize(target), 16, 10_000);
            moved.add(path);
            warnings.accept("moved " + path + ", which the agent created (git would read config and hooks through it"
                    + " on the host), to " + target);
        } catch (IOException | RuntimeException e) {
            warnings.accept("could not move " + path + " out of the repository while the session runs: "
                    + IoErrors.message(e) + "; the session-end review looks at it again");
        }
    }

    @Override
    public void close() {
        try {
            watcher.close();
        } catch (IOException ignored) {
            // Nothing left to release.
        }
        thread.interrupt();
    }
}

package dev.agentjail.jail;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/**
 * Finds the project files that the project's effective git configuration (system, global and the repository's own,
 * with their includes) makes git run or read as configuration on the host: a hooks path in the working tree (husky,
 * lefthook, a team's {@code .githooks}), included config files, an attributes file, and the scripts that filter,
 * diff and merge drivers, the fsmonitor hook, aliases and other command settings name. The jail protects them like
 * {@code .git/hooks}: otherwise the agent rewrites the pre-commit hook and the user's next commit runs it.
 */
public final class GitConfigSurfaces {
    /** Keys whose value is a path git reads as hooks or configuration (relative to the working tree or config file). */
    private static final List<Pattern> PATH_KEYS =
            patterns("core\\.hookspath", "include\\.path", "includeif\\..*\\.path", "core\\.attributesfile");

    /**
     * Keys whose value is a command git (or a tool it starts) runs, by section and by the shape of the variable's
     * name, so that a setting this list does not name one by one (trailer.*.command, difftool.*.path, hook.*.command,
     * gpg.ssh.defaultKeyCommand, ...) is covered too: a word of it that names a file in the project is protected.
     */
    private static final List<Pattern> COMMAND_KEYS = patterns(
            "core\\.(fsmonitor|sshcommand|pager|editor|askpass|gitproxy|hookspath)",
            "sequence\\.editor",
            "alias\\..*",
            "pager\\..*",
            "diff\\.external",
            "interactive\\.difffilter",
            "uploadpack\\.packobjectshook",
            "(.*\\.)?(cmd|command|program|helper|driver|textconv|clean|smudge|process|path|tool|editor|pager"
                    + "|hook|keycommand|receivepack|uploadpack|sendmailcmd|smtpserver|askpass)");

    /** Keys whose value names no command or file git runs: left alone even where the shape rule would match. */
    private static final List<Pattern> DATA_KEYS =
            patterns("remote\\..*", "branch\\..*", "submodule\\..*\\.(url|branch)", "user\\..*");

    /** What of the launcher's environment decides which global and system config files git reads. */
    static final List<String> PASSED_ENV =
            List.of("XDG_CONFIG_HOME", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_NOSYSTEM");

    private static final Pattern TOKEN_SPLIT = Pattern.compile("[\\s;|&()<>`'\"=]+");

    private static final long TIMEOUT_SECONDS = 10;

    private GitConfigSurfaces() {}

    /**
     * The protected-path patterns (relative to {@code project}, a trailing "/" for a directory) for what the effective
     * git configuration names inside the project. Runs {@code git config --list} in the project with {@code home} as
     * HOME (whose ~/.gitconfig the user's git reads); git reading its configuration runs nothing. Without git on
     * {@code path}, nothing on the host runs git, and the list is empty.
     */
    public static List<String> find(Path project, Path home, String path) throws IOException {
        return find(project, project, home, path).patterns();
    }

    /**
     * What the configuration of the repository whose working tree is {@code worktree} (the project, or a repository
     * nested in it) names: protected-path patterns relative to {@code project}, and the hooks directories it sets
     * ({@code core.hooksPath}, absolute, inside the project or not), whose scripts may name project files in turn.
     */
    public record Found(List<String> patterns, List<Path> hookDirs) {
        public Found {
            patterns = List.copyOf(patterns);
            hookDirs = List.copyOf(hookDirs);
        }
    }

    /** As {@link #find(Path, Path, String)} for the repository at {@code worktree}. */
    public static Found find(Path project, Path worktree, Path home, String path) throws IOException {
        return find(project, worktree, home, path, Map.of());
    }

    /** As above, passing {@link #PASSED_ENV} from {@code hostEnv} to git. */
    public static Found find(Path project, Path worktree, Path home, String path, Map<String, String> hostEnv)
            throws IOException {
        Optional<Path> git = executable(path);
        if (git.isEmpty()) {
            return new Found(List.of(), List.of());
        }
        ProcessBuilder pb = new ProcessBuilder(
                        git.get().toString(),
                        "-c",
                        "safe.directory=*",
                        "-C",
                        worktree.toString(),
                        "config",
                        "--list",
                        "--show-origin",
                        "--includes",
                        "-z")
                .redirectErrorStream(false)
                .redirectError(ProcessBuilder.Redirect.DISCARD);
        Map<String, String> env = pb.environment();
        env.clear();
        env.put("PATH", path);
        env.put("HOME", home.toString());
        // The global and system files the user's git reads are found through these too.
        for (String name : PASSED_ENV) {
            String value = hostEnv.get(name);
            if (value != null) {
                env.put(name, value);
            }
        }
        Process process = pb.start();
        process.getOutputStream().close();
        byte[] out;
        try (InputStream in = process.getInputStream()) {
            out = in.readAllBytes();
        }
        try {
            if (!process.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new IOException("git config in " + project + " did not finish in " + TIMEOUT_SECONDS + " s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while reading the git configuration of " + project, e);
        }
        return fromListing(project, worktree, home, new String(out, StandardCharsets.UTF_8));
    }

    /** The same from the output of {@code git config --list --show-origin -z}. */
    static List<String> fromListing(Path project, Path home, String listing) {
        return fromListing(project, project, home, listing).patterns();
    }

    static Found fromListing(Path project, Path worktree, Path home, String listing) {
        Set<String> patterns = new LinkedHashSet<>();
        Set<Path> hookDirs = new LinkedHashSet<>();
        String[] fields = listing.split("\0", -1);
        for (int i = 0; i + 1 < fields.length; i += 2) {
            String origin = fields[i];
            String entry = fields[i + 1];
            int newline = entry.indexOf('\n');
            String key = (newline < 0 ? entry : entry.substring(0, newline)).toLowerCase(Locale.ROOT);
            String value = newline < 0 ? "" : entry.substring(newline + 1);
            // git prints a repository's own files relative to its working directory, which is the worktree (-C).
            Path configDir = origin.startsWith("file:")
                    ? Optional.ofNullable(worktree.resolve(origin.substring(5))
                                    .normalize()
                                    .getParent())
                            .orElse(worktree)
                    : worktree;
            if (matches(PATH_KEYS, key)) {
                // Relative include paths are read from the including file's directory; a hooks path and an
                // attributes file from the working tree's top.
                Path base = key.startsWith("include") ? configDir : worktree;
                resolve(project, home, base, value).ifPresent(p -> patterns.add(pattern(project, p, key)));
                if (key.equals("core.hookspath") && !value.isBlank()) {
                    // Wherever it is (a global dispatcher outside the project too): its scripts may name project files.
                    hookDirs.add(absolute(home, base, value));
                }
                if (key.equals("core.hookspath")) {
                    // husky >= 9 points git at .husky/_, whose one script runs the user's hooks in .husky/.
                    resolve(project, home, base, value)
                            .filter(p -> p.getFileName() != null
                                    && p.getFileName().toString().equals("_"))
                            .map(Path::getParent)
                            .filter(p -> p.startsWith(project) && !p.equals(project))
                            .ifPresent(p -> patterns.add(project.relativize(p) + "/"));
                }
            } else if (matches(COMMAND_KEYS, key) && !matches(DATA_KEYS, key)) {
                for (String token : TOKEN_SPLIT.split(value.startsWith("!") ? value.substring(1) : value)) {
                    // A bare word counts too (python3 conv.py): it is protected only if such a file exists.
                    if (token.isEmpty() || isBoolean(token)) {
                        continue;
                    }
                    resolve(project, home, worktree, token)
                            .filter(p -> Files.exists(p, LinkOption.NOFOLLOW_LINKS))
                            .ifPresent(p -> patterns.add(pattern(project, p, key)));
                }
            }
        }
        return new Found(List.copyOf(patterns), List.copyOf(hookDirs));
    }

    private static Path absolute(Path home, Path base, String value) {
        Path p = value.equals("~") || value.startsWith("~/")
                ? home.resolve(value.length() > 2 ? value.substring(2) : "")
                : base.resolve(value);
        return p.toAbsolutePath().normalize();
    }

    /** The absolute path {@code value} names, if it lies inside the project (the project itself excluded). */
    private static Optional<Path> resolve(Path project, Path home, Path base, String value) {
        if (value.isBlank()) {
            return Optional.empty();
        }
        try {
            Path p;
            if (value.equals("~") || value.startsWith("~/")) {
                p = home.resolve(value.length() > 2 ? value.substring(2) : "");
            } else {
                p = base.resolve(value);
            }
            p = p.toAbsolutePath().normalize();
            // By its real path too: a path through a link to the project (/home -> /var/home) names the same files.
            Path real = JailPaths.realPrefix(p);
            Path realProject = JailPaths.realPrefix(project);
            if (!p.startsWith(project) && real.startsWith(realProject)) {
                p = project.resolve(realProject.relativize(real));
            }
            return p.startsWith(project) && !p.equals(project) ? Optional.of(p) : Optional.empty();
        } catch (RuntimeException unusable) {
            return Optional.empty();
        }
    }

    private static String pattern(Path project, Path p, String key) {
        String relative = project.relativize(p).toString();
        boolean directory = key.equals("core.hookspath") || Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS);
        return directory ? relative + "/" : relative;
    }

    private static boolean isBoolean(String token) {
        return switch (token.toLowerCase(Locale.ROOT)) {
            case "true", "false", "yes", "no", "on", "off", "1", "0" -> true;
            default -> false;
        };
    }

    private static boolean matches(List<Pattern> keys, String key) {
        return keys.stream().anyMatch(p -> p.matcher(key).matches());
    }

    private static Optional<Path> executable(String path) {
        for (String dir : path.split(":")) {
            if (dir.isEmpty()) {
                continue;
            }
            Path candidate = Path.of(dir, "git");
            if (Files.isExecutable(candidate)) {
                return Optional.of(candidate);
            }
        }
        return Optional.empty();
    }

    private static List<Pattern> patterns(String... regexes) {
        List<Pattern> list = new ArrayList<>();
        for (String regex : regexes) {
            list.add(Pattern.compile(regex));
        }
        return List.copyOf(list);
    }
}

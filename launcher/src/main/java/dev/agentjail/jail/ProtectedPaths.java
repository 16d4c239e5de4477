package dev.agentjail.jail;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Finds out, before the jail starts, how each write-protected project path has to be covered: bound read-only
 * if it exists, or blocked by a read-only placeholder at its first missing component if it does not, so that
 * the agent can neither change nor create it (a new {@code .git/hooks/post-checkout} runs on the host).
 */
public final class ProtectedPaths {
    /**
     * The default list. A trailing "/" marks a directory; a "*" may appear in the last component and matches
     * existing entries only, which is why the two Claude settings files are also listed by name.
     */
    public static final List<String> DEFAULTS = List.of(
            ".git/hooks/",
            ".git/config",
            ".gitmodules",
            ".gitconfig",
            ".bashrc",
            ".bash_profile",
            ".bash_login",
            ".profile",
            ".zshrc",
            ".zshenv",
            ".zprofile",
            ".zlogin",
            ".mcp.json",
            ".envrc",
            ".vscode/",
            ".idea/",
            ".claude/settings.json",
            ".claude/settings.local.json",
            ".claude/settings*.json",
            ".claude/commands/",
            ".claude/agents/",
            ".agentjail.yaml");

    /**
     * What git reads from a repository's metadata directory besides {@code config} and {@code hooks/} that names code
     * to run or another place to read config and hooks from (gitrepository-layout(5)): protected where they exist.
     * They cannot be blocked where they do not: git refuses a repository with an empty {@code commondir}. One the
     * agent creates is found by the session-end review (docs/review.md).
     */
    static final List<String> GIT_DIR_EXISTING = List.of("config.worktree", "commondir", "info/");

    /** Per linked worktree ({@code worktrees/ID/}) and per submodule repository ({@code modules/NAME/}). */
    static final List<String> GIT_SUBDIR_EXISTING =
            List.of("config", "config.worktree", "commondir", "gitdir", "hooks/");

    /** Marks a pattern that protects a path only where it exists (no placeholder). */
    private static final String EXISTING = "\0existing:";

    /** How large a hook script is read to find the project files it runs. */
    private static final int MAX_HOOK_BYTES = 64 * 1024;

    private static final java.util.regex.Pattern HOOK_TOKEN = java.util.regex.Pattern.compile("[\\s'\"`;|&()<>=$]+");

    /** How deep submodule repositories nest below {@code .git/modules}, and how many a project may have. */
    private static final int MAX_MODULE_DEPTH = 8;

    private static final int MAX_MODULES = 1_000;

    /** How many entries of a protected directory are checked for hard links before the session refuses to start. */
    static final int MAX_LINK_CHECK = 20_000;

    private ProtectedPaths() {}

    /**
     * Resolves the patterns against {@code project} (a real path). Fails when a protected path or one of its
     * parents below the project is a symlink: bwrap would mount over the link's target, and the agent could
     * replace the link itself.
     */
    public static List<ProtectedPath> resolve(Path project, List<String> patterns) throws IOException {
        return resolve(project, patterns, List.of(), List.of());
    }

    /** A directory of hooks and the working tree its hooks run in (git runs hooks from the working tree's top). */
    public record HookDir(Path dir, Path worktree) {}

    /**
     * As above, also protecting each repository's metadata (its config, hooks, config.worktree, commondir and info/,
     * wherever in the project its metadata directory lies, and the {@code .git} file naming it) and, in each hooks
     * directory ({@code HOOKS} of every repository, and {@code hookDirs}, such as a {@code core.hooksPath}), the project
     * files its hooks lead to: a hook that is a link to {@code scripts/pre-commit}, or whose script runs {@code
     * ./scripts/check.sh} or {@code python3 check.py}, runs that file on the host at the user's next commit.
     */
    public static List<ProtectedPath> resolve(
            Path project, List<String> patterns, List<Repositories.Repository> repositories, List<HookDir> hookDirs)
            throws IOException {
        List<String> all = new ArrayList<>();
        List<HookDir> hooks = new ArrayList<>(hookDirs);
        Path topGit = project.resolve(".git");
        boolean gitFile = Files.isRegularFile(topGit, LinkOption.NOFOLLOW_LINKS);
        for (String pattern : patterns) {
            // A linked worktree's or submodule's .git is a file naming the repository: nothing lies below it here.
            if (!(gitFile && pattern.startsWith(".git/"))) {
                all.add(pattern);
            }
        }
        boolean gitProtected = patterns.stream().anyMatch(pattern -> pattern.startsWith(".git/"));
        if (gitProtected && !Files.exists(topGit, LinkOption.NOFOLLOW_LINKS)) {
            // No repository: git would take the project itself for a bare one if HEAD, objects/ and refs/ were there.
            all.add("HEAD");
        }
        Path realProject = project.toRealPath();
        for (Repositories.Repository repo : repositories) {
            repo.gitFile().ifPresent(file -> all.add(project.relativize(file).toString()));
            hooks.add(new HookDir(repo.gitDir().resolve("hooks"), repo.worktree()));
            Path gitDir = realOrSelf(repo.gitDir());
            if (!gitDir.startsWith(realProject) || gitDir.equals(realProject)) {
                continue;
            }
            Path relative = realProject.relativize(gitDir);
            all.add(relative.resolve("config").toString());
            all.add(relative.resolve("hooks") + "/");
            for (String entry : GIT_DIR_EXISTING) {
                all.add(EXISTING + relative.resolve(strip(entry)));
            }
        }
        Map<Path, ProtectedPath> found = new LinkedHashMap<>();
        for (String pattern : all) {
            if (pattern.startsWith(EXISTING)) {
                resolveExisting(project, Path.of(pattern.substring(EXISTING.length())), found);
                continue;
            }
            boolean directory = pattern.endsWith("/");
            Path relative = JailPaths.relative(
                    Path.of(directory ? pattern.substring(0, pattern.length() - 1) : pattern), "protected path");
            String last = relative.getFileName().toString();
            if (relative.getParent() != null && relative.getParent().toString().contains("*")) {
                throw new IOException("the protected path " + pattern + " has a * before its last component, which"
                        + " protects nothing; name the directories (svc/a/deploy.sh), or use * in the last one only");
            }
            if (last.contains("*")) {
                resolveGlob(project, relative, found);
            } else {
                resolveOne(project, relative, directory, found, true);
            }
        }
        gitMetadata(project, found);
        for (HookDir dir : hooks) {
            hookTargets(project, dir, found);
        }
        for (ProtectedPath p : List.copyOf(found.values())) {
            if (p.state() == ProtectedPath.State.EXISTS) {
                refuseHardLinks(project, p.relative());
            }
            pinParents(project, p.relative(), found);
        }
        List<ProtectedPath> result = new ArrayList<>(found.values());
        // Parents before children: a later bind of a parent must not cover a child's read-only mount.
        result.sort(Comparator.comparingInt(p -> p.relative().getNameCount()));
        return List.copyOf(result);
    }

    /**
     * The repository metadata the defaults do not name: {@link #GIT_DIR_EXISTING} in {@code .git}, and {@link
     * #GIT_SUBDIR_EXISTING} in each linked worktree's and each submodule's directory, where they exist.
     */
    private static void gitMetadata(Path project, Map<Path, ProtectedPath> found) throws IOException {
        Path git = Path.of(".git");
        if (!Files.isDirectory(project.resolve(git), LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        for (String entry : GIT_DIR_EXISTING) {
            resolveExisting(project, git.resolve(strip(entry)), found);
        }
        for (Path worktree : subdirectories(project, git.resolve("worktrees"))) {
            for (String entry : GIT_SUBDIR_EXISTING) {
                resolveExisting(project, worktree.resolve(strip(entry)), found);
            }
        }
        List<Path> modules = new ArrayList<>(subdirectories(project, git.resolve("modules")));
        for (int i = 0; i < modules.size(); i++) {
            Path module = modules.get(i);
            if (modules.size() > MAX_MODULES) {
                throw new IOException("more than " + MAX_MODULES + " directories below " + project.resolve(git)
                        + "/modules to protect; the jail does not start with submodule metadata it did not check");
            }
            if (Files.exists(project.resolve(module).resolve("HEAD"), LinkOption.NOFOLLOW_LINKS)) {
                for (String entry : GIT_SUBDIR_EXISTING) {
                    resolveExisting(project, module.resolve(strip(entry)), found);
                }
                resolveExisting(project, module.resolve("info"), found);
            }
            // A submodule's name may hold "/" (modules/a/b), and submodules nest (modules/x/modules/y).
            if (module.getNameCount() - 2 < MAX_MODULE_DEPTH * 2) {
                modules.addAll(subdirectories(project, module));
            }
        }
    }

    /**
     * Protects the project files the hooks in {@code hooks} lead to: a hook that is a link into the project (its
     * target; a link on the way that lies in the project refuses the session, since the agent could point it
     * elsewhere), and every word of a hook script (up to {@link #MAX_HOOK_BYTES}) that names an existing project file,
     * taken from the working tree's top, from a directory another word names ({@code cd scripts && sh check.sh}), or,
     * for a word that starts with "/", from the top as well ({@code "$(git rev-parse --show-toplevel)"/scripts/x}).
     * One level: what those files run in turn is the project's own code.
     */
    private static void hookTargets(Path project, HookDir hooks, Map<Path, ProtectedPath> found) throws IOException {
        Path dir = hooks.dir();
        if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        Path realProject = project.toRealPath();
        List<Path> entries = new ArrayList<>();
        try (java.util.stream.Stream<Path> walk = Files.walk(dir, 3)) {
            walk.limit(MAX_LINK_CHECK).forEach(entries::add);
        }
        for (Path entry : entries) {
            if (Files.isSymbolicLink(entry)) {
                linkedHook(project, realProject, entry, found);
            } else if (Files.isRegularFile(entry, LinkOption.NOFOLLOW_LINKS) && Files.size(entry) <= MAX_HOOK_BYTES) {
                String script = new String(Files.readAllBytes(entry), java.nio.charset.StandardCharsets.UTF_8);
                List<String> words = new ArrayList<>();
                for (String token : HOOK_TOKEN.split(script)) {
                    if (!token.isEmpty() && !token.equals("/")) {
                        words.add(token);
                    }
                }
                List<Path> bases = new ArrayList<>(List.of(hooks.worktree()));
                for (String word : words) {
                    Path named = resolveWord(hooks.worktree(), word);
                    if (named != null
                            && Files.isDirectory(named, LinkOption.NOFOLLOW_LINKS)
                            && named.startsWith(project)) {
                        bases.add(named);
                    }
                }
                for (String word : words) {
                    for (Path base : bases) {
                        Path target = resolveWord(base, word);
                        if (target != null) {
                            protectTarget(project, target, found);
                        }
                        if (word.startsWith("/") && word.length() > 1) {
                            Path fromTop = resolveWord(base, word.substring(1));
                            if (fromTop != null) {
                                protectTarget(project, fromTop, found);
                            }
                        }
                    }
                }
            }
        }
    }

    private static Path resolveWord(Path base, String word) {
        try {
            return base.resolve(word).normalize();
        } catch (RuntimeException notAPath) {
            return null;
        }
    }

    /**
     * A hook that is a link: its final target, if it lies in the project, is protected; a link on the way that lies
     * in the project (a chain, a linked directory) could be repointed by the agent, which no read-only bind prevents,
     * so the session refuses to start and says which.
     */
    private static void linkedHook(Path project, Path realProject, Path hook, Map<Path, ProtectedPath> found)
            throws IOException {
        Path real;
        try {
            real = hook.toRealPath();
        } catch (IOException dangling) {
            return;
        }
        if (!real.startsWith(realProject)) {
            return;
        }
        Path step = hook;
        for (int hops = 0; hops < 40 && Files.isSymbolicLink(step); hops++) {
            Path next = step.getParent().resolve(Files.readSymbolicLink(step)).normalize();
            Path inProject = firstLinkInProject(realProject, next);
            if (inProject != null) {
                throw new IOException("the hook " + hook + " leads through the symbolic link " + inProject
                        + " in the project, which the agent could point elsewhere; make the hook link straight to the"
                        + " script (ln -sf " + real + " " + hook + ")");
            }
            step = next;
        }
        protectTarget(project, realProject.resolve(realProject.relativize(real)), found);
    }

    /** The first component of {@code path} that lies inside the project and is a link, if any. */
    private static Path firstLinkInProject(Path realProject, Path path) {
        Path prefix = path.getRoot();
        for (Path part : path) {
            prefix = prefix == null ? part : prefix.resolve(part);
            Path real = realOrSelf(prefix.getParent() == null ? prefix : prefix.getParent())
                    .resolve(prefix.getFileName());
            if (real.startsWith(realProject) && Files.isSymbolicLink(real)) {
                return real;
            }
        }
        return null;
    }

    private static Path realOrSelf(Path path) {
        try {
            return path.toRealPath();
        } catch (IOException missing) {
            return path.toAbsolutePath().normalize();
        }
    }

    private static void protectTarget(Path project, Path target, Map<Path, ProtectedPath> found) throws IOException {
        Path real = realOrSelf(target);
        Path realProject = project.toRealPath();
        if (real.startsWith(realProject)
                && !real.equals(realProject)
                && Files.isRegularFile(real, LinkOption.NOFOLLOW_LINKS)
                && real.equals(target)) {
            // Only a path without links (node_modules/.bin/* are links into packages: the project's own code).
            Path relative = realProject.relativize(real);
            if (!relative.startsWith(".git")) {
                resolveOne(project, relative, false, found, true);
            }
        }
    }

    /**
     * With the placeholders in {@code resolved} that lie in the project's repository's working tree, the
     * repository's {@code info/exclude} as the jail should read it: the file's own lines, then one anchored line per
     * placeholder, so that {@code git status} and {@code git add -A} inside the jail pass over the empty files the
     * session put there. Empty when there is no such file (it is then not replaced) or no placeholder.
     */
    public static Optional<String> excludeWithPlaceholders(Path project, List<ProtectedPath> resolved)
            throws IOException {
        Path exclude = project.resolve(".git/info/exclude");
        if (!Files.isRegularFile(exclude, LinkOption.NOFOLLOW_LINKS)
                || Files.isSymbolicLink(project.resolve(".git"))
                || Files.isSymbolicLink(project.resolve(".git/info"))
                || Files.size(exclude) > 1 << 20) {
            return Optional.empty();
        }
        StringBuilder out = new StringBuilder(Files.readString(exclude));
        int before = out.length();
        if (before > 0 && out.charAt(before - 1) != '\n') {
            out.append('\n');
        }
        out.append("# agentjail: this session's read-only placeholders (the file on the host is unchanged)\n");
        boolean any = false;
        for (ProtectedPath p : resolved) {
            if ((p.state() == ProtectedPath.State.MISSING_FILE || p.state() == ProtectedPath.State.MISSING_DIR)
                    && !p.relative().startsWith(".git")) {
                out.append('/').append(p.relative()).append('\n');
                any = true;
            }
        }
        return any ? Optional.of(out.toString()) : Optional.empty();
    }

    private static String strip(String entry) {
        return entry.endsWith("/") ? entry.substring(0, entry.length() - 1) : entry;
    }

    /** The directories directly inside {@code relative} (none if it is missing), without following links. */
    private static List<Path> subdirectories(Path project, Path relative) throws IOException {
        Path dir = project.resolve(relative);
        if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
            return List.of();
        }
        List<Path> dirs = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
            for (Path entry : entries) {
                String name = entry.getFileName().toString();
                if (Files.isDirectory(entry, LinkOption.NOFOLLOW_LINKS)
                        && !name.equals("objects")
                        && !name.equals("refs")
                        && !name.equals("logs")) {
                    dirs.add(relative.resolve(name));
                }
            }
        }
        dirs.sort(Comparator.naturalOrder());
        return dirs;
    }

    /** Protects {@code relative} if it exists; a link on the way is refused as in {@link #resolveOne}. */
    private static void resolveExisting(Path project, Path relative, Map<Path, ProtectedPath> found)
            throws IOException {
        if (Files.exists(project.resolve(relative), LinkOption.NOFOLLOW_LINKS)) {
            resolveOne(project, relative, false, found, true);
        }
    }

    /**
     * Pins every directory between the project and {@code relative}: bound onto itself, it cannot be renamed away and
     * replaced by one the agent made, which would take the protected path with it.
     */
    private static void pinParents(Path project, Path relative, Map<Path, ProtectedPath> found) {
        for (int i = 1; i < relative.getNameCount(); i++) {
            Path prefix = relative.subpath(0, i);
            if (Files.isDirectory(project.resolve(prefix), LinkOption.NOFOLLOW_LINKS)) {
                found.putIfAbsent(prefix, new ProtectedPath(prefix, ProtectedPath.State.PIN));
            }
        }
    }

    /**
     * A read-only bind protects a path, not the file: another name for the same file (a hard link an earlier session
     * made while the file was not protected) would change it from inside the jail. Refuses any such file.
     */
    private static void refuseHardLinks(Path project, Path relative) throws IOException {
        Path path = project.resolve(relative);
        if (!Files.isDirectory(path, LinkOption.NOFOLLOW_LINKS)) {
            refuseLinked(project, path);
            return;
        }
        int[] seen = {0};
        Files.walkFileTree(path, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes a) throws IOException {
                if (++seen[0] > MAX_LINK_CHECK) {
                    throw new IOException("more than " + MAX_LINK_CHECK + " entries in the protected directory " + path
                            + " to check for hard links; the jail does not start with files it did not check");
                }
                if (a.isRegularFile()) {
                    refuseLinked(project, file);
                }
                return FileVisitResult.CONTINUE;
            }
        });
    }

    /**
     * Refuses a regular file with more than one name: the jail protects it by a read-only bind of this path, and
     * another name for it below {@code root} (writable in the jail) would change it.
     */
    public static void refuseLinked(Path root, Path file) throws IOException {
        if (!Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        int links = (Integer) Files.getAttribute(file, "unix:nlink", LinkOption.NOFOLLOW_LINKS);
        if (links > 1) {
            throw new IOException("the protected file " + file + " has " + links + " hard links: another name for it"
                    + " would change it from inside the jail; find them with `find " + root + " -samefile " + file
                    + "` and remove the others (or copy the file over itself: cp --remove-destination)");
        }
    }

    /**
     * Removes the placeholders bwrap created on the host for missing paths, if they are still empty; call it
     * after the jail has exited. Returns those it left in place (someone on the host put content there).
     */
    public static List<Path> removePlaceholders(Path project, List<ProtectedPath> paths) throws IOException {
        List<Path> kept = new ArrayList<>();
        List<ProtectedPath> deepestFirst = new ArrayList<>(paths);
        deepestFirst.sort(
                Comparator.comparingInt((ProtectedPath p) -> p.relative().getNameCount())
                        .reversed());
        for (ProtectedPath p : deepestFirst) {
            Path path = project.resolve(p.relative());
            boolean removable = switch (p.state()) {
                case EXISTS, PIN, REPLACED, STAGED -> false;
                case MISSING_FILE -> Files.isRegularFile(path, LinkOption.NOFOLLOW_LINKS) && Files.size(path) == 0;
                case MISSING_DIR -> Files.isDirectory(path, LinkOption.NOFOLLOW_LINKS) && isEmpty(path);
            };
            if (removable) {
                Files.delete(path);
            } else if (p.state() != ProtectedPath.State.EXISTS
                    && p.state() != ProtectedPath.State.PIN
                    && p.state() != ProtectedPath.State.REPLACED
                    && p.state() != ProtectedPath.State.STAGED
                    && Files.exists(path, LinkOption.NOFOLLOW_LINKS)) {
                kept.add(path);
            }
        }
        return List.copyOf(kept);
    }

    private static void resolveOne(
            Path project, Path relative, boolean directory, Map<Path, ProtectedPath> found, boolean protectIfPresent)
            throws IOException {
        for (int i = 1; i <= relative.getNameCount(); i++) {
            Path prefix = relative.subpath(0, i);
            Path path = project.resolve(prefix);
            if (Files.isSymbolicLink(path)) {
                throw new IOException("protected path " + prefix + " in " + project
                        + " is a symlink; bwrap cannot make a link read-only, so remove it or unprotect it");
            }
            if (!Files.exists(path, LinkOption.NOFOLLOW_LINKS)) {
                // Blocking the first missing component also blocks everything the agent could create below it.
                boolean file = i == relative.getNameCount() && !directory;
                found.putIfAbsent(
                        prefix,
                        new ProtectedPath(
                                prefix, file ? ProtectedPath.State.MISSING_FILE : ProtectedPath.State.MISSING_DIR));
                return;
            }
        }
        if (protectIfPresent) {
            found.putIfAbsent(relative, new ProtectedPath(relative, ProtectedPath.State.EXISTS));
        }
    }

    private static void resolveGlob(Path project, Path relative, Map<Path, ProtectedPath> found) throws IOException {
        Path parent = relative.getParent();
        if (parent != null) {
            // Only checks the parent (and blocks it if missing): an existing parent stays writable.
            resolveOne(project, parent, true, found, false);
            if (!Files.isDirectory(project.resolve(parent), LinkOption.NOFOLLOW_LINKS)) {
                return;
            }
        }
        Path dir = parent == null ? project : project.resolve(parent);
        try (DirectoryStream<Path> matches =
                Files.newDirectoryStream(dir, relative.getFileName().toString())) {
            for (Path match : matches) {
                resolveOne(project, project.relativize(match), false, found, true);
            }
        }
    }

    private static boolean isEmpty(Path dir) throws IOException {
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
            return !entries.iterator().hasNext();
        }
    }
}

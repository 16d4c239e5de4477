package dev.agentjail.jail;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * Finds an agent's program where the user installed it (a user npm prefix, {@code ~/.local/bin}, bun, nvm, a version
 * manager's shims, a Nix profile) and plans what the jail needs to run it from there, read-only: the installation's
 * root (the npm package, the Python virtual environment, the version's prefix, or the file alone), a link where the
 * jail's {@code PATH} finds the program, and the same again for the interpreter its {@code #!} line names.
 *
 * <p>Nothing is planned for what the jail shows anyway (the system directories, the project). A root is never the home
 * directory, {@code ~/.local} or anything that holds or lies in a credential store the jail always hides.
 */
public final class AgentInstall {
    /** Shebang chains (a script run by env, run by a shim) are short; more is a loop. */
    private static final int MAX_DEPTH = 6;

    private static final int SHEBANG_BYTES = 256;

    /** A symbolic link the jail gets at {@code path}, to the absolute {@code target}. */
    public record Link(Path path, Path target) {
        public Link {
            JailPaths.absolute(path, "link");
            JailPaths.absolute(target, "link target");
        }
    }

    /**
     * What the jail needs: read-only binds (each onto its own path), links, and directories to put in front of the
     * jail's PATH.
     *
     * @param program where the program was found on the host's PATH
     */
    public record Plan(Path program, List<Path> readOnly, List<Link> links, List<Path> pathDirs) {
        public Plan {
            readOnly = List.copyOf(readOnly);
            links = List.copyOf(links);
            pathDirs = List.copyOf(pathDirs);
        }

        /**
         * Without the binds and links at or below {@code occupied} (jail paths something else is bound at already): a
         * link there would be made inside that bind, on the host.
         */
        public Plan without(List<Path> occupied) {
            return new Plan(
                    program,
                    readOnly.stream()
                            .filter(p -> occupied.stream().noneMatch(p::equals))
                            .toList(),
                    links.stream()
                            .filter(l ->
                                    occupied.stream().noneMatch(o -> l.path().startsWith(o)))
                            .toList(),
                    pathDirs);
        }

        /** The jail's PATH: the plan's directories first, then {@code path} (without the ones it already has). */
        public String jailPath(String path) {
            List<String> entries = new ArrayList<>();
            for (Path dir : pathDirs) {
                if (!Arrays.asList(path.split(":")).contains(dir.toString()) && !entries.contains(dir.toString())) {
                    entries.add(dir.toString());
                }
            }
            entries.add(path);
            return String.join(":", entries);
        }
    }

    /** Runs a version manager's {@code which} (argv) and returns its first line of output, if it succeeded. */
    @FunctionalInterface
    public interface Runner {
        Optional<String> firstLine(List<String> argv);
    }

    private final Path home;
    private final List<Path> visible;
    private final List<Path> hidden;
    private final Runner runner;
    private final List<Path> readOnly = new ArrayList<>();
    private final List<Link> links = new ArrayList<>();
    private final List<Path> pathDirs = new ArrayList<>();
    private String searchPath;

    private AgentInstall(Path home, List<Path> visible, List<Path> hidden, Runner runner) {
        this.home = home;
        this.visible = visible;
        this.hidden = hidden;
        this.runner = runner;
    }

    /**
     * The plan for {@code program} (a bare name) as the host's {@code path} finds it; empty when it does not.
     *
     * @param home the jail user's home directory on the host
     * @param visible real paths the jail shows anyway (system directories, the project)
     * @param hidden paths the jail always hides (credential stores); an installation in one is refused
     * @throws IOException when the installation lies in a hidden path, or cannot be read
     */
    public static Optional<Plan> resolve(
            String program, String path, Path home, List<Path> visible, List<Path> hidden, Runner runner)
            throws IOException {
        if (program.isEmpty() || program.contains("/")) {
            return Optional.empty();
        }
        AgentInstall install = new AgentInstall(home, List.copyOf(visible), List.copyOf(hidden), runner);
        install.searchPath = path;
        Optional<Path> found = install.find(program);
        if (found.isEmpty()) {
            return Optional.empty();
        }
        install.add(found.get(), true, 0);
        return Optional.of(new Plan(found.get(), install.readOnly, install.links, install.pathDirs));
    }

    /** The first executable regular file {@code name} in the search path (the plan's directories first). */
    private Optional<Path> find(String name) {
        List<String> dirs = new ArrayList<>();
        pathDirs.forEach(d -> dirs.add(d.toString()));
        dirs.addAll(Arrays.asList(searchPath.split(":")));
        for (String dir : dirs) {
            if (dir.isEmpty() || !dir.startsWith("/")) {
                continue;
            }
            Path candidate = Path.of(dir, name).normalize();
            if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                return Optional.of(candidate);
            }
        }
        return Optional.empty();
    }

    /** Plans {@code program}; {@code onPath}: found by name, so its directory goes on the jail's PATH. */
    private void add(Path program, boolean onPath, int depth) throws IOException {
        if (depth > MAX_DEPTH) {
            throw new IOException("the program " + program + " runs through more than " + MAX_DEPTH
                    + " interpreters and shims; bind its installation in the policy's filesystem.read");
        }
        Optional<Path> shimTarget = shimTarget(program);
        if (shimTarget.isPresent()) {
            add(shimTarget.get(), true, depth + 1);
            return;
        }
        Path real = program.toRealPath();
        Path where = onPath ? program.getParent().toRealPath().resolve(program.getFileName()) : program;
        refuseHidden(where);
        if (!shown(real)) {
            Path root = root(real);
            if (!readOnly.contains(root)) {
                readOnly.add(root);
            }
        }
        if (!shown(where) && !where.equals(real)) {
            links.add(new Link(where, real));
        }
        if (onPath && !pathDirs.contains(where.getParent())) {
            pathDirs.add(where.getParent());
        }
        Optional<String> interpreter = interpreter(real);
        if (interpreter.isPresent()) {
            String name = interpreter.get();
            if (name.startsWith("/")) {
                add(Path.of(name), false, depth + 1);
            } else {
                Optional<Path> found = find(name);
                if (found.isPresent()) {
                    add(found.get(), true, depth + 1);
                }
            }
        }
    }

    /** Whether the jail shows {@code path} without this plan, or through a root planned already. */
    private boolean shown(Path path) {
        return visible.stream().anyMatch(path::startsWith)
                || readOnly.stream().anyMatch(path::startsWith)
                || links.stream().anyMatch(l -> l.path().equals(path));
    }

    /**
     * What to bind for the real file {@code real}: the outermost npm package it belongs to, its Python virtual
     * environment, its version's prefix ({@code PREFIX/bin/FILE} with a {@code PREFIX/lib}, deep enough not to be a
     * shared prefix such as {@code ~/.local}), all of {@code /nix/store}, or the file alone.
     */
    private Path root(Path real) throws IOException {
        refuseHidden(real);
        if (real.startsWith("/nix/store")) {
            return Path.of("/nix/store");
        }
        Path npm = null;
        Path venv = null;
        for (Path dir = real.getParent(); dir != null && dir.getNameCount() > 1; dir = dir.getParent()) {
            if (dir.equals(home)) {
                break;
            }
            if (npm == null && venv == null && Files.isRegularFile(dir.resolve("pyvenv.cfg"))) {
                venv = dir;
            }
            Path parent = dir.getParent();
            boolean inNodeModules = parent != null
                    && (name(parent).equals("node_modules")
                            || (name(parent).startsWith("@")
                                    && parent.getParent() != null
                                    && name(parent.getParent()).equals("node_modules")));
            if (inNodeModules && Files.isRegularFile(dir.resolve("package.json"))) {
                npm = dir;
            }
        }
        for (Path candidate : new Path[] {npm, venv, prefix(real)}) {
            if (candidate != null && acceptable(candidate)) {
                return candidate;
            }
        }
        return real;
    }

    private Path prefix(Path real) {
        Path bin = real.getParent();
        if (bin == null || !name(bin).equals("bin") || bin.getParent() == null) {
            return null;
        }
        Path prefix = bin.getParent();
        boolean deep =
                prefix.startsWith(home) ? home.relativize(prefix).getNameCount() >= 3 : prefix.getNameCount() >= 2;
        return deep && Files.isDirectory(prefix.resolve("lib"), LinkOption.NOFOLLOW_LINKS) ? prefix : null;
    }

    private boolean acceptable(Path root) {
        return !home.startsWith(root) && hidden.stream().noneMatch(h -> h.startsWith(root) || root.startsWith(h));
    }

    private void refuseHidden(Path real) throws IOException {
        for (Path h : hidden) {
            if (real.startsWith(h)) {
                throw new IOException("the agent's program " + real + " lies in " + h
                        + ", which the jail always hides; install it elsewhere");
            }
        }
    }

    /** The program a {@code #!} line runs: its interpreter, or for {@code env} the name env looks up. */
    static Optional<String> interpreter(Path real) throws IOException {
        if (!Files.isRegularFile(real)) {
            return Optional.empty();
        }
        byte[] head;
        try (InputStream in = Files.newInputStream(real)) {
            head = in.readNBytes(SHEBANG_BYTES);
        }
        String text = new String(head, StandardCharsets.ISO_8859_1);
        if (!text.startsWith("#!")) {
            return Optional.empty();
        }
        int end = text.indexOf('\n');
        if (end < 0) {
            return Optional.empty();
        }
        String[] words = text.substring(2, end).strip().split("[ \t]+");
        if (words.length == 0 || words[0].isEmpty()) {
            return Optional.empty();
        }
        if (!words[0].endsWith("/env")) {
            return Optional.of(words[0]);
        }
        for (int i = 1; i < words.length; i++) {
            if (!words[i].startsWith("-") && !words[i].contains("=")) {
                return Optional.of(words[i]);
            }
        }
        return Optional.empty();
    }

    /**
     * What a version manager's shim runs ({@code asdf}, {@code mise}, {@code pyenv}, {@code rbenv} shims
     * directories, volta's {@code volta-shim} links), asked of the manager itself.
     */
    private Optional<Path> shimTarget(Path program) throws IOException {
        Path dir = program.getParent();
        String name = program.getFileName().toString();
        List<String> argv = null;
        if (name(dir).equals("shims")) {
            for (Path a = dir.getParent(); a != null && argv == null; a = a.getParent()) {
                switch (name(a)) {
                    case ".asdf" -> argv = List.of(tool("asdf", a.resolve("bin/asdf")), "which", name);
                    case "mise" -> argv = List.of(tool("mise", home.resolve(".local/bin/mise")), "which", name);
                    case ".pyenv" -> argv = List.of(tool("pyenv", a.resolve("bin/pyenv")), "which", name);
                    case ".rbenv" -> argv = List.of(tool("rbenv", a.resolve("bin/rbenv")), "which", name);
                    default -> {}
                }
            }
        } else if (Files.isSymbolicLink(program) && name(program.toRealPath()).equals("volta-shim")) {
            argv = List.of(program.toRealPath().resolveSibling("volta").toString(), "which", name);
        }
        if (argv == null) {
            return Optional.empty();
        }
        Optional<String> line = runner.firstLine(argv);
        if (line.isEmpty() || !line.get().startsWith("/")) {
            throw new IOException(program + " is a shim, and `" + String.join(" ", argv.subList(1, argv.size()))
                    + "` did not name what it runs; select a version for this directory, or bind the"
                    + " installation in the policy's filesystem.read");
        }
        Path target = Path.of(line.get().strip()).normalize();
        if (!Files.isRegularFile(target) || target.getParent().equals(dir)) {
            throw new IOException(program + " is a shim for " + target + ", which is not a program file");
        }
        return Optional.of(target);
    }

    private String tool(String name, Path fallback) {
        return find(name).map(Path::toString).orElse(fallback.toString());
    }

    private static String name(Path path) {
        return path == null || path.getFileName() == null
                ? ""
                : path.getFileName().toString();
    }
}

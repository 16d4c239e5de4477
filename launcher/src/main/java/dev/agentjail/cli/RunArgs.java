package dev.agentjail.cli;

import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The common forms of {@code agentjail run}'s command line, read without picocli: building picocli's model of the
 * command costs a cold JVM ~90 ms, a sixth of a session's start. Only forms whose meaning is plain are read here:
 * known long options, each with one value ({@code --name value} or {@code --name=value}), then COMMAND (after
 * {@code --} or at the first argument that is not an option). Anything else (help, version, a short or unknown
 * option, a missing or malformed value, a single-valued option given twice, no COMMAND) is left to picocli, which
 * reports it as usual. RunArgsTest holds the two readings side by side.
 */
final class RunArgs {
    /** The options that may be given more than once; every value is kept. */
    static final Set<String> REPEATABLE = Set.of("--policy", "--preset");
    /** The options given at most once. */
    static final Set<String> SINGLE = Set.of(
            "--project", "--audit-log", "--timeout", "--ca-dir", "--port", "--audit-max-size", "--audit-hmac-key");

    private RunArgs() {}

    /** The command for {@code args} (whose first element is "run"), or empty when picocli should read them. */
    static Optional<Parsed> parse(String... args) {
        if (args.length < 2 || !args[0].equals("run")) {
            return Optional.empty();
        }
        RunCommand run = new RunCommand();
        List<String> seen = new ArrayList<>();
        int i = 1;
        boolean separated = false;
        while (i < args.length) {
            String arg = args[i];
            if (arg.equals("--")) {
                separated = true;
                i++;
                break;
            }
            if (!arg.startsWith("-")) {
                break;
            }
            if (!arg.startsWith("--")) {
                return Optional.empty();
            }
            int eq = arg.indexOf('=');
            String name = eq < 0 ? arg : arg.substring(0, eq);
            String value;
            if (eq >= 0) {
                value = arg.substring(eq + 1);
                i++;
            } else {
                if (i + 1 >= args.length) {
                    return Optional.empty();
                }
                value = args[i + 1];
                i += 2;
            }
            if (value.startsWith("-") || (!REPEATABLE.contains(name) && seen.contains(name))) {
                return Optional.empty();
            }
            seen.add(name);
            if (!set(run, name, value)) {
                return Optional.empty();
            }
        }
        if (i >= args.length) {
            return Optional.empty();
        }
        run.command = new ArrayList<>(List.of(args).subList(i, args.length));
        return Optional.of(new Parsed(run, separated));
    }

    private static boolean set(RunCommand run, String name, String value) {
        try {
            switch (name) {
                case "--policy" -> run.policyFiles.add(Path.of(value));
                case "--preset" -> run.presets.add(value);
                case "--project" -> run.project = Path.of(value);
                case "--audit-log" -> run.auditLog = Path.of(value);
                case "--timeout" -> run.timeout = value;
                case "--ca-dir" -> run.caDir = Path.of(value);
                case "--port" -> {
                    if (!value.matches("0|[1-9][0-9]{0,8}")) {
                        return false;
                    }
                    run.port = Integer.parseInt(value);
                }
                case "--audit-max-size" -> run.auditChain.maxSize = value;
                case "--audit-hmac-key" -> run.auditChain.hmacKey = Path.of(value);
                default -> {
                    return false;
                }
            }
            return true;
        } catch (InvalidPathException e) {
            return false;
        }
    }

    /** A command line read: the command with its options set, and whether COMMAND followed "--". */
    record Parsed(RunCommand command, boolean separated) {}
}

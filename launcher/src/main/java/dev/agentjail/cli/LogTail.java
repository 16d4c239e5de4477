package dev.agentjail.cli;

import dev.agentjail.policy.IoErrors;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.function.Predicate;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code agentjail log tail}: prints the last requests, programs run and files changed of an audit log, one readable
 * line each, and can follow it.
 */
@Command(
        name = "tail",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Prints the last records of an audit log, one readable line each.",
            "A request's line holds the time, decision, method, target, status, bytes",
            "sent and received, and the reason of a refusal, secrets redacted and MCP",
            "tool when there are any. A WebSocket connection gets a line when it closes,",
            "with its messages sent and received (ws 12\u2191 30\u2193) and the secrets redacted",
            "in them. Inside the jail, a program run is an exec line (pid, program,",
            "arguments, working directory), a change to a file a file line (operation,",
            "path, pid), \u00d7N when a line stands for N events, and a gap line says",
            "events are missing from the log. With -f, keeps printing new records, also",
            "across rotation."
        })
final class LogTail implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(
            names = {"-f", "--follow"},
            description = "Keep reading as the log grows (follows the file name across rotation).")
    boolean follow;

    @Option(
            names = {"-n", "--lines"},
            paramLabel = "N",
            defaultValue = "10",
            description = "How many of the last matching records to print first (default: ${DEFAULT-VALUE}).")
    int lines;

    @Option(names = "--deny", description = "Only requests the policy or the SSRF guard denied.")
    boolean denyOnly;

    @Option(
            names = "--exec",
            description =
                    "Only programs run in the jail (exec records), and the gaps in them. With --files:" + " both.")
    boolean execOnly;

    @Option(
            names = "--files",
            description =
                    "Only changes to files in the jail (file records), and the gaps in them. With --exec:" + " both.")
    boolean filesOnly;

    @Option(
            names = "--host",
            paramLabel = "HOST",
            description = "Only requests to HOST (case-insensitive); *.example.com matches its subdomains.")
    String host;

    @Option(
            names = "--color",
            paramLabel = "WHEN",
            defaultValue = LogTailFormat.COLOR_AUTO,
            description = "Colour the decision: auto (on a terminal), always, never. NO_COLOR in the environment"
                    + " turns colour off in every case.")
    String color;

    @Mixin
    LogReaderOptions reading;

    @Parameters(
            arity = "0..1",
            paramLabel = "FILE",
            description = "Audit log (default: $XDG_STATE_HOME/agentjail/audit.jsonl).")
    Path file;

    @Override
    public Integer call() throws Exception {
        if (lines < 0) {
            throw new CliException(ExitCodes.USAGE, "--lines must be 0 or more");
        }
        if (!LogTailFormat.COLOR_AUTO.equals(color)
                && !LogTailFormat.COLOR_ALWAYS.equals(color)
                && !LogTailFormat.COLOR_NEVER.equals(color)) {
            throw new CliException(ExitCodes.USAGE, "--color must be auto, always or never, not " + color);
        }
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        Path log = file != null ? file : Paths.defaultAuditLog(System.getenv());
        LogTailFormat format =
                new LogTailFormat(LogTailFormat.useColor(color, System.getenv(), LogTailFormat.stdoutIsTerminal()));
        Predicate<LogRecord> wanted = filter(denyOnly, host, execOnly, filesOnly);
        LogReader.OnProblem onProblem = reading.onProblem(err);
        LogReader reader;
        try {
            reader = LogReader.open(log, onProblem);
        } catch (NoSuchFileException e) {
            if (!follow) {
                throw new CliException(
                        ExitCodes.USAGE,
                        "cannot read " + log + ": " + IoErrors.describe(log, e)
                                + "; it is written once a session (agentjail run) or agentjail proxy starts; -f waits"
                                + " for it",
                        e);
            }
            // Started before the first session: wait for the log as tail -F does, until Ctrl-C.
            err.println("agentjail: waiting for " + log + " to appear (Ctrl-C to stop)");
            err.flush();
            reader = null;
        } catch (IOException e) {
            throw CliException.unreadable(log, e);
        }
        if (reader == null) {
            follow(log, onProblem, wanted, format, out, null);
            return ExitCodes.OK;
        }
        try {
            Deque<LogRecord> last = new ArrayDeque<>();
            for (LogRecord r = reader.next(); r != null; r = reader.next()) {
                if (wanted.test(r) && lines > 0) {
                    if (last.size() == lines) {
                        last.removeFirst();
                    }
                    last.addLast(r);
                }
            }
            last.forEach(r -> out.println(format.format(r)));
            out.flush();
            if (!follow) {
                reader.finish();
                reader.close();
                return ExitCodes.OK;
            }
        } catch (IOException | RuntimeException e) {
            reader.close();
            throw e;
        }
        follow(log, onProblem, wanted, format, out, reader);
        return ExitCodes.OK;
    }

    /** Prints what is appended to {@code log} from where {@code reader} stands (null: the log is not there yet). */
    private static void follow(
            Path log,
            LogReader.OnProblem onProblem,
            Predicate<LogRecord> wanted,
            LogTailFormat format,
            PrintWriter out,
            LogReader reader)
            throws IOException, InterruptedException {
        LogTailFollower follower = new LogTailFollower(
                log,
                onProblem,
                r -> {
                    if (wanted.test(r)) {
                        out.println(format.format(r));
                    }
                },
                out::flush,
                LogTailFollower.Pause.sleeping(LogTailFollower.POLL_INTERVAL));
        // A closed pipe (`| head`) shows as a PrintWriter error: stop then instead of polling forever.
        follower.run(reader, out::checkError);
    }

    /**
     * Request records, WebSocket relays' records (one per connection, with its message counts), and the exec, file and
     * audit-gap records of the jail; {@code --exec} and {@code --files} keep only exec or file records (both with both)
     * and the gaps, and every filter given narrows further: {@code --deny} and {@code --host} keep only requests, so
     * with {@code --exec} or {@code --files} they leave nothing.
     */
    static Predicate<LogRecord> filter(boolean denyOnly, String host, boolean exec, boolean files) {
        Predicate<LogRecord> p = r -> r.isRequest() || r.isWebSocket() || r.isExec() || r.isFile() || r.isAuditGap();
        if (exec || files) {
            p = p.and(r -> (exec && r.isExec()) || (files && r.isFile()) || r.isAuditGap());
        }
        if (denyOnly) {
            p = p.and(LogRecord::isDenied);
        }
        if (host != null) {
            p = p.and(hostMatcher(host));
        }
        return p;
    }

    /** An exact host, or {@code *.domain} for its subdomains at any depth; case and one trailing dot ignored. */
    static Predicate<LogRecord> hostMatcher(String pattern) {
        String want = normalise(pattern);
        if (want.startsWith("*.")) {
            String suffix = want.substring(1);
            return r -> r.host() != null && normalise(r.host()).endsWith(suffix);
        }
        return r -> r.host() != null && normalise(r.host()).equals(want);
    }

    private static String normalise(String host) {
        String h = host.toLowerCase(Locale.ROOT);
        return h.endsWith(".") ? h.substring(0, h.length() - 1) : h;
    }
}

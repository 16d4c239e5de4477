package dev.agentjail.cli;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.function.IntPredicate;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code agentjail log summary}: per host, what the agent asked for and what it got, with totals; then what it ran and
 * changed inside the jail.
 */
@Command(
        name = "summary",
        mixinStandardHelpOptions = true,
        description = {
            "Prints per-host counts of audit logs, then the totals.",
            "Per host: requests, denials, errors, bytes sent and received, secrets",
            "redacted (in requests and WebSocket messages), MCP tools used, and when",
            "there were any, WebSocket connections and their messages sent and received.",
            "Then, when the logs hold them: the programs run most inside the jail, the",
            "directories whose files changed most, with their operations, and the audit",
            "gaps (events the log is missing).",
            "Several files are added up (e.g. a log and its rotated predecessors)."
        })
final class LogSummary implements Callable<Integer> {
    /** The programs and directories listed by name; the rest are added up in one row. */
    static final int TOP = 10;

    private static final String[] HEADER = {
        "HOST", "REQUESTS", "DENIED", "ERRORS", "SENT", "RECEIVED", "REDACTED", "MCP TOOLS"
    };

    @Spec
    CommandSpec spec;

    @Mixin
    LogReaderOptions reading;

    @Parameters(
            arity = "0..*",
            paramLabel = "FILE",
            description = "Audit logs, read in the order given (default: $XDG_STATE_HOME/agentjail/audit.jsonl, as"
                    + " log tail).")
    List<Path> files;

    @Override
    public Integer call() {
        List<Path> files = Paths.logsOrDefault(this.files, System.getenv());
        PrintWriter out = spec.commandLine().getOut();
        LogSummaryStats stats = new LogSummaryStats();
        LogReader.forEach(files, reading.onProblem(spec.commandLine().getErr()), stats::add);
        print(out, stats, files.size());
        out.flush();
        return ExitCodes.OK;
    }

    /**
     * The summary as text: one heading line, then the table (hosts, then TOTAL). The WebSocket columns (connections,
     * and their messages sent and received) are there when the logs hold a WebSocket connection.
     */
    static void print(PrintWriter out, LogSummaryStats stats, int fileCount) {
        String files = fileCount == 1 ? "1 file" : fileCount + " files";
        if (stats.records() == 0) {
            out.println("no records in " + files);
            return;
        }
        out.printf(
                "%d records in %s, %d %s, %s to %s%n%n",
                stats.records(),
                files,
                stats.sessions(),
                stats.sessions() == 1 ? "session" : "sessions",
                LogRecordText.time(stats.first()),
                LogRecordText.time(stats.last()));
        boolean ws = stats.total().webSockets > 0;
        List<String[]> rows = new ArrayList<>();
        rows.add(ws ? withWebSockets(HEADER, "WS", "WS MESSAGES") : HEADER);
        for (LogSummaryStats.Host h : stats.hosts()) {
            rows.add(row(LogRecordText.printable(h.name), h, ws));
        }
        rows.add(row("TOTAL", stats.total(), ws));
        int columns = rows.get(0).length;
        table(out, rows, i -> i >= 1 && i < columns - 1);
        jail(out, stats);
    }

    /**
     * Inside the jail, when the logs hold any of it: the programs run most (runs: the sum of their exec records'
     * counts), the directories changed most with their operations, and the audit gaps.
     */
    static void jail(PrintWriter out, LogSummaryStats stats) {
        List<Map.Entry<String, Long>> programs = stats.programs();
        if (!programs.isEmpty()) {
            List<String[]> rows = new ArrayList<>();
            rows.add(new String[] {"PROGRAM", "RUNS"});
            for (Map.Entry<String, Long> p : programs.subList(0, Math.min(TOP, programs.size()))) {
                rows.add(new String[] {LogRecordText.printable(p.getKey()), Long.toString(p.getValue())});
            }
            if (programs.size() > TOP) {
                long rest = programs.subList(TOP, programs.size()).stream()
                        .mapToLong(Map.Entry::getValue)
                        .sum();
                rows.add(new String[] {"(" + (programs.size() - TOP) + " more)", Long.toString(rest)});
            }
            rows.add(new String[] {"TOTAL", Long.toString(stats.runs())});
            out.println();
            table(out, rows, i -> i == 1);
        }
        List<LogSummaryStats.Directory> directories = stats.directories();
        if (!directories.isEmpty()) {
            List<String[]> rows = new ArrayList<>();
            rows.add(new String[] {"FILES CHANGED IN", "CHANGES", "OPERATIONS"});
            for (LogSummaryStats.Directory d : directories.subList(0, Math.min(TOP, directories.size()))) {
                rows.add(
                        new String[] {LogRecordText.printable(d.name), Long.toString(d.changes), counts(d.operations)});
            }
            if (directories.size() > TOP) {
                long rest = directories.subList(TOP, directories.size()).stream()
                        .mapToLong(d -> d.changes)
                        .sum();
                rows.add(new String[] {"(" + (directories.size() - TOP) + " more)", Long.toString(rest), ""});
            }
            rows.add(new String[] {"TOTAL", Long.toString(stats.changes()), ""});
            out.println();
            table(out, rows, i -> i == 1);
        }
        if (stats.gaps() > 0) {
            out.println();
            out.println("AUDIT GAPS  " + stats.gaps() + ", " + stats.gapsMissed() + " events known missed: "
                    + counts(stats.gapReasons()));
        }
    }

    /** Columns padded to their widest cell, {@code numeric} ones right-aligned; a last text column is not padded. */
    private static void table(PrintWriter out, List<String[]> rows, IntPredicate numeric) {
        int columns = rows.get(0).length;
        int[] widths = new int[columns];
        for (String[] row : rows) {
            for (int i = 0; i < row.length; i++) {
                widths[i] = Math.max(widths[i], row[i].length());
            }
        }
        for (String[] row : rows) {
            StringBuilder line = new StringBuilder();
            for (int i = 0; i < row.length; i++) {
                String cell = row[i];
                int gap = widths[i] - cell.length();
                if (i > 0) {
                    line.append("  ");
                }
                if (numeric.test(i)) {
                    line.append(" ".repeat(gap)).append(cell);
                } else if (i < row.length - 1) {
                    line.append(cell).append(" ".repeat(gap));
                } else {
                    line.append(cell);
                }
            }
            out.println(line.toString().stripTrailing());
        }
    }

    /** {@code name (count), …} in the map's order. */
    private static String counts(Map<String, Long> counts) {
        return counts.entrySet().stream()
                .map(e -> LogRecordText.printable(e.getKey()) + " (" + e.getValue() + ")")
                .collect(Collectors.joining(", "));
    }

    /** {@code cells} with {@code extra} inserted before the last column (MCP tools, which stays last). */
    private static String[] withWebSockets(String[] cells, String... extra) {
        String[] out = new String[cells.length + extra.length];
        System.arraycopy(cells, 0, out, 0, cells.length - 1);
        System.arraycopy(extra, 0, out, cells.length - 1, extra.length);
        out[out.length - 1] = cells[cells.length - 1];
        return out;
    }

    private static String[] row(String name, LogSummaryStats.Host h, boolean ws) {
        String[] cells = {
            name,
            Long.toString(h.requests),
            Long.toString(h.denied),
            Long.toString(h.errors),
            LogRecordText.bytes(h.bytesOut),
            LogRecordText.bytes(h.bytesIn),
            Long.toString(h.redactions),
            tools(h.mcpTools)
        };
        return ws ? withWebSockets(cells, Long.toString(h.webSockets), messages(h)) : cells;
    }

    /** A host's WebSocket messages sent and received, as {@code 12↑ 30↓}; {@code -} without a connection. */
    static String messages(LogSummaryStats.Host h) {
        return h.webSockets == 0
                ? "-"
                : h.webSocketMessagesOut + "" + LogTailFormat.UP + " " + h.webSocketMessagesIn + LogTailFormat.DOWN;
    }

    private static String tools(Map<String, Long> tools) {
        if (tools.isEmpty()) {
            return "-";
        }
        return tools.entrySet().stream()
                .map(e -> LogRecordText.printable(e.getKey()) + " (" + e.getValue() + ")")
                .collect(Collectors.joining(", "));
    }
}

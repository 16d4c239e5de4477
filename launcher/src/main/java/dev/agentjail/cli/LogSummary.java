package dev.agentjail.cli;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code agentjail log summary}: per host, what the agent asked for and what it got, with totals. */
@Command(
        name = "summary",
        mixinStandardHelpOptions = true,
        description = {
            "Prints per-host counts of audit logs, then the totals.",
            "Per host: requests, denials, errors, bytes sent and received, secrets",
            "redacted (in requests and WebSocket messages), MCP tools used, and when",
            "there were any, WebSocket connections and their messages sent and received.",
            "Several files are added up (e.g. a log and its rotated predecessors)."
        })
final class LogSummary implements Callable<Integer> {
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
                boolean numeric = i >= 1 && i < columns - 1;
                int gap = widths[i] - cell.length();
                if (i > 0) {
                    line.append("  ");
                }
                if (numeric) {
                    line.append(" ".repeat(gap)).append(cell);
                } else if (i < row.length - 1) {
                    line.append(cell).append(" ".repeat(gap));
                } else {
                    line.append(cell);
                }
            }
            out.println(line);
        }
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

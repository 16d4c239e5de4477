package dev.agentjail.cli;

import dev.agentjail.proxy.audit.AuditRecord;
import java.io.Console;
import java.lang.reflect.Method;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * One readable line per request record, for {@code agentjail log tail}: time, decision, method, target, status, bytes
 * each way, and when present the reason of a refusal, the secrets redacted and the MCP tool. A WebSocket relay's
 * record (one per connection, when it closed) gets a line too: method {@code WS}, and {@code ws 12↑ 30↓} for the
 * messages sent and received, with the secrets redacted in them. Inside the jail, an {@code exec} record is a line
 * {@code exec   pid 7  /usr/bin/mv mv a b  (cwd /proj)}, a {@code file} record {@code file   rename a -> b  pid 7}
 * ({@code ×N} when the record stands for N events, {@code racy} when the memory changed while it was read) and an
 * {@code audit-gap} record {@code gap    REASON  missed N}. Every value from the log goes through {@link
 * LogRecordText#printable}, so a hostile path or argument cannot drive the terminal.
 */
final class LogTailFormat {
    static final String COLOR_AUTO = "auto";
    static final String COLOR_ALWAYS = "always";
    static final String COLOR_NEVER = "never";

    private static final String RESET = "\u001b[0m";
    private static final String GREEN = "\u001b[32m";
    private static final String RED = "\u001b[1;31m";
    private static final String YELLOW = "\u001b[33m";

    /** The method column of a WebSocket relay's record, which stands for the connection after its 101. */
    static final String WEBSOCKET = "WS";

    /** Messages from the client to the upstream, and back. */
    static final char UP = '\u2191';

    static final char DOWN = '\u2193';

    /** The first column of the records from inside the jail, where a request has its decision. */
    static final String EXEC = "exec";

    static final String FILE = "file";
    static final String GAP = "gap";

    /** Before the number of events a coalesced record stands for. */
    static final char TIMES = '\u00d7';

    private final boolean color;

    LogTailFormat(boolean color) {
        this.color = color;
    }

    /**
     * Whether to colour: never when {@code NO_COLOR} is set to anything non-empty (no-color.org), whatever {@code
     * when} says; for {@code auto} only on a terminal whose {@code TERM} is not {@code dumb}.
     */
    static boolean useColor(String when, Map<String, String> env, boolean terminal) {
        String noColor = env.get("NO_COLOR");
        if (noColor != null && !noColor.isEmpty()) {
            return false;
        }
        return switch (when) {
            case COLOR_ALWAYS -> true;
            case COLOR_NEVER -> false;
            default -> terminal && !"dumb".equals(env.get("TERM"));
        };
    }

    /**
     * Whether standard output is a terminal. From JDK 22 {@link System#console()} exists even when output is
     * redirected and {@code Console.isTerminal()} tells; the code targets 21, where a console exists only on a
     * terminal, so the newer method is looked up at run time.
     */
    static boolean stdoutIsTerminal() {
        Console console = System.console();
        if (console == null) {
            return false;
        }
        try {
            Method isTerminal = Console.class.getMethod("isTerminal");
            return (Boolean) isTerminal.invoke(console);
        } catch (NoSuchMethodException e) {
            return true;
        } catch (ReflectiveOperationException | RuntimeException e) {
            return false;
        }
    }

    /** The line for one record, without a line terminator. */
    String format(LogRecord r) {
        if (r.isExec()) {
            return exec(r);
        }
        if (r.isFile()) {
            return file(r);
        }
        if (r.isAuditGap()) {
            return gap(r);
        }
        StringBuilder out = new StringBuilder(160);
        out.append(LogRecordText.time(r.ts())).append("  ");
        String decision = r.decision() == null ? "-" : r.decision().toUpperCase(Locale.ROOT);
        String padded = pad(LogRecordText.printable(decision), 5);
        String colour = color ? colourOf(r.decision()) : null;
        if (colour != null) {
            out.append(colour).append(padded).append(RESET);
        } else {
            out.append(padded);
        }
        String method = r.isWebSocket() ? WEBSOCKET : r.method() == null ? "-" : LogRecordText.printable(r.method());
        out.append("  ").append(pad(method, 7));
        out.append("  ").append(target(r));
        out.append("  ").append(r.status() == 0 ? "-" : String.valueOf(r.status()));
        out.append("  out ").append(compact(r.bytesOut()));
        out.append("  in ").append(compact(r.bytesIn()));
        if (!r.isAllowed() && r.reason() != null) {
            out.append("  reason ").append(LogRecordText.printable(r.reason()));
        }
        if (r.isWebSocket()) {
            out.append("  ws ").append(r.websocket().messagesOut()).append(UP);
            out.append(' ').append(r.websocket().messagesIn()).append(DOWN);
            long found = r.messageRedactionCount();
            if (found > 0) {
                out.append(' ').append(found).append(" redacted: ").append(redactions(r.messageRedactions()));
            }
        } else if (!r.redactions().isEmpty()) {
            out.append("  redacted ").append(redactions(r.redactions()));
        }
        if (r.mcp() != null) {
            String label = r.mcp().toolLabel();
            out.append("  mcp ")
                    .append(LogRecordText.printable(
                            label != null
                                    ? label
                                    : r.mcp().method() != null ? r.mcp().method() : "-"));
        }
        return out.toString();
    }

    private static String exec(LogRecord r) {
        LogRecord.Exec e = r.exec();
        StringBuilder out = new StringBuilder(160);
        out.append(LogRecordText.time(r.ts())).append("  ").append(pad(EXEC, 5));
        out.append("  pid ").append(e.pid());
        out.append("  ").append(LogRecordText.word(e.path()));
        for (String arg : e.argv()) {
            out.append(' ').append(LogRecordText.word(arg));
        }
        if (e.argvTruncated()) {
            out.append("  (arguments cut)");
        }
        if (e.commands() > 1) {
            out.append("  (").append(e.commands()).append(" command lines, the first shown)");
        }
        if (e.missing()) {
            out.append("  not found");
        }
        refused(out, r);
        if (e.cwd() != null) {
            out.append("  (cwd ").append(LogRecordText.word(e.cwd())).append(')');
        }
        if (!r.redactions().isEmpty()) {
            out.append("  redacted ").append(redactions(r.redactions()));
        }
        return marks(out, e.count(), e.racy(), e.escaped());
    }

    private static String file(LogRecord r) {
        LogRecord.FileChange f = r.file();
        StringBuilder out = new StringBuilder(120);
        out.append(LogRecordText.time(r.ts())).append("  ").append(pad(FILE, 5));
        out.append("  ").append(LogRecordText.printable(f.op())).append(' ').append(LogRecordText.word(f.path()));
        if (f.target() != null) {
            out.append(" -> ").append(LogRecordText.word(f.target()));
        }
        if (!f.flags().isEmpty()) {
            out.append(" [")
                    .append(f.flags().stream().map(LogRecordText::printable).collect(Collectors.joining(",")))
                    .append(']');
        }
        if (f.paths() > 1) {
            out.append(" (").append(f.paths()).append(" paths)");
        }
        out.append("  pid ").append(f.pid());
        refused(out, r);
        return marks(out, f.count(), f.racy(), f.escaped());
    }

    private String gap(LogRecord r) {
        StringBuilder out = new StringBuilder(120);
        out.append(LogRecordText.time(r.ts())).append("  ");
        String label = pad(GAP, 5);
        out.append(color ? YELLOW + label + RESET : label);
        out.append("  ").append(r.reason() == null ? "-" : LogRecordText.printable(r.reason()));
        out.append("  missed ")
                .append(
                        r.gap().missed() == 0
                                ? "unknown"
                                : Long.toString(r.gap().missed()));
        if (r.gap().stopped()) {
            out.append("  stopped");
        }
        if (r.error() != null) {
            out.append("  error ").append(LogRecordText.printable(r.error()));
        }
        return out.toString();
    }

    /** A call the supervisor refused (its memory could not be read): it ran nothing and changed nothing. */
    private static void refused(StringBuilder out, LogRecord r) {
        if (AuditRecord.DENY.equals(r.decision())) {
            out.append("  REFUSED (")
                    .append(r.reason() == null ? "-" : LogRecordText.printable(r.reason()))
                    .append(')');
        }
    }

    /**
     * {@code ×N} for a record of N events, {@code racy}, and {@code escaped} (its names are written byte by byte: a
     * name with the byte 0xff and one with the text {@code \xff} print alike, and this tells which it is).
     */
    private static String marks(StringBuilder out, long count, boolean racy, boolean escaped) {
        if (count > 1) {
            out.append("  ").append(TIMES).append(count);
        }
        if (racy) {
            out.append("  racy");
        }
        if (escaped) {
            out.append("  escaped");
        }
        return out.toString();
    }

    /**
     * Where the request went, as a URL without query ({@code https://host/path}, the port only when not the scheme's
     * default), {@code host:port} for CONNECT, or what is known of it.
     */
    static String target(LogRecord r) {
        String host = r.host() == null ? "?" : r.host().indexOf(':') >= 0 ? "[" + r.host() + "]" : r.host();
        host = LogRecordText.printable(host);
        String path = r.path() == null ? "" : LogRecordText.printable(r.path());
        if ("CONNECT".equals(r.method())) {
            return host + (r.port() > 0 ? ":" + r.port() : "");
        }
        if (r.host() == null && r.path() == null) {
            return "-";
        }
        if (r.scheme() == null) {
            return host + (r.port() > 0 ? ":" + r.port() : "") + path;
        }
        int defaultPort = "https".equals(r.scheme()) ? 443 : 80;
        String port = r.port() > 0 && r.port() != defaultPort ? ":" + r.port() : "";
        return LogRecordText.printable(r.scheme()) + "://" + host + port + path;
    }

    private static String redactions(List<LogRecord.Redaction> found) {
        return found.stream()
                .map(x -> LogRecordText.printable(x.kind()) + "@" + LogRecordText.printable(x.location()) + "("
                        + x.count() + ")")
                .collect(Collectors.joining(","));
    }

    private static String colourOf(String decision) {
        if (LogRecord.ALLOW.equals(decision)) {
            return GREEN;
        }
        if (LogRecord.DENY.equals(decision)) {
            return RED;
        }
        return LogRecord.ERROR.equals(decision) ? YELLOW : null;
    }

    private static String compact(long bytes) {
        return LogRecordText.bytes(bytes).replace(" ", "");
    }

    private static String pad(String s, int width) {
        return s.length() >= width ? s : s + " ".repeat(width - s.length());
    }
}

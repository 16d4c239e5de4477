package dev.agentjail.cli;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.function.Function;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code agentjail log export}: audit records as Elastic Common Schema or OCSF events, one JSON per line. */
@Command(
        name = "export",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Writes audit records as ECS or OCSF for a SIEM, one JSON object per line.",
            "--format ecs: Elastic Common Schema, every record. --format ocsf: OCSF",
            "1.3.0: request and tunnel-close records as HTTP Activity (class_uid 4002),",
            "programs run in the jail as Process Activity (1007), changes to its files",
            "as File System Activity (1001). Field mapping: docs/audit-export.md."
        })
final class LogExport implements Callable<Integer> {
    static final String ECS = "ecs";
    static final String OCSF = "ocsf";

    @Spec
    CommandSpec spec;

    @Option(names = "--format", required = true, paramLabel = "ecs|ocsf", description = "Output schema.")
    String format;

    @Option(
            names = {"-o", "--output"},
            paramLabel = "FILE",
            description = "Write to FILE (mode 0600, replaced whole once complete) instead of stdout.")
    Path output;

    @Mixin
    LogReaderOptions reading;

    @Parameters(arity = "1..*", paramLabel = "FILE", description = "Audit logs, read in the order given.")
    List<Path> files;

    @Override
    public Integer call() {
        Function<LogRecord, Map<String, Object>> mapping = switch (format) {
            case ECS -> LogExportEcs::map;
            case OCSF -> LogExportOcsf::map;
            default ->
                throw new CliException(
                        ExitCodes.USAGE, "--format must be ecs or ocsf, not " + LogRecordText.printable(format));
        };
        PrintWriter err = spec.commandLine().getErr();
        long[] skipped = {0};
        if (output == null) {
            PrintWriter out = spec.commandLine().getOut();
            export(out, mapping, err, skipped);
            out.flush();
        } else {
            LogExportOutput.write(output, out -> export(out, mapping, err, skipped));
        }
        if (skipped[0] > 0) {
            err.println("agentjail: " + skipped[0] + " record(s) other than request, tunnel-close, exec and file"
                    + " (session records, audit gaps) not exported: OCSF has no class for them here; --format ecs"
                    + " exports them");
        }
        return ExitCodes.OK;
    }

    private void export(
            PrintWriter out, Function<LogRecord, Map<String, Object>> mapping, PrintWriter err, long[] skipped) {
        StringBuilder line = new StringBuilder(512);
        LogReader.forEach(files, reading.onProblem(err), r -> {
            Map<String, Object> doc = mapping.apply(r);
            if (doc == null) {
                skipped[0]++;
                return;
            }
            line.setLength(0);
            LogRecordJson.write(line, doc, LogRecordJson.Escape.ASCII);
            // "\n" whatever the platform: JSON Lines.
            out.print(line.append('\n'));
        });
    }
}

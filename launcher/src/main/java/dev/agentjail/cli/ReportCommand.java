package dev.agentjail.cli;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code agentjail report}: writes a self-contained HTML report of audit logs. */
@Command(
        name = "report",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Writes a self-contained HTML report of audit logs.",
            "The page loads nothing from elsewhere. It shows requests over time by host,",
            "allowed against denied, bytes per host, redactions by kind, MCP calls by",
            "tool, and a table of denials with their reasons. From inside the jail: a",
            "timeline of the commands run, the files changed per session by directory",
            "and operation, and the audit gaps."
        })
final class ReportCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(
            names = {"-o", "--output"},
            required = true,
            paramLabel = "FILE",
            description = "The HTML file to write (mode 0600, replaced whole once complete).")
    Path output;

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
        ReportData data = new ReportData();
        LogReader.forEach(files, reading.onProblem(spec.commandLine().getErr()), data::add);
        String html = ReportHtml.render(data, files);
        LogExportOutput.write(output, out -> out.write(html));
        spec.commandLine()
                .getOut()
                .printf(
                        "wrote %s: %d requests, %d denied%n",
                        output, data.stats().total().requests, data.stats().total().denied);
        return ExitCodes.OK;
    }
}

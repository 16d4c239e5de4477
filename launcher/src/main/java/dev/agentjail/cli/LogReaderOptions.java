package dev.agentjail.cli;

import java.io.PrintWriter;
import picocli.CommandLine.Option;

/** The reading flag the log commands share: what a line that is not a valid record does. */
final class LogReaderOptions {
    @Option(
            names = "--strict",
            description = "Stop with exit code 1 at the first line that is not a valid v1 record"
                    + " (default: skip it and name it, FILE:LINE, on stderr).")
    boolean strict;

    LogReader.OnProblem onProblem(PrintWriter err) {
        return strict ? LogReader.fail() : LogReader.warnAndSkip(err);
    }
}

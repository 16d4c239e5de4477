package dev.agentjail.cli.logging;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.Configurator;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.LayoutBase;
import ch.qos.logback.core.encoder.LayoutWrappingEncoder;
import ch.qos.logback.core.spi.ContextAwareBase;

/**
 * Configures diagnostics (never the audit trail, which has its own sink) in code: WARN and above to
 * stderr, one short line each; {@code AGENTJAIL_LOG_LEVEL} changes the level. Done in code rather
 * than XML because parsing a configuration file costs the CLI hundreds of milliseconds at start-up.
 */
public final class DiagnosticLogConfigurator extends ContextAwareBase implements Configurator {
    @Override
    public ExecutionStatus configure(LoggerContext context) {
        ConsoleAppender<ILoggingEvent> appender = new ConsoleAppender<>();
        appender.setContext(context);
        appender.setName("stderr");
        appender.setTarget("System.err");
        LayoutWrappingEncoder<ILoggingEvent> encoder = new LayoutWrappingEncoder<>();
        encoder.setContext(context);
        ShortLayout layout = new ShortLayout();
        layout.setContext(context);
        layout.start();
        encoder.setLayout(layout);
        encoder.start();
        appender.setEncoder(encoder);
        appender.start();
        Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
        root.setLevel(Level.toLevel(System.getenv("AGENTJAIL_LOG_LEVEL"), Level.WARN));
        root.addAppender(appender);
        return ExecutionStatus.DO_NOT_INVOKE_NEXT_IF_ANY;
    }

    /** {@code agentjail: LEVEL logger: message}, plus the exception's own line when there is one. */
    static final class ShortLayout extends LayoutBase<ILoggingEvent> {
        @Override
        public String doLayout(ILoggingEvent event) {
            String logger = event.getLoggerName();
            String shortName = logger.substring(logger.lastIndexOf('.') + 1);
            StringBuilder sb = new StringBuilder(128)
                    .append("agentjail: ")
                    .append(event.getLevel())
                    .append(' ')
                    .append(shortName)
                    .append(": ")
                    .append(event.getFormattedMessage());
            if (event.getThrowableProxy() != null) {
                sb.append(" (")
                        .append(event.getThrowableProxy().getClassName())
                        .append(": ")
                        .append(event.getThrowableProxy().getMessage())
                        .append(')');
            }
            return sb.append(System.lineSeparator()).toString();
        }
    }
}

package dev.agentjail.it.support;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** Runs the real curl binary; {@code -q} first so no ~/.curlrc changes what the test sends. */
public final class Curl {
    private Curl() {}

    /** {@code curl -q -sS -x http://127.0.0.1:PROXY ARGS…}, bounded to 60 seconds. */
    public static Command.Result viaProxy(int proxyPort, String... args) {
        List<String> argv = new ArrayList<>(
                List.of(Prerequisites.require(Prerequisites.CURL).toString(), "-q", "-sS", "--max-time", "50"));
        argv.add("-x");
        argv.add("http://127.0.0.1:" + proxyPort);
        argv.addAll(List.of(args));
        return Command.run(Duration.ofSeconds(60), argv);
    }
}

package dev.agentjail.it.support;

import java.util.Arrays;
import java.util.stream.Collectors;

/** Policy YAML for tests: {@code upstream.test} pinned to 127.0.0.1 and allowed on the given ports only. */
public final class Policies {
    /** Resolves only through the policy's {@code resolve} map, so no test traffic leaves the machine. */
    public static final String UPSTREAM = TestTls.HOST;

    /** Not in any allow list: requests to it are denied before any DNS lookup. */
    public static final String DENIED = "denied.test";

    private Policies() {}

    /** Allows {@code upstream.test:PORT} for each port, nothing else. */
    public static String upstreamOn(int... ports) {
        String allow = Arrays.stream(ports)
                .mapToObj(p -> "\"" + UPSTREAM + ":" + p + "\"")
                .collect(Collectors.joining(", "));
        return """
                version: 1
                network:
                  allow: [%s]
                  resolve: {%s: 127.0.0.1}
                """.formatted(allow, UPSTREAM);
    }
}

package dev.agentjail.jail;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Encodes arguments for bwrap's {@code --args FD}: each one NUL-terminated. Passing the argv this way keeps
 * environment values (API keys the policy forwards) out of {@code /proc/PID/cmdline}, which every host user can
 * read.
 */
public final class BwrapArgsFile {
    private BwrapArgsFile() {}

    public static byte[] encode(List<String> args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (String arg : args) {
            if (arg.indexOf('\0') >= 0) {
                throw new IllegalArgumentException("an argument contains a NUL byte");
            }
            out.writeBytes(arg.getBytes(StandardCharsets.UTF_8));
            out.write(0);
        }
        return out.toByteArray();
    }
}

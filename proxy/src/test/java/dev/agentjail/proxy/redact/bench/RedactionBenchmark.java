package dev.agentjail.proxy.redact.bench;

import dev.agentjail.proxy.redact.BodyKind;
import dev.agentjail.proxy.redact.BodyRedactor;
import dev.agentjail.proxy.redact.ByteSink;
import dev.agentjail.proxy.redact.Findings;
import dev.agentjail.proxy.redact.Redactor;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Redaction throughput, single thread, on a 1 MiB LLM-API-like JSON body with the full catalog (plus a
 * few known values and a custom pattern, as a policy would add). MB/s = ops/s × 1.048576.
 *
 * <p>Run: see docs/redaction.md ("Benchmark").
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class RedactionBenchmark {
    static final int SIZE = 1024 * 1024;

    /** {@code clean}: no secret; {@code secrets}: eight secrets spread through the body. */
    @Param({"clean", "secrets"})
    public String body;

    /** Chunk size the body is fed in, as TLS records (16 KiB) or as one aggregated buffer. */
    @Param({"16384", "1048576"})
    public int chunk;

    private Redactor redactor;
    private byte[] input;
    private final byte[] output = new byte[SIZE + 64];
    private int written;
    private final ByteSink sink = (bytes, offset, length) -> {
        System.arraycopy(bytes, offset, output, written, length);
        written += length;
    };

    @Setup(Level.Trial)
    public void setUp() {
        redactor = Redactor.builder()
                .knownValue("known:ANTHROPIC_API_KEY", "sk-ant-api03-placeholder-" + "q".repeat(80))
                .knownValue("known:DB_PASSWORD", "hunter2-but-longer")
                .customPattern("acme-token", java.util.regex.Pattern.compile("acme_[a-z0-9]{32}"), "acme_")
                .build();
        input = LlmJson.generate(SIZE, body.equals("secrets"), new Random(42));
    }

    @Benchmark
    public int redactStreaming() {
        written = 0;
        Findings findings = new Findings();
        BodyRedactor stream = redactor.bodyRedactor(BodyKind.JSON, findings);
        for (int pos = 0; pos < input.length; pos += chunk) {
            stream.feed(input, pos, Math.min(chunk, input.length - pos), sink);
        }
        stream.finish(sink);
        return written + findings.total();
    }

    /** Builds the synthetic request bodies. */
    static final class LlmJson {
        private static final String[] WORDS =
                ("the of and to in is that for it with as was on be by this are or from at which have "
                                + "an not they you we function return value key token they're keyed monkey-patch "
                                + "skip sk-learn aws region bucket secret password api_key config eye eyes ghost gl "
                                + "glance hfile npm install pypi rubygems docker github gitlab slack stripe openai "
                                + "anthropic claude model prompt response error exception stack trace line file path "
                                + "class interface method public private static final void int String byte[] JSON "
                                + "request header body chunk stream buffer memory thread lock queue Q~x AKIA? SK dapi")
                        .split(" ");

        private static final String CODE = "public static int parse(String s) {\\n"
                + "    if (s == null) {\\n        throw new IllegalArgumentException(\\\"null\\\");\\n    }\\n"
                + "    // see https:\\/\\/example.test\\/docs?key=value&x=1\\n"
                + "    return Integer.parseInt(s.strip(), 10) + 42;\\n}\\n";

        private static final String[] SECRETS = {
            "ghp_Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0UvWxYz",
            "AKIAABCDEFGHIJKLMNOP",
            "sk_live_a1B2c3D4e5F6g7H8i9J0k1L2",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlc2lnbmF0dXJlc2ln",
            "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\\n"
                    + "-----END PRIVATE KEY-----",
            "xoxb-12345678901-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
            "AIzaSyA1234567890abcdefghijklmnopqrstuv",
            "hunter2-but-longer",
        };

        static byte[] generate(int size, boolean withSecrets, Random random) {
            StringBuilder s = new StringBuilder(size + 4096);
            s.append("{\"model\":\"claude-test\",\"max_tokens\":4096,\"stream\":true,\"system\":\"You are a ")
                    .append("coding agent.\",\"messages\":[");
            int message = 0;
            int nextSecret = size / 9;
            int secretIndex = 0;
            while (s.length() < size - 2048) {
                if (message++ > 0) {
                    s.append(',');
                }
                s.append("{\"role\":\"")
                        .append(message % 2 == 0 ? "assistant" : "user")
                        .append("\",\"content\":[");
                s.append("{\"type\":\"text\",\"text\":\"");
                int target = Math.min(size - 1024, s.length() + 2000 + random.nextInt(6000));
                while (s.length() < target) {
                    if (random.nextInt(40) == 0) {
                        s.append("\\n\\n").append(CODE);
                    } else {
                        s.append(WORDS[random.nextInt(WORDS.length)]).append(random.nextInt(12) == 0 ? ". " : " ");
                    }
                    if (withSecrets && s.length() > nextSecret && secretIndex < SECRETS.length) {
                        s.append(" key: ").append(SECRETS[secretIndex++]).append(' ');
                        nextSecret += size / 9;
                    }
                }
                s.append("\"}]}");
            }
            s.append("],\"metadata\":{\"user_id\":\"u-123\"},\"pad\":\"");
            while (s.length() < size - 2) {
                s.append('x');
            }
            s.append("\"}");
            return s.toString().getBytes(StandardCharsets.UTF_8);
        }
    }
}

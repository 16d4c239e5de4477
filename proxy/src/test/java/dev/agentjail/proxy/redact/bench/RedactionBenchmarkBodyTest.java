package dev.agentjail.proxy.redact.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.proxy.redact.BodyKind;
import dev.agentjail.proxy.redact.Findings;
import dev.agentjail.proxy.redact.Redactor;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The benchmark measures what it claims: a 1 MiB body, clean or with its eight secrets all found. */
class RedactionBenchmarkBodyTest {
    @Test
    void bodiesAreOneMebibyteAndSecretsAreFound() {
        RedactionBenchmark bench = new RedactionBenchmark();
        bench.body = "secrets";
        bench.chunk = 16384;
        bench.setUp();
        assertTrue(bench.redactStreaming() >= RedactionBenchmark.SIZE);

        byte[] clean = RedactionBenchmark.LlmJson.generate(RedactionBenchmark.SIZE, false, new Random(42));
        byte[] dirty = RedactionBenchmark.LlmJson.generate(RedactionBenchmark.SIZE, true, new Random(42));
        assertEquals(RedactionBenchmark.SIZE, clean.length);
        assertEquals(RedactionBenchmark.SIZE, dirty.length);
        Redactor redactor = Redactor.builder()
                .knownValue("known:DB_PASSWORD", "hunter2-but-longer")
                .build();
        Findings none = new Findings();
        redactor.scanBody(clean, BodyKind.JSON, "body", none);
        assertEquals(0, none.total(), none.toString());
        Findings eight = new Findings();
        redactor.scanBody(dirty, BodyKind.JSON, "body", eight);
        assertEquals(8, eight.total(), eight.toString());
    }
}

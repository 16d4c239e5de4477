package dev.agentjail.it.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.agentjail.proxy.audit.AuditRecord;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;

/** Reads an audit log file (JSON Lines) strictly: every line must be a complete JSON object ending in a newline. */
public final class AuditLines {
    private static final ObjectMapper JSON = new ObjectMapper();

    private AuditLines() {}

    /** The raw bytes of the log, or none if it does not exist yet. */
    public static byte[] bytes(Path log) {
        try {
            return Files.readAllBytes(log);
        } catch (NoSuchFileException e) {
            return new byte[0];
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Counts complete lines (each ends in a newline) without parsing them. */
    public static long completeLines(Path log) {
        long n = 0;
        for (byte b : bytes(log)) {
            if (b == '\n') {
                n++;
            }
        }
        return n;
    }

    /**
     * Parses every line; fails when the file does not end with a newline (a torn last record) or a line is not one
     * JSON object with schema version 1.
     */
    public static List<JsonNode> read(Path log) {
        String text = new String(bytes(log), StandardCharsets.UTF_8);
        if (text.isEmpty()) {
            return List.of();
        }
        assertTrue(
                text.endsWith("\n"),
                () -> "the audit log ends in a partial line: …" + text.substring(Math.max(0, text.length() - 300)));
        List<JsonNode> records = new ArrayList<>();
        String[] lines = text.substring(0, text.length() - 1).split("\n", -1);
        for (int i = 0; i < lines.length; i++) {
            try {
                JsonNode node = JSON.readTree(lines[i]);
                assertTrue(node != null && node.isObject(), "line " + (i + 1) + " is not a JSON object: " + lines[i]);
                assertEquals(1, node.path("v").asInt(), "line " + (i + 1) + " has no schema version 1: " + lines[i]);
                records.add(node);
            } catch (JsonProcessingException e) {
                fail("line " + (i + 1) + " of the audit log is not JSON: " + lines[i], e);
            }
        }
        return records;
    }

    /** The records of one {@code kind}, in log order; count requests with {@code ofKind(records, "request")}. */
    public static List<JsonNode> ofKind(List<JsonNode> records, String kind) {
        return records.stream()
                .filter(r -> r.path("kind").asText().equals(kind))
                .toList();
    }

    /** The {@code kind: request} records: one per request, whatever else the log holds. */
    public static List<JsonNode> requests(List<JsonNode> records) {
        return ofKind(records, AuditRecord.KIND_REQUEST);
    }

    /** How many records carry each value of {@code field}. */
    public static Map<String, Long> countBy(List<JsonNode> records, String field) {
        return records.stream()
                .collect(Collectors.groupingBy(
                        (Function<JsonNode, String>) r -> r.path(field).asText("<missing>"), Collectors.counting()));
    }
}

package dev.agentjail.policy;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/** The published policy schema as the tests read it, and a sandbox in which its examples load. */
final class PolicySchemaFixtures {
    /** Beside the policy classes, where {@code agentjail policy schema} reads it too. */
    static final String RESOURCE = "policy-v1.schema.json";

    /**
     * Keys the schema declares that the loader does not read yet, as schema paths ({@code section.key},
     * {@code []} for list items); every key under one is pending too. The schema tests skip the loader
     * half of their checks for these, and fail once the loader accepts one, so that this list only
     * ever shrinks: when a key is implemented, delete it here.
     */
    static final Set<String> PENDING = Set.of();

    private PolicySchemaFixtures() {}

    /** Whether {@code path} (schema form, or the loader's with {@code [0]} indexes) is pending or under a pending key. */
    static boolean pending(String path) {
        String normal = path.replaceAll("\\[[0-9]+]", "[]");
        return PENDING.stream()
                .anyMatch(p -> normal.equals(p) || normal.startsWith(p + ".") || normal.startsWith(p + "["));
    }

    static String schemaText() {
        try (InputStream in = PolicyLoader.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException(RESOURCE + " is not on the class path");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> schema() {
        return (Map<String, Object>) PolicySchemaJson.parse(schemaText());
    }

    static PolicySchemaValidator validator() {
        return new PolicySchemaValidator(schema());
    }

    /**
     * Lays out {@code root/project} (the policy's directory), {@code root/home} and {@code root/team}
     * with the files the schema's examples name, so that the loader's existence checks pass.
     */
    static Sandbox sandbox(Path root) throws IOException {
        Path project = Files.createDirectories(root.resolve("project"));
        Path home = Files.createDirectories(root.resolve("home"));
        Files.createDirectories(project.resolve("certs"));
        Files.writeString(project.resolve("certs/corp-ca.pem"), "x");
        Files.createDirectories(home.resolve(".config/agentjail"));
        Files.writeString(home.resolve(".config/agentjail/corp-ca.pem"), "x");
        Files.createDirectories(root.resolve("team"));
        Files.writeString(root.resolve("team/base.yaml"), "version: 1\n");
        return new Sandbox(project, home);
    }

    /** Where a policy under test lives ({@code project}) and what {@code ~/} means ({@code home}). */
    record Sandbox(Path project, Path home) {
        /** Loads policy text as if it were {@code project/.agentjail.yaml}. */
        Policy load(String yaml) throws PolicyException {
            return PolicyLoader.parse(yaml, ".agentjail.yaml", project, home);
        }
    }

    /**
     * JSON text of a plain value; JSON is YAML too, so this is how generated documents reach the
     * loader without a YAML emitter's own ideas about tags and quoting.
     */
    static String toJson(Object value) {
        if (value instanceof Map<?, ?> map) {
            return map.entrySet().stream()
                    .map(e -> quote(String.valueOf(e.getKey())) + ": " + toJson(e.getValue()))
                    .collect(Collectors.joining(", ", "{", "}"));
        }
        if (value instanceof List<?> list) {
            return list.stream().map(PolicySchemaFixtures::toJson).collect(Collectors.joining(", ", "[", "]"));
        }
        if (value instanceof String text) {
            return quote(text);
        }
        if (value instanceof BigDecimal number) {
            return number.toPlainString();
        }
        return String.valueOf(value);
    }

    private static String quote(String text) {
        StringBuilder out = new StringBuilder("\"");
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                default -> {
                    if (c < 0x20 || c == 0x7f) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        return out.append('"').toString();
    }
}

package dev.agentjail.policy;

import java.nio.file.Path;
import java.util.Objects;
import java.util.Optional;

/**
 * A host secret whose exact value is redacted wherever it appears: the value of environment
 * variable {@code envName} ({@link Kind#ENV}, {@code file} null) or the trimmed contents of {@code
 * file} ({@link Kind#FILE}, an absolute path, {@code envName} null). Only the reference lives in
 * the policy; the launcher reads the value.
 */
public record KnownValue(Kind kind, String envName, Path file) {
    /** Where the value comes from. */
    public enum Kind {
        ENV,
        FILE
    }

    public KnownValue {
        Objects.requireNonNull(kind, "kind");
        switch (kind) {
            case ENV -> {
                if (file != null) {
                    throw new IllegalArgumentException("an env known value has no file");
                }
                Optional<String> problem = EnvPolicy.nameProblem(Objects.requireNonNull(envName, "envName"));
                if (problem.isPresent()) {
                    throw new IllegalArgumentException(problem.get());
                }
            }
            case FILE -> {
                if (envName != null) {
                    throw new IllegalArgumentException("a file known value has no env name");
                }
                if (!Objects.requireNonNull(file, "file").isAbsolute()) {
                    throw new IllegalArgumentException("file must be absolute: " + file);
                }
            }
        }
    }

    public static KnownValue env(String name) {
        return new KnownValue(Kind.ENV, name, null);
    }

    public static KnownValue file(Path file) {
        return new KnownValue(Kind.FILE, null, file);
    }
}

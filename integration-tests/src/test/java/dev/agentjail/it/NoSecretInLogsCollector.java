package dev.agentjail.it;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.io.TempDir;

/**
 * Copies every audit log a test left in its {@code @TempDir} directories (with their rotated files) into this run's log
 * directory before JUnit deletes them, so that {@link NoSecretInLogsTest} can scan all of them once the whole suite has
 * run. Registered for every test class through the ServiceLoader; does
 * nothing unless the {@value #LOGS_PROPERTY} system property names the directory (the pom sets it).
 */
public final class NoSecretInLogsCollector implements AfterEachCallback, AfterAllCallback {
    /** The directory the logs of this {@code mvn} run are collected in. */
    static final String LOGS_PROPERTY = "agentjail.it.logs";

    /** Audit logs and their rotated files ({@code audit.jsonl}, {@code audit.jsonl.3}). */
    static final Pattern LOG_NAME = Pattern.compile(".*\\.jsonl(\\.[1-9][0-9]*)?");

    @Override
    public void afterEach(ExtensionContext context) {
        List<Object> instances = context.getRequiredTestInstances().getAllInstances();
        for (Object instance : instances) {
            collect(context, instance.getClass(), instance);
        }
    }

    @Override
    public void afterAll(ExtensionContext context) {
        collect(context, context.getRequiredTestClass(), null);
    }

    /** The instance's {@code @TempDir} fields (static ones when {@code instance} is null), read before cleanup. */
    private static void collect(ExtensionContext context, Class<?> type, Object instance) {
        String target = System.getProperty(LOGS_PROPERTY);
        if (target == null || target.isBlank()) {
            return;
        }
        for (Class<?> c = type; c != null && c != Object.class; c = c.getSuperclass()) {
            for (Field field : c.getDeclaredFields()) {
                if (!field.isAnnotationPresent(TempDir.class)
                        || Modifier.isStatic(field.getModifiers()) != (instance == null)
                        || field.getType() != Path.class) {
                    continue;
                }
                Path dir;
                try {
                    field.setAccessible(true);
                    dir = (Path) field.get(instance);
                } catch (ReflectiveOperationException | RuntimeException e) {
                    throw new IllegalStateException("cannot read @TempDir " + field, e);
                }
                if (dir != null && Files.isDirectory(dir)) {
                    Path into = Path.of(target)
                            .resolve(context.getRequiredTestClass().getName())
                            .resolve(Integer.toHexString(context.getUniqueId().hashCode()))
                            .resolve(field.getName());
                    copyLogs(dir, into);
                }
            }
        }
    }

    private static void copyLogs(Path from, Path into) {
        List<Path> logs = new ArrayList<>();
        try {
            Files.walkFileTree(from, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
                    if (attrs.isRegularFile()
                            && LOG_NAME.matcher(file.getFileName().toString()).matches()) {
                        logs.add(file);
                    }
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFileFailed(Path file, IOException e) {
                    // A directory the jail made unreadable to us holds nothing we wrote.
                    return FileVisitResult.CONTINUE;
                }
            });
            for (Path log : logs) {
                Path copy = into.resolve(from.relativize(log).toString());
                Files.createDirectories(copy.getParent());
                Files.copy(log, copy, StandardCopyOption.REPLACE_EXISTING);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot collect the logs under " + from + " for the secret scan", e);
        }
    }
}

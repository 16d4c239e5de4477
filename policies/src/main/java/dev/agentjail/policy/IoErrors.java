package dev.agentjail.policy;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.FileSystemLoopException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.NotLinkException;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Puts an I/O failure in the operating system's words ({@code permission denied}, {@code no space left on device},
 * {@code read-only file system}), the one place every agentjail message about a file failure gets them from: the
 * JDK's {@link FileSystemException}s carry only the path as their message, and the reason, when there is one, in
 * {@link FileSystemException#getReason()}.
 */
public final class IoErrors {
    /** {@code FileInputStream} and friends say {@code PATH (Reason)}. */
    private static final Pattern STREAM_MESSAGE = Pattern.compile("(.*) \\(([^()]+)\\)");

    private IoErrors() {}

    /** The reason alone, lower case as strerror(3) reads in a sentence: {@code permission denied}. */
    public static String reason(IOException e) {
        if (e instanceof FileSystemException f) {
            if (f.getReason() != null && !f.getReason().isBlank()) {
                return words(f.getReason());
            }
            return switch (f) {
                case AccessDeniedException a -> "permission denied";
                case NoSuchFileException n -> "no such file or directory";
                case FileAlreadyExistsException x -> "file exists";
                case DirectoryNotEmptyException d -> "directory not empty";
                case NotDirectoryException d -> "not a directory";
                case NotLinkException l -> "not a symbolic link";
                case FileSystemLoopException l -> "a loop of symbolic links";
                default -> "file system error";
            };
        }
        String message = e.getMessage();
        if (message == null || message.isBlank()) {
            return e instanceof java.io.EOFException
                    ? "unexpected end of file"
                    : e.getClass().getSimpleName();
        }
        if (e instanceof FileNotFoundException) {
            Matcher m = STREAM_MESSAGE.matcher(message);
            if (m.matches()) {
                return words(m.group(2));
            }
        }
        return words(message);
    }

    /** The reason of {@code e}, preceded by the file it names, if any: {@code /var/log/x: permission denied}. */
    public static String describe(IOException e) {
        return file(e).map(f -> f + ": " + reason(e)).orElseGet(() -> reason(e));
    }

    /**
     * The reason of a failure on {@code subject}: the file the exception names comes first only when it is another
     * one (a lock file next to it, a parent directory): {@code /var/log/.aj.jsonl.lock: permission denied}.
     */
    public static String describe(Path subject, IOException e) {
        Optional<String> file = file(e);
        if (file.isEmpty() || sameFile(subject, file.get())) {
            return reason(e);
        }
        return file.get() + ": " + reason(e);
    }

    /** As {@link #describe(IOException)}, for an unchecked wrapper. */
    public static String describe(UncheckedIOException e) {
        return describe(e.getCause());
    }

    /**
     * The message of {@code e} with the OS reason of the I/O failure behind it: an {@link IOException} is described
     * as above; a message built elsewhere as {@code "cannot create DIR: " + cause.getMessage()} (which for the JDK's
     * file exceptions is the bare path) gets the cause's reason in place of that bare path. Any other message is
     * returned as it is.
     */
    public static String message(Throwable e) {
        if (e instanceof UncheckedIOException u && u.getCause() != null) {
            return describe(u.getCause());
        }
        if (e instanceof IOException io) {
            return describe(io);
        }
        String text = e.getMessage() == null ? e.toString() : e.getMessage();
        int depth = 0;
        for (Throwable c = e.getCause(); c != null && depth < 10; c = c.getCause(), depth++) {
            if (c instanceof IOException io && io.getMessage() != null && text.endsWith(io.getMessage())) {
                String said = io.getMessage();
                String prefix = text.substring(0, text.length() - said.length());
                String described = describe(io);
                if (described.equals(said) || text.endsWith(reason(io))) {
                    return text;
                }
                Optional<String> file = file(io);
                if (file.isPresent() && prefix.endsWith(file.get() + ": ")) {
                    return prefix + reason(io);
                }
                return prefix + described;
            }
        }
        return text;
    }

    /** The file an exception names, if it names one. */
    private static Optional<String> file(IOException e) {
        if (e instanceof FileSystemException f) {
            return Optional.ofNullable(f.getFile());
        }
        if (e instanceof FileNotFoundException && e.getMessage() != null) {
            Matcher m = STREAM_MESSAGE.matcher(e.getMessage());
            if (m.matches()) {
                return Optional.of(m.group(1));
            }
        }
        return Optional.empty();
    }

    private static boolean sameFile(Path subject, String file) {
        if (subject.toString().equals(file)) {
            return true;
        }
        try {
            return subject.toAbsolutePath()
                    .normalize()
                    .equals(Path.of(file).toAbsolutePath().normalize());
        } catch (RuntimeException e) {
            return false;
        }
    }

    /**
     * strerror's text in a sentence: {@code Read-only file system} becomes {@code read-only file system}; a message
     * that does not start with a capitalised word ({@code IOException}, {@code CA ...}) is left as it is.
     */
    private static String words(String text) {
        String t = text.strip();
        if (t.length() > 1 && Character.isUpperCase(t.charAt(0)) && Character.isLowerCase(t.charAt(1))) {
            return t.substring(0, 1).toLowerCase(Locale.ROOT) + t.substring(1);
        }
        return t;
    }
}

package dev.agentjail.jail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.regex.Pattern;

/**
 * Host files the launcher writes into the session's private directory and binds read-only into the jail: the
 * empty file behind masks and placeholders, and a synthetic passwd, group and hosts that name only the agent.
 */
public record SessionFiles(Path emptyFile, Path passwd, Path group, Path hosts) {
    /** The name used inside when the real user name is taken by a system entry (a launcher run as root). */
    public static final String FALLBACK_USER = "agent";

    private static final Pattern USER_NAME = Pattern.compile("[a-z_][a-z0-9_.-]{0,31}");

    public SessionFiles {
        JailPaths.absolute(emptyFile, "empty file");
        JailPaths.absolute(passwd, "passwd file");
        JailPaths.absolute(group, "group file");
        JailPaths.absolute(hosts, "hosts file");
    }

    /**
     * Writes the four files into {@code dir} (which must be private to the launcher) and returns them.
     *
     * @param userName the user name shown inside; replaced by {@link #FALLBACK_USER} if unusable
     * @param uid the agent's uid inside the jail
     * @param gid the agent's gid inside the jail
     * @param home the agent's home directory inside the jail
     * @param hostname the jail's hostname
     */
    public static SessionFiles write(Path dir, String userName, int uid, int gid, Path home, String hostname)
            throws IOException {
        SessionFiles files = new SessionFiles(
                dir.resolve("empty"), dir.resolve("passwd"), dir.resolve("group"), dir.resolve("hosts"));
        String name = insideUserName(userName, uid);
        writeReadOnly(files.emptyFile(), "");
        writeReadOnly(files.passwd(), passwd(name, uid, gid, home));
        writeReadOnly(files.group(), group(name, gid));
        writeReadOnly(files.hosts(), hosts(hostname));
        return files;
    }

    static String insideUserName(String userName, int uid) {
        boolean usable = userName != null && USER_NAME.matcher(userName).matches();
        boolean taken = "root".equals(userName) || "nobody".equals(userName);
        return usable && !(taken && uid != 0) ? userName : FALLBACK_USER;
    }

    static String passwd(String name, int uid, int gid, Path home) {
        StringBuilder out = new StringBuilder();
        if (uid != 0) {
            out.append("root:x:0:0:root:/root:/usr/sbin/nologin\n");
        }
        out.append(name).append(":x:").append(uid).append(':').append(gid).append(':');
        out.append(name).append(':').append(home).append(":/bin/sh\n");
        if (uid != 65534) {
            out.append("nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n");
        }
        return out.toString();
    }

    static String group(String name, int gid) {
        StringBuilder out = new StringBuilder();
        if (gid != 0) {
            out.append("root:x:0:\n");
        }
        out.append(name).append(":x:").append(gid).append(":\n");
        if (gid != 65534) {
            out.append("nogroup:x:65534:\n");
        }
        return out.toString();
    }

    static String hosts(String hostname) {
        return "127.0.0.1\tlocalhost " + hostname + "\n::1\tlocalhost ip6-localhost ip6-loopback\n";
    }

    private static void writeReadOnly(Path file, String content) throws IOException {
        Files.writeString(file, content, StandardCharsets.UTF_8, StandardOpenOption.CREATE_NEW);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("r--r--r--"));
    }
}

package dev.agentjail.certs;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;

/** "user@host" for the CA's name, so a user can tell which machine's CA they are looking at. */
final class UserAndHost {
    private UserAndHost() {}

    static String current() {
        String user = System.getProperty("user.name", "user");
        return user + "@" + hostName();
    }

    private static String hostName() {
        // The kernel's name first: InetAddress.getLocalHost() may wait for a DNS lookup.
        for (String file : new String[] {"/proc/sys/kernel/hostname", "/etc/hostname"}) {
            try {
                String name = Files.readString(Path.of(file)).strip();
                if (!name.isEmpty()) {
                    return name;
                }
            } catch (IOException | RuntimeException e) {
                // try the next source
            }
        }
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            return "localhost";
        }
    }
}

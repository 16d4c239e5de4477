package dev.agentjail.jail;

import dev.agentjail.policy.JailSettings.Device;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The host device paths behind each opt-in device class ({@code jail.devices}). Only what exists is
 * returned, and only character devices or directories directly below /dev: never a symlink, so a
 * device class cannot be turned into a bind of something else.
 */
public final class HostDevices {
    private static final Path DEV = Path.of("/dev");

    private HostDevices() {}

    /** The paths for {@code devices} under {@code dev} (normally /dev), sorted, without duplicates. */
    public static List<Path> find(Set<Device> devices, Path dev) throws IOException {
        List<Path> found = new ArrayList<>();
        for (Device device : devices) {
            switch (device) {
                case GPU -> {
                    add(found, dev.resolve("dri"));
                    add(found, dev.resolve("kfd"));
                    glob(found, dev, "nvidia*");
                }
                case CAMERA -> {
                    glob(found, dev, "video*");
                    glob(found, dev, "media*");
                }
                case AUDIO -> add(found, dev.resolve("snd"));
            }
        }
        return found.stream().distinct().sorted().toList();
    }

    /** {@link #find(Set, Path)} on the real /dev, mapped to the same paths inside the jail. */
    public static List<Path> find(Set<Device> devices) throws IOException {
        return find(devices, DEV);
    }

    private static void glob(List<Path> found, Path dev, String pattern) throws IOException {
        if (!Files.isDirectory(dev)) {
            return;
        }
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dev, pattern)) {
            for (Path entry : entries) {
                add(found, entry);
            }
        }
    }

    private static void add(List<Path> found, Path path) {
        if (Files.exists(path, LinkOption.NOFOLLOW_LINKS) && !Files.isSymbolicLink(path)) {
            found.add(DEV.resolve(path.getFileName().toString()));
        }
    }
}

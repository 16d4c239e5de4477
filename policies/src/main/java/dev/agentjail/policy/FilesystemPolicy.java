package dev.agentjail.policy;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * What a policy adds to the jail's file system: host paths bound read-only ({@code read}) or
 * read-write ({@code write}), project files hidden behind empty files ({@code mask}) and project
 * paths made read-only on top of the built-in list ({@code protectedPaths}, written {@code
 * protected} in YAML). A host path appears at most once across {@code read} and {@code write}.
 */
public record FilesystemPolicy(
        List<HostPath> read, List<HostPath> write, List<ProjectGlob> mask, List<ProjectGlob> protectedPaths) {
    public FilesystemPolicy {
        read = List.copyOf(read);
        write = List.copyOf(write);
        mask = List.copyOf(mask);
        protectedPaths = List.copyOf(protectedPaths);
        Set<HostPath> seen = new HashSet<>();
        for (HostPath path : concat(read, write)) {
            if (!seen.add(path)) {
                throw new IllegalArgumentException("host path listed twice: " + path.text());
            }
        }
    }

    /** No extra binds, masks or protections. */
    public static FilesystemPolicy none() {
        return new FilesystemPolicy(List.of(), List.of(), List.of(), List.of());
    }

    /**
     * The credential paths of {@link CredentialPaths#ALWAYS_HIDDEN}, resolved against {@code home},
     * that a {@code read} or {@code write} bind contains without the policy naming them itself (for
     * example {@code ~/.config/gcloud} under a bind of {@code ~/.config}, or all of them under a bind
     * of the home directory by its absolute path). The jail must hide these inside the binds.
     */
    public List<Path> coveredCredentials(Path home) {
        List<Path> binds = new ArrayList<>();
        for (HostPath bind : concat(read, write)) {
            binds.add(bind.resolve(home));
        }
        List<Path> covered = new ArrayList<>();
        for (HostPath credential : CredentialPaths.ALWAYS_HIDDEN) {
            Path target = credential.resolve(home);
            boolean named = binds.contains(target);
            boolean inside = binds.stream().anyMatch(bind -> !bind.equals(target) && target.startsWith(bind));
            if (inside && !named) {
                covered.add(target);
            }
        }
        return List.copyOf(covered);
    }

    private static List<HostPath> concat(List<HostPath> first, List<HostPath> second) {
        List<HostPath> all = new ArrayList<>(first);
        all.addAll(Objects.requireNonNull(second));
        return all;
    }
}

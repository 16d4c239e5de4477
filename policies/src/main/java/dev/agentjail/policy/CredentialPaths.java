package dev.agentjail.policy;

import java.util.List;

/**
 * The credential stores under the home directory that the jail never shows unless a policy names
 * them in {@code filesystem.read} or {@code filesystem.write}, also when a broader bind (such as
 * {@code ~/.config}) would cover them; see {@link FilesystemPolicy#coveredCredentials}.
 */
public final class CredentialPaths {
    /** In the order they are documented: ssh, cloud CLIs, container and cluster tools, git, gpg. */
    public static final List<HostPath> ALWAYS_HIDDEN = List.of(
            HostPath.inHome(".ssh"),
            HostPath.inHome(".aws"),
            HostPath.inHome(".config/gcloud"),
            HostPath.inHome(".kube"),
            HostPath.inHome(".docker"),
            HostPath.inHome(".netrc"),
            HostPath.inHome(".git-credentials"),
            HostPath.inHome(".gnupg"));

    private CredentialPaths() {}

    /** Whether the path is one of {@link #ALWAYS_HIDDEN}. */
    public static boolean isAlwaysHidden(HostPath path) {
        return ALWAYS_HIDDEN.contains(path);
    }
}

package dev.agentjail.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class FilesystemPolicyTest {
    private static final Path HOME = Path.of("/home/u");

    private static List<HostPath> paths(String... texts) throws MalformedEntryException {
        List<HostPath> paths = new ArrayList<>();
        for (String text : texts) {
            paths.add(HostPath.parse(text));
        }
        return paths;
    }

    private static List<Path> covered(List<HostPath> read, List<HostPath> write) {
        return new FilesystemPolicy(read, write, List.of(), List.of()).coveredCredentials(HOME);
    }

    @Test
    void alwaysHiddenListsTheIssuesCredentialStores() throws Exception {
        assertEquals(
                paths(
                        "~/.ssh",
                        "~/.aws",
                        "~/.config/gcloud",
                        "~/.kube",
                        "~/.docker",
                        "~/.netrc",
                        "~/.git-credentials",
                        "~/.gnupg"),
                CredentialPaths.ALWAYS_HIDDEN);
        assertEquals(true, CredentialPaths.isAlwaysHidden(HostPath.parse("~/.ssh/")));
        assertEquals(false, CredentialPaths.isAlwaysHidden(HostPath.parse("~/.ssh/known_hosts")));
        assertEquals(false, CredentialPaths.isAlwaysHidden(HostPath.parse("/home/u/.ssh")));
    }

    @Test
    void nothingIsCoveredByNarrowBinds() throws Exception {
        assertEquals(List.of(), covered(paths("~/.gitconfig", "/opt/tools"), paths("~/.cache/pip", "~/.claude")));
        assertEquals(List.of(), FilesystemPolicy.none().coveredCredentials(HOME));
    }

    @Test
    void aBroadBindCoversTheCredentialsInside() throws Exception {
        assertEquals(List.of(Path.of("/home/u/.config/gcloud")), covered(paths("~/.config"), List.of()));
        assertEquals(List.of(Path.of("/home/u/.config/gcloud")), covered(List.of(), paths("/home/u/.config")));
    }

    @Test
    void namingACredentialPathExposesOnlyThatOne() throws Exception {
        assertEquals(List.of(), covered(paths("~/.config", "~/.config/gcloud"), List.of()));
        // A file inside a credential directory is named, not the directory: the directory stays hidden.
        assertEquals(List.of(), covered(paths("~/.ssh/known_hosts"), List.of()));
    }

    @Test
    void bindingTheHomeByItsAbsolutePathCoversEveryCredential() throws Exception {
        List<Path> all = CredentialPaths.ALWAYS_HIDDEN.stream()
                .map(path -> path.resolve(HOME))
                .toList();
        assertEquals(all, covered(paths("/home"), List.of()));
        List<Path> allButSsh = all.subList(1, all.size());
        assertEquals(allButSsh, covered(paths("/home/u", "~/.ssh"), List.of()));
    }

    @Test
    void constructorCopiesAndRefusesAPathBoundTwice() throws Exception {
        List<HostPath> read = paths("~/.a");
        FilesystemPolicy policy = new FilesystemPolicy(read, List.of(), List.of(), List.of());
        read.add(HostPath.parse("~/.b"));
        assertEquals(paths("~/.a"), policy.read());
        assertThrows(UnsupportedOperationException.class, () -> policy.read().add(HostPath.parse("~/.c")));
        assertThrows(
                IllegalArgumentException.class,
                () -> new FilesystemPolicy(paths("~/.a"), paths("~/.a"), List.of(), List.of()));
        assertThrows(
                IllegalArgumentException.class,
                () -> new FilesystemPolicy(paths("~/.a", "~/.a/"), List.of(), List.of(), List.of()));
        assertThrows(NullPointerException.class, () -> new FilesystemPolicy(null, List.of(), List.of(), List.of()));
    }
}

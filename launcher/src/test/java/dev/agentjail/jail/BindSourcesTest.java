package dev.agentjail.jail;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link BindSources} on real directories and symbolic links: what a jailed agent can leave in a directory it may
 * write must not widen what the next session binds.
 */
class BindSourcesTest {
    @TempDir
    Path dir;

    private Path home;
    private Path project;
    private Path system;

    @BeforeEach
    void layout() throws IOException {
        Path root = dir.toRealPath();
        home = Files.createDirectories(root.resolve("home/u"));
        project = Files.createDirectories(root.resolve("home/u/work/app"));
        system = Files.createDirectories(root.resolve("usr"));
        Files.createDirectories(home.resolve(".ssh"));
        Files.writeString(home.resolve(".ssh/id_ed25519"), "key");
    }

    @Test
    void entriesWithoutLinksKeepTheirOwnPaths() throws Exception {
        Files.createDirectories(home.resolve(".claude"));
        Files.writeString(home.resolve(".claude/settings.json"), "{}");
        Files.createDirectories(dir.resolve("opt/sdk"));
        Path sdk = dir.toRealPath().resolve("opt/sdk");

        BindSources.Resolved r =
                resolve(List.of(rw(".claude"), ro(".claude/settings.json")), List.of(bind(sdk, Access.READ_ONLY)));

        assertEquals(List.of(rw(".claude"), ro(".claude/settings.json")), r.homeEntries());
        assertEquals(List.of(bind(sdk, Access.READ_ONLY)), r.extraBinds());
    }

    @Test
    void entriesThatDoNotExistAreLeftOutSoThatALinkMadeLaterIsNeverFollowed() throws Exception {
        Files.createDirectories(home.resolve(".claude"));
        Files.createSymbolicLink(home.resolve(".dangling"), Path.of("nowhere"));

        BindSources.Resolved r = resolve(
                List.of(rw(".claude"), ro(".claude/settings.json"), ro(".dangling"), ro(".gitconfig")),
                List.of(bind(dir.resolve("opt/none"), Access.READ_ONLY)));

        assertEquals(List.of(rw(".claude")), r.homeEntries());
        assertEquals(List.of(), r.extraBinds());
    }

    @Test
    void aHomeThatDoesNotExistHasNoEntries() throws Exception {
        BindSources.Resolved r = BindSources.resolve(
                dir.resolve("nonexistent"), project, List.of(system), List.of(ro(".gitconfig")), List.of());
        assertEquals(List.of(), r.homeEntries());
    }

    @Test
    void aLinkUpToTheHomeInsideAWritableConfigDirectoryStopsTheSession() throws IOException {
        // What an agent can leave behind under the claude-code preset (~/.claude writable, settings.json read-only).
        Files.createDirectories(home.resolve(".claude"));
        Files.createSymbolicLink(home.resolve(".claude/settings.json"), Path.of(".."));

        UnnamedLinkException e = assertThrows(
                UnnamedLinkException.class,
                () -> resolve(List.of(rw(".claude"), ro(".claude/settings.json")), List.of()));

        assertAll(
                () -> assertTrue(
                        e.getMessage().startsWith("filesystem.read ~/.claude/settings.json leads through"),
                        e::getMessage),
                () -> assertTrue(
                        e.getMessage().contains(home.resolve(".claude/settings.json") + " -> .. to " + home + ","),
                        e::getMessage),
                () -> assertTrue(e.getMessage().contains("remove it"), e::getMessage));
    }

    @Test
    void linksToCredentialsAndToTheirParentsStopTheSession() throws IOException {
        Files.createDirectories(home.resolve(".config/tool"));
        Files.createSymbolicLink(home.resolve(".config/tool/a"), home.resolve(".ssh"));
        Files.createSymbolicLink(home.resolve(".config/tool/b"), Path.of("../../.ssh/id_ed25519"));
        Files.createSymbolicLink(home.resolve(".config/tool/c"), Path.of(".."));

        for (String entry : List.of(".config/tool/a", ".config/tool/b", ".config/tool/c")) {
            assertThrows(
                    UnnamedLinkException.class,
                    () -> resolve(List.of(rw(".config/tool"), ro(entry)), List.of()),
                    entry);
        }
    }

    @Test
    void aLinkInsideAPathThePolicyNamesIsFollowedAndBoundFromWhereItLeads() throws Exception {
        // The native claude installer: ~/.local/bin/claude -> ~/.local/share/claude/versions/1.0.0
        Path version = Files.createDirectories(home.resolve(".local/share/claude/versions"))
                .resolve("1.0.0");
        Files.writeString(version, "#!/bin/sh\n");
        Files.createDirectories(home.resolve(".local/bin"));
        Files.createSymbolicLink(home.resolve(".local/bin/claude"), version);

        BindSources.Resolved r = resolve(List.of(ro(".local/bin/claude"), ro(".local/share/claude")), List.of());

        assertEquals(
                List.of(
                        new HomeEntry(Path.of(".local/bin/claude"), Access.READ_ONLY, Optional.of(version)),
                        ro(".local/share/claude")),
                r.homeEntries());
    }

    @Test
    void aLinkIntoTheProjectOrASystemDirectoryIsFollowed() throws Exception {
        Files.writeString(project.resolve("tool.conf"), "x");
        Files.writeString(system.resolve("tool"), "x");
        Files.createSymbolicLink(home.resolve(".toolrc"), project.resolve("tool.conf"));
        Files.createSymbolicLink(home.resolve(".tool"), system.resolve("tool"));

        BindSources.Resolved r = resolve(List.of(rw(".toolrc"), ro(".tool")), List.of());

        assertEquals(
                List.of(
                        new HomeEntry(Path.of(".toolrc"), Access.READ_WRITE, Optional.of(project.resolve("tool.conf"))),
                        new HomeEntry(Path.of(".tool"), Access.READ_ONLY, Optional.of(system.resolve("tool")))),
                r.homeEntries());
    }

    @Test
    void aWritableEntryMayNotLeadIntoAPathNamedOnlyReadOnly() throws IOException {
        Path dotfiles = Files.createDirectories(home.resolve("dotfiles"));
        Files.writeString(dotfiles.resolve("gitconfig"), "[user]\n");
        Files.createSymbolicLink(home.resolve(".gitconfig"), Path.of("dotfiles/gitconfig"));

        UnnamedLinkException e = assertThrows(
                UnnamedLinkException.class, () -> resolve(List.of(rw(".gitconfig"), ro("dotfiles")), List.of()));
        assertTrue(e.getMessage().contains("does not name writable"), e::getMessage);
        assertTrue(
                e.getMessage().contains("add " + dotfiles.resolve("gitconfig") + " to filesystem.write"),
                e::getMessage);
    }

    @Test
    void aDotfileLinkWhoseTargetThePolicyNamesIsFollowed() throws Exception {
        Path dotfiles = Files.createDirectories(home.resolve("dotfiles"));
        Files.writeString(dotfiles.resolve("gitconfig"), "[user]\n");
        Files.createSymbolicLink(home.resolve(".gitconfig"), Path.of("dotfiles/gitconfig"));

        assertThrows(UnnamedLinkException.class, () -> resolve(List.of(ro(".gitconfig")), List.of()));
        BindSources.Resolved r = resolve(List.of(ro(".gitconfig"), ro("dotfiles")), List.of());
        assertEquals(
                new HomeEntry(Path.of(".gitconfig"), Access.READ_ONLY, Optional.of(dotfiles.resolve("gitconfig"))),
                r.homeEntries().get(0));
    }

    @Test
    void aLinkInAParentDirectoryIsCheckedToo() throws IOException {
        Path elsewhere = Files.createDirectories(dir.toRealPath().resolve("elsewhere/config"));
        Files.createDirectories(elsewhere.resolve("tool"));
        Files.createSymbolicLink(home.resolve(".config"), elsewhere);

        UnnamedLinkException e =
                assertThrows(UnnamedLinkException.class, () -> resolve(List.of(rw(".config/tool")), List.of()));
        assertTrue(e.getMessage().contains(home.resolve(".config") + " -> " + elsewhere), e::getMessage);
    }

    @Test
    void aNamedPathThatIsItselfAnUntrustedLinkNamesNothing() throws IOException {
        // Both entries planted: "a" leads up to the home, "b" through "a" to ~/.ssh. Neither may vouch for the other.
        Files.createDirectories(home.resolve(".cfg"));
        Files.createSymbolicLink(home.resolve(".cfg/a"), Path.of(".."));
        Files.createSymbolicLink(home.resolve(".cfg/b"), Path.of("a/.ssh"));

        assertThrows(
                UnnamedLinkException.class, () -> resolve(List.of(rw(".cfg"), rw(".cfg/a"), ro(".cfg/b")), List.of()));
    }

    @Test
    void anAbsoluteBindThroughAnUnnamedLinkStopsTheSession() throws IOException {
        Path writable = Files.createDirectories(dir.toRealPath().resolve("shared"));
        Files.createSymbolicLink(writable.resolve("data"), home);

        UnnamedLinkException e = assertThrows(
                UnnamedLinkException.class,
                () -> resolve(List.of(), List.of(bind(writable.resolve("data"), Access.READ_ONLY))));
        assertTrue(
                e.getMessage().startsWith("filesystem.read " + writable.resolve("data") + " leads through"),
                e::getMessage);
    }

    @Test
    void anAbsoluteBindIsBoundFromItsRealPathAtThePathThePolicyGives() throws Exception {
        Path real = Files.createDirectories(dir.toRealPath().resolve("opt/sdk-1.2"));
        Path link = dir.toRealPath().resolve("opt/sdk");
        Files.createSymbolicLink(link, Path.of("sdk-1.2"));

        BindSources.Resolved r = resolve(
                List.of(),
                List.of(bind(link, Access.READ_ONLY), bind(dir.toRealPath().resolve("opt"), Access.READ_ONLY)));

        assertEquals(
                new Bind(real, link, Access.READ_ONLY, true), r.extraBinds().get(0));
    }

    @Test
    void aLoopOfLinksIsAnError() throws IOException {
        Files.createSymbolicLink(home.resolve(".a"), Path.of(".b"));
        Files.createSymbolicLink(home.resolve(".b"), Path.of(".a"));

        IOException e = assertThrows(IOException.class, () -> resolve(List.of(ro(".a")), List.of()));
        assertTrue(e.getMessage().contains("too many levels of symbolic links"), e::getMessage);
    }

    private BindSources.Resolved resolve(List<HomeEntry> entries, List<Bind> binds) throws Exception {
        return BindSources.resolve(home, project, List.of(system), entries, binds);
    }

    private static HomeEntry ro(String relative) {
        return new HomeEntry(Path.of(relative), Access.READ_ONLY);
    }

    private static HomeEntry rw(String relative) {
        return new HomeEntry(Path.of(relative), Access.READ_WRITE);
    }

    private static Bind bind(Path path, Access access) {
        return new Bind(path, path, access, true);
    }
}

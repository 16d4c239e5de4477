package dev.agentjail.policy;

import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * A built-in agent preset: an ordinary policy document ({@code yaml}, loaded under the source name
 * {@code preset:NAME}) together with what its top-level {@code preset} mapping declares: its name,
 * a one-line description, the program names ({@code binaries}) that select it for {@code
 * agentjail run PROGRAM}, and how to install the agent ({@code install}, shown when it is not found; may be empty).
 */
public record Preset(String name, String description, List<String> binaries, String install, String yaml) {
    /** Longest description, so that {@code agentjail policy presets} keeps one line per preset. */
    public static final int MAX_DESCRIPTION = 100;

    private static final Pattern NAME = Pattern.compile("[a-z0-9]([a-z0-9-]{0,38}[a-z0-9])?");

    /** A file name as found on PATH: no directory, no control or shell-special characters. */
    private static final Pattern BINARY = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._+-]{0,63}");

    public Preset {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(description, "description");
        Objects.requireNonNull(yaml, "yaml");
        Objects.requireNonNull(install, "install");
        if (Quoting.hasControl(install) || !install.strip().equals(install)) {
            throw new IllegalArgumentException("the install hint of preset " + name + " must be one trimmed line");
        }
        if (!NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("invalid preset name " + Quoting.quote(name)
                    + ": lower-case letters, digits and '-', at most 40 characters");
        }
        if (description.isBlank()
                || description.length() > MAX_DESCRIPTION
                || Quoting.hasControl(description)
                || !description.strip().equals(description)) {
            throw new IllegalArgumentException("the description of preset " + name
                    + " must be one trimmed line of at most " + MAX_DESCRIPTION + " characters");
        }
        binaries = List.copyOf(binaries);
        if (binaries.isEmpty()) {
            throw new IllegalArgumentException("preset " + name + " names no binary");
        }
        for (String binary : binaries) {
            if (!BINARY.matcher(binary).matches()) {
                throw new IllegalArgumentException("preset " + name + ": invalid binary name " + Quoting.quote(binary));
            }
        }
        if (new HashSet<>(binaries).size() != binaries.size()) {
            throw new IllegalArgumentException("preset " + name + " lists a binary twice");
        }
    }

    /** A preset without an install hint. */
    public Preset(String name, String description, List<String> binaries, String yaml) {
        this(name, description, binaries, "", yaml);
    }

    /** The name its policy is loaded under, and that errors and origins show: {@code preset:NAME}. */
    public String sourceName() {
        return PolicyKeys.PRESET_SOURCE_PREFIX + name;
    }

    /**
     * This preset on its own, as a policy; {@code ~/} entries mean {@code home}. A preset names no
     * relative paths, so no base directory is involved.
     */
    public Policy policy(Path home) throws PolicyException {
        return PolicyLoader.parse(yaml, sourceName(), Path.of("/"), home);
    }

    /** Whether {@code program} (a path or a bare name, as in argv[0]) is one of this preset's binaries. */
    public boolean runs(String program) {
        return binaries.contains(basename(Objects.requireNonNull(program, "program")));
    }

    static String basename(String program) {
        return program.substring(program.lastIndexOf('/') + 1);
    }
}

package dev.agentjail.policy;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.yaml.snakeyaml.nodes.Node;

/** Reads policy YAML into a validated {@link Policy}; every error names file, line and key. */
public final class PolicyLoader {
    /** The schema version this build reads. */
    public static final int SUPPORTED_VERSION = 1;

    /** Upper bound on a policy's size in code points; real policies are a few kilobytes. */
    static final int MAX_CODE_POINTS = PolicyDocument.MAX_CODE_POINTS;

    private PolicyLoader() {}

    /** Loads a policy file; files it names by relative path are relative to the file's directory. */
    public static Policy load(Path file) throws PolicyException {
        return load(file, PolicyFiles.defaultHome());
    }

    /** As {@link #load(Path)}, with {@code ~/} in file entries meaning {@code home} (absolute). */
    public static Policy load(Path file, Path home) throws PolicyException {
        return PolicyStack.load(List.of(PolicyStack.Input.file(PolicyLayer.OVERRIDE, file)), home)
                .policy();
    }

    /** Parses policy text; files it names by relative path are relative to the current directory. */
    public static Policy parse(String yaml, String sourceName) throws PolicyException {
        return parse(yaml, sourceName, Path.of(""));
    }

    /** Parses policy text; files it names by relative path are relative to {@code baseDir}. */
    public static Policy parse(String yaml, String sourceName, Path baseDir) throws PolicyException {
        return parse(yaml, sourceName, baseDir, PolicyFiles.defaultHome());
    }

    /**
     * Parses policy text (and the presets and files it {@code extends}); files it names are relative
     * to {@code baseDir}, or to {@code home} when written {@code ~/...}. Checks that {@code
     * tls.upstream_ca} files are readable regular files.
     */
    public static Policy parse(String yaml, String sourceName, Path baseDir, Path home) throws PolicyException {
        Objects.requireNonNull(yaml, "yaml");
        Objects.requireNonNull(sourceName, "sourceName");
        return PolicyStack.load(List.of(PolicyStack.Input.text(PolicyLayer.OVERRIDE, sourceName, yaml, baseDir)), home)
                .policy();
    }

    /**
     * Reads the sections of one document, or of several merged, into a policy. {@code origins} says
     * which file each node came from (for messages and relative paths).
     */
    static Policy build(Map<String, Node> entries, Origins origins, Path home, String sourceName)
            throws PolicyException {
        YamlNodes nodes = new YamlNodes(origins);
        PolicyFiles files = new PolicyFiles(origins, home.toAbsolutePath().normalize());
        int number = SUPPORTED_VERSION;
        Node network = entries.get("network");
        Node filesystem = entries.get("filesystem");
        Node env = entries.get("env");
        Node limits = entries.get("limits");
        Node jail = entries.get("jail");
        Node tls = entries.get("tls");
        Node redaction = entries.get("redaction");
        Node credentials = entries.get("credentials");
        Node mcp = entries.get("mcp");
        Node audit = entries.get("audit");
        NetworkPolicy networkPolicy = network == null ? NetworkPolicy.none() : new NetworkSection(nodes).read(network);
        FilesystemSection filesystemSection = new FilesystemSection(nodes, files);
        FilesystemPolicy filesystemPolicy =
                filesystem == null ? FilesystemPolicy.none() : filesystemSection.read(filesystem);
        EnvSection envSection = new EnvSection(nodes);
        EnvPolicy envPolicy = env == null ? EnvPolicy.none() : envSection.read(env);
        Limits limitsPolicy = limits == null ? Limits.defaults() : new LimitsSection(nodes).read(limits);
        JailSettings jailSettings = jail == null ? JailSettings.defaults() : new JailSection(nodes).read(jail);
        TlsSettings tlsSettings = tls == null ? TlsSettings.defaults() : new TlsSection(nodes, files).read(tls);
        RedactionPolicy redactionPolicy =
                redaction == null ? RedactionPolicy.defaults() : new RedactionSection(nodes, files).read(redaction);
        List<CredentialRule> credentialRules = credentials == null
                ? List.of()
                : new CredentialsSection(nodes, files).read(credentials, envSection, networkPolicy, filesystemSection);
        return new Policy(
                number,
                networkPolicy,
                filesystemPolicy,
                envPolicy,
                limitsPolicy,
                jailSettings,
                sourceName,
                tlsSettings,
                redactionPolicy,
                credentialRules,
                mcp == null ? McpPolicy.none() : new McpSection(nodes).read(mcp),
                audit == null ? AuditSettings.defaults() : new AuditSection(nodes, files).read(audit));
    }
}

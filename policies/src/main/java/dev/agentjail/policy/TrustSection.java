package dev.agentjail.policy;

import java.util.Map;
import java.util.Set;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;

/**
 * Reads the {@code trust} section: whether a project policy may be trusted with host resources at all. Only the
 * team, user and command-line layers may write it; a project cannot vouch for itself.
 */
final class TrustSection {
    static final String SECTION = "trust";
    static final Set<String> KEYS = Set.of("projects");
    static final String EXPLICIT = "explicit";
    static final String NEVER = "never";

    static final String FROM_PROJECT = "the project policy cannot decide whether project policies may be trusted;"
            + " set it in the team or user policy";

    private final YamlNodes nodes;

    TrustSection(YamlNodes nodes) {
        this.nodes = nodes;
    }

    /** The setting of one document, or of several merged; {@code null} when {@code trust} is absent. */
    ProjectTrust.Setting read(Node trust) throws PolicyException {
        Map<String, Node> entries = nodes.mapping(trust, SECTION, KEYS);
        Node projects = entries.get("projects");
        if (projects == null) {
            return ProjectTrust.Setting.DEFAULT;
        }
        String value = nodes.string(projects, "trust.projects");
        ProjectTrust.Mode mode = switch (value) {
            case EXPLICIT -> ProjectTrust.Mode.EXPLICIT;
            case NEVER -> ProjectTrust.Mode.NEVER;
            default ->
                throw nodes.error(
                        projects,
                        "trust.projects",
                        "unknown value " + Quoting.quote(value) + " (expected explicit or never)");
        };
        PolicySource source = nodes.origins().source(projects);
        return new ProjectTrust.Setting(mode, source.layer(), nodes.origins().where(projects));
    }

    /** Refuses a {@code trust} section written in the project layer. */
    static void refuseFromProject(PolicyDocument document, Origins origins) throws PolicyException {
        if (document.source().layer() != PolicyLayer.PROJECT) {
            return;
        }
        for (NodeTuple tuple : document.root().getValue()) {
            if (tuple.getKeyNode() instanceof ScalarNode key && key.getValue().equals(SECTION)) {
                Node at = tuple.getKeyNode();
                String path = SECTION;
                if (tuple.getValueNode() instanceof MappingNode mapping
                        && !mapping.getValue().isEmpty()
                        && mapping.getValue().get(0).getKeyNode() instanceof ScalarNode first) {
                    at = first;
                    path = SECTION + "." + first.getValue();
                }
                throw new YamlNodes(origins).error(at, path, FROM_PROJECT);
            }
        }
    }
}

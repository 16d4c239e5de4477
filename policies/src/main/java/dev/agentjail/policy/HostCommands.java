package dev.agentjail.policy;

import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;

/**
 * Refuses {@code mcp.servers[].command} in a project policy: a host-side MCP server runs on the host, outside the
 * jail, so a repository's {@code .agentjail.yaml} (or anything it extends) starting one would be code execution
 * outside the jail for whoever clones it.
 */
final class HostCommands {
    static final String PROBLEM = "a host-side MCP server runs outside the jail, so the project policy cannot start"
            + " one; declare this server in your user policy ($XDG_CONFIG_HOME/agentjail/policy.yaml), the team"
            + " policy, or a file given with --policy";

    private HostCommands() {}

    /** Throws when {@code document} is of the project layer and one of its MCP servers has a command. */
    static void refuseFromProject(PolicyDocument document, Origins origins) throws PolicyException {
        if (document.source().layer() != PolicyLayer.PROJECT) {
            return;
        }
        // The document alone has already been read successfully, so the shapes are the expected ones.
        if (!(document.settings().get("mcp") instanceof MappingNode mcp)) {
            return;
        }
        Node servers = value(mcp, "servers");
        if (!(servers instanceof SequenceNode list)) {
            return;
        }
        for (int i = 0; i < list.getValue().size(); i++) {
            if (list.getValue().get(i) instanceof MappingNode server) {
                Node key = key(server, "command");
                if (key != null) {
                    throw new YamlNodes(origins).error(key, "mcp.servers[" + i + "].command", PROBLEM);
                }
            }
        }
    }

    private static Node value(MappingNode mapping, String name) {
        for (NodeTuple tuple : mapping.getValue()) {
            if (tuple.getKeyNode() instanceof ScalarNode k && k.getValue().equals(name)) {
                return tuple.getValueNode();
            }
        }
        return null;
    }

    private static Node key(MappingNode mapping, String name) {
        for (NodeTuple tuple : mapping.getValue()) {
            if (tuple.getKeyNode() instanceof ScalarNode k && k.getValue().equals(name)) {
                return k;
            }
        }
        return null;
    }
}

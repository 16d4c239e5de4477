package dev.agentjail.policy;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import org.yaml.snakeyaml.nodes.Node;

/**
 * Reads the {@code credentials} section of a policy into {@link CredentialRule}s, and refuses rules
 * that would let the real value reach the jail or skip the proxy's swap.
 */
final class CredentialsSection {
    static final Set<String> KEYS = Set.of("env", "file", "hosts", "header", "optional");

    private final YamlNodes nodes;
    private final PolicyFiles files;

    CredentialsSection(YamlNodes nodes, PolicyFiles files) {
        this.nodes = nodes;
        this.files = files;
    }

    /**
     * {@code envOrigins} says where each name of the {@code env} section is; {@code network} holds the
     * tunnelled hosts, which a credential cannot be injected into.
     */
    List<CredentialRule> read(
            Node credentials, EnvSection envSection, NetworkPolicy network, FilesystemSection filesystem)
            throws PolicyException {
        Map<String, String> envOrigins = envSection.origins();
        String path = "credentials";
        List<CredentialRule> rules = new ArrayList<>();
        Map<String, Node> seen = new HashMap<>();
        List<Node> items = nodes.sequence(credentials, path);
        for (int i = 0; i < items.size(); i++) {
            String itemPath = path + "[" + i + "]";
            Node item = items.get(i);
            Map<String, Node> fields = nodes.mapping(item, itemPath, KEYS);
            Node envNode = nodes.required(fields, item, itemPath, "env");
            Node hostsNode = nodes.required(fields, item, itemPath, "hosts");
            Node headerNode = nodes.required(fields, item, itemPath, "header");

            String envPath = itemPath + ".env";
            String env = EnvSection.name(nodes, envNode, envPath);
            envSection.checkNotDenied(envNode, envPath, env);
            Node earlier = seen.putIfAbsent(env, item);
            if (earlier != null && YamlNodes.same(earlier, item)) {
                throw nodes.error(
                        envNode,
                        envPath,
                        "the same credential rule for " + Quoting.quote(env) + " is already at "
                                + nodes.origins().where(earlier) + ": remove one");
            }
            if (earlier != null) {
                throw nodes.error(
                        envNode,
                        envPath,
                        Quoting.quote(env) + " already has a different credential rule, at "
                                + nodes.origins().where(earlier)
                                + "; a policy may restate that rule word for word, but not change it: remove one");
            }
            String inEnv = envOrigins.get(env);
            if (inEnv != null) {
                throw nodes.error(
                        envNode,
                        envPath,
                        Quoting.quote(env) + " is also in " + inEnv
                                + "; the jail must see only the placeholder, never the real value: remove it there");
            }
            Node fileNode = fields.get("file");
            Path file = fileNode == null ? null : files.read(nodes, fileNode, itemPath + ".file");
            if (file != null) {
                filesystem.checkNotDenied(fileNode, itemPath + ".file", file);
            }
            List<Target> hosts = hosts(hostsNode, itemPath + ".hosts", network);
            String headerPath = itemPath + ".header";
            String header = nodes.string(headerNode, headerPath);
            Optional<String> headerProblem = CredentialRule.headerProblem(header);
            if (headerProblem.isPresent()) {
                throw nodes.error(headerNode, headerPath, headerProblem.get());
            }
            Node optionalNode = fields.get("optional");
            boolean optional = optionalNode != null && nodes.bool(optionalNode, itemPath + ".optional");
            rules.add(new CredentialRule(env, file, hosts, header, optional));
        }
        return rules;
    }

    private List<Target> hosts(Node node, String path, NetworkPolicy network) throws PolicyException {
        List<Node> items = nodes.sequence(node, path);
        if (items.isEmpty()) {
            throw nodes.error(node, path, "expected at least one host");
        }
        List<Target> hosts = new ArrayList<>();
        Map<Target, String> seen = new HashMap<>();
        for (int i = 0; i < items.size(); i++) {
            String itemPath = path + "[" + i + "]";
            Node item = items.get(i);
            String text = nodes.string(item, itemPath);
            Target target = target(item, itemPath, text);
            String earlier = seen.putIfAbsent(target, itemPath);
            if (earlier != null) {
                throw nodes.error(
                        item, itemPath, Quoting.quote(target.authority()) + " is already listed at " + earlier);
            }
            Optional<String> tunnel = network.tunnelRule(target, CredentialRule.DEFAULT_PORT);
            if (tunnel.isPresent()) {
                throw nodes.error(
                        item,
                        itemPath,
                        Quoting.quote(target.authority()) + " is tunnelled by " + tunnel.get()
                                + "; a credential is injected only into intercepted requests");
            }
            hosts.add(target);
        }
        return hosts;
    }

    private Target target(Node item, String itemPath, String text) throws PolicyException {
        if (text.indexOf('*') >= 0) {
            throw nodes.error(
                    item,
                    itemPath,
                    "invalid host " + Quoting.quote(text)
                            + ": wildcards are not allowed; a credential goes only to the exact hosts named");
        }
        Authorities.HostPort parsed;
        try {
            parsed = Authorities.split(text);
        } catch (MalformedTargetException e) {
            throw nodes.error(item, itemPath, "invalid host " + Quoting.quote(text) + ": " + e.getMessage());
        }
        OptionalInt port = parsed.port();
        return new Target(parsed.host(), parsed.kind(), port.orElse(CredentialRule.DEFAULT_PORT));
    }
}

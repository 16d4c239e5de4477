package dev.agentjail.proxy.mcp.host;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The environment of a host-side MCP server, built from nothing: a few host variables every program expects, then
 * the server's own {@code env}, whose values may name host variables as {@code ${NAME}}. The proxy's settings, the
 * user's tokens and everything else in the host environment stay out unless the policy names them.
 */
final class ChildEnvironment {
    /** Host variables passed through when set: where things are, who runs them, and the locale. */
    static final List<String> BASE = List.of(
            "PATH",
            "HOME",
            "USER",
            "LOGNAME",
            "LANG",
            "LC_ALL",
            "LC_CTYPE",
            "TZ",
            "TMPDIR",
            "XDG_CONFIG_HOME",
            "XDG_CACHE_HOME",
            "XDG_DATA_HOME",
            "XDG_RUNTIME_DIR");

    static final String DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin";

    private ChildEnvironment() {}

    /** The environment; a {@code ${NAME}} whose host variable is not set is an error naming it (never its value). */
    static Map<String, String> build(Map<String, String> host, Map<String, String> serverEnv, String server)
            throws HostServerException {
        Map<String, String> env = new LinkedHashMap<>();
        for (String name : BASE) {
            String value = host.get(name);
            if (value != null) {
                env.put(name, value);
            }
        }
        env.putIfAbsent("PATH", DEFAULT_PATH);
        for (Map.Entry<String, String> e : serverEnv.entrySet()) {
            env.put(e.getKey(), expand(e.getValue(), host, server, e.getKey()));
        }
        return env;
    }

    /** Replaces every {@code ${NAME}} with the host's value; any other {@code $} stays as written. */
    static String expand(String value, Map<String, String> host, String server, String key) throws HostServerException {
        StringBuilder out = new StringBuilder(value.length());
        int i = 0;
        while (i < value.length()) {
            char c = value.charAt(i);
            if (c != '$' || i + 1 >= value.length() || value.charAt(i + 1) != '{') {
                out.append(c);
                i++;
                continue;
            }
            int end = value.indexOf('}', i + 2);
            String name = end < 0 ? null : value.substring(i + 2, end);
            if (name == null || !validName(name)) {
                throw new HostServerException("mcp.servers[" + server + "].env." + key
                        + ": malformed ${...} reference (expected ${NAME}, NAME of letters, digits and '_')");
            }
            String hostValue = host.get(name);
            if (hostValue == null) {
                throw new HostServerException("mcp.servers[" + server + "].env." + key + " needs the host variable "
                        + name + ", which is not set in agentjail's environment");
            }
            out.append(hostValue);
            i = end + 1;
        }
        return out.toString();
    }

    private static boolean validName(String name) {
        if (name.isEmpty() || Character.isDigit(name.charAt(0))) {
            return false;
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) {
                return false;
            }
        }
        return true;
    }
}

package dev.agentjail.cli;

import dev.agentjail.jail.JailPaths;
import dev.agentjail.jail.TrustFiles;
import dev.agentjail.policy.EnvPolicy;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The jail's whole environment, built from nothing: what the jail needs itself (PATH, HOME, TERM,
 * locale), the proxy settings every common runtime reads, and only the host variables the policy
 * forwards by name, the credential placeholders, and the CA bundle every common runtime reads instead of its
 * built-in roots. There is no NO_PROXY: nothing may bypass the proxy.
 */
final class JailEnvironment {
    /** Host variables that describe the terminal and locale, passed through when set. */
    static final List<String> TERMINAL =
            List.of("TERM", "COLORTERM", "LANG", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "TZ");

    /** The variables that point a runtime at a PEM CA bundle (OpenSSL, Node, Python, curl, git, cargo, pip, Deno). */
    static final List<String> CA_BUNDLE_VARIABLES = List.of(
            "SSL_CERT_FILE",
            "NODE_EXTRA_CA_CERTS",
            "REQUESTS_CA_BUNDLE",
            "CURL_CA_BUNDLE",
            "GIT_SSL_CAINFO",
            "CARGO_HTTP_CAINFO",
            "PIP_CERT",
            "DENO_CERT");

    private static final String DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

    private JailEnvironment() {}

    /**
     * The environment of a jail.
     *
     * @param placeholders credential variable name → the session's placeholder for it (never the real value)
     */
    static Map<String, String> build(
            Map<String, String> host,
            EnvPolicy policy,
            int port,
            Path home,
            String session,
            Map<String, String> placeholders) {
        Map<String, String> env = new LinkedHashMap<>();
        env.put("PATH", host.getOrDefault("PATH", DEFAULT_PATH));
        env.put("HOME", home.toString());
        for (String name : TERMINAL) {
            String value = host.get(name);
            if (value != null) {
                env.put(name, value);
            }
        }
        for (String name : policy.forward()) {
            String value = host.get(name);
            if (value != null) {
                env.put(name, value);
            }
        }
        env.putAll(policy.set());
        env.putAll(placeholders);
        env.putAll(proxyVariables(port));
        for (String name : CA_BUNDLE_VARIABLES) {
            env.put(name, JailPaths.CA_BUNDLE.toString());
        }
        env.put("AGENTJAIL", "1");
        env.put("AGENTJAIL_SESSION", session);
        return env;
    }

    /**
     * The settings that curl, Node, the JVM, npm, yarn, pip, git and cargo read to find a proxy; the JVM's options
     * also name the jail's trust store.
     */
    static Map<String, String> proxyVariables(int port) {
        String url = "http://127.0.0.1:" + port;
        Map<String, String> env = new LinkedHashMap<>();
        for (String name :
                List.of("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy")) {
            env.put(name, url);
        }
        env.put("NODE_USE_ENV_PROXY", "1");
        env.put("npm_config_proxy", url);
        env.put("npm_config_https_proxy", url);
        env.put("YARN_HTTP_PROXY", url);
        env.put("YARN_HTTPS_PROXY", url);
        env.put("PIP_PROXY", url);
        env.put("CARGO_HTTP_PROXY", url);
        env.put("GIT_HTTP_PROXY", url);
        // An empty nonProxyHosts: the JVM's default exempts localhost, which is harmless here but hides requests.
        env.put(
                "JAVA_TOOL_OPTIONS",
                "-Dhttp.proxyHost=127.0.0.1 -Dhttp.proxyPort=" + port
                        + " -Dhttps.proxyHost=127.0.0.1 -Dhttps.proxyPort=" + port + " -Dhttp.nonProxyHosts="
                        + " -Djavax.net.ssl.trustStore=" + JailPaths.TRUST_STORE
                        + " -Djavax.net.ssl.trustStoreType=" + TrustFiles.TRUST_STORE_TYPE
                        + " -Djavax.net.ssl.trustStorePassword=" + TrustFiles.TRUST_STORE_PASSWORD);
        return env;
    }
}

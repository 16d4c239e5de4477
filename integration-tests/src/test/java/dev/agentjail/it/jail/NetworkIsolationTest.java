package dev.agentjail.it.jail;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.any;
import static com.github.tomakehurst.wiremock.client.WireMock.anyUrl;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.wireMockConfig;
import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.github.tomakehurst.wiremock.junit5.WireMockExtension;
import dev.agentjail.it.support.Prerequisites;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The jail has no network but its own loopback (corpus §11 cases 157–159, 179): only {@code lo}, no routes, the proxy
 * variables point at the proxy's port inside and no NO_PROXY exists; every way around the proxy — {@code curl
 * --noproxy}, curl without the proxy variables, bash's {@code /dev/tcp} to the host's loopback, to a public address and
 * to the metadata address, a DNS lookup, a second use of the spent hand-off socket — fails, and the host service those
 * attempts aim at sees nothing.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class NetworkIsolationTest {
    @RegisterExtension
    static WireMockExtension host = WireMockExtension.newInstance()
            .options(wireMockConfig().bindAddress("127.0.0.1").dynamicPort())
            .build();

    @TempDir
    Path dir;

    @BeforeEach
    void setUp() {
        AgentjailRun.requireBwrap();
        host.stubFor(any(anyUrl()).willReturn(aResponse().withStatus(200).withBody("reached the host")));
    }

    @Test
    void onlyLoopbackExistsAndThereIsNoRoute() {
        AgentjailRun.Outcome o = AgentjailRun.in(dir).bash("""
                echo "links=$(ip -o link show | awk -F': ' '{print $2}' | tr '\\n' ' ')"
                echo "routes4=$(ip -4 route show | wc -l)"
                echo "routes6=$(ip -6 route show | grep -vc '^\\(local\\|multicast\\|anycast\\|::1 \\)')"
                [ -e /sys/class/net/eth0 ]; echo "sys_eth0=$?"
                echo "no_proxy=$(env | grep -ci '^no_proxy=')"
                echo "proxy_vars=$HTTP_PROXY $HTTPS_PROXY $http_proxy $https_proxy"
                """);

        assertEquals(0, o.exitCode(), o::describe);
        assertAll(
                () -> assertEquals("lo", o.probe("links").strip(), () -> "interfaces inside the jail; " + o.describe()),
                () -> assertEquals("0", o.probe("routes4").strip(), o::describe),
                () -> assertEquals("0", o.probe("routes6").strip(), o::describe),
                () -> assertNotEquals("0", o.probe("sys_eth0"), o::describe),
                () -> assertEquals("0", o.probe("no_proxy"), "a NO_PROXY entry inside would open a bypass"),
                () -> assertEquals(
                        "http://127.0.0.1:3128 ".repeat(4).strip(), o.probe("proxy_vars"), "the proxy variables"));
    }

    @Test
    void everyRouteAroundTheProxyFailsAndNothingReachesTheHost() {
        Prerequisites.require(Path.of("/usr/bin/perl"));
        int port = host.getPort();
        AgentjailRun.Outcome o =
                AgentjailRun.in(dir).policy("""
                        version: 1
                        network:
                          allow: ["upstream.test:%d"]
                          resolve: {upstream.test: 127.0.0.1}
                        """.formatted(port)).bash("""
                        P=%d
                        curl -q -sS -m 5 --noproxy '*' http://127.0.0.1:$P/noproxy >/dev/null; echo "noproxy_loopback=$?"
                        curl -q -sS -m 5 --noproxy '*' http://upstream.test:$P/noproxy-name >/dev/null
                        echo "noproxy_name=$?"
                        env -u http_proxy -u HTTP_PROXY -u ALL_PROXY -u all_proxy \\
                            curl -q -sS -m 5 http://127.0.0.1:$P/unset-env >/dev/null
                        echo "unset_env=$?"
                        (exec 3<>/dev/tcp/127.0.0.1/$P) 2>/tmp/e; echo "devtcp_loopback=$? $(cat /tmp/e)"
                        (exec 3<>/dev/tcp/::1/$P) 2>/tmp/e; echo "devtcp_loopback6=$? $(cat /tmp/e)"
                        (exec 3<>/dev/tcp/1.1.1.1/443) 2>/tmp/e; echo "devtcp_public=$? $(cat /tmp/e)"
                        (exec 3<>/dev/tcp/169.254.169.254/80) 2>/tmp/e; echo "devtcp_metadata=$? $(cat /tmp/e)"
                        getent hosts example.com; echo "getent=$?"
                        getent hosts upstream.test; echo "getent_pinned=$?"
                        [ -e /etc/resolv.conf ]; echo "resolv_conf=$?"
                        perl -MIO::Socket::UNIX -e 'IO::Socket::UNIX->new(Peer => "/run/agentjail/handoff.sock")
                            ? print "handoff=connected\n" : print "handoff=$!\n"'
                        """.formatted(port));

        assertEquals(0, o.exitCode(), o::describe);
        assertAll(
                () -> assertNotEquals("0", o.probe("noproxy_loopback"), "curl --noproxy to the host's loopback"),
                () -> assertNotEquals("0", o.probe("noproxy_name"), "curl --noproxy by name"),
                () -> assertNotEquals("0", o.probe("unset_env"), "curl with the proxy variables removed"),
                () -> assertTrue(o.probe("devtcp_loopback").startsWith("1 "), "bash /dev/tcp to 127.0.0.1"),
                () -> assertTrue(o.probe("devtcp_loopback").contains("Connection refused"), o.probe("devtcp_loopback")),
                () -> assertTrue(o.probe("devtcp_loopback6").startsWith("1 "), "bash /dev/tcp to ::1"),
                () -> assertTrue(o.probe("devtcp_public").contains("Network is unreachable"), o.probe("devtcp_public")),
                () -> assertTrue(
                        o.probe("devtcp_metadata").contains("Network is unreachable"), o.probe("devtcp_metadata")),
                () -> assertNotEquals("0", o.probe("getent"), "DNS lookup of example.com"),
                () -> assertNotEquals("0", o.probe("getent_pinned"), "the policy's resolve map is the proxy's only"),
                () -> assertNotEquals("0", o.probe("resolv_conf"), "no resolver configuration inside"),
                () -> assertEquals("Connection refused", o.probe("handoff"), "the hand-off socket is one-shot"));
        assertEquals(
                List.of(),
                host.getAllServeEvents().stream()
                        .map(e -> e.getRequest().getUrl())
                        .toList(),
                "requests that reached the host's service from inside the jail without the proxy");
    }
}

package dev.agentjail.certs;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.net.InetAddress;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class HostLiteralsTest {
    @ParameterizedTest
    @CsvSource({
        "example.test, DNS",
        "a-b_c.example.test, DNS",
        "xn--bcher-kva.example, DNS",
        "localhost, DNS",
        "1.2.3.4.example, DNS",
        "0.0.0.0, IPV4",
        "255.255.255.255, IPV4",
        "::1, IPV6",
        "::, IPV6",
        "2001:db8::1, IPV6",
        "2001:db8:0:1:1:1:1:1, IPV6",
        "2001:0:0:1::1, IPV6",
        "fe80::, IPV6",
        "::ffff:192.0.2.1, IPV6"
    })
    void canonicalHostsAreClassified(String host, HostLiterals.Kind kind) {
        assertEquals(kind, HostLiterals.classify(host));
    }

    @ParameterizedTest
    @CsvSource({"2001:db8::1", "::", "::1", "1::", "1:0:0:2::3", "::ffff:1.2.3.4", "0:1::", "1:2:3:4:5:6:7:8"})
    void ipv6FormattingIsRfc5952(String text) throws Exception {
        assertEquals(text, HostLiterals.formatIpv6(HostLiterals.ipv6Bytes(text)));
        if (!text.startsWith("::ffff:")) {
            assertEquals(InetAddress.getByName(text), InetAddress.getByAddress(HostLiterals.ipv6Bytes(text)));
        }
    }
}

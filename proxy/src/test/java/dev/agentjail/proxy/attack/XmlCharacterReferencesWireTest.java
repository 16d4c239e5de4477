package dev.agentjail.proxy.attack;

import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.agentjail.proxy.testing.NettyLeakGuard;
import dev.agentjail.proxy.testing.ProxyFixture;
import dev.agentjail.proxy.testing.RawClient;
import dev.agentjail.proxy.testing.RawResponse;
import dev.agentjail.proxy.testing.RecordingUpstream;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * An XML body (S3 and other AWS APIs, SOAP, XML-RPC) read by the receiver's XML parser: character references
 * ({@code &#x67;}, {@code &#103;}, leading zeros, HTML's form without the semicolon) are decoded for the scan, so the
 * token is redacted. The upstream's text content is checked with the JDK's own XML parser. CDATA sections and comments
 * between text pieces stay a documented gap.
 */
@ExtendWith(NettyLeakGuard.class)
class XmlCharacterReferencesWireTest {
    private static final String PAT = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";

    private RecordingUpstream upstream;
    private ProxyFixture proxy;

    @AfterEach
    void stop() throws Exception {
        proxy.close();
        upstream.close();
    }

    @ParameterizedTest
    @ValueSource(strings = {"&#x67;hp_REST", "&#103;hp_REST", "&#X67;&#x68;&#112;_REST", "gh&#x000070;_REST"})
    void aCharacterReferenceInXmlIsRedacted(String value) throws Exception {
        upstream = RecordingUpstream.start();
        String up = "upstream.test:" + upstream.port();
        proxy = ProxyFixture.start(
                "version: 1\nnetwork:\n  allow: [\"" + up + "\"]\n  resolve: {upstream.test: 127.0.0.1}\n");
        String body = "<?xml version=\"1.0\"?><Tagging><TagSet><Tag><Key>t</Key><Value>"
                + value.replace("REST", PAT.substring(4)) + "</Value></Tag></TagSet></Tagging>";
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        try (RawClient c = RawClient.connect(proxy.address())) {
            c.send("PUT http://" + up + "/bucket?tagging HTTP/1.1\r\nHost: " + up
                    + "\r\nContent-Type: application/xml\r\nContent-Length: " + b.length + "\r\n\r\n" + body);
            RawResponse r = c.readResponse(Duration.ofSeconds(10));
            String got = upstream.requests().isEmpty()
                    ? ""
                    : upstream.requests().get(0).body();
            String text = got.isEmpty()
                    ? ""
                    : DocumentBuilderFactory.newInstance()
                            .newDocumentBuilder()
                            .parse(new ByteArrayInputStream(got.getBytes(StandardCharsets.ISO_8859_1)))
                            .getDocumentElement()
                            .getTextContent();
            assertFalse(text.contains(PAT), "status " + r.status() + "; the upstream's XML parser reads " + text);
        }
    }
}

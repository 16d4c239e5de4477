package dev.agentjail.proxy.tls;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentjail.proxy.testing.ClientHellos;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The two hellos read strictly: one server name or none, and what kind of ServerHello it is. */
class HellosTest {
    private static byte[] body(byte[] record) {
        return Arrays.copyOfRange(record, 5 + 4, record.length);
    }

    @Test
    void aRealJdkClientHelloNamesItsServerInLowerCase() throws Exception {
        Hellos.ClientHelloName n = Hellos.clientHello(body(ClientHellos.of("API.Example.test")));
        assertEquals(new Hellos.ClientHelloName("api.example.test", false, null), n);
        assertEquals(new Hellos.ClientHelloName(null, false, null), Hellos.clientHello(body(ClientHellos.of(null))));
    }

    @ParameterizedTest
    @CsvSource({
        "true, 772, true, 772", // HelloRetryRequest, TLS 1.3
        "false, 772, false, 772", // ServerHello, TLS 1.3
        "false, 771, false, 771", // TLS 1.2: no supported_versions, the legacy version says it
        "false, 769, false, 769", // TLS 1.0
    })
    void aServerHelloSaysWhetherItIsARetryAndWhichVersion(boolean retry, int version, boolean isRetry, int is) {
        Hellos.ServerHelloKind k = Hellos.serverHello(body(ClientHellos.serverHello(retry, version)));
        assertNull(k.unreadable());
        assertEquals(isRetry, k.retry());
        assertEquals(is, k.version());
    }

    @Test
    void aRetryThatDoesNotSelectTls13OrAServerHelloThatDoesNotParseIsUnreadable() {
        assertTrue(Hellos.serverHello(body(ClientHellos.serverHello(true, 0x0303)))
                .unreadable()
                .contains("does not select TLS 1.3"));
        byte[] b = body(ClientHellos.serverHello(false, 0x0304));
        assertTrue(
                Hellos.serverHello(Arrays.copyOf(b, b.length - 1)).unreadable().contains("do not parse"));
        assertTrue(Hellos.serverHello(new byte[10]).unreadable().contains("does not parse"));
    }

    @Test
    void aClientHelloThatDoesNotParseIsUnreadable() {
        byte[] b = ClientHellos.craft("a.test").message();
        byte[] body = Arrays.copyOfRange(b, 4, b.length);
        for (int cut = 1; cut < body.length; cut += 7) {
            Hellos.ClientHelloName n = Hellos.clientHello(Arrays.copyOf(body, cut));
            assertFalse(n.unreadable() == null && "a.test".equals(n.name()), "a truncated ClientHello read: " + cut);
        }
        byte[] trailing = Arrays.copyOf(body, body.length + 1);
        assertTrue(Hellos.clientHello(trailing).unreadable().contains("do not parse"));
    }
}

package dev.agentjail.proxy.upstream;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.net.InetAddress;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class OwnListenersTest {
    @ParameterizedTest(name = "{0}:{1} -> {2}")
    @CsvSource({
        "127.0.0.1, 8080, true",
        "127.0.0.2, 8080, true",
        "::1, 8080, true",
        "::ffff:127.0.0.1, 8080, true",
        "0.0.0.0, 8080, true",
        "::, 8080, true",
        "127.0.0.1, 8081, false",
        "::1, 443, false",
        "192.0.2.7, 8080, false",
        "2001:db8::7, 8080, false",
    })
    void aLocalAddressOnAListeningPortReachesTheProxy(String address, int port, boolean expected) throws Exception {
        OwnListeners own = new OwnListeners();
        own.add(8080);
        own.add(0);

        assertEquals(expected, own.reaches(InetAddress.getByName(address), port));
    }
}

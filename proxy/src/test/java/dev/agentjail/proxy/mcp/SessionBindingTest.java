package dev.agentjail.proxy.mcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** Corpus case 149: the sessions each server issued through the proxy, kept as hashes, per server, bounded. */
class SessionBindingTest {
    private final SessionBinding sessions = new SessionBinding();

    @Test
    void idsAreKeptAsSha256HashesNeverRaw() {
        String hash = SessionBinding.hash("abc");

        // SHA-256("abc"), the FIPS 180-2 test vector.
        assertEquals("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", hash);
        assertFalse(SessionBinding.hash("6f1c2a9e-0d7b").contains("6f1c2a9e"));
    }

    @Test
    void aSessionIsKnownToTheServerThatIssuedItUntilForgotten() {
        String sid = SessionBinding.hash("sid-1");
        assertFalse(sessions.known("docs", sid));

        sessions.issued("docs", sid);

        assertTrue(sessions.known("docs", sid));
        assertFalse(sessions.known("mail", sid), "bound to its server");
        assertFalse(sessions.known("docs", SessionBinding.hash("sid-2")));
        sessions.forget("docs", sid);
        assertFalse(sessions.known("docs", sid));
        sessions.forget("mail", sid); // nothing to forget: no error
    }

    @Test
    void eachServerKeepsAtMostTheBoundAndDropsTheLeastRecentlyUsed() {
        String first = SessionBinding.hash("sid-0");
        String second = SessionBinding.hash("sid-1");
        sessions.issued("docs", first);
        sessions.issued("docs", second);
        sessions.issued("mail", SessionBinding.hash("other"));
        assertTrue(sessions.known("docs", first)); // used now: the second is the least recently used
        for (int i = 2; i < SessionBinding.MAX_PER_SERVER + 1; i++) {
            sessions.issued("docs", SessionBinding.hash("sid-" + i));
        }

        assertEquals(SessionBinding.MAX_PER_SERVER, sessions.size("docs"));
        assertTrue(sessions.known("docs", first));
        assertFalse(sessions.known("docs", second), "dropped: least recently used");
        assertTrue(sessions.known("docs", SessionBinding.hash("sid-" + SessionBinding.MAX_PER_SERVER)));
        assertEquals(1, sessions.size("mail"), "another server's sessions are not dropped");
    }
}

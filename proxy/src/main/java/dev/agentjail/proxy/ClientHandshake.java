package dev.agentjail.proxy;

import dev.agentjail.policy.Target;
import dev.agentjail.proxy.tls.Hellos;

/**
 * How far a client's TLS handshake is, as {@link TunnelSniCheck} follows it, and what may come next: every ClientHello
 * must name the CONNECT host, and once no ClientHello can come in the clear any more, no handshake record may.
 */
final class ClientHandshake {
    /** The phases of the handshake, as the check follows it. */
    sealed interface Phase {
        /** Nothing yet: the first bytes must be a ClientHello. */
        record AwaitingClientHello() implements Phase {}

        /** A ClientHello went; the server's answer comes next (the client may send early data meanwhile). */
        record AwaitingServerHello() implements Phase {}

        /** The server sent a HelloRetryRequest: one more ClientHello may come, judged as the first was. */
        record RetryRequested() implements Phase {}

        /** A TLS 1.2 (or older) handshake: the client's messages are plain until its ChangeCipherSpec. */
        record Tls12(boolean cipherChanged) implements Phase {}

        /** No ClientHello can come any more in a form the proxy can read: no handshake record passes. */
        record Settled(int version) implements Phase {}
    }

    /** Why the handshake may not go on; {@code name} when it is a ClientHello's server name (always refused). */
    record Problem(String detail, boolean name) {
        static Problem of(String detail) {
            return new Problem(detail, false);
        }
    }

    private final Target target;
    private final boolean relayed;
    private Phase phase = new Phase.AwaitingClientHello();

    /** @param relayed a {@code network.tunnel} relay, where the server's side is another party's */
    ClientHandshake(Target target, boolean relayed) {
        this.target = target;
        this.relayed = relayed;
    }

    Phase phase() {
        return phase;
    }

    boolean started() {
        return !(phase instanceof Phase.AwaitingClientHello);
    }

    /** Whether a client handshake record now is in the clear (a ClientHello, or TLS 1.2's messages before CCS). */
    boolean plainHandshake() {
        return !(phase instanceof Phase.Settled) && !(phase instanceof Phase.Tls12 t && t.cipherChanged());
    }

    /** Why a record header cannot start a client's TLS record now, or null. */
    Problem header(int type, int major, int minor, int length) {
        if (type < Hellos.CHANGE_CIPHER_SPEC || type > Hellos.APPLICATION_DATA || major != 3 || minor > 4) {
            return Problem.of(
                    started() ? "the client sent bytes that are no TLS record (type " + type + ")" : noClientHello());
        }
        if (length > Hellos.MAX_CIPHERTEXT
                || (type == Hellos.HANDSHAKE && plainHandshake() && length > Hellos.MAX_PLAINTEXT)) {
            return Problem.of("the client sent a TLS record longer than TLS allows");
        }
        if (length == 0 && type != Hellos.APPLICATION_DATA) {
            return Problem.of("the client sent an empty TLS record of type " + type);
        }
        return null;
    }

    /**
     * A record that is no handshake message in the clear (an alert, a ChangeCipherSpec, application data, an encrypted
     * handshake record): why it may not pass now, or null, and the phase moves on.
     *
     * @param messagePending whether a handshake message is incomplete (no other record may come in between)
     */
    Problem record(int type, boolean messagePending) {
        if (messagePending) {
            return Problem.of("the client interleaved another record with the fragments of a handshake message");
        }
        if (!started()) {
            return Problem.of(noClientHello());
        }
        return switch (type) {
            case Hellos.HANDSHAKE ->
                switch (phase) {
                    case Phase.Tls12 t -> {
                        phase = new Phase.Settled(Hellos.TLS12); // Its Finished, encrypted.
                        yield null;
                    }
                    case Phase.Settled s
                    when s.version() == Hellos.TLS13 ->
                        Problem.of("the client sent a handshake record after the TLS 1.3 ServerHello");
                    default ->
                        Problem.of("the client started a TLS renegotiation: its ClientHello is encrypted, so a tunnel"
                                + " to " + target.host() + " cannot tell which server it asks for");
                };
            case Hellos.CHANGE_CIPHER_SPEC -> {
                if (phase instanceof Phase.Tls12 t && !t.cipherChanged()) {
                    phase = new Phase.Tls12(true);
                }
                yield null;
            }
            case Hellos.APPLICATION_DATA ->
                phase instanceof Phase.AwaitingServerHello || phase instanceof Phase.Settled
                        ? null
                        : Problem.of("the client sent application data in the middle of its handshake");
            default -> null; // An alert.
        };
    }

    /** One whole client handshake message in the clear: why it may not pass, or null, and the phase moves on. */
    Problem message(int type, byte[] body) {
        if (type != Hellos.CLIENT_HELLO) {
            if (phase instanceof Phase.Tls12) {
                return null; // ClientKeyExchange, Certificate, CertificateVerify.
            }
            return Problem.of(
                    started()
                            ? "the client sent handshake message " + type + " before the server's hello"
                            : noClientHello());
        }
        boolean second = phase instanceof Phase.RetryRequested;
        if (started() && !second) {
            return Problem.of("the client sent a ClientHello the server did not ask for");
        }
        String why = judge(Hellos.clientHello(body), second);
        if (why != null) {
            return new Problem(why, true);
        }
        phase = new Phase.AwaitingServerHello();
        return null;
    }

    /**
     * The server's hello, read before the client sees it: a HelloRetryRequest lets one more ClientHello come, the real
     * one settles the version. Why it cannot be followed, or null.
     */
    Problem serverHello(Hellos.ServerHelloKind hello) {
        if (hello.unreadable() != null) {
            return Problem.of(hello.unreadable());
        }
        if (!(phase instanceof Phase.AwaitingServerHello)) {
            return Problem.of("the server sent a hello the client's handshake did not ask for");
        }
        if (hello.retry()) {
            phase = new Phase.RetryRequested();
        } else if (hello.version() == Hellos.TLS13) {
            phase = new Phase.Settled(Hellos.TLS13);
        } else {
            phase = new Phase.Tls12(false);
        }
        return null;
    }

    String noClientHello() {
        return "no TLS ClientHello: a tunnel relays TLS to the CONNECT host " + target.host() + " only";
    }

    /** Why a ClientHello may not pass, or null: its one server name is the CONNECT host. */
    private String judge(Hellos.ClientHelloName hello, boolean second) {
        String which = second ? "the second ClientHello (after a HelloRetryRequest)" : "the ClientHello";
        if (hello.unreadable() != null) {
            return second ? hello.unreadable().replace("the ClientHello", which) : hello.unreadable();
        }
        if (hello.hidden()) {
            // Terminated, the proxy's server never decrypts an inner ClientHello (nor does it route by it).
            return relayed
                    ? which + " hides its server name (encrypted ClientHello), so a tunnel to " + target.host()
                            + " cannot tell which server it reaches"
                    : null;
        }
        if (hello.name() == null) {
            return !relayed || Hellos.names(null, target)
                    ? null
                    : which + " names no server; a tunnel to " + target.host() + " needs its name";
        }
        return Hellos.names(hello.name(), target)
                ? null
                : "TLS server name does not match the CONNECT host " + target.host()
                        + (second ? " (in the second ClientHello, after a HelloRetryRequest)" : "");
    }
}

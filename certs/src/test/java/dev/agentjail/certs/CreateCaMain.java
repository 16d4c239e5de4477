package dev.agentjail.certs;

import java.nio.file.Path;
import java.time.Clock;

/** Run in a child JVM by {@link CertificateAuthorityTest}: creates or loads a CA and prints its fingerprint. */
public final class CreateCaMain {
    private CreateCaMain() {}

    public static void main(String[] args) throws Exception {
        System.out.println(CertificateAuthority.loadOrCreate(Path.of(args[0]), Clock.systemUTC())
                .sha256Fingerprint());
    }
}

package dev.agentjail.proxy.redact;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Credentials named by their context in exec arguments and paths, through {@link Redactor}'s own entry points. */
class CommandLineCredentialsTest {
    private static final String OPAQUE = "abcdefghijklmnop1234567890ABCDEF";
    private static final Redactor REDACTOR = Redactor.builtIn();

    static List<Arguments> oneArgument() {
        return List.of(
                Arguments.of("Authorization: Bearer " + OPAQUE, OPAQUE, "credential-header", "Authorization: Bearer ["),
                Arguments.of(
                        "-HAuthorization: Bearer " + OPAQUE, OPAQUE, "credential-header", "-HAuthorization: Bearer ["),
                Arguments.of("authorization:bearer " + OPAQUE, OPAQUE, "credential-header", "authorization:bearer ["),
                Arguments.of("Authorization:" + OPAQUE, OPAQUE, "credential-header", "Authorization:["),
                Arguments.of("Proxy-Authorization: Basic dXNlcjpwYXNz", "dXNlcjpwYXNz", "credential-header", "Basic ["),
                Arguments.of(
                        "X-Api-Key: sk-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGH",
                        "sk-abcdef",
                        "credential-header",
                        "X-Api-Key: ["),
                Arguments.of("x-api-key:hunter2", "hunter2", "credential-header", "x-api-key:["),
                Arguments.of(
                        "Cookie: session=s3cr3tvalue; theme=dark", "s3cr3tvalue", "credential-header", "Cookie: ["),
                Arguments.of("PRIVATE-TOKEN: glpatlike0123", "glpatlike0123", "credential-header", "PRIVATE-TOKEN: ["),
                Arguments.of("X-Vault-Token: s.opaque0123", "s.opaque0123", "credential-header", "X-Vault-Token: ["),
                Arguments.of("X-My-Secret: hunter2", "hunter2", "credential-header", "X-My-Secret: ["),
                Arguments.of(
                        "{\"password\": \"hunter2\", \"user\": \"bob\"}",
                        "hunter2",
                        "credential-header",
                        "\"user\": \"bob\""),
                Arguments.of(
                        "curl -H \"Authorization: Bearer " + OPAQUE + "\" https://api.example.com/v1",
                        OPAQUE,
                        "credential-header",
                        "\" https://api.example.com/v1"),
                Arguments.of("Bearer " + OPAQUE, OPAQUE, "auth-credential", "Bearer ["),
                Arguments.of("token " + OPAQUE, OPAQUE, "auth-credential", "token ["),
                Arguments.of(
                        "https://user:hunter2supersecret@example.com/x",
                        "hunter2supersecret",
                        "url-password",
                        "https://user:["),
                Arguments.of(
                        "git clone https://x-access-token:opaque0123@github.com/o/r.git",
                        "opaque0123",
                        "url-password",
                        "@github.com/o/r.git"),
                Arguments.of("https://" + OPAQUE + "@github.com/o/r", OPAQUE, "url-password", "https://["),
                Arguments.of("--password=hunter2", "hunter2", "credential-option", "--password=["),
                Arguments.of("--token=" + OPAQUE, OPAQUE, "credential-option", "--token=["),
                Arguments.of("--api-key=opaque0123", "opaque0123", "credential-option", "--api-key=["),
                Arguments.of(
                        "tool --client-secret=opaque0123 --verbose", "opaque0123", "credential-option", "] --verbose"),
                Arguments.of("--user=bob:hunter2", "hunter2", "credential-option", "--user=bob:["),
                Arguments.of("mysql --password hunter2 db", "hunter2", "credential-option", "--password [REDACTED"),
                Arguments.of("tool --token='" + OPAQUE + "' -v", OPAQUE, "credential-option", "' -v"),
                Arguments.of("curl --user bob:hunter2 https://h/", "hunter2", "credential-option", "--user bob:["),
                // NAME=value: environment assignments, queries, form bodies, connection strings.
                Arguments.of("TOKEN=opaqueAbc123 ./x", "opaqueAbc123", "credential-assignment", "TOKEN=[REDACTED"),
                Arguments.of("export API_KEY=opaque0123", "opaque0123", "credential-assignment", "export API_KEY=["),
                Arguments.of("A_TOKEN=opaque0123", "opaque0123", "credential-assignment", "A_TOKEN=["),
                Arguments.of("DB_PASSWORD=hunter2", "hunter2", "credential-assignment", "DB_PASSWORD=["),
                Arguments.of("PGPASSWORD=hunter2 psql -h db", "hunter2", "credential-assignment", "] psql -h db"),
                Arguments.of("MYSQL_PWD=hunter2", "hunter2", "credential-assignment", "MYSQL_PWD=["),
                Arguments.of("aws.secret.access_key=opaque0123", "opaque0123", "credential-assignment", "_key=["),
                Arguments.of("my-private-key=opaque0123", "opaque0123", "credential-assignment", "-key=["),
                Arguments.of("GPG_PASSPHRASE=opaque0123", "opaque0123", "credential-assignment", "PHRASE=["),
                Arguments.of("db.credentials=opaque0123", "opaque0123", "credential-assignment", "credentials=["),
                Arguments.of(
                        "https://api.example.com/v1?access_token=opaque0123&x=1",
                        "opaque0123",
                        "credential-assignment",
                        "?access_token=[REDACTED:credential-assignment]&x=1"),
                Arguments.of("user=bob&password=hunter2", "hunter2", "credential-assignment", "user=bob&password=["),
                Arguments.of(
                        "host=db user=bob password=hunter2 dbname=x",
                        "hunter2",
                        "credential-assignment",
                        "host=db user=bob password=[REDACTED:credential-assignment] dbname=x"),
                Arguments.of("--from-literal=password=hunter2", "hunter2", "credential-assignment", "password=["),
                Arguments.of(
                        "//registry.npmjs.org/:_authToken=opaque0123",
                        "opaque0123",
                        "credential-assignment",
                        "//registry.npmjs.org/:_authToken=["),
                Arguments.of(
                        "!f() { echo password=hunter2; }; f",
                        "hunter2",
                        "credential-assignment",
                        "password=[REDACTED:credential-assignment]; }; f"),
                Arguments.of("Driver=x;UID=bob;PWD=hunter2;", "hunter2", "credential-assignment", ";PWD=["),
                Arguments.of("PASSWORD=\"hunter 2\" cmd", "hunter 2", "credential-assignment", "PASSWORD=\"["),
                Arguments.of("X_TOKEN='opaque0123'", "opaque0123", "credential-assignment", "X_TOKEN='["),
                // name:value, clearly a value: quoted, right after the colon, or one token-like word.
                Arguments.of("{\"pass\":\"opaque0123\"}", "opaque0123", "credential-header", "{\"pass\":\"["),
                Arguments.of("password:hunter2", "hunter2", "credential-header", "password:["),
                Arguments.of("db_password: hunter2", "hunter2", "credential-header", "db_password: ["),
                Arguments.of("{'token': 'tok'}", "tok'", "credential-header", "{'token': '["),
                Arguments.of("openssl enc -pass pass:hunter2 -in f", "hunter2", "credential-header", "] -in f"),
                Arguments.of("-HX-Access-Token:opaque0123", "opaque0123", "credential-header", "Token:["),
                Arguments.of("X-Goog-Api-Key:opaque0123", "opaque0123", "credential-header", "Key:["),
                Arguments.of("Client-Secret: opaque word", "opaque word", "credential-header", "Secret: ["),
                // More long options.
                Arguments.of("--passphrase=opaque0123", "opaque0123", "credential-option", "--passphrase=["),
                Arguments.of("--private-key=opaque0123", "opaque0123", "credential-option", "--private-key=["),
                Arguments.of("--access-key opaque0123", "opaque0123", "credential-option", "--access-key ["),
                Arguments.of("--secret-key=opaque0123", "opaque0123", "credential-option", "--secret-key=["),
                Arguments.of("--secret-access-key x0", "x0", "credential-option", "--secret-access-key ["),
                Arguments.of("--pass hunter2", "hunter2", "credential-option", "--pass ["),
                Arguments.of("--db-pw=hunter2", "hunter2", "credential-option", "--db-pw=["),
                Arguments.of("--key=opaque0123", "opaque0123", "credential-option", "--key=["),
                Arguments.of("--password=1234", "1234", "credential-option", "--password=["),
                // Parsing edges: a backslash-newline, a tab or a newline as the blank; "--token= value".
                Arguments.of("curl --password \\\n  hunter2 h", "hunter2", "credential-option", "] h"),
                Arguments.of("tool --token\topaque0123", "opaque0123", "credential-option", "--token\t["),
                Arguments.of("tool --token\nopaque0123", "opaque0123", "credential-option", "--token\n["),
                Arguments.of("--token= opaque0123", "opaque0123", "credential-option", "--token= ["),
                Arguments.of("Authorization: Bearer\n" + OPAQUE, OPAQUE, "auth-credential", "Bearer\n["),
                Arguments.of("Bearer\t" + OPAQUE, OPAQUE, "auth-credential", "Bearer\t["),
                // A command line in one text (sh -c): its words are read for the program they name.
                Arguments.of("curl -u bob:hunter2 https://h/", "hunter2", "credential-option", "-u bob:["),
                Arguments.of(
                        "'curl -ubob:hunter2'", "hunter2", "credential-option", "-ubob:[REDACTED:credential-option]'"),
                Arguments.of("sudo mysql -phunter2 -h db", "hunter2", "credential-option", "mysql -p["),
                Arguments.of("sshpass -p hunter2 ssh h", "hunter2", "credential-option", "] ssh h"),
                Arguments.of("docker login -u bob -p hunter2 reg", "hunter2", "credential-option", "] reg"),
                Arguments.of(
                        "aws configure set aws_secret_access_key wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY",
                        "wJalrXUtnFEMI",
                        "credential-assignment",
                        "aws_secret_access_key ["));
    }

    @ParameterizedTest
    @MethodSource("oneArgument")
    void aCredentialNamedByItsContextInAnArgumentIsMarkedAndCounted(
            String argument, String secret, String kind, String kept) {
        Findings findings = new Findings();
        String out = REDACTOR.redactArgument(argument, findings);
        assertFalse(out.contains(secret), out);
        assertTrue(out.contains("[REDACTED:" + kind), out);
        assertTrue(out.contains(kept), out);
        assertEquals(List.of(new Findings.Finding(kind, Redactor.LOCATION_ARGV, 1)), findings.list());
    }

    @ParameterizedTest
    @MethodSource("oneArgument")
    void theSameInAPathOrASymbolicLinksTarget(String text, String secret, String kind, String kept) {
        Findings findings = new Findings();
        String out = REDACTOR.redactPath(text, findings);
        assertFalse(out.contains(secret), out);
        assertEquals(List.of(new Findings.Finding(kind, Redactor.LOCATION_PATH, 1)), findings.list());
    }

    static List<Arguments> twoArguments() {
        return List.of(
                Arguments.of("Bearer", OPAQUE, "auth-credential", ""),
                Arguments.of("bearer", "short", "auth-credential", ""),
                Arguments.of("Basic", "dXNlcjpwYXNz", "auth-credential", ""),
                Arguments.of("Authorization: Bearer", OPAQUE, "credential-header", ""),
                Arguments.of("X-Api-Key:", "opaque", "credential-header", ""),
                Arguments.of("--password", "hunter2", "credential-option", ""),
                Arguments.of("--token", OPAQUE, "credential-option", ""),
                Arguments.of("--api-key", "opaque0123", "credential-option", ""),
                Arguments.of("--oauth2-bearer", OPAQUE, "credential-option", ""),
                Arguments.of("--user", "bob:hunter2", "credential-option", "bob:"),
                Arguments.of("--token=", OPAQUE, "credential-option", ""),
                Arguments.of("--pass", "hunter2", "credential-option", ""),
                Arguments.of("--key", "opaque0123", "credential-option", ""),
                Arguments.of("Authorization:\n", OPAQUE, "credential-header", ""),
                Arguments.of(
                        "aws_secret_access_key",
                        "wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY",
                        "credential-assignment",
                        ""));
    }

    static List<Arguments> programArguments() {
        return List.of(
                Arguments.of("curl", "-u", "bob:hunter2", "bob:"),
                Arguments.of("curl", "-U", "bob:hunter2", "bob:"),
                Arguments.of("curl", "-s", "-ubob:hunter2", "-ubob:"),
                Arguments.of("wget", "-q", "-ubob:hunter2", "-ubob:"),
                Arguments.of("mysql", "-h", "-phunter2", "-p"),
                Arguments.of("mysql", "-p", "hunter2", ""),
                Arguments.of("mariadb", "-p", "hunter2", ""),
                Arguments.of("mysqldump", "-uroot", "-phunter2", "-p"),
                Arguments.of("sshpass", "-p", "hunter2", ""),
                Arguments.of("sshpass", "sshpass", "-phunter2", "-p"),
                Arguments.of("docker login", "-p", "hunter2", ""),
                Arguments.of("podman login", "-u", "-phunter2", "-p"),
                Arguments.of("aws", "aws_session_token", "opaque0123", ""),
                Arguments.of("gh", "my_token", "opaque0123", ""),
                Arguments.of("git config", "github.token", "opaque0123", ""),
                Arguments.of("npm config", "//registry.npmjs.org/:_authToken", "opaque0123", ""));
    }

    @ParameterizedTest
    @MethodSource("programArguments")
    void aProgramsShortOptionOrSettingIsMarkedAndCountedForThatProgramOnly(
            String program, String previous, String secret, String kept) {
        Findings findings = new Findings();
        assertSame(secret, REDACTOR.redactArgument(secret, findings), "clean on its own");
        assertSame(secret, REDACTOR.redactArgumentAfter(previous, secret, findings), "clean for another program");
        assertSame(secret, REDACTOR.redactArgumentAfter("true", previous, secret, findings), "and for true");
        assertEquals(0, findings.total(), findings::toString);
        String out = REDACTOR.redactArgumentAfter(program, previous, secret, findings);
        assertFalse(out.contains(secret.substring(kept.length())), out);
        assertTrue(out.startsWith(kept + "[REDACTED:"), out);
        assertEquals(1, findings.total(), findings::toString);
        assertEquals(Redactor.LOCATION_ARGV, findings.list().get(0).location());
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "/usr/bin/sudo mysql",
                "/bin/true curl",
                "env -i /usr/bin/curl",
                "docker login",
                "git -C /x config",
                "ssh host mysql",
                "aws configure set"
            })
    void theProgramIsTheLastKnownOneAnArgumentVectorNames(String argv) {
        String program = null;
        for (String argument : argv.split(" ")) {
            program = Redactor.programAfter(program, argument);
        }
        String expected = argv.startsWith("git")
                ? "git config"
                : argv.startsWith("aws")
                        ? "aws"
                        : argv.endsWith("login")
                                ? "docker login"
                                : argv.substring(argv.lastIndexOf(' ') + 1).replace("/usr/bin/", "");
        assertEquals(expected, program);
    }

    @ParameterizedTest
    @MethodSource("twoArguments")
    void aCredentialInTheArgumentAfterTheOneThatNamesItIsMarkedAndCounted(
            String previous, String secret, String kind, String kept) {
        Findings findings = new Findings();
        assertSame(previous, REDACTOR.redactArgument(previous, findings), "the naming argument stays");
        assertSame(secret, REDACTOR.redactArgument(secret, findings), "clean on its own");
        String out = REDACTOR.redactArgumentAfter(previous, secret, findings);
        assertFalse(out.contains(secret.substring(kept.length())), out);
        assertTrue(out.startsWith(kept + "[REDACTED:" + kind), out);
        assertEquals(List.of(new Findings.Finding(kind, Redactor.LOCATION_ARGV, 1)), findings.list());
    }

    @ParameterizedTest
    @ValueSource(strings = {"ghp_", "glpat-", "xoxb-"})
    void aCatalogTokenSplitIntoItsPrefixAndTheRestIsMarkedInTheSecondArgument(String prefix) {
        String rest = "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";
        Findings findings = new Findings();
        assertSame(prefix, REDACTOR.redactArgument(prefix, findings));
        assertSame(rest, REDACTOR.redactArgument(rest, findings));
        String out = REDACTOR.redactArgumentAfter(prefix, rest, findings);
        assertFalse(out.contains("A1b2C3"), out);
        assertTrue(out.startsWith("[REDACTED:"), out);
        assertEquals(1, findings.total(), findings::toString);
        assertEquals(Redactor.LOCATION_ARGV, findings.list().get(0).location());
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "Accept: application/json",
                "Content-Type: application/json",
                "User-Agent: curl/8.5",
                "--user-agent",
                "--user-agent=x",
                "https://host/path",
                "https://example.com:8443/a?b=c",
                "http://auth:8080/login",
                "https://auth.example.com:443/login",
                "ssh://git@github.com/o/r.git",
                "git@github.com:o/r.git",
                "--password-stdin",
                "--token-file=/run/secrets/t",
                "--tokenizer=bert",
                "--no-password",
                "tool --password --host db",
                "tool --password-stdin < p",
                "curl --user-agent x https://h/",
                "Basic usage of the tool",
                "Token expired, retry",
                "Author: Jane Doe",
                "--author=Jane",
                "-Wall",
                "/usr/include/x86_64-linux-gnu",
                "HEAD:refs/heads/main",
                "a: b",
                "Bearer",
                // Not a credential header: a commit's scope, a word after "word:", code.
                "auth: fix login redirect loop",
                "session: keep cookie after logout",
                "print({'token': tok, 'session': 1})",
                "password: secret",
                "password:",
                "token: null",
                "Token::parse",
                "Primary-Key: id",
                // Options and names that say how, or where, not what.
                "--auth-method=password",
                "--token-limit 4096",
                "--token-limit=4096",
                "--credential-provider aws",
                "--auth=basic",
                "--auth-type=bearer",
                "--password-file /run/p",
                "--key=server.pem",
                "--private-key ~/.ssh/id_ed25519",
                "--key ./k",
                "--key-file=/x",
                "--max-tokens 4096",
                "max_tokens=4096",
                "token_type=bearer",
                "TOKEN_FILE=/run/t",
                "credential.helper=store",
                "TOKEN=$GITHUB_TOKEN",
                "PASSWORD=${DB_PASSWORD}",
                "PWD=/home/user",
                "GIT_ASKPASS=/usr/bin/askpass",
                "tokenizer=bert",
                "a==b",
                "password==x",
                "{.data.password}",
                "ProxyCommand=ssh -W %h:%p bastion",
                "docker run -p 8080:80 img",
                "mysql -P 3306 db",
                "echo -p hunter2 -u bob:hunter2",
                "curl -u bob https://h/",
                "git config user.name bob",
                "gh secret set TOKEN --body-file f",
                "grep -rn \"api_key=\" src/",
                "grep -rn \"password:\" src/",
                "secrets: inherit",
                "Basic implementation_of_feature; token refresh_handler"
            })
    void ordinaryArgumentsAreUntouched(String argument) {
        Findings findings = new Findings();
        assertSame(argument, REDACTOR.redactArgument(argument, findings));
        assertSame(argument, REDACTOR.redactPath(argument, findings));
        assertEquals(0, findings.total(), findings::toString);
    }

    static List<Arguments> ordinaryPairs() {
        return List.of(
                Arguments.of("--user-agent", "x"),
                Arguments.of("-H", "Accept: application/json"),
                Arguments.of("Basic", "usage"),
                Arguments.of("token", "expired"),
                Arguments.of("--password", "--host"),
                Arguments.of("--password-file", "/run/p"),
                Arguments.of("--user", "1000"),
                Arguments.of("-p", "8080"),
                Arguments.of("--tokenizer", "bert"),
                Arguments.of("ghp_", "short"),
                Arguments.of("my_", "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"),
                Arguments.of("password:", "src/"),
                Arguments.of("token:", "abc123def456"),
                Arguments.of("--token-limit", "4096"),
                Arguments.of("--credential-provider", "aws"),
                Arguments.of("--auth-method", "password"),
                Arguments.of("--key", "server.pem"),
                Arguments.of("--key", "/etc/k"),
                Arguments.of("--token=", "--verbose"),
                Arguments.of("-p", "hunter2"),
                Arguments.of("-u", "bob:hunter2"),
                Arguments.of("db_password", "hunter2"));
    }

    static List<Arguments> ordinaryProgramArguments() {
        return List.of(
                Arguments.of("docker", "-p", "8080:80"),
                Arguments.of("mysql", "-P", "3306"),
                Arguments.of("mysql", "-p", "--host"),
                Arguments.of("curl", "-u", "bob"),
                Arguments.of("curl", "-s", "-ubob"),
                Arguments.of("curl", "-p", "hunter2"),
                Arguments.of("git", "github.token", "opaque0123"),
                Arguments.of("aws", "region", "eu-west-1"),
                Arguments.of("gh", "secret", "set"),
                Arguments.of("git config", "password", "hunter2"),
                Arguments.of("aws", "aws_session_token", "--profile"));
    }

    @ParameterizedTest
    @MethodSource("ordinaryProgramArguments")
    void anOrdinaryArgumentOfAKnownProgramIsUntouched(String program, String previous, String argument) {
        Findings findings = new Findings();
        assertSame(argument, REDACTOR.redactArgumentAfter(program, previous, argument, findings));
        assertEquals(0, findings.total(), findings::toString);
    }

    @ParameterizedTest
    @MethodSource("ordinaryPairs")
    void anOrdinaryArgumentAfterAnotherIsUntouched(String previous, String argument) {
        Findings findings = new Findings();
        assertSame(argument, REDACTOR.redactArgumentAfter(previous, argument, findings));
        assertEquals(0, findings.total(), findings::toString);
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "Authorization: Bearer ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
                "--token=ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
                "https://x:ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8@github.com/o/r"
            })
    void aValueTheCatalogFoundKeepsTheCatalogsMarkerAndIsCountedOnce(String argument) {
        Findings findings = new Findings();
        String out = REDACTOR.redactArgument(argument, findings);
        assertTrue(out.contains("[REDACTED:github-pat"), out);
        assertEquals(List.of(new Findings.Finding("github-pat", Redactor.LOCATION_ARGV, 1)), findings.list());
        Findings next = new Findings();
        String marked = REDACTOR.redactArgumentAfter("Bearer", out, next);
        assertSame(out, marked);
        assertEquals(0, next.total());
    }

    @ParameterizedTest
    @ValueSource(strings = {"Authorization: Bearer " + OPAQUE, "--token=" + OPAQUE})
    void anAllowedValueIsNotRedacted(String argument) {
        Redactor allowing = Redactor.builder().allow(OPAQUE).build();
        Findings findings = new Findings();
        assertSame(argument, allowing.redactArgument(argument, findings));
        assertSame(OPAQUE, allowing.redactArgumentAfter("Bearer", OPAQUE, findings));
        assertEquals(0, findings.total());
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 7, 14, 15, 40})
    void aMarkerNamesItsKindAtEveryLength(int length) {
        String secret = "Z".repeat(length - 1) + "9";
        Findings findings = new Findings();
        String out = REDACTOR.redactArgument("--password=" + secret, findings);
        assertTrue(out.startsWith("--password=[REDACTED:credential-option"), out);
        assertTrue(out.endsWith("]"), out);
        assertFalse(out.substring("--password=".length()).contains("Z"), out);
        if (length >= "[REDACTED:credential-option]".length()) {
            assertEquals("--password=".length() + length, out.length(), "same length when the marker fits: " + out);
        }
    }
}

package dev.agentjail.proxy.redact;

import static org.junit.jupiter.api.Assertions.assertFalse;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The non-standard {@code %uXXXX} escape, which System.Web's HttpUtility.UrlDecode (ASP.NET form and query
 * parsing, also in .NET Core's System.Web.HttpUtility) and JavaScript's unescape() decode. One escaped character must not break
 * the literal trigger. Also a JSON body in \\u escapes whose hex digits are in mixed case and surrogate-escaped
 * characters (controls).
 */
class PercentUEscapesTest {
    static final String PAT = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "FORM|token=%u0067hp_REST",
                "TEXT|token=%u0067hp_REST",
                "TARGET|/x?token=%u0067hp_REST",
                "FORM|token=gh%u0070_REST",
                "FORM|token=%u0067%u0068%u0070%u005fREST",
                "JSON|{\"t\": \"%U0067hp_REST\"}",
                "TEXT|token=%u0067hp_REST%u",
                "FORM|token=%25u0067hp_REST",
            })
    void percentUEscapeOfOneCharacterIsRedacted(String mode, String text) {
        String body = text.replace("REST", PAT.substring(4));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        Findings f = new Findings();
        BodyRedactor r = new BodyRedactor(Redactor.builtIn().compiled(), Mode.valueOf(mode), "body", f);
        byte[] in = body.getBytes(StandardCharsets.UTF_8);
        r.feed(in, 0, in.length, out::write);
        r.finish(out::write);
        assertFalse(
                out.toString(StandardCharsets.UTF_8).contains(PAT.substring(4)),
                mode + ": went out as " + out.toString(StandardCharsets.UTF_8) + ", findings " + f.list());
    }
}

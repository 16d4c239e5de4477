package dev.agentjail.certs;

import java.security.cert.CertificateEncodingException;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** PEM text (RFC 7468) for certificates and keys: encoding and finding blocks of one type. */
final class Pem {
    static final String CERTIFICATE = "CERTIFICATE";

    private static final Base64.Encoder ENCODER = Base64.getMimeEncoder(64, new byte[] {'\n'});
    private static final Base64.Decoder DECODER = Base64.getMimeDecoder();

    private Pem() {}

    static String encode(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n" + ENCODER.encodeToString(der) + "\n-----END " + type + "-----\n";
    }

    static String encode(X509Certificate certificate) {
        try {
            return encode(CERTIFICATE, certificate.getEncoded());
        } catch (CertificateEncodingException e) {
            throw new IllegalStateException("cannot encode a parsed certificate", e);
        }
    }

    /** Every {@code type} block in the text, each normalised to "\n" line ends and ending in one. */
    static List<String> blocks(String text, String type) {
        Matcher m = pattern(type).matcher(text);
        List<String> blocks = new ArrayList<>();
        while (m.find()) {
            blocks.add(encode(type, decode(m.group(1))));
        }
        return blocks;
    }

    /** The DER bytes of every {@code type} block in the text. */
    static List<byte[]> decodeAll(String text, String type) {
        Matcher m = pattern(type).matcher(text);
        List<byte[]> ders = new ArrayList<>();
        while (m.find()) {
            ders.add(decode(m.group(1)));
        }
        return ders;
    }

    private static byte[] decode(String base64) {
        // The MIME decoder skips line breaks but also silently skips other junk, so check first.
        for (int i = 0; i < base64.length(); i++) {
            char c = base64.charAt(i);
            boolean ok = (c >= 'A' && c <= 'Z')
                    || (c >= 'a' && c <= 'z')
                    || (c >= '0' && c <= '9')
                    || c == '+'
                    || c == '/'
                    || c == '='
                    || Character.isWhitespace(c);
            if (!ok) {
                throw new IllegalArgumentException("invalid character in PEM base64");
            }
        }
        return DECODER.decode(base64);
    }

    private static Pattern pattern(String type) {
        String quoted = Pattern.quote(type);
        return Pattern.compile("-----BEGIN " + quoted + "-----([^-]*)-----END " + quoted + "-----");
    }
}

package dev.agentjail.it.support;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * Reads HTTP/1.1 responses off a raw socket, for tests that must control the exact bytes sent (pipelining, CONNECT
 * by hand, the Unix socket). Bodies framed by Content-Length or chunked encoding are supported; reads are bounded
 * by the socket's own timeout.
 */
public final class RawHttp {
    private RawHttp() {}

    /** One response: its head (status line and headers, without the blank line) and its decoded body. */
    public record Response(String head, String body) {
        public int status() {
            return Integer.parseInt(head.substring(9, 12));
        }

        /** The first value of header {@code name}, or null. */
        public String header(String name) {
            String prefix = name.toLowerCase(Locale.ROOT) + ":";
            return head.lines()
                    .skip(1)
                    .filter(l -> l.toLowerCase(Locale.ROOT).startsWith(prefix))
                    .map(l -> l.substring(prefix.length()).strip())
                    .findFirst()
                    .orElse(null);
        }
    }

    /** Reads one complete response. */
    public static Response read(InputStream in) throws IOException {
        String head = readHead(in);
        Response headOnly = new Response(head, "");
        String length = headOnly.header("Content-Length");
        if (length != null) {
            return new Response(head, ascii(in.readNBytes(Integer.parseInt(length))));
        }
        if ("chunked".equalsIgnoreCase(headOnly.header("Transfer-Encoding"))) {
            return new Response(head, readChunked(in));
        }
        return headOnly;
    }

    /** Reads a response head up to the blank line, which is consumed but not returned. */
    public static String readHead(InputStream in) throws IOException {
        StringBuilder head = new StringBuilder();
        while (!head.toString().endsWith("\r\n\r\n")) {
            int b = in.read();
            if (b < 0) {
                throw new IOException("connection closed inside a response head: " + head);
            }
            head.append((char) b);
        }
        return head.substring(0, head.length() - 4);
    }

    /** Reads everything until the peer closes the connection. */
    public static String readToEnd(InputStream in) throws IOException {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        in.transferTo(buf);
        return buf.toString(StandardCharsets.UTF_8);
    }

    private static String readChunked(InputStream in) throws IOException {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        while (true) {
            String sizeLine = readLine(in);
            int semicolon = sizeLine.indexOf(';');
            int size = Integer.parseInt((semicolon < 0 ? sizeLine : sizeLine.substring(0, semicolon)).strip(), 16);
            if (size == 0) {
                while (!readLine(in).isEmpty()) {
                    // Trailer fields are skipped.
                }
                return body.toString(StandardCharsets.UTF_8);
            }
            body.write(in.readNBytes(size));
            if (!readLine(in).isEmpty()) {
                throw new IOException("chunk data not followed by CRLF");
            }
        }
    }

    private static String readLine(InputStream in) throws IOException {
        StringBuilder line = new StringBuilder();
        while (!line.toString().endsWith("\r\n")) {
            int b = in.read();
            if (b < 0) {
                throw new IOException("connection closed inside a chunked body");
            }
            line.append((char) b);
        }
        return line.substring(0, line.length() - 2);
    }

    private static String ascii(byte[] b) {
        return new String(b, StandardCharsets.ISO_8859_1);
    }
}

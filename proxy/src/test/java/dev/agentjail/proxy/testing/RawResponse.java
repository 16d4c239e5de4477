package dev.agentjail.proxy.testing;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * One HTTP/1.1 response as it arrived on the wire, split by a deliberately small parser (status line, headers, and a
 * body framed by Content-Length, chunked, or the end of the connection). Header names keep their spelling.
 */
public record RawResponse(int status, String statusLine, List<String[]> headers, String body) {

    /** The values of header {@code name} (case-insensitive), in order. */
    public List<String> headers(String name) {
        List<String> values = new ArrayList<>();
        for (String[] h : headers) {
            if (h[0].equalsIgnoreCase(name)) {
                values.add(h[1]);
            }
        }
        return values;
    }

    /** The single value of header {@code name}, or null when absent. */
    public String header(String name) {
        List<String> values = headers(name);
        if (values.size() > 1) {
            throw new AssertionError("more than one " + name + " header: " + values);
        }
        return values.isEmpty() ? null : values.getFirst();
    }

    /** Whether the response said it closes the connection. */
    public boolean closes() {
        String connection = header("Connection");
        return connection != null && connection.toLowerCase(Locale.ROOT).contains("close");
    }

    /**
     * Parses every complete response in {@code text}; a body delimited by the end of the connection counts as complete
     * only when {@code closed}.
     */
    public static List<RawResponse> parseAll(String text, boolean closed) {
        List<RawResponse> responses = new ArrayList<>();
        int pos = 0;
        while (pos < text.length()) {
            int headEnd = text.indexOf("\r\n\r\n", pos);
            if (headEnd < 0) {
                break;
            }
            String[] lines = text.substring(pos, headEnd).split("\r\n", -1);
            String statusLine = lines[0];
            if (!statusLine.startsWith("HTTP/1.") || statusLine.length() < 12) {
                throw new AssertionError("not a status line: " + statusLine);
            }
            int status = Integer.parseInt(statusLine.substring(9, 12));
            List<String[]> headers = new ArrayList<>();
            for (int i = 1; i < lines.length; i++) {
                int colon = lines[i].indexOf(':');
                headers.add(new String[] {
                    lines[i].substring(0, colon), lines[i].substring(colon + 1).strip()
                });
            }
            RawResponse head = new RawResponse(status, statusLine, headers, "");
            int bodyStart = headEnd + 4;
            String cl = head.header("Content-Length");
            String te = head.header("Transfer-Encoding");
            if (status < 200 || status == 204 || status == 304) {
                responses.add(head);
                pos = bodyStart;
            } else if (te != null && te.equalsIgnoreCase("chunked")) {
                int[] end = new int[1];
                String body = dechunk(text, bodyStart, end);
                if (body == null) {
                    break;
                }
                responses.add(new RawResponse(status, statusLine, headers, body));
                pos = end[0];
            } else if (cl != null) {
                int length = Integer.parseInt(cl);
                if (text.length() < bodyStart + length) {
                    break;
                }
                responses.add(
                        new RawResponse(status, statusLine, headers, text.substring(bodyStart, bodyStart + length)));
                pos = bodyStart + length;
            } else {
                if (!closed) {
                    break;
                }
                responses.add(new RawResponse(status, statusLine, headers, text.substring(bodyStart)));
                pos = text.length();
            }
        }
        return responses;
    }

    private static String dechunk(String text, int pos, int[] end) {
        StringBuilder body = new StringBuilder();
        while (true) {
            int lineEnd = text.indexOf("\r\n", pos);
            if (lineEnd < 0) {
                return null;
            }
            String sizeText = text.substring(pos, lineEnd);
            int semicolon = sizeText.indexOf(';');
            int size = Integer.parseInt(semicolon < 0 ? sizeText : sizeText.substring(0, semicolon), 16);
            pos = lineEnd + 2;
            if (size == 0) {
                int trailersEnd = text.indexOf("\r\n", pos);
                while (trailersEnd > pos) {
                    pos = trailersEnd + 2;
                    trailersEnd = text.indexOf("\r\n", pos);
                }
                if (trailersEnd < 0) {
                    return null;
                }
                end[0] = trailersEnd + 2;
                return body.toString();
            }
            if (text.length() < pos + size + 2) {
                return null;
            }
            body.append(text, pos, pos + size);
            pos += size + 2;
        }
    }
}

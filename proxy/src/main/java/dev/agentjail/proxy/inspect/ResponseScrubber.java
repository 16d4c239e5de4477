package dev.agentjail.proxy.inspect;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.codec.http.HttpHeaders;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Keeps the real value of a credential the proxy injected into a request out of the response to it: an endpoint that
 * echoes request headers, or an error page that quotes the key, would otherwise hand the jail what it must never see.
 * Each occurrence, in a header or anywhere in the streamed body, is swapped back to the credential's placeholder (or, if
 * their lengths differ, a mask of the value's length, so framing and offsets stay as they were). A body is scanned as a
 * stream: bytes that could begin a value are held back until the next part shows whether they do, and nothing else is
 * delayed (an event stream's events go on at once).
 */
public final class ResponseScrubber {
    private final List<byte[]> values = new ArrayList<>();
    private final List<byte[]> replacements = new ArrayList<>();
    private final List<String> valueTexts = new ArrayList<>();
    private final List<String> replacementTexts = new ArrayList<>();
    private byte[] held = new byte[0];
    private long swapped;

    /**
     * A scrubber of {@code credentials}' values, for a channel that is no single response to one request: the messages
     * of a WebSocket to the credentials' host.
     */
    public static ResponseScrubber of(List<InjectedCredential> credentials) {
        return new ResponseScrubber(credentials);
    }

    ResponseScrubber(List<InjectedCredential> injected) {
        for (InjectedCredential c : injected) {
            for (String spelling : spellings(c.value())) {
                byte[] value = spelling.getBytes(StandardCharsets.UTF_8);
                if (values.stream().anyMatch(v -> java.util.Arrays.equals(v, value))) {
                    continue;
                }
                String replacement = sameLength(c.placeholder(), spelling.length());
                values.add(value);
                replacements.add(replacement.getBytes(StandardCharsets.UTF_8));
                valueTexts.add(spelling);
                replacementTexts.add(replacement);
            }
        }
    }

    /**
     * The value as an echoing endpoint may write it back: as it is, upper and lower case (a hex key loses nothing),
     * percent-encoded (either case of hex digits), JSON with {@code \/}, and base64 (standard and URL-safe, padded or
     * not). A value buried in a longer base64 or escaped in other ways is not found (docs/policy.md).
     */
    static List<String> spellings(String value) {
        java.util.LinkedHashSet<String> out = new java.util.LinkedHashSet<>();
        out.add(value);
        out.add(value.toUpperCase(java.util.Locale.ROOT));
        out.add(value.toLowerCase(java.util.Locale.ROOT));
        String percent =
                java.net.URLEncoder.encode(value, StandardCharsets.UTF_8).replace("+", "%20");
        out.add(percent);
        out.add(java.util.regex.Pattern.compile("%[0-9A-F]{2}")
                .matcher(percent)
                .replaceAll(m -> m.group().toLowerCase(java.util.Locale.ROOT)));
        out.add(value.replace("/", "\\/"));
        byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
        String b64 = java.util.Base64.getEncoder().encodeToString(bytes);
        String url = java.util.Base64.getUrlEncoder().encodeToString(bytes);
        out.add(b64);
        out.add(url);
        out.add(b64.replace("=", ""));
        out.add(url.replace("=", ""));
        out.removeIf(String::isEmpty);
        return List.copyOf(out);
    }

    /** The placeholder, or a mask of {@code length} characters drawn from it when the lengths differ. */
    static String sameLength(String placeholder, int length) {
        if (placeholder.length() == length) {
            return placeholder;
        }
        StringBuilder out = new StringBuilder(length);
        while (out.length() < length) {
            out.append(placeholder, 0, Math.min(placeholder.length(), length - out.length()));
        }
        return out.toString();
    }

    /** How many values were swapped back, headers and body. */
    public long swapped() {
        return swapped;
    }

    /**
     * Swaps every value in the header values, in place; a header whose name holds one, or whose value holds one once
     * its whitespace is gone (a folded line the parser joined with a space), is dropped whole.
     */
    public void scrub(HttpHeaders headers) {
        List<Map.Entry<String, String>> entries = new ArrayList<>();
        boolean changed = false;
        for (Map.Entry<String, String> h : headers) {
            String value = h.getValue();
            String squeezed = (h.getKey() + "\n" + value).replaceAll("\\s+", "");
            boolean hidden = false;
            for (String spelling : valueTexts) {
                String bare = spelling.replaceAll("\\s+", "");
                if (h.getKey().contains(bare) || (squeezed.contains(bare) && !value.contains(spelling))) {
                    hidden = true;
                }
            }
            if (hidden) {
                swapped++;
                changed = true;
                continue;
            }
            for (int i = 0; i < valueTexts.size(); i++) {
                int count = occurrences(value, valueTexts.get(i));
                if (count > 0) {
                    swapped += count;
                    value = value.replace(valueTexts.get(i), replacementTexts.get(i));
                    changed = true;
                }
            }
            entries.add(Map.entry(h.getKey(), value));
        }
        if (changed) {
            headers.clear();
            entries.forEach(e -> headers.add(e.getKey(), e.getValue()));
        }
    }

    /**
     * A line of text with every value swapped (a status line's reason phrase); one that holds a value once its
     * whitespace is gone is replaced whole by {@code instead}.
     */
    public String scrub(String text, String instead) {
        String squeezed = text.replaceAll("\\s+", "");
        String out = text;
        for (int i = 0; i < valueTexts.size(); i++) {
            int count = occurrences(out, valueTexts.get(i));
            swapped += count;
            out = out.replace(valueTexts.get(i), replacementTexts.get(i));
        }
        for (String spelling : valueTexts) {
            if (squeezed.contains(spelling.replaceAll("\\s+", "")) && !text.contains(spelling)) {
                swapped++;
                return instead;
            }
        }
        return out;
    }

    private static int occurrences(String text, String value) {
        int count = 0;
        for (int at = text.indexOf(value); at >= 0; at = text.indexOf(value, at + value.length())) {
            count++;
        }
        return count;
    }

    /**
     * The next part of the body with every value swapped, as much of it as can go now ({@code last}: all of it). Takes
     * ownership of {@code part}; the result is the caller's.
     */
    public ByteBuf scrub(ByteBuf part, boolean last, ByteBufAllocator alloc) {
        byte[] bytes;
        try {
            bytes = new byte[held.length + part.readableBytes()];
            System.arraycopy(held, 0, bytes, 0, held.length);
            part.getBytes(part.readerIndex(), bytes, held.length, part.readableBytes());
        } finally {
            part.release();
        }
        for (int i = 0; i < values.size(); i++) {
            swapped += replaceAll(bytes, values.get(i), replacements.get(i));
        }
        int keep = last ? 0 : possibleStart(bytes);
        held = java.util.Arrays.copyOfRange(bytes, bytes.length - keep, bytes.length);
        ByteBuf out = alloc.buffer(bytes.length - keep);
        out.writeBytes(bytes, 0, bytes.length - keep);
        return out;
    }

    /** Replaces each occurrence of {@code value} by {@code replacement} (of the same length); returns how many. */
    private static int replaceAll(byte[] bytes, byte[] value, byte[] replacement) {
        int count = 0;
        outer:
        for (int at = 0; at + value.length <= bytes.length; at++) {
            for (int k = 0; k < value.length; k++) {
                if (bytes[at + k] != value[k]) {
                    continue outer;
                }
            }
            System.arraycopy(replacement, 0, bytes, at, replacement.length);
            count++;
            at += value.length - 1;
        }
        return count;
    }

    /** The length of the longest end of {@code bytes} that is the beginning of a value: it may continue next. */
    private int possibleStart(byte[] bytes) {
        int longest = 0;
        for (byte[] value : values) {
            for (int n = Math.min(value.length - 1, bytes.length); n > longest; n--) {
                if (java.util.Arrays.equals(bytes, bytes.length - n, bytes.length, value, 0, n)) {
                    longest = n;
                    break;
                }
            }
        }
        return longest;
    }
}

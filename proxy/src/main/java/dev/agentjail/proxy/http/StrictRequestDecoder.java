package dev.agentjail.proxy.http;

import dev.agentjail.proxy.audit.Sha256;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpHeadersFactory;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;

/**
 * Decodes HTTP/1.1 (and 1.0) requests from raw bytes and refuses every ambiguity instead of guessing.
 *
 * <p>Only three framings are accepted: no body, one plain {@code Content-Length}, or {@code
 * Transfer-Encoding: chunked} alone (never in an HTTP/1.0 request); the headers that type and encode the
 * body must have one reading ({@link BodyHeaders}). Lines end in CRLF only; obs-fold, whitespace before a colon,
 * control characters, bad chunk syntax and oversized heads are refused. A refusal is emitted as a
 * {@link MalformedRequest} and the decoder then discards everything that follows, so nothing after
 * a bad request is ever parsed. After a CONNECT head the remaining bytes pass through untouched as
 * raw {@link ByteBuf}s (they belong to the tunnel, not to HTTP).
 */
public final class StrictRequestDecoder extends ByteToMessageDecoder {
    /** Fired as a user event when the first byte of a new request head arrives. */
    public static final Object HEAD_STARTED = "agentjail.head-started";

    /**
     * Reason of a head whose body headers (type, coding) can be read more than one way: repeated, spelled with
     * {@code _}, listed in {@code Connection}, or a value that is not one media type or one list of codings.
     */
    public static final String AMBIGUOUS_BODY_HEADER = "ambiguous-body-header";

    private static final Set<String> KNOWN_METHODS =
            Set.of("GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "PATCH");
    private static final int MAX_CHUNK_LINE = 1024;
    private static final int FIRST_BYTES_HASHED = 256;

    private enum State {
        HEAD,
        FIXED_BODY,
        CHUNK_SIZE,
        CHUNK_DATA,
        CHUNK_DATA_END,
        TRAILERS,
        TUNNEL,
        FAILED
    }

    private final HttpLimits limits;

    private State state = State.HEAD;
    private HeadBuilder head;
    private long remaining;
    private int trailerBytes;
    private byte[] firstBytes;

    public StrictRequestDecoder(HttpLimits limits) {
        this.limits = limits;
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        try {
            decodeAll(ctx, in, out);
        } catch (RequestRejected e) {
            state = State.FAILED;
            in.skipBytes(in.readableBytes());
            out.add(new MalformedRequest(e.status, e.reason, e.getMessage(), firstBytesHash()));
        }
    }

    private void decodeAll(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) throws RequestRejected {
        while (in.isReadable()) {
            switch (state) {
                case HEAD -> {
                    if (head == null && !out.isEmpty()) {
                        // Let the request decoded so far go first, so that HEAD_STARTED follows it in order.
                        return;
                    }
                    if (head == null) {
                        head = new HeadBuilder();
                        rememberFirstBytes(in);
                        ctx.fireUserEventTriggered(HEAD_STARTED);
                    }
                    if (!readHead(in, out)) {
                        return;
                    }
                }
                case FIXED_BODY -> {
                    int n = (int) Math.min(remaining, in.readableBytes());
                    remaining -= n;
                    out.add(new DefaultHttpContent(in.readRetainedSlice(n)));
                    if (remaining == 0) {
                        out.add(LastHttpContent.EMPTY_LAST_CONTENT);
                        state = State.HEAD;
                    }
                }
                case CHUNK_SIZE -> {
                    String line = readLine(in, MAX_CHUNK_LINE, "bad-chunk", "chunk size line too long");
                    if (line == null) {
                        return;
                    }
                    remaining = ChunkSyntax.parseSizeLine(line);
                    state = remaining == 0 ? State.TRAILERS : State.CHUNK_DATA;
                    trailerBytes = 0;
                }
                case CHUNK_DATA -> {
                    int n = (int) Math.min(remaining, in.readableBytes());
                    remaining -= n;
                    out.add(new DefaultHttpContent(in.readRetainedSlice(n)));
                    if (remaining == 0) {
                        state = State.CHUNK_DATA_END;
                    }
                }
                case CHUNK_DATA_END -> {
                    if (in.readableBytes() < 2) {
                        return;
                    }
                    if (in.readByte() != '\r' || in.readByte() != '\n') {
                        throw RequestRejected.bad("bad-chunk", "chunk data not followed by CRLF");
                    }
                    state = State.CHUNK_SIZE;
                }
                case TRAILERS -> {
                    String line = readLine(in, limits.maxHeaderLine(), "bad-chunk", "trailer line too long");
                    if (line == null) {
                        return;
                    }
                    trailerBytes += line.length() + 2;
                    if (trailerBytes > limits.maxHeadBytes()) {
                        throw new RequestRejected(
                                HttpResponseStatus.REQUEST_HEADER_FIELDS_TOO_LARGE,
                                "head-too-large",
                                "trailers too large");
                    }
                    if (line.isEmpty()) {
                        // Trailers are validated but never forwarded or merged into the headers.
                        out.add(LastHttpContent.EMPTY_LAST_CONTENT);
                        state = State.HEAD;
                    } else {
                        HeaderSyntax.parseField(line);
                    }
                }
                case TUNNEL -> {
                    out.add(in.readRetainedSlice(in.readableBytes()));
                }
                case FAILED -> {
                    in.skipBytes(in.readableBytes());
                }
            }
        }
    }

    /** Reads head lines; returns true once a complete request was emitted. */
    private boolean readHead(ByteBuf in, List<Object> out) throws RequestRejected {
        while (true) {
            boolean requestLine = head.requestLine == null;
            int max = requestLine ? limits.maxRequestLine() : limits.maxHeaderLine();
            String line = requestLine
                    ? readLine(in, max, "uri-too-long", "request line too long")
                    : readLine(in, max, "head-too-large", "header line too long");
            if (line == null) {
                return false;
            }
            head.bytes += line.length() + 2;
            if (head.bytes > limits.maxHeadBytes()) {
                throw new RequestRejected(
                        HttpResponseStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, "head-too-large", "request head too large");
            }
            if (requestLine) {
                if (line.isEmpty()) {
                    throw RequestRejected.bad("malformed-request-line", "empty request line");
                }
                head.requestLine = RequestLine.parse(line);
                continue;
            }
            if (line.isEmpty()) {
                emitRequest(out);
                return true;
            }
            if (++head.fields > limits.maxHeaders()) {
                throw new RequestRejected(
                        HttpResponseStatus.REQUEST_HEADER_FIELDS_TOO_LARGE,
                        "too-many-headers",
                        "too many header fields");
            }
            String[] field = HeaderSyntax.parseField(line);
            head.headers.add(field[0], field[1]);
        }
    }

    private void emitRequest(List<Object> out) throws RequestRejected {
        RequestLine rl = head.requestLine;
        HttpHeaders headers = head.headers;
        Framing framing = Framing.of(rl.method(), rl.version(), headers);
        BodyHeaders.check(headers);
        head = null;
        out.add(new DefaultHttpRequest(rl.version(), HttpMethod.valueOf(rl.method()), rl.target(), headers));
        switch (framing.kind()) {
            case NONE -> {
                if (rl.method().equals("CONNECT")) {
                    state = State.TUNNEL;
                } else {
                    out.add(LastHttpContent.EMPTY_LAST_CONTENT);
                    state = State.HEAD;
                }
            }
            case LENGTH -> {
                remaining = framing.length();
                state = State.FIXED_BODY;
            }
            case CHUNKED -> state = State.CHUNK_SIZE;
        }
    }

    /**
     * Reads one CRLF-terminated line (without the CRLF) as ISO-8859-1, or returns null when it is not
     * complete yet. A bare LF or a CR anywhere else is refused.
     */
    private static String readLine(ByteBuf in, int max, String tooLongReason, String tooLongDetail)
            throws RequestRejected {
        int start = in.readerIndex();
        int lf = in.indexOf(start, Math.min(in.writerIndex(), start + max + 2), (byte) '\n');
        if (lf < 0) {
            if (in.readableBytes() > max + 1) {
                HttpResponseStatus status = tooLongReason.equals("uri-too-long")
                        ? HttpResponseStatus.REQUEST_URI_TOO_LONG
                        : HttpResponseStatus.REQUEST_HEADER_FIELDS_TOO_LARGE;
                throw new RequestRejected(status, tooLongReason, tooLongDetail);
            }
            int cr = in.indexOf(start, in.writerIndex() - 1, (byte) '\r');
            if (cr >= 0) {
                throw RequestRejected.bad("bad-line-ending", "bare CR in line");
            }
            return null;
        }
        if (lf == start || in.getByte(lf - 1) != '\r') {
            throw RequestRejected.bad("bad-line-ending", "line ends in bare LF");
        }
        int len = lf - 1 - start;
        if (in.indexOf(start, start + len, (byte) '\r') >= 0) {
            throw RequestRejected.bad("bad-line-ending", "bare CR in line");
        }
        String line = in.toString(start, len, StandardCharsets.ISO_8859_1);
        in.readerIndex(lf + 1);
        return line;
    }

    private void rememberFirstBytes(ByteBuf in) {
        int n = Math.min(FIRST_BYTES_HASHED, in.readableBytes());
        firstBytes = new byte[n];
        in.getBytes(in.readerIndex(), firstBytes);
    }

    private String firstBytesHash() {
        return firstBytes == null ? null : Sha256.hex(firstBytes, 0, firstBytes.length);
    }

    /** The parsed request line. */
    record RequestLine(String method, String target, HttpVersion version) {
        static RequestLine parse(String line) throws RequestRejected {
            int sp1 = line.indexOf(' ');
            int sp2 = sp1 < 0 ? -1 : line.indexOf(' ', sp1 + 1);
            if (sp1 <= 0 || sp2 < 0 || line.indexOf(' ', sp2 + 1) >= 0) {
                throw RequestRejected.bad("malformed-request-line", "request line is not METHOD SP TARGET SP VERSION");
            }
            String method = line.substring(0, sp1);
            String target = line.substring(sp1 + 1, sp2);
            String version = line.substring(sp2 + 1);
            if (!HeaderSyntax.isToken(method)) {
                throw RequestRejected.bad("bad-method", "invalid method");
            }
            if (method.equals("TRACE")) {
                throw new RequestRejected(HttpResponseStatus.METHOD_NOT_ALLOWED, "bad-method", "TRACE is not allowed");
            }
            if (!KNOWN_METHODS.contains(method)) {
                throw new RequestRejected(HttpResponseStatus.NOT_IMPLEMENTED, "bad-method", "unknown method");
            }
            if (target.isEmpty()) {
                throw RequestRejected.bad("malformed-request-line", "empty request target");
            }
            for (int i = 0; i < target.length(); i++) {
                char c = target.charAt(i);
                if (c <= 0x20 || c >= 0x7f || c == '#') {
                    throw RequestRejected.bad("malformed-request-line", "invalid character in request target");
                }
            }
            HttpVersion v = switch (version) {
                case "HTTP/1.1" -> HttpVersion.HTTP_1_1;
                case "HTTP/1.0" -> HttpVersion.HTTP_1_0;
                default -> {
                    if (version.matches("HTTP/[0-9]\\.[0-9]")) {
                        throw new RequestRejected(
                                HttpResponseStatus.HTTP_VERSION_NOT_SUPPORTED,
                                "bad-version",
                                "unsupported HTTP version");
                    }
                    throw RequestRejected.bad("bad-version", "malformed HTTP version");
                }
            };
            return new RequestLine(method, target, v);
        }
    }

    /** A request head under construction. */
    private static final class HeadBuilder {
        final HttpHeaders headers =
                DefaultHttpHeadersFactory.headersFactory().withValidation(false).newHeaders();
        RequestLine requestLine;
        int bytes;
        int fields;
    }
}

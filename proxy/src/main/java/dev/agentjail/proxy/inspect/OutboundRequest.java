package dev.agentjail.proxy.inspect;

import dev.agentjail.policy.Target;
import dev.agentjail.proxy.ProxyReasons;
import dev.agentjail.proxy.redact.BodyKind;
import dev.agentjail.proxy.redact.BodyRedactor;
import dev.agentjail.proxy.redact.ByteSink;
import dev.agentjail.proxy.redact.ContentCodingException;
import dev.agentjail.proxy.redact.ContentCodings;
import dev.agentjail.proxy.redact.Findings;
import dev.agentjail.proxy.redact.NonRewritable;
import dev.agentjail.proxy.redact.Redactor;
import dev.agentjail.proxy.redact.RewriteCheck;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.LastHttpContent;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * One outbound request as the upstream will see it: target and headers with secrets replaced by
 * same-length markers (and injected credentials swapped in), and a body that is redacted as it
 * streams, or, for gzip/deflate bodies, collected up to a cap, decoded, redacted and re-encoded.
 *
 * <p>When the policy says {@code block}, or the payload cannot be rewritten (a git pack, a signed
 * body), a secret refuses the request instead. In a streamed body the redactor holds back every
 * byte that could still be part of a secret, so the bytes of a found secret never leave: the
 * caller cuts the upstream connection with the request incomplete.
 */
public final class OutboundRequest {
    /** Compressed bodies are collected before they are inspected; past this they are refused. */
    static final int MAX_ENCODED_BODY = 16 * 1024 * 1024;

    private final Inspector inspector;
    private final Findings findings;
    private final String originForm;
    private final HttpHeaders headers;
    private final Optional<NonRewritable> nonRewritable;
    private final BodyRedactor streaming;
    private final String contentEncoding;
    private final BodyKind kind;
    private byte[] collected;
    private int collectedLength;
    /** The first bytes of the body, until {@link WideText} has decided on them. */
    private final byte[] lead = new byte[WideText.LEAD_BYTES];

    private int leadLength;
    private boolean leadDecided;
    /** What the scan released while the lead was undecided, held back until it is. */
    private ByteBuf heldOut;
    /** The declared type names binary content (an image, an archive): no text encoding is read into it. */
    private boolean binaryType;

    private HttpResponseStatus refusalStatus;
    private String refusalReason;
    private String refusalDetail;

    private OutboundRequest(
            Inspector inspector,
            Findings findings,
            String originForm,
            HttpHeaders headers,
            Optional<NonRewritable> nonRewritable,
            String contentEncoding,
            BodyKind kind) {
        this.inspector = inspector;
        this.findings = findings;
        this.originForm = originForm;
        this.headers = headers;
        this.nonRewritable = nonRewritable;
        this.contentEncoding = contentEncoding;
        this.kind = kind;
        this.streaming = contentEncoding == null
                ? inspector.redactor().bodyRedactor(kind, Redactor.LOCATION_BODY, findings)
                : null;
    }

    static OutboundRequest start(
            Inspector inspector, HttpRequest request, Target target, String originForm, boolean verifiedTls) {
        Redactor redactor = inspector.redactor();
        Findings head = new Findings();
        String target0 = redactor.redactTarget(originForm, head);
        HttpHeaders rewritten = new DefaultHttpHeaders();
        List<InjectedCredential> injected = new ArrayList<>();
        for (Map.Entry<String, String> h : request.headers()) {
            String name = h.getKey();
            if (redactor.headerNameCarriesSecret(name, head)) {
                // A name cannot hold a marker (brackets are no token characters) and no header is named after a
                // secret for a good reason: the field is dropped, value and all, and counted under header-name.
                continue;
            }
            String value = h.getValue();
            InjectedCredential credential = verifiedTls ? credentialFor(inspector, target, name, value) : null;
            if (credential != null) {
                rewritten.add(name, value.replace(credential.placeholder(), credential.value()));
                injected.add(credential);
            } else {
                rewritten.add(name, redactor.redactHeader(name, value, head));
            }
        }
        Optional<NonRewritable> fixed = RewriteCheck.classify(originForm, request.headers());
        String encoding = request.headers().get(HttpHeaderNames.CONTENT_ENCODING);
        String coding = null;
        String codingProblem = null;
        try {
            if (encoding != null && !ContentCodings.isIdentity(encoding)) {
                coding = encoding;
            }
        } catch (ContentCodingException e) {
            codingProblem = e.getMessage();
        }
        if (encoding != null && coding == null && codingProblem == null) {
            // "identity" is no coding; the receiver sees no header rather than one it might read otherwise.
            rewritten.remove(HttpHeaderNames.CONTENT_ENCODING);
        }
        BodyKind kind = BodyKind.fromContentType(request.headers().get(HttpHeaderNames.CONTENT_TYPE));
        if (!injected.isEmpty()) {
            // The response is scrubbed of the injected value as it streams: it must come as it is, not compressed.
            rewritten.set(HttpHeaderNames.ACCEPT_ENCODING, "identity");
        }
        OutboundRequest out = new OutboundRequest(inspector, head, target0, rewritten, fixed, coding, kind);
        out.binaryType = WideText.binaryType(request.headers().get(HttpHeaderNames.CONTENT_TYPE));
        out.scrubber = injected.isEmpty() ? null : new ResponseScrubber(injected);
        Optional<String> charsetProblem = hasBody(request)
                ? charsetProblem(request.headers().get(HttpHeaderNames.CONTENT_TYPE))
                : Optional.empty();
        if (codingProblem != null) {
            out.refuse(HttpResponseStatus.FORBIDDEN, ProxyReasons.UNINSPECTABLE_BODY, codingProblem);
        } else if (charsetProblem.isPresent()) {
            out.refuse(HttpResponseStatus.FORBIDDEN, ProxyReasons.UNINSPECTABLE_BODY, charsetProblem.get());
        } else if (head.refusal().isPresent()) {
            out.refuse(
                    HttpResponseStatus.FORBIDDEN,
                    head.refusal().get().reason(),
                    head.refusal().get().detail() + " (request head)");
        } else if (!head.isEmpty() && (inspector.blocks() || fixed.isPresent())) {
            out.refuse(HttpResponseStatus.FORBIDDEN, ProxyReasons.SECRET_BLOCKED, out.blockDetail("request head"));
        }
        return out;
    }

    /**
     * Charsets in which the scanner's text is the receiver's text: the ASCII bytes of a secret are those bytes. In any
     * other (UTF-16, UTF-7, EBCDIC, ...) a receiver that decodes as declared reads a secret the scanner never saw.
     */
    private static final java.util.Set<String> READABLE_CHARSETS =
            java.util.Set.of("utf-8", "utf8", "us-ascii", "ascii", "iso-8859-1", "latin1", "windows-1252");

    /**
     * Why a body declared in {@code contentType}'s charset cannot be scanned as text, if it cannot: every charset a
     * receiver could read there (the RFC 9110 parse, and what quote-blind or lenient parsers find) must be one of
     * {@link #READABLE_CHARSETS}, and they must agree.
     */
    static Optional<String> charsetProblem(String contentType) {
        java.util.Set<String> names = new java.util.LinkedHashSet<>();
        dev.agentjail.proxy.mcp.JsonCharset.declaredNames(contentType)
                .forEach(n -> names.add(n.strip().toLowerCase(java.util.Locale.ROOT)));
        if (names.size() > 1) {
            return Optional.of("the body declares " + names.size() + " charsets, as receivers may read its type;"
                    + " a receiver could read either");
        }
        for (String name : names) {
            if (!READABLE_CHARSETS.contains(name)) {
                return Optional.of("the body declares charset '" + dev.agentjail.proxy.mcp.McpGate.printable(name)
                        + "', in which a receiver reads text the scanner cannot; send it as UTF-8");
            }
        }
        return Optional.empty();
    }

    /** Whether {@code request} carries a body (chunked, or a Content-Length above 0), as its head says. */
    public static boolean hasBody(HttpRequest request) {
        return request.headers().contains(HttpHeaderNames.TRANSFER_ENCODING)
                || io.netty.handler.codec.http.HttpUtil.getContentLength(request, 0L) > 0;
    }

    private static InjectedCredential credentialFor(Inspector inspector, Target target, String name, String value) {
        for (InjectedCredential c : inspector.inspection().credentials()) {
            if (c.rule().header().equalsIgnoreCase(name)
                    && c.rule().appliesTo(target)
                    && value.contains(c.placeholder())) {
                return c;
            }
        }
        return null;
    }

    /** Set when a credential was injected: the response is swapped back to placeholders (see ResponseScrubber). */
    private ResponseScrubber scrubber;

    /** The scrubber of the response, when this request carries an injected credential. */
    public Optional<ResponseScrubber> scrubber() {
        return Optional.ofNullable(scrubber);
    }

    /** The request target (origin-form) to send, secrets replaced. */
    public String originForm() {
        return originForm;
    }

    /** The path to record: the redacted target without its query. */
    public String recordPath() {
        int q = originForm.indexOf('?');
        return q < 0 ? originForm : originForm.substring(0, q);
    }

    /** The headers to send (before hop-by-hop stripping), secrets replaced and credentials injected. */
    public HttpHeaders headers() {
        return headers;
    }

    /** Whether the body is collected whole before anything is sent (a compressed body). */
    public boolean collects() {
        return contentEncoding != null;
    }

    public boolean refused() {
        return refusalReason != null;
    }

    public HttpResponseStatus refusalStatus() {
        return refusalStatus;
    }

    public String refusalReason() {
        return refusalReason;
    }

    public String refusalDetail() {
        return refusalDetail;
    }

    public List<Findings.Finding> findings() {
        return findings.list();
    }

    /**
     * Takes one body part (and releases it) and returns what to send upstream for it: the redacted bytes
     * released so far, everything at the last part, or null when nothing goes out now (collecting) or
     * the request was refused ({@link #refused()}).
     */
    public HttpContent transform(HttpContent in, ByteBufAllocator alloc) {
        boolean last = in instanceof LastHttpContent;
        try {
            if (refused()) {
                return null;
            }
            ByteBuf data = in.content();
            if (streaming == null) {
                return collect(data, last);
            }
            if (leadDecided) {
                return stream(data, last, alloc);
            }
            // The first bytes say whether the text is UTF-16 or UTF-32, which the byte scan cannot read: until they
            // have, nothing the scan releases goes out.
            int take = Math.min(lead.length - leadLength, data.readableBytes());
            data.getBytes(data.readerIndex(), lead, leadLength, take);
            leadLength += take;
            HttpContent out = stream(data, last, alloc);
            if (out == null) {
                releaseHeld(); // Refused by the scan.
                return null;
            }
            if (leadLength < lead.length && !last) {
                holdOut(out, alloc);
                return null;
            }
            leadDecided = true;
            if (refusedAsWide(lead, leadLength)) {
                out.release();
                releaseHeld();
                return null;
            }
            return withHeld(out, alloc);
        } finally {
            in.release();
        }
    }

    /** Whether a body whose text starts with {@code start[0, n)} is refused as UTF-16/32 (and then it is). */
    private boolean refusedAsWide(byte[] start, int n) {
        String wide = binaryType ? null : WideText.encoding(start, n);
        if (wide == null && !binaryType && ebcdicXml(start, n)) {
            refuse(
                    HttpResponseStatus.FORBIDDEN,
                    ProxyReasons.UNINSPECTABLE_BODY,
                    "the request body starts as an XML declaration in EBCDIC, which an XML parser decodes and the scan"
                            + " cannot read; send it as UTF-8");
            return true;
        }
        if (wide == null) {
            return false;
        }
        refuse(
                HttpResponseStatus.FORBIDDEN,
                ProxyReasons.UNINSPECTABLE_BODY,
                "the request body reads as " + wide + " text, which a JSON parser decodes and the scan cannot read;"
                        + " send it as UTF-8");
        return true;
    }

    /**
     * Whether {@code start[0, n)} is {@code <?xm} in EBCDIC, from which an XML parser detects an EBCDIC document (XML
     * 1.0, Appendix F) and reads its encoding declaration.
     */
    static boolean ebcdicXml(byte[] start, int n) {
        return n >= 4
                && (start[0] & 0xff) == 0x4c
                && (start[1] & 0xff) == 0x6f
                && (start[2] & 0xff) == 0xa7
                && (start[3] & 0xff) == 0x94;
    }

    private void holdOut(HttpContent out, ByteBufAllocator alloc) {
        if (heldOut == null) {
            heldOut = alloc.buffer(out.content().readableBytes() + 16);
        }
        heldOut.writeBytes(out.content());
        out.release();
    }

    private HttpContent withHeld(HttpContent out, ByteBufAllocator alloc) {
        if (heldOut == null) {
            return out;
        }
        ByteBuf all = heldOut.writeBytes(out.content());
        heldOut = null;
        boolean last = out instanceof LastHttpContent;
        out.release();
        return last ? new DefaultLastHttpContent(all) : new DefaultHttpContent(all);
    }

    /** Releases what was held back (the exchange ended or was refused before it went out). */
    public void releaseHeld() {
        if (heldOut != null) {
            heldOut.release();
            heldOut = null;
        }
    }

    private HttpContent stream(ByteBuf data, boolean last, ByteBufAllocator alloc) {
        int before = findings.total();
        ByteBuf out = alloc.buffer(data.readableBytes() + 64);
        try {
            feed(data, out);
            if (last) {
                streaming.finish((b, off, len) -> out.writeBytes(b, off, len));
            }
            if (refusedByScan() || findings.total() > before && (inspector.blocks() || nonRewritable.isPresent())) {
                refuse(HttpResponseStatus.FORBIDDEN, ProxyReasons.SECRET_BLOCKED, blockDetail("request body"));
                out.release();
                return null;
            }
        } catch (RuntimeException e) {
            out.release();
            throw e;
        }
        return last ? new DefaultLastHttpContent(out) : new DefaultHttpContent(out);
    }

    private void feed(ByteBuf data, ByteBuf out) {
        if (!data.isReadable()) {
            return;
        }
        ByteSink sink = (b, off, len) -> out.writeBytes(b, off, len);
        if (data.hasArray()) {
            streaming.feed(data.array(), data.arrayOffset() + data.readerIndex(), data.readableBytes(), sink);
            return;
        }
        // Direct buffers (what the socket and TLS hand over) are read through views: no copy per chunk.
        for (java.nio.ByteBuffer view : data.nioBuffers()) {
            streaming.feed(view, sink);
        }
    }

    private HttpContent collect(ByteBuf data, boolean last) {
        int n = data.readableBytes();
        if ((long) collectedLength + n > MAX_ENCODED_BODY) {
            collected = null;
            refuse(
                    HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE,
                    ProxyReasons.UNINSPECTABLE_BODY,
                    "a " + contentEncoding + " request body larger than " + MAX_ENCODED_BODY
                            + " bytes cannot be inspected");
            return null;
        }
        if (collected == null) {
            collected = new byte[Math.max(n, 8192)];
        } else if (collected.length < collectedLength + n) {
            collected = Arrays.copyOf(
                    collected, Math.max(collectedLength + n, Math.min(MAX_ENCODED_BODY, collected.length * 2)));
        }
        data.getBytes(data.readerIndex(), collected, collectedLength, n);
        collectedLength += n;
        if (!last) {
            return null;
        }
        byte[] encoded = Arrays.copyOf(collected, collectedLength);
        collected = null;
        if (encoded.length > 0) {
            // What was scanned is what is sent: the scanned plaintext encoded again, never the client's bytes,
            // even when nothing was found (a receiver's decoder may read those bytes differently from ours).
            try {
                byte[] plain = ContentCodings.decode(contentEncoding, encoded, ContentCodings.Limits.defaults());
                if (refusedAsWide(plain, Math.min(plain.length, WideText.LEAD_BYTES))) {
                    return null;
                }
                int before = findings.total();
                Redactor redactor = inspector.redactor();
                byte[] scanned = redactor.redactBody(plain, kind, Redactor.LOCATION_BODY, findings);
                if (refusedByScan() || findings.total() > before && (inspector.blocks() || nonRewritable.isPresent())) {
                    refuse(HttpResponseStatus.FORBIDDEN, ProxyReasons.SECRET_BLOCKED, blockDetail("request body"));
                    return null;
                }
                encoded = ContentCodings.encode(contentEncoding, scanned);
                headers.set(HttpHeaderNames.CONTENT_ENCODING, ContentCodings.canonical(contentEncoding));
            } catch (ContentCodingException e) {
                refuseCoding(e);
                return null;
            }
        }
        headers.remove(HttpHeaderNames.TRANSFER_ENCODING);
        headers.set(HttpHeaderNames.CONTENT_LENGTH, encoded.length);
        return new DefaultLastHttpContent(Unpooled.wrappedBuffer(encoded));
    }

    /**
     * A body that does not decode completely (malformed, truncated, bad checksums, data after its end) is the
     * client's error, 400 with the coding's own reason; one the proxy cannot decode (unknown coding, past the caps)
     * is uninspectable, 403.
     */
    private void refuseCoding(ContentCodingException e) {
        switch (e.reason()) {
            case MALFORMED, TRAILING_DATA ->
                refuse(HttpResponseStatus.BAD_REQUEST, e.reason().code(), e.getMessage());
            default -> refuse(HttpResponseStatus.FORBIDDEN, ProxyReasons.UNINSPECTABLE_BODY, e.getMessage());
        }
    }

    /**
     * Whether the scan itself refused the body (a secret in an encoded layer that cannot be rewritten, content nested
     * past the decoding depth): refused with the scan's own reason, whatever the policy's action.
     */
    private boolean refusedByScan() {
        Optional<Findings.Refusal> scan = findings.refusal();
        scan.ifPresent(r -> refuse(HttpResponseStatus.FORBIDDEN, r.reason(), r.detail() + " (request body)"));
        return scan.isPresent();
    }

    private String blockDetail(String where) {
        if (nonRewritable.isPresent()) {
            return "secret in a payload that cannot be rewritten ("
                    + nonRewritable.get().code() + ") in the " + where;
        }
        return "secret in the " + where + " and the policy's redaction action is block";
    }

    private void refuse(HttpResponseStatus status, String reason, String detail) {
        if (refusalReason == null) {
            refusalStatus = status;
            refusalReason = reason;
            refusalDetail = detail;
        }
    }
}

package dev.agentjail.proxy.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The strict decoder against corpus sections 4 and 5: every refusal with its exact status and reason, nothing decoded
 * after a refusal, and the legal spellings accepted. Every case runs twice, delivered whole and one byte at a time (in
 * 997-byte pieces for inputs too large for that), and both deliveries must decode to the same thing.
 */
class StrictRequestDecoderTest {
    /** A valid request sent after every refused input: it must never come out of the decoder. */
    private static final String FOLLOW = "GET http://follow.test/after HTTP/1.1\r\nHost: follow.test\r\n\r\n";

    private static final String HEAD = "POST http://api.allowed.test/ HTTP/1.1\r\nHost: api.allowed.test\r\n";
    private static final String HELLO_CHUNKED = "5\r\nhello\r\n0\r\n\r\n";
    private static final String K = "x".repeat(100 * 1024);
    private static final String ABH = StrictRequestDecoder.AMBIGUOUS_BODY_HEADER;

    static Stream<Arguments> refused() {
        return Stream.of(
                // §4 framing and smuggling
                bad(
                        "64 CL.TE",
                        post("Content-Length: 6\r\nTransfer-Encoding: chunked\r\n", "0\r\n\r\nG"),
                        400,
                        "ambiguous-framing"),
                bad(
                        "65 TE.CL",
                        post(
                                "Content-Length: 4\r\nTransfer-Encoding: chunked\r\n",
                                "5c\r\nGPOST http://evil.test/ HTTP/1.1\r\nHost: evil.test\r\nContent-Length: 15\r\n\r\nx=1\r\n0\r\n\r\n"),
                        400,
                        "ambiguous-framing"),
                bad(
                        "66 duplicate CL, different",
                        post("Content-Length: 5\r\nContent-Length: 6\r\n", "hello!"),
                        400,
                        "ambiguous-framing"),
                bad(
                        "67 duplicate CL, same",
                        post("Content-Length: 5\r\nContent-Length: 5\r\n", "hello"),
                        400,
                        "ambiguous-framing"),
                bad("67 CL list 5, 5", cl("5, 5"), 400, "bad-content-length"),
                bad("67 CL list 5,6", cl("5,6"), 400, "bad-content-length"),
                bad("67 CL list 5, 5, 5", cl("5, 5, 5"), 400, "bad-content-length"),
                bad("69 CL +5", cl("+5"), 400, "bad-content-length"),
                bad("69 CL -1", cl("-1"), 400, "bad-content-length"),
                bad("69 CL -0", cl("-0"), 400, "bad-content-length"),
                bad("69 CL 0x5", cl("0x5"), 400, "bad-content-length"),
                bad("69 CL 0o5", cl("0o5"), 400, "bad-content-length"),
                bad("69 CL 5 5", cl("5 5"), 400, "bad-content-length"),
                bad("69 CL 1_0", cl("1_0"), 400, "bad-content-length"),
                bad("69 CL 5a", cl("5a"), 400, "bad-content-length"),
                bad("69 CL empty", cl(""), 400, "bad-content-length"),
                bad("69 CL 20-digit overflow", cl("99999999999999999999"), 400, "bad-content-length"),
                bad("70 CL 0005", cl("0005"), 400, "bad-content-length"),
                bad("70 CL 0200", cl("0200"), 400, "bad-content-length"),
                // 71 exactly as the corpus sends it: with Content-Length: 4 next to the odd Transfer-Encoding
                bad("71 xchunked + CL", teCl("xchunked"), 400, "ambiguous-framing"),
                bad("71 'chunked ' + CL", teCl("chunked "), 400, "ambiguous-framing"),
                bad("71 chunked NUL + CL", teCl("chunked\u0000"), 400, "malformed-header"),
                bad("71 VT chunked + CL", teCl("\u000bchunked"), 400, "malformed-header"),
                bad("71 FF chunked + CL", teCl("\u000cchunked"), 400, "malformed-header"),
                bad("71 chunked, identity + CL", teCl("chunked, identity"), 400, "ambiguous-framing"),
                bad("71 identity + CL", teCl("identity"), 400, "ambiguous-framing"),
                // 71 without the Content-Length, so the Transfer-Encoding value itself is what is refused
                bad("71 xchunked", te("xchunked"), 400, "bad-transfer-encoding"),
                bad("71 chunked, identity", te("chunked, identity"), 400, "bad-transfer-encoding"),
                bad("71 chunked, xchunked", te("chunked, xchunked"), 400, "bad-transfer-encoding"),
                bad("71 identity", te("identity"), 400, "bad-transfer-encoding"),
                bad("71 , chunked", te(", chunked"), 400, "bad-transfer-encoding"),
                bad("71 chunked,", te("chunked,"), 400, "bad-transfer-encoding"),
                bad("71 chunked, chunked", te("chunked, chunked"), 400, "bad-transfer-encoding"),
                bad("71 chunked;ext=val", te("chunked;ext=val"), 400, "bad-transfer-encoding"),
                bad("71 quoted chunked", te("\"chunked\""), 400, "bad-transfer-encoding"),
                bad("71 VT chunked", te("\u000bchunked"), 400, "malformed-header"),
                bad(
                        "73 SP before colon",
                        post("Transfer-Encoding : chunked\r\n", HELLO_CHUNKED),
                        400,
                        "malformed-header"),
                bad(
                        "73 Transfer_Encoding",
                        post("Transfer_Encoding: chunked\r\nContent-Length: 5\r\n", "hello"),
                        400,
                        "ambiguous-framing"),
                bad("73 Content_Length", post("Content_Length: 5\r\n", "hello"), 400, "ambiguous-framing"),
                bad(
                        "73 Transfer Encoding",
                        post("Transfer Encoding: chunked\r\n", HELLO_CHUNKED),
                        400,
                        "malformed-header"),
                bad(
                        "73 TAB before colon",
                        post("Transfer-Encoding\t: chunked\r\n", HELLO_CHUNKED),
                        400,
                        "malformed-header"),
                bad(
                        "73 soft hyphen",
                        post("Transfer\u00adEncoding: chunked\r\n", HELLO_CHUNKED),
                        400,
                        "malformed-header"),
                bad("73 NBSP", post("Transfer-Encoding\u00a0: chunked\r\n", HELLO_CHUNKED), 400, "malformed-header"),
                bad(
                        "73 NEL",
                        post("Transfer-Encoding\u00c2\u0085: chunked\r\n", HELLO_CHUNKED),
                        400,
                        "malformed-header"),
                bad(
                        "73 name folded",
                        post("Foo: bar\r\n Transfer-Encoding: chunked\r\n", HELLO_CHUNKED),
                        400,
                        "obs-fold"),
                bad(
                        "73 bare CR",
                        post("Foo: bar\rTransfer-Encoding: chunked\r\n", HELLO_CHUNKED),
                        400,
                        "bad-line-ending"),
                bad(
                        "73 bare LF",
                        post("Foo: bar\nTransfer-Encoding: chunked\r\n", HELLO_CHUNKED),
                        400,
                        "bad-line-ending"),
                bad("74 TE obs-fold", post("Transfer-Encoding:\r\n chunked\r\n", HELLO_CHUNKED), 400, "obs-fold"),
                bad("74 CL obs-fold", post("Content-Length:\r\n 5\r\n", "hello"), 400, "obs-fold"),
                bad("75 obs-fold in any header", post("X-Note: a\r\n b\r\n", ""), 400, "obs-fold"),
                bad(
                        "76 duplicate TE + CL",
                        post(
                                "Transfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\nContent-Length: 5\r\n",
                                "hello"),
                        400,
                        "ambiguous-framing"),
                bad(
                        "76 duplicate TE",
                        post("Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n", HELLO_CHUNKED),
                        400,
                        "ambiguous-framing"),
                bad(
                        "78 Connection: Transfer-Encoding",
                        post(
                                "Connection: Transfer-Encoding\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n",
                                "hello"),
                        400,
                        "ambiguous-framing"),
                bad(
                        "78 Connection: Content-Length",
                        post("Connection: close, Content-Length\r\nContent-Length: 5\r\n", "hello"),
                        400,
                        "ambiguous-framing"),
                // issue 17: the headers that type and encode the body have one reading
                bad(
                        "CE identity then gzip",
                        body("Content-Encoding: identity\r\nContent-Encoding: gzip\r\n"),
                        400,
                        ABH),
                bad(
                        "CE gzip then identity",
                        body("Content-Encoding: gzip\r\nContent-Encoding: identity\r\n"),
                        400,
                        ABH),
                bad(
                        "CE twice, same value, other case",
                        body("content-encoding: gzip\r\nCONTENT-ENCODING: gzip\r\n"),
                        400,
                        ABH),
                bad(
                        "CE twice, apart",
                        body("Content-Encoding: gzip\r\nX-A: 1\r\ncontent-Encoding: deflate\r\n"),
                        400,
                        ABH),
                bad("CT twice", body("Content-Type: application/json\r\nContent-Type: text/plain\r\n"), 400, ABH),
                bad(
                        "CT twice, same, other case",
                        body("content-type: text/plain\r\nContent-TYPE: text/plain\r\n"),
                        400,
                        ABH),
                bad(
                        "Content-Range twice",
                        body("Content-Range: bytes 0-4/5\r\ncontent-range: bytes 0-4/9\r\n"),
                        400,
                        ABH),
                bad(
                        "Content-Transfer-Encoding twice",
                        body("Content-Transfer-Encoding: 8bit\r\ncontent-transfer-encoding: base64\r\n"),
                        400,
                        ABH),
                bad("Content_Encoding", body("Content_Encoding: gzip\r\n"), 400, ABH),
                bad(
                        "content_type next to Content-Type",
                        body("Content-Type: text/plain\r\ncontent_type: application/json\r\n"),
                        400,
                        ABH),
                bad(
                        "Connection: Content-Encoding",
                        body("Connection: Content-Encoding\r\nContent-Encoding: gzip\r\n"),
                        400,
                        ABH),
                bad(
                        "Connection: close, content-type",
                        body("Connection: close, content-type\r\nContent-Type: text/plain\r\n"),
                        400,
                        ABH),
                bad("CE gzip, identity", ce("gzip, identity"), 400, ABH),
                bad("CE identity, gzip", ce("identity, gzip"), 400, ABH),
                bad("CE identity, identity", ce("identity, identity"), 400, ABH),
                bad("CE gzip,", ce("gzip,"), 400, ABH),
                bad("CE , gzip", ce(", gzip"), 400, ABH),
                bad("CE gzip,,deflate", ce("gzip,,deflate"), 400, ABH),
                bad("CE gzip;q=1", ce("gzip;q=1"), 400, ABH),
                bad("CE quoted", ce("\"gzip\""), 400, ABH),
                bad("CE gzip deflate", ce("gzip deflate"), 400, ABH),
                bad("CE empty", ce(""), 400, ABH),
                bad("CT list", ct("application/json, text/plain"), 400, ABH),
                bad("CT two essences", ct("application/json text/plain"), 400, ABH),
                bad("CT no subtype", ct("json"), 400, ABH),
                bad("CT empty", ct(""), 400, ABH),
                bad("CT charset twice", ct("application/json; charset=utf-8; charset=utf-16"), 400, ABH),
                bad("CT charset twice, other case", ct("text/plain; CHARSET=utf-8;charset=utf-8"), 400, ABH),
                bad("CT parameter without =", ct("application/json; charset"), 400, ABH),
                bad("CT parameter without value", ct("application/json; charset="), 400, ABH),
                bad("CT unterminated quote", ct("application/json; charset=\"utf-8"), 400, ABH),
                bad("CT text after a parameter", ct("application/json; charset=utf-8 x"), 400, ABH),
                bad("CT comma after a parameter", ct("application/json; charset=utf-8, text/plain"), 400, ABH),
                // RFC 9112 6.1: Transfer-Encoding in an HTTP/1.0 message is faulty framing
                bad("1.0 chunked", http10("Transfer-Encoding: chunked\r\n", HELLO_CHUNKED), 400, "ambiguous-framing"),
                bad(
                        "1.0 chunked + CL",
                        http10("Transfer-Encoding: chunked\r\nContent-Length: 5\r\n", "hello"),
                        400,
                        "ambiguous-framing"),
                bad("1.0 TE identity", http10("Transfer-Encoding: identity\r\n", "hello"), 400, "ambiguous-framing"),
                bad(
                        "1.0 TE other case",
                        http10("transfer-ENCODING: Chunked\r\n", HELLO_CHUNKED),
                        400,
                        "ambiguous-framing"),
                bad("79 size 0x5", chunked("0x5\r\nhello\r\n0\r\n\r\n"), 400, "bad-chunk"),
                bad("79 size +5", chunked("+5\r\nhello\r\n0\r\n\r\n"), 400, "bad-chunk"),
                bad("79 size -5", chunked("-5\r\nhello\r\n0\r\n\r\n"), 400, "bad-chunk"),
                bad("79 size leading SP", chunked(" 5\r\nhello\r\n0\r\n\r\n"), 400, "bad-chunk"),
                bad("79 size trailing SP", chunked("5 \r\nhello\r\n0\r\n\r\n"), 400, "bad-chunk"),
                bad("79 size 1_0", chunked("1_0\r\n0123456789abcdef\r\n0\r\n\r\n"), 400, "bad-chunk"),
                bad("79 bare semicolon", chunked("5;\r\nhello\r\n0\r\n\r\n"), 400, "bad-chunk"),
                bad("79 extension with SP", chunked("5;a b\r\nhello\r\n0\r\n\r\n"), 400, "bad-chunk"),
                bad("79 extension with NUL", chunked("5;\u0000ext\r\nhello\r\n0\r\n\r\n"), 400, "bad-chunk"),
                bad("79 size overflow", chunked("ffffffffffffffff1\r\nhello\r\n0\r\n\r\n"), 400, "bad-chunk"),
                bad("79 size not hex", chunked("Z\r\nZZ\r\n0\r\n\r\n"), 400, "bad-chunk"),
                bad("79 bare CR before ;", chunked("2\r\r;a\r\nhi\r\n0\r\n\r\n"), 400, "bad-line-ending"),
                bad("80 bare LF in extension", chunked("5;\nhello\r\n0\r\n\r\n"), 400, "bad-line-ending"),
                bad("80 bare CR in extension", chunked("5;ext\rX\r\nhello\r\n0\r\n\r\n"), 400, "bad-line-ending"),
                bad("82 chunk data spills", chunked("5\r\nhello!!\r\n0\r\n\r\n"), 400, "bad-chunk"),
                bad("82 no CRLF after data", chunked("5\r\nhelloX0\r\n\r\n"), 400, "bad-chunk"),
                bad("83 LF-only chunks", chunked("5\nhello\n0\n\n"), 400, "bad-line-ending"),
                bad("83 LF-only trailer end", chunked("5\r\nhello\r\n0\r\n\n"), 400, "bad-line-ending"),
                bad(
                        "84 64 KiB chunk extension",
                        chunked("5;x=" + "a".repeat(64 * 1024) + "\r\nhello\r\n0\r\n\r\n"),
                        431,
                        "bad-chunk"),
                bad(
                        "84 trailers too large",
                        chunked("0\r\n" + ("X-T: " + "t".repeat(1000) + "\r\n").repeat(70) + "\r\n"),
                        431,
                        "head-too-large"),
                bad("85 obs-fold in a trailer", chunked("0\r\nX-T: a\r\n b\r\n\r\n"), 400, "obs-fold"),
                bad(
                        "86 bare LF everywhere",
                        "GET http://api.allowed.test/ HTTP/1.1\nHost: api.allowed.test\n\n",
                        400,
                        "bad-line-ending"),
                bad(
                        "86 mixed CRLF and LF",
                        "GET http://api.allowed.test/ HTTP/1.1\r\nHost: api.allowed.test\n\r\n",
                        400,
                        "bad-line-ending"),
                bad(
                        "86 CR-only line endings",
                        "GET http://api.allowed.test/ HTTP/1.1\rHost: api.allowed.test\r\r",
                        400,
                        "bad-line-ending"),
                // §5 request line and header validation, limits
                bad(
                        "93 0x1c before name",
                        post("\u001cTransfer-Encoding: chunked\r\n", HELLO_CHUNKED),
                        400,
                        "malformed-header"),
                bad(
                        "93 0x1d before name",
                        post("\u001dTransfer-Encoding: chunked\r\n", HELLO_CHUNKED),
                        400,
                        "malformed-header"),
                bad(
                        "93 0x1e before name",
                        post("\u001eTransfer-Encoding: chunked\r\n", HELLO_CHUNKED),
                        400,
                        "malformed-header"),
                bad(
                        "93 0x1f before name",
                        post("\u001fTransfer-Encoding: chunked\r\n", HELLO_CHUNKED),
                        400,
                        "malformed-header"),
                bad(
                        "93 0x0c before name",
                        post("\u000cTransfer-Encoding: chunked\r\n", HELLO_CHUNKED),
                        400,
                        "malformed-header"),
                bad(
                        "93 0x1c after name",
                        post("Transfer-Encoding\u001c: chunked\r\n", HELLO_CHUNKED),
                        400,
                        "malformed-header"),
                bad(
                        "93 0x1d after name",
                        post("Transfer-Encoding\u001d: chunked\r\n", HELLO_CHUNKED),
                        400,
                        "malformed-header"),
                bad(
                        "93 0x1e after name",
                        post("Transfer-Encoding\u001e: chunked\r\n", HELLO_CHUNKED),
                        400,
                        "malformed-header"),
                bad(
                        "93 0x1f after name",
                        post("Transfer-Encoding\u001f: chunked\r\n", HELLO_CHUNKED),
                        400,
                        "malformed-header"),
                bad(
                        "93 0x0c after name",
                        post("Transfer-Encoding\u000c: chunked\r\n", HELLO_CHUNKED),
                        400,
                        "malformed-header"),
                bad("94 no colon", post("Foo\r\n", ""), 400, "malformed-header"),
                bad("94 empty name", post(": value\r\n", ""), 400, "malformed-header"),
                bad(
                        "94 first header line starts with SP",
                        "GET http://api.allowed.test/ HTTP/1.1\r\n Host: api.allowed.test\r\n\r\n",
                        400,
                        "obs-fold"),
                bad("95 NUL in value", post("X-A: v\u0000alue\r\n", ""), 400, "malformed-header"),
                bad("95 bare CR in value", post("X-A: v\ralue\r\n", ""), 400, "bad-line-ending"),
                bad("95 ESC in value", post("X-A: \u001b[31mred\r\n", ""), 400, "malformed-header"),
                bad("96 non-ASCII name", post("H\u00c3\u00aba\u0064er: x\r\n", ""), 400, "malformed-header"),
                bad("96 brackets in name", post("[x]: y\r\n", ""), 400, "malformed-header"),
                bad(
                        "97 NUL in target",
                        "GET http://api.allowed.test/\u0000 HTTP/1.1\r\nHost: api.allowed.test\r\n\r\n",
                        400,
                        "malformed-request-line"),
                bad(
                        "97 NUL in method",
                        "G\u0000ET http://api.allowed.test/ HTTP/1.1\r\nHost: api.allowed.test\r\n\r\n",
                        400,
                        "bad-method"),
                bad(
                        "97 two spaces",
                        "GET  http://api.allowed.test/ HTTP/1.1\r\nHost: api.allowed.test\r\n\r\n",
                        400,
                        "malformed-request-line"),
                bad(
                        "97 TAB delimiter",
                        "GET\thttp://api.allowed.test/\tHTTP/1.1\r\nHost: api.allowed.test\r\n\r\n",
                        400,
                        "malformed-request-line"),
                bad("97 HTTP/0.9", "GET http://api.allowed.test/\r\n\r\n", 400, "malformed-request-line"),
                bad("97 HTTP/1.2", version("HTTP/1.2"), 505, "bad-version"),
                bad("97 HTTP/2.0", version("HTTP/2.0"), 505, "bad-version"),
                bad("97 HTTP/01.1", version("HTTP/01.1"), 400, "bad-version"),
                bad("97 HTTP/1", version("HTTP/1"), 400, "bad-version"),
                bad("97 HTTP/ 1.1", version("HTTP/ 1.1"), 400, "malformed-request-line"),
                bad("97 http/1.1", version("http/1.1"), 400, "bad-version"),
                bad(
                        "97 fragment",
                        "GET http://api.allowed.test/#x HTTP/1.1\r\nHost: api.allowed.test\r\n\r\n",
                        400,
                        "malformed-request-line"),
                bad(
                        "97 raw space in target",
                        "GET http://api.allowed.test/a b HTTP/1.1\r\nHost: api.allowed.test\r\n\r\n",
                        400,
                        "malformed-request-line"),
                bad(
                        "97 non-ASCII in target",
                        "CONNECT \u00d0\u00b0llowed.test:443 HTTP/1.1\r\nHost: allowed.test:443\r\n\r\n",
                        400,
                        "malformed-request-line"),
                bad(
                        "97 unknown method",
                        "FOO http://api.allowed.test/ HTTP/1.1\r\nHost: api.allowed.test\r\n\r\n",
                        501,
                        "bad-method"),
                bad(
                        "97 TRACE",
                        "TRACE http://api.allowed.test/ HTTP/1.1\r\nHost: api.allowed.test\r\n\r\n",
                        405,
                        "bad-method"),
                bad(
                        "46 lower-case connect",
                        "connect allowed.test:443 HTTP/1.1\r\nHost: allowed.test:443\r\n\r\n",
                        501,
                        "bad-method"),
                bad(
                        "48 CONNECT with a body",
                        "CONNECT api.allowed.test:443 HTTP/1.1\r\nHost: api.allowed.test:443\r\nContent-Length: 5\r\n\r\nhello",
                        400,
                        "ambiguous-framing"),
                bad(
                        "48 CONNECT with a chunked body",
                        "CONNECT api.allowed.test:443 HTTP/1.1\r\nHost: api.allowed.test:443\r\nTransfer-Encoding: chunked\r\n\r\n"
                                + HELLO_CHUNKED,
                        400,
                        "ambiguous-framing"),
                bad(
                        "102 100 KB URL",
                        "GET http://api.allowed.test/" + K + " HTTP/1.1\r\nHost: api.allowed.test\r\n\r\n",
                        414,
                        "uri-too-long"),
                bad(
                        "102 100 KB method",
                        K + " http://api.allowed.test/ HTTP/1.1\r\nHost: api.allowed.test\r\n\r\n",
                        414,
                        "uri-too-long"),
                bad("102 100 KB header value", post("X-Big: " + K + "\r\n", ""), 431, "head-too-large"),
                bad("102 100 KB header name", post(K + ": v\r\n", ""), 431, "head-too-large"),
                bad("102 10,000 headers", post("X-H: v\r\n".repeat(10_000), ""), 431, "too-many-headers"),
                bad(
                        "102 head over the byte limit",
                        post(("X-H: " + "h".repeat(1000) + "\r\n").repeat(100), ""),
                        431,
                        "head-too-large"),
                bad(
                        "105 garbage",
                        "\u0016\u0003\u0001\u0002\u0000\u0001\u0000\u0001\u00fc\u0003\u0003\r\n\r\n",
                        400,
                        "malformed-request-line"),
                bad("105 garbage with bare LF", "\u00ff\u00fe\u0000\u0001\n", 400, "bad-line-ending"),
                bad("105 empty request line", "\r\n" + FOLLOW, 400, "malformed-request-line"),
                bad("105 HTTP/2 preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 501, "bad-method"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("refused")
    void refusesWithStatusAndReasonAndDecodesNothingAfter(String name, String input, int status, String reason) {
        byte[] bytes = latin1(input + FOLLOW);
        EmbeddedChannel channel = newChannel();
        List<String> whole = feed(channel, bytes, bytes.length);

        assertEquals("REFUSED " + status + " " + reason, whole.getLast(), whole::toString);
        assertEquals(1, whole.stream().filter(s -> s.startsWith("REFUSED")).count(), whole::toString);
        assertTrue(whole.stream().noneMatch(s -> s.contains("follow.test")), whole::toString);
        assertTrue(feed(channel, latin1(FOLLOW), FOLLOW.length()).isEmpty(), "decoded after a refusal");
        assertFalse(channel.finishAndReleaseAll());

        EmbeddedChannel split = newChannel();
        assertEquals(whole, feed(split, bytes, pieceSize(bytes)), "split delivery decoded differently");
        assertFalse(split.finishAndReleaseAll());
    }

    @Test
    void theRefusalCarriesAHashOfTheFirstBytesNotTheBytes() {
        EmbeddedChannel channel = newChannel();
        channel.writeInbound(Unpooled.copiedBuffer(version("HTTP/7.7"), StandardCharsets.ISO_8859_1));

        MalformedRequest refused = channel.readInbound();
        assertNotNull(refused.firstBytesSha256());
        assertTrue(refused.firstBytesSha256().matches("[0-9a-f]{64}"), refused.firstBytesSha256());
        assertFalse(refused.detail().contains("api.allowed.test"), refused.detail());
        assertFalse(channel.finishAndReleaseAll());
    }

    static Stream<Arguments> accepted() {
        String body88 = "GET http://evil.test/ HTTP/1.1\r\nX: y\r\n\r\n";
        return Stream.of(
                ok(
                        "72 Transfer-Encoding: Chunked",
                        post("Transfer-Encoding: Chunked\r\n", HELLO_CHUNKED),
                        "REQUEST POST http://api.allowed.test/ HTTP/1.1 {Host=api.allowed.test, Transfer-Encoding=Chunked}",
                        "BODY hello",
                        "END"),
                ok(
                        "72 TRANSFER-ENCODING: chunked",
                        post("TRANSFER-ENCODING: chunked\r\n", HELLO_CHUNKED),
                        "REQUEST POST http://api.allowed.test/ HTTP/1.1 {Host=api.allowed.test, TRANSFER-ENCODING=chunked}",
                        "BODY hello",
                        "END"),
                ok(
                        "72 tab before the value",
                        post("Transfer-Encoding:\tchunked\r\n", HELLO_CHUNKED),
                        "REQUEST POST http://api.allowed.test/ HTTP/1.1 {Host=api.allowed.test, Transfer-Encoding=chunked}",
                        "BODY hello",
                        "END"),
                ok(
                        "69 tab as OWS around Content-Length (pinned: accepted)",
                        post("Content-Length:\t5 \r\n", "hello"),
                        "REQUEST POST http://api.allowed.test/ HTTP/1.1 {Host=api.allowed.test, Content-Length=5}",
                        "BODY hello",
                        "END"),
                ok(
                        "chunk extensions, quoted values and upper-case hex",
                        post(
                                "Transfer-Encoding: chunked\r\n",
                                "5;name=value;flag\r\nhello\r\nA;q=\"a \\\"b\\\";c\"\r\n world!!!!\r\n0;end=1\r\n\r\n"),
                        "REQUEST POST http://api.allowed.test/ HTTP/1.1 {Host=api.allowed.test, Transfer-Encoding=chunked}",
                        "BODY hello world!!!!",
                        "END"),
                ok(
                        "85 framing headers in trailers are dropped, never merged",
                        post(
                                        "Transfer-Encoding: chunked\r\n",
                                        "5\r\nhello\r\n0\r\nContent-Length: 50\r\nTransfer-Encoding: chunked\r\nHost: evil.test\r\n\r\n")
                                + "GET http://api.allowed.test/next HTTP/1.1\r\nHost: api.allowed.test\r\n\r\n",
                        "REQUEST POST http://api.allowed.test/ HTTP/1.1 {Host=api.allowed.test, Transfer-Encoding=chunked}",
                        "BODY hello",
                        "END",
                        "REQUEST GET http://api.allowed.test/next HTTP/1.1 {Host=api.allowed.test}",
                        "END"),
                ok(
                        "88 a body that looks like a request stays a body",
                        "GET http://api.allowed.test/static HTTP/1.1\r\nHost: api.allowed.test\r\nContent-Length: "
                                + body88.length() + "\r\n\r\n" + body88,
                        "REQUEST GET http://api.allowed.test/static HTTP/1.1 {Host=api.allowed.test, Content-Length=40}",
                        "BODY " + body88,
                        "END"),
                ok(
                        "90 pipelined requests come out in order",
                        "GET http://api.allowed.test/1 HTTP/1.1\r\nHost: api.allowed.test\r\n\r\n"
                                + post("Content-Length: 3\r\n", "abc")
                                + post("Transfer-Encoding: chunked\r\n", HELLO_CHUNKED)
                                + "GET http://evil.test/4 HTTP/1.1\r\nHost: evil.test\r\n\r\n",
                        "REQUEST GET http://api.allowed.test/1 HTTP/1.1 {Host=api.allowed.test}",
                        "END",
                        "REQUEST POST http://api.allowed.test/ HTTP/1.1 {Host=api.allowed.test, Content-Length=3}",
                        "BODY abc",
                        "END",
                        "REQUEST POST http://api.allowed.test/ HTTP/1.1 {Host=api.allowed.test, Transfer-Encoding=chunked}",
                        "BODY hello",
                        "END",
                        "REQUEST GET http://evil.test/4 HTTP/1.1 {Host=evil.test}",
                        "END"),
                ok(
                        "Content-Length: 0 is no body",
                        post("Content-Length: 0\r\n", ""),
                        "REQUEST POST http://api.allowed.test/ HTTP/1.1 {Host=api.allowed.test, Content-Length=0}",
                        "END"),
                ok(
                        "one coding list and one media type with a quoted parameter",
                        post(
                                "Content-Encoding: gzip, x-gzip ,deflate\r\nContent-Type: multipart/form-data;boundary=\"a;b, \\\"c\";\r\nContent-Length: 0\r\n",
                                ""),
                        "REQUEST POST http://api.allowed.test/ HTTP/1.1 {Host=api.allowed.test, Content-Encoding=gzip, x-gzip ,deflate, Content-Type=multipart/form-data;boundary=\"a;b, \\\"c\";, Content-Length=0}",
                        "END"),
                ok(
                        "identity alone and a well-formed unknown coding pass the decoder (the inspection decides)",
                        post("Content-Encoding: identity\r\n", "")
                                + post("Content-Encoding: br\r\nContent-Type: text/plain; charset=utf-8\r\n", ""),
                        "REQUEST POST http://api.allowed.test/ HTTP/1.1 {Host=api.allowed.test, Content-Encoding=identity}",
                        "END",
                        "REQUEST POST http://api.allowed.test/ HTTP/1.1 {Host=api.allowed.test, Content-Encoding=br, Content-Type=text/plain; charset=utf-8}",
                        "END"),
                ok(
                        "HTTP/1.0 with Content-Length has that body",
                        http10("Content-Length: 5\r\n", "hello"),
                        "REQUEST POST http://api.allowed.test/ HTTP/1.0 {Host=api.allowed.test, Content-Length=5}",
                        "BODY hello",
                        "END"),
                ok(
                        "HTTP/1.0 without Content-Length has no body: what follows is the next head",
                        http10("", "GET http://api.allowed.test/next HTTP/1.0\r\n\r\n"),
                        "REQUEST POST http://api.allowed.test/ HTTP/1.0 {Host=api.allowed.test}",
                        "END",
                        "REQUEST GET http://api.allowed.test/next HTTP/1.0 {}",
                        "END"),
                ok(
                        "HTTP/1.0 without Host",
                        "GET http://api.allowed.test/ HTTP/1.0\r\n\r\n",
                        "REQUEST GET http://api.allowed.test/ HTTP/1.0 {}",
                        "END"),
                ok(
                        "bytes after a CONNECT head are tunnel data, not HTTP",
                        "CONNECT api.allowed.test:443 HTTP/1.1\r\nHost: api.allowed.test:443\r\n\r\n\u0016\u0003\u0001GET / HTTP/1.1\n\n",
                        "REQUEST CONNECT api.allowed.test:443 HTTP/1.1 {Host=api.allowed.test:443}",
                        "RAW \u0016\u0003\u0001GET / HTTP/1.1\n\n"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("accepted")
    void decodesLegalInputTheSameWholeAndOneByteAtATime(String name, String input, List<String> expected) {
        byte[] bytes = latin1(input);
        EmbeddedChannel whole = newChannel();
        assertEquals(expected, feed(whole, bytes, bytes.length));
        assertFalse(whole.finishAndReleaseAll());

        EmbeddedChannel split = newChannel();
        assertEquals(expected, feed(split, bytes, 1));
        assertFalse(split.finishAndReleaseAll());
    }

    @Test
    void aRequestWaitsForItsLastByte() {
        EmbeddedChannel channel = newChannel();
        String request = "GET http://api.allowed.test/ HTTP/1.1\r\nHost: api.allowed.test\r\n\r\n";
        byte[] bytes = latin1(request);

        assertTrue(feed(channel, java.util.Arrays.copyOf(bytes, bytes.length - 1), 1)
                .isEmpty());
        assertEquals(
                List.of("REQUEST GET http://api.allowed.test/ HTTP/1.1 {Host=api.allowed.test}", "END"),
                feed(channel, new byte[] {'\n'}, 1));
        assertFalse(channel.finishAndReleaseAll());
    }

    @Test
    void aBodyIsStreamedWithoutWaitingForTheDeclaredLength() {
        EmbeddedChannel channel = newChannel();

        List<String> out = feed(channel, latin1(post("Content-Length: 999999999\r\n", "hello")), 1 << 20);

        assertEquals(
                List.of(
                        "REQUEST POST http://api.allowed.test/ HTTP/1.1 {Host=api.allowed.test, Content-Length=999999999}",
                        "BODY hello"),
                out);
        assertFalse(channel.finishAndReleaseAll());
    }

    @Test
    void aPipelinedHeadStartsOnlyAfterTheRequestBeforeItWasPassedOn() {
        // The header timeout starts at HEAD_STARTED and stops at the request: out of order, a stalled head has no
        // clock.
        List<String> seen = new ArrayList<>();
        EmbeddedChannel channel = new EmbeddedChannel(
                new StrictRequestDecoder(HttpLimits.defaults()), new ChannelInboundHandlerAdapter() {
                    @Override
                    public void channelRead(ChannelHandlerContext ctx, Object msg) {
                        seen.add(
                                msg instanceof HttpRequest r
                                        ? "REQUEST " + r.uri()
                                        : msg.getClass().getSimpleName());
                        ReferenceCountUtil.release(msg);
                    }

                    @Override
                    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
                        seen.add(String.valueOf(evt));
                    }
                });

        channel.writeInbound(Unpooled.copiedBuffer(
                "GET http://a.test/1 HTTP/1.1\r\nHost: a.test\r\n\r\nGET http://a.test/2 HTTP/1.1\r\nHost: a",
                StandardCharsets.ISO_8859_1));

        assertEquals(
                List.of(
                        String.valueOf(StrictRequestDecoder.HEAD_STARTED),
                        "REQUEST http://a.test/1",
                        LastHttpContent.EMPTY_LAST_CONTENT.getClass().getSimpleName(),
                        String.valueOf(StrictRequestDecoder.HEAD_STARTED)),
                seen);
        assertFalse(channel.finishAndReleaseAll());
    }

    // ---- helpers ----

    private static EmbeddedChannel newChannel() {
        return new EmbeddedChannel(new StrictRequestDecoder(HttpLimits.defaults()));
    }

    /**
     * Writes {@code bytes} in pieces of {@code piece} bytes and returns what came out, one line per message, with
     * consecutive body (or raw) parts joined so that the result does not depend on how the bytes were split. Every
     * message read is released here.
     */
    private static List<String> feed(EmbeddedChannel channel, byte[] bytes, int piece) {
        List<String> out = new ArrayList<>();
        StringBuilder body = new StringBuilder();
        StringBuilder raw = new StringBuilder();
        for (int i = 0; i < bytes.length; i += piece) {
            int n = Math.min(piece, bytes.length - i);
            channel.writeInbound(Unpooled.wrappedBuffer(bytes, i, n));
            Object msg;
            while ((msg = channel.readInbound()) != null) {
                try {
                    describe(msg, out, body, raw);
                } finally {
                    ReferenceCountUtil.release(msg);
                }
            }
        }
        flush(out, "BODY ", body);
        flush(out, "RAW ", raw);
        return out;
    }

    private static void describe(Object msg, List<String> out, StringBuilder body, StringBuilder raw) {
        if (msg instanceof HttpRequest r) {
            out.add("REQUEST " + r.method() + " " + r.uri() + " " + r.protocolVersion() + " "
                    + r.headers().entries().stream()
                            .map(e -> e.getKey() + "=" + e.getValue())
                            .collect(Collectors.joining(", ", "{", "}")));
        } else if (msg instanceof HttpContent c) {
            body.append(c.content().toString(StandardCharsets.ISO_8859_1));
            if (c instanceof LastHttpContent last) {
                flush(out, "BODY ", body);
                out.add(last.trailingHeaders().isEmpty() ? "END" : "END trailers=" + last.trailingHeaders());
            }
        } else if (msg instanceof MalformedRequest m) {
            flush(out, "BODY ", body);
            // The first-bytes hash is left out: it covers whatever had arrived when the head began.
            out.add("REFUSED " + m.status().code() + " " + m.reason());
        } else if (msg instanceof ByteBuf b) {
            raw.append(b.toString(StandardCharsets.ISO_8859_1));
        } else {
            out.add("UNEXPECTED " + msg);
        }
    }

    private static void flush(List<String> out, String prefix, StringBuilder sb) {
        if (!sb.isEmpty()) {
            out.add(prefix + sb);
            sb.setLength(0);
        }
    }

    /** One byte at a time, except for the 100 KB inputs, which go in odd-sized pieces to keep the run short. */
    private static int pieceSize(byte[] bytes) {
        return bytes.length <= 8 * 1024 ? 1 : 997;
    }

    private static Arguments bad(String name, String input, int status, String reason) {
        return Arguments.of(name, input, status, reason);
    }

    private static Arguments ok(String name, String input, String... expected) {
        return Arguments.of(name, input, List.of(expected));
    }

    private static String post(String headers, String body) {
        return HEAD + headers + "\r\n" + body;
    }

    /** A POST with {@code headers} and a five-byte body. */
    private static String body(String headers) {
        return post(headers + "Content-Length: 5\r\n", "hello");
    }

    private static String ce(String value) {
        return body("Content-Encoding: " + value + "\r\n");
    }

    private static String ct(String value) {
        return body("Content-Type: " + value + "\r\n");
    }

    private static String http10(String headers, String body) {
        return HEAD.replace("HTTP/1.1", "HTTP/1.0") + headers + "\r\n" + body;
    }

    private static String cl(String value) {
        return post("Content-Length: " + value + "\r\n", "hello");
    }

    private static String te(String value) {
        return post("Transfer-Encoding: " + value + "\r\n", HELLO_CHUNKED);
    }

    private static String teCl(String value) {
        return post(
                "Content-Length: 4\r\nTransfer-Encoding: " + value + "\r\n",
                "5c\r\nGPOST http://evil.test/ HTTP/1.1\r\n\r\n");
    }

    private static String chunked(String body) {
        return post("Transfer-Encoding: chunked\r\n", body);
    }

    private static String version(String version) {
        return "GET http://api.allowed.test/ " + version + "\r\nHost: api.allowed.test\r\n\r\n";
    }

    private static byte[] latin1(String s) {
        return s.getBytes(StandardCharsets.ISO_8859_1);
    }
}

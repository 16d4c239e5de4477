package dev.agentjail.proxy.mcp.bench;

import dev.agentjail.policy.HostKind;
import dev.agentjail.policy.McpPolicy;
import dev.agentjail.policy.McpServer;
import dev.agentjail.policy.NameFilter;
import dev.agentjail.policy.Target;
import dev.agentjail.proxy.mcp.McpExchange;
import dev.agentjail.proxy.mcp.McpGate;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The CPU the proxy adds to one MCP round trip, single thread: a {@code tools/call} request collected, parsed and
 * decided ({@code call}), and a 50-tool {@code tools/list} JSON response parsed, filtered, pinned and written back
 * ({@code list}). Everything else on the path (sockets, TLS, redaction) is the same with or without MCP inspection.
 *
 * <p>Run: see docs/mcp.md ("Cost").
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class McpInspectionBenchmark {
    private static final byte[] LIST_CALL =
            "{\"jsonrpc\":\"2.0\",\"id\":42,\"method\":\"tools/list\"}".getBytes(StandardCharsets.UTF_8);

    private McpGate gate;
    private Target target;
    private HttpRequest request;
    private byte[] call;
    private byte[] list;

    @Setup(Level.Trial)
    public void setUp() {
        McpServer docs = new McpServer(
                "docs",
                Optional.of(URI.create("https://mcp.example.com/mcp")),
                List.of(),
                Map.of(),
                new NameFilter(List.of("search*", "read_doc", "tool_*"), List.of("delete_*")),
                NameFilter.none(),
                NameFilter.none(),
                false,
                false);
        gate = McpGate.of(new McpPolicy(List.of(docs)));
        target = new Target("mcp.example.com", HostKind.DNS, 443);
        request = new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST, "/mcp");
        request.headers().set("content-type", "application/json").set("content-length", 1);
        call = ("{\"jsonrpc\":\"2.0\",\"id\":42,\"method\":\"tools/call\",\"params\":{\"name\":\"search_docs\","
                        + "\"arguments\":{\"query\":\"how do I configure the event loop group\",\"limit\":10,"
                        + "\"filters\":{\"lang\":\"java\",\"version\":\"4.2\"}},\"_meta\":{\"progressToken\":7}}}")
                .getBytes(StandardCharsets.UTF_8);
        StringBuilder tools = new StringBuilder("{\"jsonrpc\":\"2.0\",\"id\":42,\"result\":{\"tools\":[");
        for (int i = 0; i < 50; i++) {
            tools.append(i > 0 ? "," : "")
                    .append("{\"name\":\"")
                    .append(i % 10 == 0 ? "delete_" : "tool_")
                    .append(i)
                    .append("\",\"description\":\"Does thing number ")
                    .append(i)
                    .append(" with care and returns a summary.\",\"inputSchema\":{\"type\":\"object\",")
                    .append("\"properties\":{\"q\":{\"type\":\"string\"},\"n\":{\"type\":\"integer\"}},")
                    .append("\"required\":[\"q\"]}}");
        }
        list = tools.append("]}}").toString().getBytes(StandardCharsets.UTF_8);
    }

    @Benchmark
    public McpExchange.Step call() {
        McpExchange ex = McpExchange.start(gate, request, "https", target, "/mcp");
        return ex.offer(new DefaultLastHttpContent(Unpooled.wrappedBuffer(call)), true);
    }

    @Benchmark
    public byte[] list() {
        McpExchange ex = McpExchange.start(gate, request, "https", target, "/mcp");
        ex.offer(new DefaultLastHttpContent(Unpooled.wrappedBuffer(LIST_CALL)), true);
        HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
        head.headers().set("content-type", "application/json");
        ex.answer().onResponseHead(head);
        HttpContent body = new DefaultLastHttpContent(Unpooled.wrappedBuffer(list));
        ex.answer().collectResponse(body);
        return ex.answer().filteredResponse();
    }
}

package dev.agentjail.proxy.testing;

import dev.agentjail.proxy.net.HostResolver;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Corpus harness H3: a resolver that answers from a table set by the test, logs every query, and answers NXDOMAIN
 * (an {@link UnknownHostException}) for every name it was not told about. It never touches real DNS.
 */
public final class StubResolver implements HostResolver {
    private final Map<String, List<InetAddress>> answers = new ConcurrentHashMap<>();
    private final List<String> queries = new CopyOnWriteArrayList<>();

    /** Answers {@code host} with the given IP literals (parsed without any lookup). */
    public StubResolver answer(String host, String... ipLiterals) {
        List<InetAddress> addresses = new ArrayList<>();
        for (String ip : ipLiterals) {
            if (!ip.matches("[0-9a-fA-F:.]+")) {
                throw new IllegalArgumentException("not an ip literal: " + ip);
            }
            try {
                addresses.add(InetAddress.getByName(ip));
            } catch (UnknownHostException e) {
                throw new IllegalArgumentException(ip, e);
            }
        }
        answers.put(host, List.copyOf(addresses));
        return this;
    }

    @Override
    public CompletableFuture<List<InetAddress>> resolve(String canonicalHost) {
        queries.add(canonicalHost);
        List<InetAddress> answer = answers.get(canonicalHost);
        return answer == null
                ? CompletableFuture.failedFuture(new UnknownHostException(canonicalHost))
                : CompletableFuture.completedFuture(answer);
    }

    /** Every name asked for so far, in order. */
    public List<String> queries() {
        return List.copyOf(queries);
    }
}

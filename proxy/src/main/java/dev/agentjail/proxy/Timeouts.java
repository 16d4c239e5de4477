package dev.agentjail.proxy;

import java.time.Duration;
import java.util.Objects;

/**
 * The proxy's clocks: how long a request head may take to arrive (slowloris), how long a body may
 * stall, how long a kept-alive connection may sit idle, how long to wait for an upstream connection
 * and its response, and how long a tunnel may stay silent.
 */
public record Timeouts(
        Duration header, Duration body, Duration idle, Duration connect, Duration upstreamIdle, Duration tunnelIdle) {
    public Timeouts {
        Objects.requireNonNull(header);
        Objects.requireNonNull(body);
        Objects.requireNonNull(idle);
        Objects.requireNonNull(connect);
        Objects.requireNonNull(upstreamIdle);
        Objects.requireNonNull(tunnelIdle);
    }

    public static Timeouts defaults() {
        return new Timeouts(
                Duration.ofSeconds(10),
                Duration.ofSeconds(30),
                Duration.ofSeconds(120),
                Duration.ofSeconds(10),
                Duration.ofMinutes(10),
                Duration.ofMinutes(30));
    }
}

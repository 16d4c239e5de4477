package dev.agentjail.proxy.handoff;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.ChannelFactory;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.EpollServerSocketChannel;

/** Serves a handed-off listening socket with an ordinary Netty server bootstrap. */
public final class HandedOffListener {
    private HandedOffListener() {}

    /**
     * Wraps {@code fd} (already bound and listening inside the jail) as an epoll server channel and registers it
     * with a copy of {@code template}: its group, child group, child handler and options apply as if the
     * template had bound the port itself. No bind happens; the returned future completes on registration, from
     * when on accepted connections reach the child handler. The channel owns {@code fd} and closes it.
     */
    public static ChannelFuture register(ServerBootstrap template, int fd) {
        ChannelFactory<ServerChannel> existing = () -> new EpollServerSocketChannel(fd);
        return template.clone().channelFactory(existing).register();
    }
}

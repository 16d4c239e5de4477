package dev.agentjail.cli;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;

/** Parses and prints listen addresses such as {@code 127.0.0.1:3128} or {@code [::1]:0}. */
final class HostPorts {
    private HostPorts() {}

    static InetSocketAddress parseListen(String text) {
        int colon = text.lastIndexOf(':');
        if (colon <= 0 || colon == text.length() - 1) {
            throw new CliException(ExitCodes.USAGE, "--listen: expected HOST:PORT, got '" + text + "'");
        }
        String host = text.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        int port;
        try {
            port = Integer.parseInt(text.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new CliException(ExitCodes.USAGE, "--listen: invalid port in '" + text + "'");
        }
        if (port < 0 || port > 65535) {
            throw new CliException(ExitCodes.USAGE, "--listen: port out of range in '" + text + "'");
        }
        if (!host.matches("[0-9.]+|[0-9a-fA-F:]+")) {
            throw new CliException(ExitCodes.USAGE, "--listen: HOST must be an IP address, got '" + host + "'");
        }
        try {
            return new InetSocketAddress(InetAddress.getByName(host), port);
        } catch (UnknownHostException e) {
            throw new CliException(ExitCodes.USAGE, "--listen: invalid address '" + host + "'");
        }
    }

    static String format(InetSocketAddress a) {
        String host = a.getAddress().getHostAddress();
        return (host.contains(":") ? "[" + host + "]" : host) + ":" + a.getPort();
    }
}

package dev.agentjail.proxy.audit;

import java.util.List;
import java.util.Objects;

/**
 * The MCP side of one request record: the approved {@code server} it went to (null when it went to no approved
 * server), the JSON-RPC {@code method}, the {@code tool} (or resource or prompt) named, the message {@code id}, the size
 * of the call's arguments in bytes ({@code -1}: none), how many listed entries the proxy {@code hidden}, the tools
 * whose definition {@code changed} since pinned, the approved tools {@code flagged} for marks of tool poisoning, and how many server-to-client requests it {@code dropped}. Never the
 * arguments themselves.
 */
public record McpDetails(
        String server,
        String method,
        String tool,
        String id,
        long argsBytes,
        int hidden,
        List<String> changed,
        List<String> flagged,
        int dropped) {
    public McpDetails {
        server = AuditRecord.bound(server, AuditRecord.MAX_FIELD_CHARS);
        method = AuditRecord.bound(method, AuditRecord.MAX_FIELD_CHARS);
        tool = AuditRecord.bound(tool, AuditRecord.MAX_FIELD_CHARS);
        id = AuditRecord.bound(id, AuditRecord.MAX_FIELD_CHARS);
        changed = Objects.requireNonNullElse(changed, List.<String>of()).stream()
                .map(c -> AuditRecord.bound(c, AuditRecord.MAX_FIELD_CHARS))
                .toList();
        flagged = Objects.requireNonNullElse(flagged, List.<String>of()).stream()
                .map(c -> AuditRecord.bound(c, AuditRecord.MAX_FIELD_CHARS))
                .toList();
        if (argsBytes < -1 || hidden < 0 || dropped < 0) {
            throw new IllegalArgumentException("invalid MCP counts");
        }
    }
}

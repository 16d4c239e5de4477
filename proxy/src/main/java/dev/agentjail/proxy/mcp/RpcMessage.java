package dev.agentjail.proxy.mcp;

import dev.agentjail.proxy.json.Json;
import java.util.Set;

/**
 * One JSON-RPC 2.0 message, checked against the shape MCP uses: {@code "jsonrpc":"2.0"}, an id that is a string or a
 * number (never null), and no member JSON-RPC does not define, so that no field can mean one thing to the proxy and
 * another to the server.
 */
public record RpcMessage(Kind kind, Json id, String method, Json params, Json.Obj raw) {
    /** What the message is. */
    public enum Kind {
        /** Has a method and an id: expects an answer. */
        REQUEST,
        /** Has a method and no id. */
        NOTIFICATION,
        /** Has an id and a result or an error. */
        RESPONSE
    }

    private static final Set<String> REQUEST_MEMBERS = Set.of("jsonrpc", "id", "method", "params");
    private static final Set<String> RESPONSE_MEMBERS = Set.of("jsonrpc", "id", "result", "error");

    /** Reads {@code value} as a message, or says why it is not one (a JSON-RPC "invalid request"). */
    public static RpcMessage of(Json value) throws InvalidMessage {
        if (!(value instanceof Json.Obj obj)) {
            throw new InvalidMessage("a JSON-RPC message is a JSON object");
        }
        if (!"2.0".equals(obj.string("jsonrpc"))) {
            throw new InvalidMessage("\"jsonrpc\" must be \"2.0\"");
        }
        Json id = obj.get("id");
        if (id != null && !(id instanceof Json.Str) && !(id instanceof Json.Num)) {
            throw new InvalidMessage("\"id\" must be a string or a number");
        }
        Json method = obj.get("method");
        if (method != null) {
            if (!(method instanceof Json.Str m)) {
                throw new InvalidMessage("\"method\" must be a string");
            }
            only(obj, REQUEST_MEMBERS);
            Json params = obj.get("params");
            if (params != null && !(params instanceof Json.Obj)) {
                throw new InvalidMessage("\"params\" must be an object");
            }
            return new RpcMessage(id == null ? Kind.NOTIFICATION : Kind.REQUEST, id, m.value(), params, obj);
        }
        only(obj, RESPONSE_MEMBERS);
        if (id == null || (obj.get("result") == null) == (obj.get("error") == null)) {
            throw new InvalidMessage("a response has an \"id\" and exactly one of \"result\" and \"error\"");
        }
        return new RpcMessage(Kind.RESPONSE, id, null, null, obj);
    }

    private static void only(Json.Obj obj, Set<String> allowed) throws InvalidMessage {
        for (String name : obj.members().keySet()) {
            if (!allowed.contains(name)) {
                throw new InvalidMessage("unexpected member in a JSON-RPC message");
            }
        }
    }

    /** The params member {@code name} as a string, or null. */
    public String param(String name) {
        return params instanceof Json.Obj p ? p.string(name) : null;
    }

    /** The id as it appears in the log: the string, or the number's literal. */
    public String idText() {
        if (id instanceof Json.Str s) {
            return s.value();
        }
        return id instanceof Json.Num n ? n.literal() : null;
    }

    /** A body that is not a JSON-RPC message of the shape MCP uses. */
    public static final class InvalidMessage extends Exception {
        InvalidMessage(String message) {
            super(message, null, false, false);
        }
    }
}

package dev.agentjail.proxy.json;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * An immutable JSON value as {@link JsonReader} parses it: objects keep their member order, numbers keep their exact
 * literal (so an id goes back to the agent byte for byte), and strings are always valid Unicode.
 */
public sealed interface Json {
    /** The value as compact JSON text, members in their original order. */
    default String text() {
        StringBuilder out = new StringBuilder();
        write(out, false);
        return out.toString();
    }

    /** The value as canonical JSON: compact, object members sorted by name; equal values give equal text. */
    default String canonical() {
        StringBuilder out = new StringBuilder();
        write(out, true);
        return out.toString();
    }

    void write(StringBuilder out, boolean sorted);

    /** A JSON object; names are unique (the reader refuses duplicates). */
    record Obj(Map<String, Json> members) implements Json {
        public Obj {
            members = Collections.unmodifiableMap(new LinkedHashMap<>(members));
        }

        public Json get(String name) {
            return members.get(name);
        }

        /** The member {@code name} if it is a string, else null. */
        public String string(String name) {
            return members.get(name) instanceof Str s ? s.value() : null;
        }

        /** A copy with {@code name} set to {@code value}, in place if it was present. */
        public Obj with(String name, Json value) {
            LinkedHashMap<String, Json> copy = new LinkedHashMap<>(members);
            copy.put(name, value);
            return new Obj(copy);
        }

        @Override
        public void write(StringBuilder out, boolean sorted) {
            out.append('{');
            List<String> names = new ArrayList<>(members.keySet());
            if (sorted) {
                Collections.sort(names);
            }
            boolean first = true;
            for (String name : names) {
                if (!first) {
                    out.append(',');
                }
                first = false;
                Str.quote(out, name);
                out.append(':');
                members.get(name).write(out, sorted);
            }
            out.append('}');
        }
    }

    /** A JSON array. */
    record Arr(List<Json> items) implements Json {
        public Arr {
            items = List.copyOf(items);
        }

        @Override
        public void write(StringBuilder out, boolean sorted) {
            out.append('[');
            for (int i = 0; i < items.size(); i++) {
                if (i > 0) {
                    out.append(',');
                }
                items.get(i).write(out, sorted);
            }
            out.append(']');
        }
    }

    /** A JSON string. */
    record Str(String value) implements Json {
        public Str {
            Objects.requireNonNull(value, "value");
        }

        @Override
        public void write(StringBuilder out, boolean sorted) {
            quote(out, value);
        }

        /** Writes {@code s} as a JSON string: quote, backslash and C0 controls escaped, everything else as is. */
        public static void quote(StringBuilder out, String s) {
            out.append('"');
            for (int i = 0; i < s.length(); i++) {
                char c = s.charAt(i);
                switch (c) {
                    case '"' -> out.append("\\\"");
                    case '\\' -> out.append("\\\\");
                    case '\n' -> out.append("\\n");
                    case '\r' -> out.append("\\r");
                    case '\t' -> out.append("\\t");
                    default -> {
                        if (c < 0x20) {
                            out.append(String.format("\\u%04x", (int) c));
                        } else {
                            out.append(c);
                        }
                    }
                }
            }
            out.append('"');
        }
    }

    /** A JSON number, kept as its literal text (already checked against the JSON grammar). */
    record Num(String literal) implements Json {
        public Num {
            Objects.requireNonNull(literal, "literal");
        }

        @Override
        public void write(StringBuilder out, boolean sorted) {
            out.append(literal);
        }
    }

    /** {@code true} or {@code false}. */
    record Bool(boolean value) implements Json {
        @Override
        public void write(StringBuilder out, boolean sorted) {
            out.append(value);
        }
    }

    /** {@code null}. */
    record Null() implements Json {
        public static final Null INSTANCE = new Null();

        @Override
        public void write(StringBuilder out, boolean sorted) {
            out.append("null");
        }
    }
}

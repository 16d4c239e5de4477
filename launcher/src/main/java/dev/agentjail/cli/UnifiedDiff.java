package dev.agentjail.cli;

import java.util.ArrayList;
import java.util.List;

/**
 * A unified diff (as {@code diff -u} prints it, three lines of context) of a text edited in one place: the lines
 * between the longest common head and tail. Every line is printed through {@link LogRecordText#printable}, since a
 * project policy arrives with the repository and may hold what a terminal would act on.
 */
final class UnifiedDiff {
    private static final int CONTEXT = 3;

    private UnifiedDiff() {}

    /** The diff from {@code before} (labelled {@code beforeName}, e.g. {@code /dev/null}) to {@code after}; empty when equal. */
    static String of(String before, String after, String beforeName, String afterName) {
        List<String> a = lines(before);
        List<String> b = lines(after);
        int head = 0;
        while (head < a.size() && head < b.size() && a.get(head).equals(b.get(head))) {
            head++;
        }
        int tail = 0;
        while (tail < a.size() - head
                && tail < b.size() - head
                && a.get(a.size() - 1 - tail).equals(b.get(b.size() - 1 - tail))) {
            tail++;
        }
        if (head == a.size() && head == b.size()) {
            return "";
        }
        int start = Math.max(0, head - CONTEXT);
        int trailing = Math.min(CONTEXT, tail);
        int aEnd = a.size() - tail + trailing;
        int bEnd = b.size() - tail + trailing;
        StringBuilder out = new StringBuilder();
        out.append("--- ").append(LogRecordText.printable(beforeName)).append('\n');
        out.append("+++ ").append(LogRecordText.printable(afterName)).append('\n');
        out.append("@@ -")
                .append(range(start, aEnd - start))
                .append(" +")
                .append(range(start, bEnd - start))
                .append(" @@\n");
        for (int i = start; i < head; i++) {
            line(out, ' ', a.get(i));
        }
        for (int i = head; i < a.size() - tail; i++) {
            line(out, '-', a.get(i));
        }
        for (int i = head; i < b.size() - tail; i++) {
            line(out, '+', b.get(i));
        }
        for (int i = a.size() - tail; i < aEnd; i++) {
            line(out, ' ', a.get(i));
        }
        return out.toString();
    }

    /** GNU diff's range: the first line and the count, the count left out when 1, the line before when 0. */
    private static String range(int start, int count) {
        if (count == 0) {
            return start + ",0";
        }
        return count == 1 ? String.valueOf(start + 1) : (start + 1) + "," + count;
    }

    private static void line(StringBuilder out, char mark, String line) {
        boolean newline = line.endsWith("\n");
        String text = newline ? line.substring(0, line.length() - (line.endsWith("\r\n") ? 2 : 1)) : line;
        out.append(mark).append(LogRecordText.printable(text)).append('\n');
        if (!newline) {
            out.append("\\ No newline at end of file\n");
        }
    }

    /** The lines with their line breaks, so that a line that only gained one differs. */
    private static List<String> lines(String text) {
        List<String> lines = new ArrayList<>();
        int start = 0;
        for (int i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', start)) {
            lines.add(text.substring(start, i + 1));
            start = i + 1;
        }
        if (start < text.length()) {
            lines.add(text.substring(start));
        }
        return lines;
    }
}

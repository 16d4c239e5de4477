package dev.agentjail.proxy.redact;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * An Aho-Corasick automaton over the rules' literal triggers, as a dense DFA on byte classes: one table
 * load per scanned byte, and rule checks only where a trigger ends.
 */
final class TriggerAutomaton {
    /** Byte to class; bytes that occur in no trigger share class 0. */
    final int[] classOf = new int[256];

    /** Width of a row of {@link #delta}: the number of classes rounded up to a power of two. */
    final int classes;
    /** {@code state >> shift} is a state's index ({@code state / classes}, without a division). */
    final int shift;
    /** {@code delta[state + class]} is the next state; states are premultiplied by {@link #classes}. */
    final int[] delta;
    /** States at or above this value end at least one trigger. */
    final int acceptBase;

    final int start;
    /** Per state index ({@code state >> shift}): the rules whose trigger ends here, longest trigger first. */
    final int[][] outputs;
    /** Per state index: length of the longest trigger prefix that the state stands for. */
    final int[] depth;
    /**
     * Skip filter for the start state: a bit per 17-bit hash of the first three bytes of every trigger (a
     * two-byte trigger sets the bits of all 256 possible third bytes). A position whose bit is clear starts
     * no trigger, so the scan skips it without walking the table.
     */
    final long[] starts = new long[2048];

    TriggerAutomaton(List<byte[]> triggers) {
        // 1. trie
        List<int[]> next = new ArrayList<>();
        List<List<Integer>> own = new ArrayList<>();
        List<Integer> nodeDepth = new ArrayList<>();
        next.add(newRow());
        own.add(new ArrayList<>());
        nodeDepth.add(0);
        boolean[] used = new boolean[256];
        for (int rule = 0; rule < triggers.size(); rule++) {
            byte[] trigger = triggers.get(rule);
            if (trigger.length < 2) {
                throw new IllegalArgumentException("trigger shorter than two bytes");
            }
            int b0 = trigger[0] & 0xff;
            int b1 = trigger[1] & 0xff;
            for (int b2 = 0; b2 < 256; b2++) {
                if (trigger.length == 2 || b2 == (trigger[2] & 0xff)) {
                    int k = hash3(b0 << 16 | b1 << 8 | b2);
                    starts[k >>> 6] |= 1L << k;
                }
            }
            int node = 0;
            for (byte value : triggers.get(rule)) {
                int b = value & 0xff;
                used[b] = true;
                if (next.get(node)[b] < 0) {
                    next.get(node)[b] = next.size();
                    next.add(newRow());
                    own.add(new ArrayList<>());
                    nodeDepth.add(nodeDepth.get(node) + 1);
                }
                node = next.get(node)[b];
            }
            own.get(node).add(rule);
        }
        int nodes = next.size();
        // 2. failure links, full transitions, inherited outputs (breadth first)
        int[] fail = new int[nodes];
        int[][] go = new int[nodes][];
        List<List<Integer>> out = new ArrayList<>(own);
        ArrayDeque<Integer> queue = new ArrayDeque<>();
        go[0] = new int[256];
        for (int b = 0; b < 256; b++) {
            int child = next.get(0)[b];
            go[0][b] = child < 0 ? 0 : child;
            if (child > 0) {
                fail[child] = 0;
                queue.add(child);
            }
        }
        while (!queue.isEmpty()) {
            int node = queue.poll();
            List<Integer> merged = new ArrayList<>(own.get(node));
            merged.addAll(out.get(fail[node]));
            out.set(node, merged);
            go[node] = new int[256];
            for (int b = 0; b < 256; b++) {
                int child = next.get(node)[b];
                if (child >= 0) {
                    fail[child] = go[fail[node]][b];
                    go[node][b] = child;
                    queue.add(child);
                } else {
                    go[node][b] = go[fail[node]][b];
                }
            }
        }
        // 3. byte classes
        int classCount = 1;
        for (int b = 0; b < 256; b++) {
            classOf[b] = used[b] ? classCount++ : 0;
        }
        shift = 32 - Integer.numberOfLeadingZeros(classCount - 1);
        classes = 1 << shift;
        // 4. renumber: states without outputs first, so "has output" is one comparison
        int[] index = new int[nodes];
        int n = 0;
        for (int node = 0; node < nodes; node++) {
            if (out.get(node).isEmpty()) {
                index[node] = n++;
            }
        }
        int firstAccepting = n;
        for (int node = 0; node < nodes; node++) {
            if (!out.get(node).isEmpty()) {
                index[node] = n++;
            }
        }
        acceptBase = firstAccepting * classes;
        delta = new int[nodes * classes];
        outputs = new int[nodes][];
        depth = new int[nodes];
        for (int node = 0; node < nodes; node++) {
            int row = index[node] * classes;
            for (int b = 0; b < 256; b++) {
                delta[row + classOf[b]] = index[go[node][b]] * classes;
            }
            depth[index[node]] = nodeDepth.get(node);
            outputs[index[node]] = out.get(node).stream()
                    .sorted((x, y) -> Integer.compare(triggers.get(y).length, triggers.get(x).length))
                    .mapToInt(Integer::intValue)
                    .toArray();
        }
        start = index[0] * classes;
    }

    /** A 17-bit hash of three bytes given as one 24-bit value, for {@link #starts}. */
    static int hash3(int threeBytes) {
        return (threeBytes * 0x9E3779B1) >>> 15;
    }

    private static int[] newRow() {
        int[] row = new int[256];
        Arrays.fill(row, -1);
        return row;
    }
}

package dev.agentjail.proxy.redact;

import java.util.Arrays;

/**
 * Where each byte of a stream's decoded view came from in its raw bytes: one event per decoded byte that an escape
 * stands for (its raw start and end); from one event to the next, decoded and raw bytes go one to one, and before the
 * first, decoded byte {@code i} is raw byte {@code base + i}.
 */
final class RawMap {
    private int base;
    private int[] evDec = new int[16];
    private int[] evRawStart = new int[16];
    private int[] evRawEnd = new int[16];
    private int evCount;

    void add(int decIndex, int rawStart, int rawEnd) {
        if (evCount == evDec.length) {
            evDec = Arrays.copyOf(evDec, evCount * 2);
            evRawStart = Arrays.copyOf(evRawStart, evCount * 2);
            evRawEnd = Arrays.copyOf(evRawEnd, evCount * 2);
        }
        evDec[evCount] = decIndex;
        evRawStart[evCount] = rawStart;
        evRawEnd[evCount++] = rawEnd;
    }

    /** Index of the last event at or before decoded index {@code i}, or -1. */
    private int lastEventAtOrBefore(int i) {
        int lo = 0;
        int hi = evCount - 1;
        int found = -1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            if (evDec[mid] <= i) {
                found = mid;
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        return found;
    }

    /** Whether decoded byte {@code i} was written as an escape. */
    boolean escaped(int i) {
        int e = lastEventAtOrBefore(i);
        return e >= 0 && evDec[e] == i;
    }

    /** The raw offset where decoded byte {@code i} begins (negative: in bytes already released). */
    int rawStart(int i) {
        int e = lastEventAtOrBefore(i);
        if (e < 0) {
            return base + i;
        }
        return evDec[e] == i ? evRawStart[e] : evRawEnd[e] + (i - evDec[e] - 1);
    }

    /** The raw offset just after decoded byte {@code i}. */
    int rawEnd(int i) {
        int e = lastEventAtOrBefore(i);
        if (e >= 0 && evDec[e] == i) {
            return evRawEnd[e];
        }
        return rawStart(i) + 1;
    }

    /**
     * Forgets the events before decoded index {@code keepFrom} and moves the rest down by {@code keepFrom} decoded and
     * {@code rawShift} raw bytes, as the stream drops those; {@code newBase} is where decoded byte 0 then begins.
     */
    void compact(int keepFrom, int rawShift, int newBase) {
        int firstKept = evCount;
        for (int e = 0; e < evCount; e++) {
            if (evDec[e] >= keepFrom) {
                firstKept = e;
                break;
            }
        }
        int keptEvents = evCount - firstKept;
        for (int e = 0; e < keptEvents; e++) {
            evDec[e] = evDec[firstKept + e] - keepFrom;
            evRawStart[e] = evRawStart[firstKept + e] - rawShift;
            evRawEnd[e] = evRawEnd[firstKept + e] - rawShift;
        }
        evCount = keptEvents;
        base = newBase;
    }
}

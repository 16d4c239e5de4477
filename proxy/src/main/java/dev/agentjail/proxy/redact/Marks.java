package dev.agentjail.proxy.redact;

import java.util.Arrays;

/**
 * The raw ranges of one stream already overwritten by a marker, and which kind each names: a later match overwrites
 * only what no marker covers yet, except that where two rules match from the same start, the one with the longer
 * trigger (the more specific) names the secret, whichever was decided first. Counts what it writes in the findings.
 */
final class Marks {
    private final boolean urlSafe;
    private final String location;
    private final Findings findings;
    // Raw ranges already overwritten (relative to the stream's raw[0]), their kinds and priorities.
    private int[] wStart = new int[8];
    private int[] wEnd = new int[8];
    private String[] wKind = new String[8];
    private int[] wPriority = new int[8];
    private int wCount;

    Marks(boolean urlSafe, String location, Findings findings) {
        this.urlSafe = urlSafe;
        this.location = location;
        this.findings = findings;
    }

    /** Writes a marker of {@code kind} over raw bytes {@code [rs, re)} where no marker is yet. */
    void write(byte[] raw, int rs, int re, String kind, int priority) {
        for (int w = 0; w < wCount; w++) {
            if (wStart[w] == rs && wEnd[w] <= re && wPriority[w] < priority) {
                Markers.fill(raw, rs, re - rs, kind, urlSafe);
                findings.remove(wKind[w], location);
                findings.add(kind, location);
                wEnd[w] = re;
                wKind[w] = kind;
                wPriority[w] = priority;
                return;
            }
        }
        boolean wrote = false;
        int cur = rs;
        while (cur < re) {
            int skipTo = -1;
            int nextStart = re;
            for (int w = 0; w < wCount; w++) {
                if (wStart[w] <= cur && wEnd[w] > cur) {
                    skipTo = Math.max(skipTo, wEnd[w]);
                } else if (wStart[w] > cur && wStart[w] < nextStart) {
                    nextStart = wStart[w];
                }
            }
            if (skipTo >= 0) {
                cur = skipTo;
                continue;
            }
            Markers.fill(raw, cur, nextStart - cur, kind, urlSafe);
            wrote = true;
            cur = nextStart;
        }
        if (wCount == wStart.length) {
            wStart = Arrays.copyOf(wStart, wCount * 2);
            wEnd = Arrays.copyOf(wEnd, wCount * 2);
            wKind = Arrays.copyOf(wKind, wCount * 2);
            wPriority = Arrays.copyOf(wPriority, wCount * 2);
        }
        wStart[wCount] = rs;
        wEnd[wCount] = re;
        wKind[wCount] = kind;
        wPriority[wCount++] = wrote ? priority : Integer.MAX_VALUE;
        if (wrote) {
            findings.add(kind, location);
        }
    }

    /** The stream released its first {@code rawShift} raw bytes: forget ranges wholly in them, move the rest down. */
    void shift(int rawShift) {
        int kept = 0;
        for (int w = 0; w < wCount; w++) {
            if (wEnd[w] > rawShift) {
                wStart[kept] = wStart[w] - rawShift;
                wEnd[kept] = wEnd[w] - rawShift;
                wKind[kept] = wKind[w];
                wPriority[kept++] = wPriority[w];
            }
        }
        wCount = kept;
    }
}

package io.tierkv.bench.sim;

import io.tierkv.bench.trace.TraceRequest;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A trace flattened for simulation: every prompt block access in order, its content as a dense
 * id {@code [0, distinct)}, where each request starts, and each access's next use.
 */
final class BlockTrace {

    /** Next-use value of an access whose content never comes back. */
    static final int NEVER = Integer.MAX_VALUE;

    /** Number of requests. */
    final int requests;
    /** Number of distinct block ids: dense content ids are {@code [0, distinct)}. */
    final int distinct;
    /** Dense content id of access {@code i}. */
    final int[] content;
    /** Accesses of request {@code r} are {@code [start[r], start[r + 1])}. */
    final int[] start;
    /** Index of the next access to the same content, or {@link #NEVER}. */
    final int[] nextUse;

    private BlockTrace(int requests, int distinct, int[] content, int[] start, int[] nextUse) {
        this.requests = requests;
        this.distinct = distinct;
        this.content = content;
        this.start = start;
        this.nextUse = nextUse;
    }

    /**
     * Flattens a trace, numbering block ids densely in order of first appearance.
     *
     * @param trace requests in arrival order
     * @return the flattened trace
     * @throws IllegalArgumentException if it has {@code NEVER} or more block accesses
     */
    static BlockTrace of(List<TraceRequest> trace) {
        long total = 0;
        for (TraceRequest r : trace) {
            total += r.blockCount();
        }
        if (total >= NEVER) {
            throw new IllegalArgumentException("trace: " + total + " block accesses (expected < " + NEVER + ")");
        }
        int[] content = new int[(int) total];
        int[] start = new int[trace.size() + 1];
        Map<Long, Integer> dense = new HashMap<>();
        int i = 0;
        for (int r = 0; r < trace.size(); r++) {
            start[r] = i;
            TraceRequest req = trace.get(r);
            for (int b = 0; b < req.blockCount(); b++) {
                Integer next = dense.size();
                Integer id = dense.putIfAbsent(req.blockHash(b), next);
                content[i++] = id == null ? next : id;
            }
        }
        start[trace.size()] = i;
        int distinct = dense.size();
        int[] nextUse = new int[content.length];
        int[] last = new int[distinct];
        Arrays.fill(last, NEVER);
        for (int a = content.length - 1; a >= 0; a--) {
            nextUse[a] = last[content[a]];
            last[content[a]] = a;
        }
        return new BlockTrace(trace.size(), distinct, content, start, nextUse);
    }

    /**
     * Number of block accesses.
     *
     * @return the length of {@link #content}
     */
    long accesses() {
        return content.length;
    }
}

package io.tierkv.core.policy;

/**
 * SIEVE: a FIFO queue with one "visited" bit per block and a hand that sweeps from the oldest
 * block towards the newest, sparing (and clearing) visited blocks and naming the first unvisited
 * one.
 *
 * <p><b>Algorithm</b> (Zhang et al., below): admission appends the block at the newest end with
 * its bit clear; {@link #onAccess} on a candidate sets the bit (and moves nothing); the hand
 * starts at the oldest block, and at each step clears a set bit and steps one block newer,
 * wrapping to the oldest past the newest end, until it rests on a block whose bit is clear: the
 * victim. The hand stays there, so asking again without changes names the same block; when the
 * block under the hand is removed the hand steps to the next newer block. Blocks the hand has
 * passed keep their place, so new blocks are judged quickly while proven ones stay: lazy
 * promotion and quick demotion.
 *
 * <p>Admission, access and removal are O(1); the victim search is amortised O(1) (each step spends
 * one visited bit). One intrusive list over the block ids, a bit per id, nothing allocated per
 * call. Priorities and content keys are ignored. Not thread-safe.
 *
 * <p>Source: Y. Zhang, J. Yang, Y. Yue, Y. Vigfusson, K. V. Rashmi, "SIEVE is Simpler than LRU:
 * an Efficient Turn-Key Eviction Algorithm for Web Caches", NSDI 2024 (Figure 1 pseudo code).
 */
public final class SievePolicy extends AbstractPolicy {

    private static final int LIST = 0;

    private final IntrusiveLists lists;
    private final boolean[] candidate;
    private final boolean[] visited;
    /** Where the next search starts, or NIL for the oldest block. */
    private int hand = IntrusiveLists.NIL;

    /**
     * Creates an empty policy over block ids {@code [0, capacity)}.
     *
     * @param capacity number of block ids; {@code > 0}
     * @throws IllegalArgumentException if {@code capacity} is not positive
     */
    public SievePolicy(int capacity) {
        super("sieve", capacity);
        lists = new IntrusiveLists(capacity, 1);
        candidate = new boolean[capacity];
        visited = new boolean[capacity];
    }

    @Override
    public void onAdmit(int blockId, int priority, long contentKey) {
        checkId(blockId);
        if (candidate[blockId]) {
            throw alreadyCandidate(blockId);
        }
        candidate[blockId] = true;
        visited[blockId] = false;
        lists.addLast(LIST, blockId);
    }

    @Override
    public void onAccess(int blockId) {
        checkId(blockId);
        if (candidate[blockId]) {
            visited[blockId] = true;
        }
    }

    @Override
    public void onRemove(int blockId) {
        checkId(blockId);
        consumeVictim(blockId);
        if (!candidate[blockId]) {
            return;
        }
        if (hand == blockId) {
            hand = lists.next(blockId);
        }
        candidate[blockId] = false;
        visited[blockId] = false;
        lists.remove(LIST, blockId);
    }

    @Override
    public int victim() {
        if (lists.size(LIST) == 0) {
            lastVictim = IntrusiveLists.NIL;
            return lastVictim;
        }
        int o = hand == IntrusiveLists.NIL ? lists.first(LIST) : hand;
        while (visited[o]) {
            visited[o] = false;
            o = lists.next(o);
            if (o == IntrusiveLists.NIL) {
                o = lists.first(LIST);
            }
        }
        hand = o;
        lastVictim = o;
        return o;
    }

    @Override
    public boolean contains(int blockId) {
        return candidate[checkId(blockId)];
    }

    @Override
    public int size() {
        return lists.size(LIST);
    }
}

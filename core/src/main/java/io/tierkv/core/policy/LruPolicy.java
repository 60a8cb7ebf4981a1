package io.tierkv.core.policy;

/**
 * Least recently used: the candidate admitted or accessed longest ago leaves first.
 *
 * <p>One intrusive doubly linked list over the block ids, oldest first; admission appends, an
 * access to a candidate moves it to the newest end, the victim is the oldest. Every call is O(1)
 * and allocates nothing. Accesses to blocks that are not candidates are ignored (the block takes
 * the newest place when admitted). Priorities and content keys are ignored. Not thread-safe.
 *
 * <p>Source: the classic recency policy, as analysed in L. A. Belady, "A study of replacement
 * algorithms for a virtual-storage computer", IBM Systems Journal 5(2), 1966; the list layout
 * follows vLLM's free block queue ({@code vllm/v1/core/kv_cache_utils.py}).
 */
public final class LruPolicy extends AbstractPolicy {

    private static final int LIST = 0;

    private final IntrusiveLists lists;
    private final boolean[] candidate;

    /**
     * Creates an empty policy over block ids {@code [0, capacity)}.
     *
     * @param capacity number of block ids, {@code [0, capacity)}; {@code > 0}
     * @throws IllegalArgumentException if {@code capacity} is not positive
     */
    public LruPolicy(int capacity) {
        super("lru", capacity);
        lists = new IntrusiveLists(capacity, 1);
        candidate = new boolean[capacity];
    }

    @Override
    public void onAdmit(int blockId, int priority, long contentKey) {
        checkId(blockId);
        if (candidate[blockId]) {
            throw alreadyCandidate(blockId);
        }
        candidate[blockId] = true;
        lists.addLast(LIST, blockId);
    }

    @Override
    public void onAccess(int blockId) {
        checkId(blockId);
        if (candidate[blockId]) {
            lists.moveToLast(LIST, blockId);
        }
    }

    @Override
    public void onRemove(int blockId) {
        checkId(blockId);
        consumeVictim(blockId);
        if (candidate[blockId]) {
            candidate[blockId] = false;
            lists.remove(LIST, blockId);
        }
    }

    @Override
    public int victim() {
        lastVictim = lists.first(LIST);
        return lastVictim;
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

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
public final class LruPolicy extends FifoPolicy {

    /**
     * Creates an empty policy over block ids {@code [0, capacity)}.
     *
     * @param capacity number of block ids, {@code [0, capacity)}; {@code > 0}
     * @throws IllegalArgumentException if {@code capacity} is not positive
     */
    public LruPolicy(int capacity) {
        super("lru", capacity);
    }

    @Override
    public void onAccess(int blockId) {
        checkId(blockId);
        if (lists.linked(blockId)) {
            lists.moveToLast(LIST, blockId);
        }
    }
}

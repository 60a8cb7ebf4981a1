package io.tierkv.core.policy;

/**
 * First in, first out: the candidate admitted longest ago leaves first; accesses change nothing.
 *
 * <p>One intrusive doubly linked list over the block ids, oldest first; admission appends, the
 * victim is the oldest, removal unlinks in O(1). Every call is O(1) and allocates nothing.
 * Priorities and content keys are ignored. Not thread-safe.
 *
 * <p>Source: FIFO replacement as analysed in L. A. Belady, "A study of replacement algorithms for
 * a virtual-storage computer", IBM Systems Journal 5(2), 1966; it is the base of S3-FIFO and
 * SIEVE ({@link S3FifoPolicy}, {@link SievePolicy}). {@link LruPolicy} is this queue plus a move to
 * the newest end on access.
 */
public sealed class FifoPolicy extends AbstractPolicy permits LruPolicy {

    /** The one list, oldest candidate first. */
    static final int LIST = 0;

    /** The queue; a block id is a candidate while it is linked in it. */
    final IntrusiveLists lists;

    /**
     * Creates an empty policy over block ids {@code [0, capacity)}.
     *
     * @param capacity number of block ids, {@code [0, capacity)}; {@code > 0}
     * @throws IllegalArgumentException if {@code capacity} is not positive
     */
    public FifoPolicy(int capacity) {
        this("fifo", capacity);
    }

    FifoPolicy(String name, int capacity) {
        super(name, capacity);
        lists = new IntrusiveLists(capacity, 1);
    }

    @Override
    public void onAdmit(int blockId, int priority, long contentKey) {
        checkId(blockId);
        if (lists.linked(blockId)) {
            throw alreadyCandidate(blockId);
        }
        lists.addLast(LIST, blockId);
    }

    @Override
    public void onAccess(int blockId) {
        checkId(blockId);
    }

    @Override
    public void onRemove(int blockId) {
        checkId(blockId);
        consumeVictim(blockId);
        if (lists.linked(blockId)) {
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
        return lists.linked(checkId(blockId));
    }

    @Override
    public int size() {
        return lists.size(LIST);
    }
}

package io.tierkv.core.policy;

/**
 * Priority, then LRU: candidates of the lowest retention priority leave first, least recently used
 * first within a priority. A per-request retention priority (for example a system prompt kept at
 * a high level, a finished request's tail at 0) thus outlives any amount of lower-priority
 * traffic.
 *
 * <p>Priorities are levels {@code [0, levels)} ({@value #DEFAULT_LEVELS} by default): a priority
 * below 0 counts as 0 and one above {@code levels - 1} as {@code levels - 1}, since a priority is
 * a hint from the runtime rather than a position. A block keeps the priority it was admitted with.
 *
 * <p>One intrusive LRU list per level and a 64-bit mask of the non-empty levels: admit, access,
 * remove and victim are all O(1) ({@code numberOfTrailingZeros} finds the lowest level). Nothing is
 * allocated per call. Content keys are ignored. Not thread-safe.
 *
 * <p>Source: the prioritized eviction of TensorRT-LLM's KV cache (NVIDIA, "KV Cache System" and
 * {@code KvCacheRetentionConfig}: blocks carry a retention priority per token range, the lowest
 * priority is evicted first, LRU among equals); the level mask is the bitmap of the Linux 2.6
 * O(1) scheduler.
 */
public final class PriorityLruPolicy extends AbstractPolicy {

    /** Default and largest number of priority levels: 64 (one bit each in a {@code long}). */
    public static final int DEFAULT_LEVELS = 64;

    private final int levels;
    private final IntrusiveLists lists;
    /** Level of a candidate, or -1. */
    private final byte[] levelOf;
    private long nonEmpty;
    private int size;

    /**
     * Creates an empty policy over block ids {@code [0, capacity)} with
     * {@value #DEFAULT_LEVELS} priority levels.
     *
     * @param capacity number of block ids; {@code > 0}
     * @throws IllegalArgumentException if {@code capacity} is not positive
     */
    public PriorityLruPolicy(int capacity) {
        this(capacity, DEFAULT_LEVELS);
    }

    /**
     * Creates an empty policy over block ids {@code [0, capacity)}.
     *
     * @param capacity number of block ids; {@code > 0}
     * @param levels   number of priority levels, in {@code [1, 64]}
     * @throws IllegalArgumentException if a parameter is out of range (the message names it)
     */
    public PriorityLruPolicy(int capacity, int levels) {
        super("priority-lru", capacity);
        if (levels < 1 || levels > DEFAULT_LEVELS) {
            throw new IllegalArgumentException("levels: " + levels + " (expected 1.." + DEFAULT_LEVELS + ")");
        }
        this.levels = levels;
        lists = new IntrusiveLists(capacity, levels);
        levelOf = new byte[capacity];
        java.util.Arrays.fill(levelOf, (byte) -1);
    }

    /**
     * The number of priority levels.
     *
     * @return the number of levels, in {@code [1, 64]}
     */
    public int levels() {
        return levels;
    }

    /**
     * The level a priority is kept at.
     *
     * @param priority any retention priority
     * @return {@code priority} clamped to {@code [0, levels - 1]}
     */
    public int levelOf(int priority) {
        return Math.clamp(priority, 0, levels - 1);
    }

    /**
     * The level a candidate was admitted at.
     *
     * @param blockId block id in [0, capacity)
     * @return its level, or -1 if it is not a candidate
     * @throws IndexOutOfBoundsException if the id is outside [0, capacity)
     */
    public int priorityOf(int blockId) {
        return levelOf[checkId(blockId)];
    }

    @Override
    public boolean readsPriority() {
        return true;
    }

    @Override
    public void onAdmit(int blockId, int priority, long contentKey) {
        checkId(blockId);
        if (levelOf[blockId] >= 0) {
            throw alreadyCandidate(blockId);
        }
        int level = levelOf(priority);
        levelOf[blockId] = (byte) level;
        lists.addLast(level, blockId);
        nonEmpty |= 1L << level;
        size++;
    }

    @Override
    public void onAccess(int blockId) {
        checkId(blockId);
        int level = levelOf[blockId];
        if (level >= 0) {
            lists.moveToLast(level, blockId);
        }
    }

    @Override
    public void onRemove(int blockId) {
        checkId(blockId);
        consumeVictim(blockId);
        int level = levelOf[blockId];
        if (level < 0) {
            return;
        }
        lists.remove(level, blockId);
        if (lists.size(level) == 0) {
            nonEmpty &= ~(1L << level);
        }
        levelOf[blockId] = -1;
        size--;
    }

    @Override
    public int victim() {
        lastVictim = nonEmpty == 0L
                ? IntrusiveLists.NIL
                : lists.first(Long.numberOfTrailingZeros(nonEmpty));
        return lastVictim;
    }

    @Override
    public boolean contains(int blockId) {
        return levelOf[checkId(blockId)] >= 0;
    }

    @Override
    public int size() {
        return size;
    }
}

package io.tierkv.core.policy;

/**
 * Least frequently used with aging: the candidate with the fewest recent references leaves first,
 * least recently promoted first among equals; every count is halved after each
 * {@code agingPeriodAccesses} accesses, so past popularity fades.
 *
 * <p><b>Counting.</b> Each block id has a saturating count in {@code [0, maxCount]} (default 15,
 * the 4-bit counters of TinyLFU). {@link #onAccess} adds one, for candidates and for blocks in use
 * alike, so a block that was hit while referenced keeps its rank when it is released. Admission
 * raises a count of 0 to 1. The eviction of a block (removing the id {@link #victim()} named)
 * resets its count to 0; any other removal keeps it.
 *
 * <p><b>Structure.</b> One intrusive list per count value ({@code maxCount + 1} buckets), each in
 * LRU order, and a bit mask of the non-empty buckets: admit, access and remove are O(1); the
 * victim is the oldest block of the lowest non-empty bucket, one {@code numberOfTrailingZeros}
 * away. Aging is O(maxCount) and still O(1) per block: the lists of counts {@code 2g} and
 * {@code 2g + 1} are spliced into bucket {@code g}, and each id's stored count is halved lazily
 * through an epoch stamp when it is next read. Nothing is allocated after construction.
 * Priorities and content keys are ignored. Not thread-safe.
 *
 * <p>Sources: O(1) LFU with frequency lists, K. Shah, A. Mitra, D. Matani, "An O(1) algorithm
 * for implementing the LFU cache eviction scheme", 2010; aging by periodic halving (the "reset"
 * operation) and 4-bit counters, G. Einziger, R. Friedman, B. Manes, "TinyLFU: A Highly Efficient
 * Cache Admission Policy", ACM Transactions on Storage 13(4), 2017.
 */
public final class LfuPolicy extends AbstractPolicy {

    /** Default saturation of a count: 15, as TinyLFU's 4-bit counters. */
    public static final int DEFAULT_MAX_COUNT = 15;
    /** Default aging period as a multiple of the capacity: 10, as TinyLFU's sample size. */
    public static final int DEFAULT_AGING_FACTOR = 10;
    /** Largest {@code maxCount}: bucket indices fit the 32-bit non-empty mask. */
    public static final int MAX_MAX_COUNT = 31;

    private final int maxCount;
    private final long agingPeriodAccesses;
    private final IntrusiveLists buckets;
    private final boolean[] candidate;
    /** Count as of {@link #stamp}; the true count is {@code count >>> (epoch - stamp)}. */
    private final byte[] count;
    private final int[] stamp;
    private int epoch;
    private long accessesSinceAging;
    /** Bit {@code c} set when bucket {@code c} is non-empty. */
    private int nonEmpty;
    private int size;

    /**
     * Creates an empty policy over block ids {@code [0, capacity)}, counts saturating at
     * {@value #DEFAULT_MAX_COUNT} and aging every {@value #DEFAULT_AGING_FACTOR} x capacity
     * accesses.
     *
     * @param capacity number of block ids; {@code > 0}
     * @throws IllegalArgumentException if {@code capacity} is not positive
     */
    public LfuPolicy(int capacity) {
        this(capacity, DEFAULT_MAX_COUNT, (long) DEFAULT_AGING_FACTOR * checkCapacity(capacity));
    }

    /**
     * Creates an empty policy over block ids {@code [0, capacity)}.
     *
     * @param capacity            number of block ids; {@code > 0}
     * @param maxCount            saturation of a count, in {@code [1, 31]}
     * @param agingPeriodAccesses accesses between two halvings of every count; {@code > 0}
     * @throws IllegalArgumentException if a parameter is out of range (the message names it)
     */
    public LfuPolicy(int capacity, int maxCount, long agingPeriodAccesses) {
        super("lfu", capacity);
        if (maxCount < 1 || maxCount > MAX_MAX_COUNT) {
            throw new IllegalArgumentException(
                    "maxCount: " + maxCount + " (expected 1.." + MAX_MAX_COUNT + ")");
        }
        if (agingPeriodAccesses <= 0) {
            throw new IllegalArgumentException(
                    "agingPeriodAccesses: " + agingPeriodAccesses + " (expected > 0)");
        }
        this.maxCount = maxCount;
        this.agingPeriodAccesses = agingPeriodAccesses;
        buckets = new IntrusiveLists(capacity, maxCount + 1);
        candidate = new boolean[capacity];
        count = new byte[capacity];
        stamp = new int[capacity];
    }

    /**
     * The current (aged) count of a block id, candidate or not.
     *
     * @param blockId block id in [0, capacity)
     * @return the count in {@code [0, maxCount]}
     * @throws IndexOutOfBoundsException if the id is outside [0, capacity)
     */
    public int frequency(int blockId) {
        return current(checkId(blockId));
    }

    /**
     * The saturation of a count.
     *
     * @return the largest count, in {@code [1, 31]}
     */
    public int maxCount() {
        return maxCount;
    }

    /**
     * The aging period.
     *
     * @return accesses between two halvings of every count
     */
    public long agingPeriodAccesses() {
        return agingPeriodAccesses;
    }

    private int current(int id) {
        int shift = epoch - stamp[id];
        return shift < 0 || shift >= Integer.SIZE ? 0 : count[id] >>> shift;
    }

    private void store(int id, int c) {
        count[id] = (byte) c;
        stamp[id] = epoch;
    }

    private void link(int c, int id) {
        buckets.addLast(c, id);
        nonEmpty |= 1 << c;
    }

    private void unlink(int c, int id) {
        buckets.remove(c, id);
        if (buckets.size(c) == 0) {
            nonEmpty &= ~(1 << c);
        }
    }

    @Override
    public void onAdmit(int blockId, int priority, long contentKey) {
        checkId(blockId);
        if (candidate[blockId]) {
            throw alreadyCandidate(blockId);
        }
        int c = Math.max(1, current(blockId));
        store(blockId, c);
        candidate[blockId] = true;
        link(c, blockId);
        size++;
    }

    @Override
    public void onAccess(int blockId) {
        checkId(blockId);
        int c = current(blockId);
        int n = Math.min(maxCount, c + 1);
        store(blockId, n);
        if (candidate[blockId]) {
            // A candidate sits in bucket c (its stored count before this access, aged).
            unlink(c, blockId);
            link(n, blockId);
        }
        if (++accessesSinceAging >= agingPeriodAccesses) {
            age();
        }
    }

    /** Halves every count: bucket g takes the lists of 2g then 2g + 1; ids follow lazily. */
    private void age() {
        accessesSinceAging = 0;
        epoch++;
        for (int g = 0; g <= maxCount / 2; g++) {
            // Bucket g was emptied into g / 2 at an earlier step (or is g = 0 and keeps its own).
            buckets.appendAll(g, 2 * g);
            if (2 * g + 1 <= maxCount) {
                buckets.appendAll(g, 2 * g + 1);
            }
        }
        int mask = 0;
        for (int c = 0; c <= maxCount; c++) {
            if (buckets.size(c) > 0) {
                mask |= 1 << c;
            }
        }
        nonEmpty = mask;
    }

    @Override
    public void onRemove(int blockId) {
        checkId(blockId);
        boolean evicted = consumeVictim(blockId);
        if (candidate[blockId]) {
            candidate[blockId] = false;
            unlink(current(blockId), blockId);
            size--;
        }
        if (evicted) {
            store(blockId, 0);
        }
    }

    @Override
    public int victim() {
        lastVictim = nonEmpty == 0
                ? IntrusiveLists.NIL
                : buckets.first(Integer.numberOfTrailingZeros(nonEmpty));
        return lastVictim;
    }

    @Override
    public boolean contains(int blockId) {
        return candidate[checkId(blockId)];
    }

    @Override
    public int size() {
        return size;
    }
}

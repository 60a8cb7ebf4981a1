package io.tierkv.core.pool;

/**
 * Hands out dense slot indices {@code [0, capacity)} of one tier from a hierarchy of free bits:
 * one of the last {@value #RECENT} slots freed, most recent first, else the lowest free slot.
 *
 * <pre>
 * level 0: bit s set      = slot s is free                        capacity bits
 * level k: bit w set      = word w of level k-1 has a free bit    one bit per word below
 * top:     one word
 * </pre>
 *
 * <p>Allocation walks down from the top word (the lowest set bit at each level: one
 * {@link Long#numberOfTrailingZeros} per level, four levels for 10^7 slots), clearing bits upward
 * only where a word empties; a free sets the slot's bit and the bits above it where a word stops
 * being empty. Both are O(levels) and allocate nothing on the heap; the allocator takes about 1.02
 * bits per slot (issue 19 part 2: the LIFO stack of ints it replaces took 33). A short stack of
 * the slots freed last keeps what the LIFO stack gave, a slot freed and wanted again soon (a
 * demotion's device slot, taken by the next promotion) handed out again while its memory is still
 * in the CPU's caches; an entry whose slot was taken since (by the lowest-first walk) is skipped.
 * A free of a free slot (double free) throws and changes nothing. Not thread-safe: the owning
 * tier serialises calls.
 *
 * <p>Source: the tree of 64-bit groups in jemalloc's {@code bitmap.c} ({@code bitmap_sfu}: set
 * the first unset bit), here with set meaning free.
 */
public final class SlotAllocator {

    /** Slots freed last that are handed out first (a power of two). */
    static final int RECENT = 16;

    private final int capacity;
    /** {@code levels[0]} is one bit per slot; {@code levels[levels.length - 1]} is one word. */
    private final long[][] levels;
    /** {@code levels[0]}: one bit per slot, set when free. */
    private final long[] free0;
    /** The last {@link #RECENT} slots freed, a ring; {@code recentTop} is the newest. */
    private final int[] recent = new int[RECENT];
    private int recentTop;
    private int recentCount;
    private int freeCount;

    /**
     * Creates an allocator with every slot free.
     *
     * @param capacity number of slots, at least 1
     * @throws IllegalArgumentException if capacity is below 1
     */
    public SlotAllocator(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity: " + capacity + " (expected >= 1)");
        }
        this.capacity = capacity;
        int depth = 1;
        for (long bits = capacity; bits > 64; bits = (bits + 63) >>> 6) {
            depth++;
        }
        this.levels = new long[depth][];
        long bits = capacity;
        for (int k = 0; k < depth; k++) {
            long[] words = new long[(int) ((bits + 63) >>> 6)];
            for (long b = 0; b < bits; b += 64) {
                long n = Math.min(64, bits - b);
                words[(int) (b >>> 6)] = n == 64 ? -1L : (1L << n) - 1;
            }
            levels[k] = words;
            bits = words.length;
        }
        this.free0 = levels[0];
        this.freeCount = capacity;
    }

    /**
     * Takes a free slot: the newest of the 16 freed last that is still free, else the lowest.
     *
     * @return a slot index in [0, capacity), or -1 when none is free
     */
    public int allocate() {
        if (freeCount == 0) {
            return -1;
        }
        while (recentCount > 0) {
            int slot = recent[recentTop];
            recentTop = (recentTop - 1) & (RECENT - 1);
            recentCount--;
            if (!isAllocated(slot)) {
                take(slot);
                return slot;
            }
        }
        long[][] lv = levels;
        int w = 0;
        for (int k = lv.length - 1; k > 0; k--) {
            w = (w << 6) + Long.numberOfTrailingZeros(lv[k][w]);
        }
        int slot = (w << 6) + Long.numberOfTrailingZeros(free0[w]);
        take(slot);
        return slot;
    }

    /** Marks a free slot allocated. */
    private void take(int slot) {
        int w = slot >>> 6;
        long word = free0[w] & ~(1L << slot);
        free0[w] = word;
        if (word == 0) {
            long[][] lv = levels;
            for (int k = 1; k < lv.length; k++) { // clear the bit above wherever a word empties
                int up = w >>> 6;
                lv[k][up] &= ~(1L << w);
                if (lv[k][up] != 0) {
                    break;
                }
                w = up;
            }
        }
        freeCount--;
    }

    /**
     * Returns a slot.
     *
     * @param slot an allocated slot
     * @throws IndexOutOfBoundsException if slot is outside [0, capacity)
     * @throws IllegalStateException     if slot is already free (double free); nothing changes
     */
    public void free(int slot) {
        if (slot < 0 || slot >= capacity) {
            throw new IndexOutOfBoundsException("slot: " + slot + " (expected 0 <= slot < " + capacity + ")");
        }
        int w = slot >>> 6;
        long word = free0[w];
        long bit = 1L << slot;
        if ((word & bit) != 0) {
            throw new IllegalStateException("slot " + slot + " freed twice (it is already free)");
        }
        free0[w] = word | bit;
        if (word == 0) {
            long[][] lv = levels;
            for (int k = 1; k < lv.length; k++) { // set the bit above wherever a word was empty
                int up = w >>> 6;
                long above = lv[k][up];
                lv[k][up] = above | 1L << w;
                if (above != 0) {
                    break;
                }
                w = up;
            }
        }
        freeCount++;
        recentTop = (recentTop + 1) & (RECENT - 1);
        recent[recentTop] = slot;
        recentCount = Math.min(RECENT, recentCount + 1);
    }

    /**
     * Tells whether a slot is allocated.
     *
     * @param slot slot index in [0, capacity)
     * @return whether the slot is currently allocated
     */
    public boolean isAllocated(int slot) {
        return (free0[slot >>> 6] & (1L << slot)) == 0;
    }

    /** {@return slots currently free} */
    public int freeCount() {
        return freeCount;
    }

    /** {@return slots currently allocated} */
    public int usedCount() {
        return capacity - freeCount;
    }

    /** {@return total slots} */
    public int capacity() {
        return capacity;
    }

    /**
     * Checks that the free bits count {@link #freeCount()}, no bit is set past the capacity, and
     * every upper bit says exactly whether its word below has a free bit.
     *
     * @return an empty string when consistent, else a description of the first problem
     */
    public String check() {
        long free = 0;
        for (long w : levels[0]) {
            free += Long.bitCount(w);
        }
        if (free != freeCount) {
            return "free bits " + free + " != free count " + freeCount;
        }
        for (int k = 0; k < levels.length; k++) {
            long bits = k == 0 ? capacity : levels[k - 1].length;
            int tail = (int) (bits & 63);
            if (tail != 0 && (levels[k][levels[k].length - 1] >>> tail) != 0) {
                return "level " + k + " has a bit set past its " + bits + " bits";
            }
        }
        for (int k = 1; k < levels.length; k++) {
            long[] below = levels[k - 1];
            for (int w = 0; w < below.length; w++) {
                boolean marked = (levels[k][w >>> 6] & (1L << w)) != 0;
                if (marked != (below[w] != 0)) {
                    return "level " + k + " bit " + w + " is " + marked + " but word " + w + " below is " + below[w];
                }
            }
        }
        return "";
    }
}

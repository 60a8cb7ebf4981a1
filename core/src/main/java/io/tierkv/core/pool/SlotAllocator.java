package io.tierkv.core.pool;

/**
 * Hands out dense slot indices {@code [0, capacity)} of one tier from a LIFO free stack.
 *
 * <p>LIFO keeps recently freed (cache-warm) slots in use. Allocation and free are O(1) and
 * allocate nothing on the heap. A bit per slot catches a double free, which throws and changes
 * nothing. Not thread-safe: the owning tier serialises calls.
 */
public final class SlotAllocator {

    private final int capacity;
    private final int[] freeStack;
    private final long[] allocatedBits;
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
        this.freeStack = new int[capacity];
        this.allocatedBits = new long[(capacity + 63) >>> 6];
        for (int i = 0; i < capacity; i++) {
            freeStack[i] = capacity - 1 - i; // slot 0 is handed out first
        }
        this.freeCount = capacity;
    }

    /**
     * Takes a free slot.
     *
     * @return a slot index in [0, capacity), or -1 when none is free
     */
    public int allocate() {
        if (freeCount == 0) {
            return -1;
        }
        int slot = freeStack[--freeCount];
        allocatedBits[slot >>> 6] |= 1L << slot;
        return slot;
    }

    /**
     * Returns a slot to the free stack.
     *
     * @param slot an allocated slot
     * @throws IndexOutOfBoundsException if slot is outside [0, capacity)
     * @throws IllegalStateException     if slot is already free (double free); nothing changes
     */
    public void free(int slot) {
        if (slot < 0 || slot >= capacity) {
            throw new IndexOutOfBoundsException("slot: " + slot + " (expected 0 <= slot < " + capacity + ")");
        }
        long bit = 1L << slot;
        if ((allocatedBits[slot >>> 6] & bit) == 0) {
            throw new IllegalStateException("slot " + slot + " freed twice (it is already free)");
        }
        allocatedBits[slot >>> 6] &= ~bit;
        freeStack[freeCount++] = slot;
    }

    /**
     * Tells whether a slot is allocated.
     *
     * @param slot slot index in [0, capacity)
     * @return whether the slot is currently allocated
     */
    public boolean isAllocated(int slot) {
        return (allocatedBits[slot >>> 6] & (1L << slot)) != 0;
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
     * Checks that the free stack holds no slot twice and agrees with the allocated bits.
     *
     * @return an empty string when consistent, else a description of the first problem
     */
    public String check() {
        long[] seen = new long[allocatedBits.length];
        for (int i = 0; i < freeCount; i++) {
            int s = freeStack[i];
            if ((seen[s >>> 6] & (1L << s)) != 0) {
                return "slot " + s + " twice in the free stack";
            }
            seen[s >>> 6] |= 1L << s;
            if (isAllocated(s)) {
                return "slot " + s + " in the free stack but marked allocated";
            }
        }
        int allocated = 0;
        for (long w : allocatedBits) {
            allocated += Long.bitCount(w);
        }
        return allocated + freeCount == capacity ? ""
                : "allocated " + allocated + " + free " + freeCount + " != capacity " + capacity;
    }
}

package io.tierkv.tiers;

/**
 * A count per 128-bit block hash, in primitive arrays: an open-addressing table with linear
 * probing and backward-shift deletion (Knuth, TAOCP vol. 3, 6.4, algorithm R), so it keeps no
 * tombstones and allocates only when it grows (doubling at 1/2 full). A count of 0 is an absent
 * hash. The event thread's fold of host copies ({@link KvEventQueue}).
 *
 * <p>Not thread-safe.
 */
final class HashCounts {

    private long[] hi;
    private long[] lo;
    private int[] counts;
    private int mask;
    private int size;

    /** Creates an empty table. */
    HashCounts() {
        allocate(64);
    }

    private void allocate(int slots) {
        hi = new long[slots];
        lo = new long[slots];
        counts = new int[slots];
        mask = slots - 1;
    }

    private int home(long h, long l) {
        long x = (h ^ Long.rotateLeft(l, 32)) * 0x9E3779B97F4A7C15L; // Fibonacci hashing
        return (int) (x >>> 32) & mask;
    }

    /** {@return the slot of the hash, or the empty slot where it would go} */
    private int find(long h, long l) {
        int i = home(h, l);
        while (counts[i] != 0 && (hi[i] != h || lo[i] != l)) {
            i = (i + 1) & mask;
        }
        return i;
    }

    /** {@return the hashes with a count} */
    int size() {
        return size;
    }

    /**
     * {@return the hash's count, 0 if absent}
     *
     * @param h the hash's high bits
     * @param l the hash's low bits
     */
    int get(long h, long l) {
        return counts[find(h, l)];
    }

    /**
     * Adds 1 to the hash's count.
     *
     * @param h the hash's high bits
     * @param l the hash's low bits
     * @return the new count
     */
    int increment(long h, long l) {
        int i = find(h, l);
        if (counts[i] == 0) {
            if (2 * (size + 1) > counts.length) {
                grow();
                i = find(h, l);
            }
            hi[i] = h;
            lo[i] = l;
            size++;
        }
        return ++counts[i];
    }

    /**
     * Takes 1 from the hash's count; a count that reaches 0 removes the hash.
     *
     * @param h the hash's high bits
     * @param l the hash's low bits
     * @return the new count; 0 also if the hash was absent
     */
    int decrement(long h, long l) {
        int i = find(h, l);
        if (counts[i] == 0) {
            return 0;
        }
        if (--counts[i] == 0) {
            size--;
            shiftBack(i);
            return 0;
        }
        return counts[i];
    }

    /** Removes every hash. */
    void clear() {
        java.util.Arrays.fill(counts, 0);
        size = 0;
    }

    /** Closes the gap at slot {@code gap} by moving later entries of its probe run back. */
    private void shiftBack(int gap) {
        int i = gap;
        for (;;) {
            i = (i + 1) & mask;
            if (counts[i] == 0) {
                return;
            }
            int home = home(hi[i], lo[i]);
            // Entry i may move to the gap only if its home is not in (gap, i] cyclically.
            boolean stays = gap <= i ? gap < home && home <= i : gap < home || home <= i;
            if (!stays) {
                hi[gap] = hi[i];
                lo[gap] = lo[i];
                counts[gap] = counts[i];
                counts[i] = 0;
                gap = i;
            }
        }
    }

    private void grow() {
        long[] oldHi = hi;
        long[] oldLo = lo;
        int[] oldCounts = counts;
        allocate(oldCounts.length * 2);
        for (int j = 0; j < oldCounts.length; j++) {
            if (oldCounts[j] != 0) {
                int i = find(oldHi[j], oldLo[j]);
                hi[i] = oldHi[j];
                lo[i] = oldLo[j];
                counts[i] = oldCounts[j];
            }
        }
    }
}

package io.tierkv.tiers.disk.store;

/**
 * The disk admission filter: admits a key the second time it is offered. A "doorkeeper" Bloom
 * filter (three probes into a bit set sized at 16 bits per expected key) remembers first sightings
 * and is cleared once it has recorded as many keys as it was sized for, so its memory is bounded
 * and old sightings age out.
 *
 * <p>False positives (about 0.5% at the reset point) admit a first sighting early; a reset makes
 * a key that was seen once before it count as new. Both only change how soon a block is written,
 * never which bytes. Not thread-safe: used under the disk tier's lock.
 */
final class AdmissionFilter {

    private final long[] bits;
    private final int mask;
    private final int resetAfter;
    private int recorded;

    /**
     * Creates an empty filter.
     *
     * @param expectedKeys distinct keys to remember between resets, {@code >= 1}
     */
    AdmissionFilter(long expectedKeys) {
        long wantBits = Math.max(1L << 12, Math.min(1L << 30, 16 * Math.max(1, expectedKeys)));
        int size = (int) Long.highestOneBit(wantBits * 2 - 1); // next power of two, at most 2^30
        bits = new long[size >>> 6];
        mask = size - 1;
        resetAfter = size / 16;
    }

    /** {@return heap bytes of the filter's bit array} */
    long heapBytes() {
        return RecordIndex.arrayBytes(bits.length, Long.BYTES);
    }

    /**
     * Offers a key.
     *
     * @param hi block hash, high 64 bits
     * @param lo block hash, low 64 bits
     * @return true if it was (probably) seen before and may be stored; false on a first sighting,
     *     which is now remembered
     */
    boolean admit(long hi, long lo) {
        long h = hi * 0x9E3779B97F4A7C15L + lo;
        h ^= h >>> 31;
        h *= 0xBF58476D1CE4E5B9L;
        int a = (int) h;
        int b = (int) (h >>> 32) | 1;
        boolean seen = true;
        for (int i = 0; i < 3; i++) {
            int bit = (a + i * b) & mask;
            long word = bits[bit >>> 6];
            long m = 1L << bit;
            if ((word & m) == 0) {
                seen = false;
                bits[bit >>> 6] = word | m;
            }
        }
        if (seen) {
            return true;
        }
        if (++recorded >= resetAfter) {
            java.util.Arrays.fill(bits, 0L);
            recorded = 0;
        }
        return false;
    }
}

package io.tierkv.tiers.disk;

import java.util.Arrays;

/**
 * The disk tier's in-memory index: block hash (hi, lo) to a record slot, and per slot the record's
 * segment, offset and length, threaded on an intrusive doubly-linked LRU list. Everything lives in
 * primitive arrays indexed by a dense slot number (no object per record); the hash table is open
 * addressing with linear probing and backward-shift deletion, kept at most half full.
 *
 * <p>Not thread-safe: the disk tier uses it under its lock. Slots are reused through a free list
 * threaded on {@link #next}.
 */
final class RecordIndex {

    /** No slot. */
    static final int NONE = -1;

    /** Block hash, high 64 bits, per slot. */
    long[] hashHi;
    /** Block hash, low 64 bits, per slot. */
    long[] hashLo;
    /** Segment slot (index into the tier's segment table). */
    int[] segment;
    /** Offset of the record in its segment (segments are at most 1 GiB). */
    int[] offset;
    /** Record length on disk, header to padding. */
    int[] length;
    private int[] prev;
    private int[] next;

    private int[] table;
    private int tableMask;
    private int size;
    private int freeHead = NONE;
    private int highWater;
    /** Least recently used end. */
    private int lruHead = NONE;
    /** Most recently used end. */
    private int lruTail = NONE;

    /**
     * Creates an empty index.
     *
     * @param initialCapacity records before the first growth
     */
    RecordIndex(int initialCapacity) {
        int capacity = Math.max(16, initialCapacity);
        hashHi = new long[capacity];
        hashLo = new long[capacity];
        segment = new int[capacity];
        offset = new int[capacity];
        length = new int[capacity];
        prev = new int[capacity];
        next = new int[capacity];
        int tableSize = Integer.highestOneBit(capacity * 2 - 1) << 1;
        table = new int[tableSize];
        tableMask = tableSize - 1;
    }

    /**
     * Records indexed.
     *
     * @return the count
     */
    int size() {
        return size;
    }

    /**
     * Number of slots ever handed out; valid slots are below this.
     *
     * @return the limit
     */
    int slotLimit() {
        return highWater;
    }

    /**
     * Whether {@code slot} holds a record (and is not on the free list).
     *
     * @param slot any int
     * @return true for a live slot
     */
    boolean isLive(int slot) {
        return slot >= 0 && slot < highWater && segment[slot] >= 0;
    }

    private static int mix(long hi, long lo) {
        long h = hi * 0x9E3779B97F4A7C15L ^ lo;
        h ^= h >>> 32;
        h *= 0xD6E8FEB86659FD93L;
        return (int) (h ^ (h >>> 29));
    }

    /**
     * Looks a key up.
     *
     * @param hi block hash, high 64 bits
     * @param lo block hash, low 64 bits
     * @return the slot holding the key, or {@link #NONE}
     */
    int find(long hi, long lo) {
        int i = mix(hi, lo) & tableMask;
        while (true) {
            int entry = table[i];
            if (entry == 0) {
                return NONE;
            }
            int slot = entry - 1;
            if (hashHi[slot] == hi && hashLo[slot] == lo) {
                return slot;
            }
            i = (i + 1) & tableMask;
        }
    }

    /**
     * Adds a key that is not present, as most recently used.
     *
     * @param hi           block hash, high 64 bits
     * @param lo           block hash, low 64 bits
     * @param segmentSlot  the segment's index in the tier's table
     * @param recordOffset the record's offset in the segment
     * @param recordLength the record's length
     * @return its slot
     */
    int insert(long hi, long lo, int segmentSlot, long recordOffset, long recordLength) {
        if ((size + 1) * 2 > table.length) {
            rehash(table.length * 2);
        }
        int slot = freeHead;
        if (slot != NONE) {
            freeHead = next[slot];
        } else {
            if (highWater == hashHi.length) {
                grow(hashHi.length * 2);
            }
            slot = highWater++;
        }
        hashHi[slot] = hi;
        hashLo[slot] = lo;
        segment[slot] = segmentSlot;
        offset[slot] = Math.toIntExact(recordOffset);
        length[slot] = Math.toIntExact(recordLength);
        int i = mix(hi, lo) & tableMask;
        while (table[i] != 0) {
            i = (i + 1) & tableMask;
        }
        table[i] = slot + 1;
        size++;
        linkTail(slot);
        return slot;
    }

    /**
     * Removes a live slot from the table and the LRU list and frees it.
     *
     * @param slot a live slot
     */
    void remove(int slot) {
        int i = mix(hashHi[slot], hashLo[slot]) & tableMask;
        while (table[i] != slot + 1) {
            i = (i + 1) & tableMask;
        }
        // backward-shift deletion keeps every probe chain unbroken
        int hole = i;
        int j = (i + 1) & tableMask;
        while (table[j] != 0) {
            int s = table[j] - 1;
            int home = mix(hashHi[s], hashLo[s]) & tableMask;
            boolean movable = hole <= j ? (home <= hole || home > j) : (home <= hole && home > j);
            if (movable) {
                table[hole] = table[j];
                hole = j;
            }
            j = (j + 1) & tableMask;
        }
        table[hole] = 0;
        unlink(slot);
        segment[slot] = NONE;
        next[slot] = freeHead;
        freeHead = slot;
        size--;
    }

    /**
     * Marks a slot most recently used.
     *
     * @param slot a live slot
     */
    void touch(int slot) {
        if (lruTail != slot) {
            unlink(slot);
            linkTail(slot);
        }
    }

    /**
     * The least recently used record.
     *
     * @return its slot, or {@link #NONE} when empty
     */
    int leastRecent() {
        return lruHead;
    }

    /**
     * The next record towards the most recently used.
     *
     * @param slot a live slot
     * @return the slot used after {@code slot}, or {@link #NONE}
     */
    int newerThan(int slot) {
        return next[slot];
    }

    private void linkTail(int slot) {
        prev[slot] = lruTail;
        next[slot] = NONE;
        if (lruTail == NONE) {
            lruHead = slot;
        } else {
            next[lruTail] = slot;
        }
        lruTail = slot;
    }

    private void unlink(int slot) {
        int p = prev[slot];
        int n = next[slot];
        if (p == NONE) {
            lruHead = n;
        } else {
            next[p] = n;
        }
        if (n == NONE) {
            lruTail = p;
        } else {
            prev[n] = p;
        }
    }

    private void grow(int capacity) {
        hashHi = Arrays.copyOf(hashHi, capacity);
        hashLo = Arrays.copyOf(hashLo, capacity);
        segment = Arrays.copyOf(segment, capacity);
        offset = Arrays.copyOf(offset, capacity);
        length = Arrays.copyOf(length, capacity);
        prev = Arrays.copyOf(prev, capacity);
        next = Arrays.copyOf(next, capacity);
    }

    private void rehash(int tableSize) {
        table = new int[tableSize];
        tableMask = tableSize - 1;
        for (int slot = lruHead; slot != NONE; slot = next[slot]) {
            int i = mix(hashHi[slot], hashLo[slot]) & tableMask;
            while (table[i] != 0) {
                i = (i + 1) & tableMask;
            }
            table[i] = slot + 1;
        }
    }

    /**
     * Counts LRU list entries and checks the table agrees with it.
     *
     * @return a description of the first inconsistency, or null
     */
    String check() {
        int count = 0;
        int last = NONE;
        for (int slot = lruHead; slot != NONE; slot = next[slot]) {
            if (prev[slot] != last) {
                return "lru prev link of slot " + slot + " is " + prev[slot] + " (expected " + last + ")";
            }
            if (find(hashHi[slot], hashLo[slot]) != slot) {
                return "slot " + slot + " is on the LRU list but not found under its hash";
            }
            if (++count > size) {
                return "LRU list longer than size " + size;
            }
            last = slot;
        }
        if (last != lruTail) {
            return "lru tail " + lruTail + " (expected " + last + ")";
        }
        int inTable = 0;
        for (int e : table) {
            if (e != 0) {
                inTable++;
            }
        }
        if (count != size || inTable != size) {
            return "size " + size + " but LRU list holds " + count + " and table " + inTable;
        }
        return null;
    }
}

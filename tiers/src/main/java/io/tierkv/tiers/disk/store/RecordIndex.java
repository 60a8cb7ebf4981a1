package io.tierkv.tiers.disk.store;

import io.tierkv.core.event.KvEventSink;
import io.tierkv.core.event.KvMedium;

import java.util.Arrays;

/**
 * The disk tier's in-memory index: block hash (hi, lo) to a record slot, and per slot the record's
 * segment, offset, length, serial and pin count, threaded on one of two intrusive doubly-linked lists: the
 * LRU list (unpinned records, the only eviction candidates) or the pinned list (records with a pin
 * count above zero, in no particular order). Everything lives in primitive arrays indexed by a
 * dense slot number (no object per record); the hash table is open addressing with linear probing
 * and backward-shift deletion, kept at most half full.
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
    /**
     * The record's serial: unique among every record this index has held (never reused, kept when
     * compaction moves the record), so a pin names one record, not whichever record holds its key
     * later. Above zero.
     */
    long[] serial;
    /** Pins held on the record; above zero it is on the pinned list and never evicted. */
    private int[] pins;
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
    /** First record of the pinned list. */
    private int pinHead = NONE;
    private int pinnedCount;
    private long lastSerial;

    /**
     * Told when a record becomes findable (indexed) or stops being so ({@link KvMedium#DISK}), by
     * the callers of {@link #insert} and {@link #remove} that know the record's identity; guarded by
     * the tier's lock.
     */
    KvEventSink events = KvEventSink.NONE;

    /**
     * The most records a tier's index is first sized for, however large its budget: 4,096 (about
     * 200 KiB of arrays). It doubles as records arrive (recovery's included), so a large initial
     * size only costs: {@code 1 << 16} took 2.0-2.3 ms of every open of a persistent tier
     * (several arrays of half a MiB allocated and zeroed), a fifth of a cold restart of 1e4
     * records of 4 KiB blocks (BENCHMARKS.md, issue 19).
     */
    static final int INITIAL_CAPACITY = 1 << 12;

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
        serial = new long[capacity];
        pins = new int[capacity];
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
     * Records with at least one pin.
     *
     * @return the count
     */
    int pinnedCount() {
        return pinnedCount;
    }

    /**
     * Pins held on a record.
     *
     * @param slot a live slot
     * @return its pin count, {@code >= 0}
     */
    int pins(int slot) {
        return pins[slot];
    }

    /**
     * Adds a pin to a record; its first pin moves it off the LRU list, so it is no eviction
     * candidate until its last pin goes.
     *
     * @param slot a live slot
     * @return true if this was its first pin
     */
    boolean pin(int slot) {
        if (pins[slot]++ > 0) {
            return false;
        }
        unlink(slot);
        linkPinned(slot);
        pinnedCount++;
        return true;
    }

    /**
     * Drops a pin from a record; its last pin puts it back on the LRU list as most recently used.
     *
     * @param slot a live slot with at least one pin
     * @return true if this was its last pin
     * @throws IllegalStateException if the record holds no pin
     */
    boolean unpin(int slot) {
        if (pins[slot] <= 0) {
            throw new IllegalStateException("record slot " + slot + " unpinned at pin count " + pins[slot]);
        }
        if (--pins[slot] > 0) {
            return false;
        }
        unlinkPinned(slot);
        pinnedCount--;
        linkTail(slot);
        return true;
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
     * Adds a key that is not present, as most recently used, under a new serial.
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
        serial[slot] = ++lastSerial;
        pins[slot] = 0;
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
     * Removes a live slot, pinned or not, from the table and its list and frees it.
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
        if (pins[slot] > 0) {
            unlinkPinned(slot);
            pinnedCount--;
            pins[slot] = 0;
        } else {
            unlink(slot);
        }
        segment[slot] = NONE;
        next[slot] = freeHead;
        freeHead = slot;
        size--;
    }

    /**
     * Marks a slot most recently used; a pinned slot is not on the LRU list and stays where it is.
     *
     * @param slot a live slot
     */
    void touch(int slot) {
        if (lruTail != slot && pins[slot] == 0) {
            unlink(slot);
            linkTail(slot);
        }
    }

    /**
     * The least recently used unpinned record: the next eviction victim.
     *
     * @return its slot, or {@link #NONE} when every record is pinned or there is none
     */
    int leastRecent() {
        return lruHead;
    }

    /**
     * The first record in visiting order: unpinned records from least to most recently used, then
     * the pinned ones.
     *
     * @return its slot, or {@link #NONE} when empty
     */
    int first() {
        return lruHead != NONE ? lruHead : pinHead;
    }

    /**
     * The record after {@code slot} in visiting order ({@link #first()}).
     *
     * @param slot a live slot
     * @return the next slot, or {@link #NONE}
     */
    int after(int slot) {
        int n = next[slot];
        return n == NONE && pins[slot] == 0 ? pinHead : n;
    }

    private void linkPinned(int slot) {
        prev[slot] = NONE;
        next[slot] = pinHead;
        if (pinHead != NONE) {
            prev[pinHead] = slot;
        }
        pinHead = slot;
    }

    private void unlinkPinned(int slot) {
        int p = prev[slot];
        int n = next[slot];
        if (p == NONE) {
            pinHead = n;
        } else {
            next[p] = n;
        }
        if (n != NONE) {
            prev[n] = p;
        }
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
        serial = Arrays.copyOf(serial, capacity);
        pins = Arrays.copyOf(pins, capacity);
        prev = Arrays.copyOf(prev, capacity);
        next = Arrays.copyOf(next, capacity);
    }

    private void rehash(int tableSize) {
        table = new int[tableSize];
        tableMask = tableSize - 1;
        for (int slot = first(); slot != NONE; slot = after(slot)) {
            int i = mix(hashHi[slot], hashLo[slot]) & tableMask;
            while (table[i] != 0) {
                i = (i + 1) & tableMask;
            }
            table[i] = slot + 1;
        }
    }

    /**
     * Counts the entries of both lists and checks the table agrees with them: LRU entries hold no
     * pin, pinned entries at least one.
     *
     * @return a description of the first inconsistency, or null
     */
    String check() {
        int count = 0;
        int last = NONE;
        for (int slot = lruHead; slot != NONE; slot = next[slot]) {
            String problem = checkEntry(slot, last, false, count);
            if (problem != null) {
                return problem;
            }
            count++;
            last = slot;
        }
        if (last != lruTail) {
            return "lru tail " + lruTail + " (expected " + last + ")";
        }
        int pinned = 0;
        last = NONE;
        for (int slot = pinHead; slot != NONE; slot = next[slot]) {
            String problem = checkEntry(slot, last, true, count + pinned);
            if (problem != null) {
                return problem;
            }
            pinned++;
            last = slot;
        }
        if (pinned != pinnedCount) {
            return "pinnedCount " + pinnedCount + " but the pinned list holds " + pinned;
        }
        int inTable = 0;
        for (int e : table) {
            if (e != 0) {
                inTable++;
            }
        }
        if (count + pinned != size || inTable != size) {
            return "size " + size + " but LRU list holds " + count + ", pinned list " + pinned + " and table "
                    + inTable;
        }
        return null;
    }

    private String checkEntry(int slot, int last, boolean pinnedList, int seen) {
        String list = pinnedList ? "pinned" : "lru";
        if (prev[slot] != last) {
            return list + " prev link of slot " + slot + " is " + prev[slot] + " (expected " + last + ")";
        }
        if (find(hashHi[slot], hashLo[slot]) != slot) {
            return "slot " + slot + " is on the " + list + " list but not found under its hash";
        }
        if ((pins[slot] > 0) != pinnedList) {
            return "slot " + slot + " on the " + list + " list holds " + pins[slot] + " pins";
        }
        if (seen >= size) {
            return "lists longer than size " + size;
        }
        return null;
    }
}

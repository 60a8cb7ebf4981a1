package io.tierkv.tiers.disk.store;

import io.tierkv.core.event.KvEventSink;
import io.tierkv.core.event.KvMedium;

import java.util.Arrays;

/**
 * The disk tier's in-memory index: block hash (hi, lo) to a record slot, and per slot the record's
 * segment, offset and length, threaded on the LRU list (unpinned records, the only eviction
 * candidates) unless it is pinned. Everything lives in primitive arrays indexed by a dense slot
 * number (no object per record); the hash table is open addressing with linear probing and
 * backward-shift deletion, kept at most half full.
 *
 * <p>Heap per record, the reason for the layout (issue 19: at most 64 B per disk record): 36 B
 * per slot (two {@code long} hash halves, five {@code int}s: segment, offset, length and the two
 * links) and 8 to 16 B of table (4 B per table entry, 2 to 4 entries per record). Two phases:
 * <ul>
 *   <li><b>Loading</b> (recovery, from construction to {@link #finishLoading}): arrays and table
 *       double, since growing by a quarter copies every record about four times over, and a warm
 *       recovery of 1e6 records took 0.47-0.54 s that way against 0.28-0.36 s doubling
 *       (BENCHMARKS.md). {@link #finishLoading} then cuts slot arrays more than a fifth unused to
 *       the slots used and the table to at most three entries per record: 44 to 57 B per
 *       record.</li>
 *   <li><b>Running</b>: slot arrays grow by a quarter ({@link #grownLength}), so at most a
 *       fifth of them is unused; the table is rebuilt half as large again (each rebuild
 *       reinserts every key, so it grows faster than the slots), at any length ({@link #home}: no
 *       rounding to a power of two): 44 to 57 B per record, at any count.</li>
 * </ul>
 * State that only pinned records need (pin count and serial) lives in three dense side arrays
 * with an entry per pinned record, not in one per slot: a pinned record's {@link #prev} holds
 * {@link #PINNED} and its {@link #next} its entry there.
 *
 * <p>Not thread-safe: the disk tier uses it under its lock. Slots are reused through a free list
 * threaded on {@link #next}.
 */
final class RecordIndex {

    /** No slot. */
    static final int NONE = -1;

    /** A pinned record's {@link #prev}: it is on no list, and its {@link #next} is its pinned entry. */
    private static final int PINNED = -2;

    /** The fewest slots (and pinned entries) an array holds. */
    private static final int MIN_CAPACITY = 16;

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
    /** LRU predecessor, {@link #NONE} at the head, or {@link #PINNED}. */
    private int[] prev;
    /** LRU successor ({@link #NONE} at the tail), a pinned record's entry, or the next free slot. */
    private int[] next;

    /** Per pinned entry (dense, below {@link #pinnedCount}): its slot. */
    private int[] pinnedSlot;
    /** Per pinned entry: pins held, above zero. */
    private int[] pinCount;
    /**
     * Per pinned entry: the serial of this pinning, given when the record took its first pin and
     * kept (compaction moves included) until its last pin goes: unique among every pinning this
     * index has seen, so a pin names one record, not whichever record holds its key later. Above zero.
     */
    private long[] pinSerial;

    /** Slot + 1 per entry, 0 for empty. */
    private int[] table;
    private int size;
    private int freeHead = NONE;
    private int highWater;
    /** Least recently used end. */
    private int lruHead = NONE;
    /** Most recently used end. */
    private int lruTail = NONE;
    private int pinnedCount;
    private long lastSerial;
    /** Whether the index is still loading (arrays double) rather than running (they grow by a quarter). */
    private boolean loading = true;

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
        int capacity = Math.max(MIN_CAPACITY, initialCapacity);
        hashHi = new long[capacity];
        hashLo = new long[capacity];
        segment = new int[capacity];
        offset = new int[capacity];
        length = new int[capacity];
        prev = new int[capacity];
        next = new int[capacity];
        pinnedSlot = new int[MIN_CAPACITY];
        pinCount = new int[MIN_CAPACITY];
        pinSerial = new long[MIN_CAPACITY];
        table = new int[2 * capacity];
    }

    /**
     * The length an array of {@code length} entries grows to: double while loading; running, a
     * quarter more (at least {@value #MIN_CAPACITY} more) for a slot or pinned array, so a grown
     * one is at least four fifths used, and half as much again for the table.
     *
     * @param length  the current length
     * @param isTable whether it is the hash table
     * @return the larger length
     * @throws IllegalStateException past the largest array
     */
    private int grownLength(int length, boolean isTable) {
        long grown = loading ? 2L * length
                : length + (isTable ? length >> 1 : Math.max(MIN_CAPACITY, length >> 2));
        if (grown > Integer.MAX_VALUE - 8) {
            throw new IllegalStateException("record index: " + length + " entries cannot grow (at most "
                    + (Integer.MAX_VALUE - 8) + ")");
        }
        return (int) grown;
    }

    /** {@return records indexed} */
    int size() {
        return size;
    }

    /** {@return records with at least one pin} */
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
        return prev[slot] == PINNED ? pinCount[next[slot]] : 0;
    }

    /**
     * The serial of a record's pinning: given with its first pin, kept while it holds one.
     *
     * @param slot a live slot
     * @return the serial, {@code > 0}; {@link DiskTier#NO_PIN} if the record holds no pin
     */
    long serial(int slot) {
        return prev[slot] == PINNED ? pinSerial[next[slot]] : DiskTier.NO_PIN;
    }

    /**
     * Adds a pin to a record; its first pin moves it off the LRU list, so it is no eviction
     * candidate until its last pin goes, and gives the pinning a new {@link #serial}.
     *
     * @param slot a live slot
     * @return true if this was its first pin
     */
    boolean pin(int slot) {
        if (prev[slot] == PINNED) {
            pinCount[next[slot]]++;
            return false;
        }
        unlink(slot);
        if (pinnedCount == pinnedSlot.length) {
            resizePinned(grownLength(pinnedCount, false));
        }
        int entry = pinnedCount++;
        pinnedSlot[entry] = slot;
        pinCount[entry] = 1;
        pinSerial[entry] = ++lastSerial;
        prev[slot] = PINNED;
        next[slot] = entry;
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
        if (prev[slot] != PINNED) {
            throw new IllegalStateException("record slot " + slot + " unpinned at pin count 0");
        }
        if (--pinCount[next[slot]] > 0) {
            return false;
        }
        unlinkPinned(slot);
        linkTail(slot);
        return true;
    }

    /** {@return the number of slots ever handed out: valid slots are below it} */
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

    /** A key's home entry in {@code table}: its mixed hash scaled to the table's length (any length). */
    private static int home(long hi, long lo, int[] table) {
        return (int) (((mix(hi, lo) & 0xFFFF_FFFFL) * table.length) >>> 32);
    }

    private int probeNext(int i) {
        return i + 1 == table.length ? 0 : i + 1;
    }

    /**
     * Looks a key up.
     *
     * @param hi block hash, high 64 bits
     * @param lo block hash, low 64 bits
     * @return the slot holding the key, or {@link #NONE}
     */
    int find(long hi, long lo) {
        int i = home(hi, lo, table);
        while (true) {
            int entry = table[i];
            if (entry == 0) {
                return NONE;
            }
            int slot = entry - 1;
            if (hashHi[slot] == hi && hashLo[slot] == lo) {
                return slot;
            }
            i = probeNext(i);
        }
    }

    /**
     * Adds a key that is not present, unpinned, as most recently used.
     *
     * @param hi           block hash, high 64 bits
     * @param lo           block hash, low 64 bits
     * @param segmentSlot  the segment's index in the tier's table
     * @param recordOffset the record's offset in the segment
     * @param recordLength the record's length
     * @return its slot
     */
    int insert(long hi, long lo, int segmentSlot, long recordOffset, long recordLength) {
        if ((size + 1) * 2L > table.length) {
            rehash(grownLength(table.length, true));
        }
        int slot = freeHead;
        if (slot != NONE) {
            freeHead = next[slot];
        } else {
            if (highWater == hashHi.length) {
                resize(grownLength(highWater, false));
            }
            slot = highWater++;
        }
        hashHi[slot] = hi;
        hashLo[slot] = lo;
        segment[slot] = segmentSlot;
        offset[slot] = Math.toIntExact(recordOffset);
        length[slot] = Math.toIntExact(recordLength);
        int i = home(hi, lo, table);
        while (table[i] != 0) {
            i = probeNext(i);
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
        int i = home(hashHi[slot], hashLo[slot], table);
        while (table[i] != slot + 1) {
            i = probeNext(i);
        }
        // backward-shift deletion keeps every probe chain unbroken
        int hole = i;
        int j = probeNext(i);
        while (table[j] != 0) {
            int s = table[j] - 1;
            int home = home(hashHi[s], hashLo[s], table);
            boolean movable = hole <= j ? (home <= hole || home > j) : (home <= hole && home > j);
            if (movable) {
                table[hole] = table[j];
                hole = j;
            }
            j = probeNext(j);
        }
        table[hole] = 0;
        if (prev[slot] == PINNED) {
            unlinkPinned(slot);
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
        if (lruTail != slot && prev[slot] != PINNED) {
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
        return lruHead != NONE ? lruHead : firstPinned();
    }

    /**
     * The record after {@code slot} in visiting order ({@link #first()}).
     *
     * @param slot a live slot
     * @return the next slot, or {@link #NONE}
     */
    int after(int slot) {
        if (prev[slot] == PINNED) {
            int entry = next[slot] + 1;
            return entry < pinnedCount ? pinnedSlot[entry] : NONE;
        }
        int n = next[slot];
        return n == NONE ? firstPinned() : n;
    }

    private int firstPinned() {
        return pinnedCount > 0 ? pinnedSlot[0] : NONE;
    }

    /** Drops a pinned record's entry (the last entry takes its place) and clears its pin state. */
    private void unlinkPinned(int slot) {
        int entry = next[slot];
        int last = --pinnedCount;
        if (entry != last) {
            int moved = pinnedSlot[last];
            pinnedSlot[entry] = moved;
            pinCount[entry] = pinCount[last];
            pinSerial[entry] = pinSerial[last];
            next[moved] = entry;
        }
        prev[slot] = NONE;
        if (pinnedSlot.length > MIN_CAPACITY && pinnedCount < pinnedSlot.length / 4) {
            resizePinned(Math.max(MIN_CAPACITY, pinnedSlot.length / 2));
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

    /**
     * Ends loading: cuts slot arrays more than a fifth unused to the slots handed out (at least
     * {@value #MIN_CAPACITY}; a copy of every slot, spared when the doubling left little unused)
     * and a table longer than three entries per record to that, and from here on grows both
     * gradually (see the class comment). The disk tier calls it once recovery has indexed what it
     * found (nothing, for a tier that starts empty). Idempotent.
     */
    void finishLoading() {
        loading = false;
        int capacity = Math.max(MIN_CAPACITY, highWater);
        if (capacity + (capacity >> 2) < hashHi.length) { // more than a fifth unused, the running bound
            resize(capacity);
        }
        long tableLength = Math.max(2 * MIN_CAPACITY, 3L * (size + 1));
        if (tableLength < table.length) {
            rehash((int) tableLength);
        }
    }

    private void resize(int capacity) {
        hashHi = Arrays.copyOf(hashHi, capacity);
        hashLo = Arrays.copyOf(hashLo, capacity);
        segment = Arrays.copyOf(segment, capacity);
        offset = Arrays.copyOf(offset, capacity);
        length = Arrays.copyOf(length, capacity);
        prev = Arrays.copyOf(prev, capacity);
        next = Arrays.copyOf(next, capacity);
    }

    private void resizePinned(int capacity) {
        pinnedSlot = Arrays.copyOf(pinnedSlot, capacity);
        pinCount = Arrays.copyOf(pinCount, capacity);
        pinSerial = Arrays.copyOf(pinSerial, capacity);
    }

    /** Rebuilds the table at a new length, visiting the live slots in slot order (sequential reads). */
    private void rehash(int tableLength) {
        table = new int[tableLength];
        for (int slot = 0; slot < highWater; slot++) {
            if (segment[slot] >= 0) {
                int i = home(hashHi[slot], hashLo[slot], table);
                while (table[i] != 0) {
                    i = probeNext(i);
                }
                table[i] = slot + 1;
            }
        }
    }

    /** {@return heap bytes of the two hash arrays, unused capacity included} */
    long keyBytes() {
        return 2 * arrayBytes(hashHi.length, Long.BYTES);
    }

    /** {@return heap bytes of the segment, offset and length arrays, unused capacity included} */
    long locationBytes() {
        return 3 * arrayBytes(segment.length, Integer.BYTES);
    }

    /** {@return heap bytes of the two link arrays, unused capacity included} */
    long linkBytes() {
        return 2 * arrayBytes(prev.length, Integer.BYTES);
    }

    /** {@return heap bytes of the pinned entries' arrays (slot, pin count, serial), unused capacity included} */
    long pinnedBytes() {
        return 2 * arrayBytes(pinnedSlot.length, Integer.BYTES) + arrayBytes(pinSerial.length, Long.BYTES);
    }

    /** {@return heap bytes of the hash table, empty entries included} */
    long tableBytes() {
        return arrayBytes(table.length, Integer.BYTES);
    }

    /** {@return heap bytes of every array of this index: the sum of its parts above} */
    long heapBytes() {
        return keyBytes() + locationBytes() + linkBytes() + pinnedBytes() + tableBytes();
    }

    /**
     * Heap bytes of a Java array: a 16-byte header and its elements, rounded up to 8 bytes
     * (compressed class pointers, the default on a 64-bit JVM).
     *
     * @param elements     its length
     * @param elementBytes bytes per element
     * @return bytes
     */
    static long arrayBytes(int elements, int elementBytes) {
        return (16 + (long) elements * elementBytes + 7) & ~7L;
    }

    /**
     * Counts the entries of both lists and checks the table agrees with them: the LRU list holds
     * unpinned records, every pinned entry a pinned record that names it back, with at least one
     * pin and a serial no later than the last one given.
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
            String problem = checkFound(slot, "lru list", count);
            if (problem != null) {
                return problem;
            }
            count++;
            last = slot;
        }
        if (last != lruTail) {
            return "lru tail " + lruTail + " (expected " + last + ")";
        }
        for (int entry = 0; entry < pinnedCount; entry++) {
            int slot = pinnedSlot[entry];
            if (prev[slot] != PINNED || next[slot] != entry) {
                return "pinned entry " + entry + " names slot " + slot + ", whose links are " + prev[slot] + ", "
                        + next[slot] + " (expected " + PINNED + ", " + entry + ")";
            }
            if (pinCount[entry] <= 0 || pinSerial[entry] <= 0 || pinSerial[entry] > lastSerial) {
                return "pinned slot " + slot + " holds " + pinCount[entry] + " pins under serial " + pinSerial[entry]
                        + " (expected > 0 pins, serial in [1, " + lastSerial + "])";
            }
            String problem = checkFound(slot, "pinned entries", count + entry);
            if (problem != null) {
                return problem;
            }
        }
        int inTable = 0;
        for (int e : table) {
            if (e != 0) {
                inTable++;
            }
        }
        if (count + pinnedCount != size || inTable != size) {
            return "size " + size + " but LRU list holds " + count + ", pinned entries " + pinnedCount + " and table "
                    + inTable;
        }
        return null;
    }

    private String checkFound(int slot, String list, int seen) {
        if (find(hashHi[slot], hashLo[slot]) != slot) {
            return "slot " + slot + " is on the " + list + " but not found under its hash";
        }
        if (seen >= size) {
            return "lists longer than size " + size;
        }
        return null;
    }
}

package io.tierkv.core.prefix;

/**
 * Block hash to block id, for prefix matching. An open-addressing table of block ids with linear
 * probing and backward-shift deletion (Knuth, TAOCP vol. 3, 6.4, Algorithm R), so no tombstones
 * accumulate. The 128-bit keys are not copied: they are read from the owner's per-block hash
 * arrays. The table has {@code ceil(5/3 x ids)} entries (no power-of-two rounding, which cost up to
 * twice that: 13.4 B per id at 1e7 ids), so it costs 6.7 bytes per block id and its load factor is
 * at most 0.6 with every id indexed: an unsuccessful lookup expects about 3.6 probes, a successful
 * one 1.75 (Knuth, 6.4, linear probing). A hash picks its home entry by Lemire's multiply-shift
 * range reduction of its mixed high 32 bits ("Fast random integer generation in an interval",
 * ACM TOMACS 2019), and probes wrap at the table's end.
 *
 * <p>One hash maps to at most one block. Not thread-safe: the owner serialises calls.
 */
public final class PrefixIndex {

    private static final int EMPTY = -1;

    private final long[] hashHi;
    private final long[] hashLo;
    private final int[] table;
    private int size;

    /**
     * Creates an index for block ids in {@code [0, hashHi.length)}.
     *
     * @param hashHi per-block hash high words, owned and updated by the caller
     * @param hashLo per-block hash low words, owned and updated by the caller
     */
    public PrefixIndex(long[] hashHi, long[] hashLo) {
        if (hashHi.length != hashLo.length) {
            throw new IllegalArgumentException("hashLo.length: " + hashLo.length + " (expected " + hashHi.length + ")");
        }
        this.hashHi = hashHi;
        this.hashLo = hashLo;
        this.table = new int[tableLength(hashHi.length)];
        java.util.Arrays.fill(table, EMPTY);
    }

    /**
     * Finds the block registered under a hash.
     *
     * @param hi hash high word
     * @param lo hash low word
     * @return the block id, or -1 if none
     */
    public int get(long hi, long lo) {
        for (int i = home(hi, lo); ; i = next(i)) {
            int id = table[i];
            if (id == EMPTY) {
                return -1;
            }
            if (hashHi[id] == hi && hashLo[id] == lo) {
                return id;
            }
        }
    }

    /**
     * Registers a block under the hash currently stored for it in the owner's arrays.
     *
     * @param blockId block id whose hash words are already set
     * @return true if registered, false if another block already holds that hash (nothing changes)
     * @throws IllegalStateException if the table is full (more entries than block ids)
     */
    public boolean put(int blockId) {
        long hi = hashHi[blockId];
        long lo = hashLo[blockId];
        for (int i = home(hi, lo); ; i = next(i)) {
            int id = table[i];
            if (id == EMPTY) {
                if (size >= hashHi.length) {
                    throw new IllegalStateException("prefix index full: " + size + " entries");
                }
                table[i] = blockId;
                size++;
                return true;
            }
            if (hashHi[id] == hi && hashLo[id] == lo) {
                return false;
            }
        }
    }

    /**
     * Removes a block's entry; the block's hash words must still hold the registered hash.
     *
     * @param blockId a registered block id
     * @return true if it was registered and is now removed
     */
    public boolean remove(int blockId) {
        int i = home(hashHi[blockId], hashLo[blockId]);
        while (table[i] != blockId) {
            if (table[i] == EMPTY) {
                return false;
            }
            i = next(i);
        }
        // Backward-shift: pull later entries of the cluster into the hole when their home allows.
        int hole = i;
        for (int j = next(hole); table[j] != EMPTY; j = next(j)) {
            int h = home(hashHi[table[j]], hashLo[table[j]]);
            boolean movable = hole <= j ? (h <= hole || h > j) : (h <= hole && h > j);
            if (movable) {
                table[hole] = table[j];
                hole = j;
            }
        }
        table[hole] = EMPTY;
        size--;
        return true;
    }

    /** {@return registered entries} */
    public int size() {
        return size;
    }

    /**
     * Tells whether this block, not merely its hash, is registered.
     *
     * @param blockId a block id
     * @return whether this block (not merely its hash) is registered
     */
    public boolean containsBlock(int blockId) {
        return get(hashHi[blockId], hashLo[blockId]) == blockId;
    }

    /**
     * {@return the table length for {@code ids} block ids: {@code ceil(5 ids / 3)}, at least 2,
     * so that every id indexed leaves the load factor at most 0.6; capped at the largest array
     * ({@code Integer.MAX_VALUE - 8}), still longer than the ids}
     *
     * @param ids block ids, {@code >= 0}
     */
    static int tableLength(int ids) {
        return (int) Math.min(Integer.MAX_VALUE - 8, Math.max(2, (5L * ids + 2) / 3));
    }

    private int next(int i) {
        return i + 1 == table.length ? 0 : i + 1;
    }

    private int home(long hi, long lo) {
        long h = hi ^ Long.rotateLeft(lo, 29);
        h ^= h >>> 31;
        h *= 0x9e3779b97f4a7c15L;
        return (int) (((h >>> 32) * table.length) >>> 32);
    }
}

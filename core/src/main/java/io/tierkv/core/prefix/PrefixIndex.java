package io.tierkv.core.prefix;

/**
 * Block hash to block id, for prefix matching. An open-addressing table of block ids with linear
 * probing and backward-shift deletion (Knuth, TAOCP vol. 3, 6.4, Algorithm R), so no tombstones
 * accumulate. The 128-bit keys are not copied: they are read from the owner's per-block hash
 * arrays, so the table costs 4 bytes per entry at a load factor of at most 1/2.
 *
 * <p>One hash maps to at most one block. Not thread-safe: the owner serialises calls.
 */
public final class PrefixIndex {

    private static final int EMPTY = -1;

    private final long[] hashHi;
    private final long[] hashLo;
    private final int[] table;
    private final int mask;
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
        int cap = Integer.highestOneBit(Math.max(2, hashHi.length) * 2 - 1) << 1;
        this.table = new int[cap];
        java.util.Arrays.fill(table, EMPTY);
        this.mask = cap - 1;
    }

    /**
     * Finds the block registered under a hash.
     *
     * @param hi hash high word
     * @param lo hash low word
     * @return the block id, or -1 if none
     */
    public int get(long hi, long lo) {
        for (int i = home(hi, lo); ; i = (i + 1) & mask) {
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
        for (int i = home(hi, lo); ; i = (i + 1) & mask) {
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
            i = (i + 1) & mask;
        }
        // Backward-shift: pull later entries of the cluster into the hole when their home allows.
        int hole = i;
        for (int j = (hole + 1) & mask; table[j] != EMPTY; j = (j + 1) & mask) {
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

    private int home(long hi, long lo) {
        long h = hi ^ Long.rotateLeft(lo, 29);
        h ^= h >>> 31;
        h *= 0x9e3779b97f4a7c15L;
        return (int) (h >>> 32) & mask;
    }
}

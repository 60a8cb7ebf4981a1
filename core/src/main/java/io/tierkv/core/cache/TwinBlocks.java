package io.tierkv.core.cache;

/**
 * Sealed blocks left out of the prefix index because another block held their hash when they
 * sealed (twins): the same prompt prefilled by two sequences at once, a block recomputed after a
 * match of all but the prompt's last token, or a hash collision. When the indexed block leaves
 * the index, a twin of its identity takes its place ({@link PrefixLookup#unindex}), so a block
 * that a sequence still holds stays findable after the first copy of it has gone. A twin whose
 * hash merely collides never does: the hash stays free for the first block's record below,
 * which a match finds by hash, and the colliding block serves its own sequences only.
 *
 * <p>An open-addressing multimap of block ids keyed by the owner's per-block hash arrays (as
 * {@link io.tierkv.core.prefix.PrefixIndex}, which holds one block per hash), with linear probing;
 * a deletion empties its entry and inserts the rest of its cluster again, so no probe run is cut
 * short and no tombstone is kept (Knuth, TAOCP vol. 3, 6.4, Algorithm R, keeps the runs whole by
 * moving entries back instead). It starts at {@value #INITIAL_LENGTH} entries and doubles at half
 * full, so it costs memory only for the twins there are. A block's hash words must hold its hash while it is here. Not thread-safe: the
 * cache lock serialises calls.
 */
final class TwinBlocks {

    private static final int EMPTY = -1;
    private static final int INITIAL_LENGTH = 16;

    private final long[] hashHi;
    private final long[] hashLo;
    private int[] table = empty(INITIAL_LENGTH);
    private int size;

    /**
     * @param hashHi per-block hash high words, owned and updated by the caller
     * @param hashLo per-block hash low words, owned and updated by the caller
     */
    TwinBlocks(long[] hashHi, long[] hashLo) {
        this.hashHi = hashHi;
        this.hashLo = hashLo;
    }

    private static int[] empty(int length) {
        int[] t = new int[length];
        java.util.Arrays.fill(t, EMPTY);
        return t;
    }

    /** {@return the twins held} */
    int size() {
        return size;
    }

    /**
     * Adds a block under the hash its words hold.
     *
     * @param blockId a sealed block not in the index, not here yet
     */
    void add(int blockId) {
        if (2 * (size + 1) > table.length) {
            int[] old = table;
            table = empty(2 * old.length);
            for (int id : old) {
                if (id != EMPTY) {
                    insert(id);
                }
            }
        }
        insert(blockId);
        size++;
    }

    private void insert(int blockId) {
        int i = home(hashHi[blockId], hashLo[blockId]);
        while (table[i] != EMPTY) {
            i = next(i);
        }
        table[i] = blockId;
    }

    /**
     * Removes and returns a block of the same identity as {@code blockId} held under its hash:
     * a second copy of it, never a block whose hash merely collides with it.
     *
     * @param blockId    a block whose hash words hold its hash
     * @param identities the blocks' identities
     * @return the block id, or -1 if no such block is held
     */
    int takeCopyOf(int blockId, IdentityTable identities) {
        long hi = hashHi[blockId];
        long lo = hashLo[blockId];
        for (int i = home(hi, lo); table[i] != EMPTY; i = next(i)) {
            int id = table[i];
            if (hashHi[id] == hi && hashLo[id] == lo && identities.same(id, blockId)) {
                removeAt(i);
                return id;
            }
        }
        return -1;
    }

    /**
     * Removes a block.
     *
     * @param blockId a block whose hash words still hold the hash it was added under
     * @return whether it was here
     */
    boolean remove(int blockId) {
        for (int i = home(hashHi[blockId], hashLo[blockId]); table[i] != EMPTY; i = next(i)) {
            if (table[i] == blockId) {
                removeAt(i);
                return true;
            }
        }
        return false;
    }

    /** {@return whether the block is here} */
    boolean contains(int blockId) {
        for (int i = home(hashHi[blockId], hashLo[blockId]); table[i] != EMPTY; i = next(i)) {
            if (table[i] == blockId) {
                return true;
            }
        }
        return false;
    }

    /** Empties entry i and inserts the rest of its cluster again, so no probe run is cut short. */
    private void removeAt(int i) {
        table[i] = EMPTY;
        size--;
        for (int j = next(i); table[j] != EMPTY; j = next(j)) {
            int id = table[j];
            table[j] = EMPTY;
            insert(id);
        }
    }

    private int next(int i) {
        return i + 1 == table.length ? 0 : i + 1;
    }

    private int home(long hi, long lo) {
        long x = (hi ^ Long.rotateLeft(lo, 32)) * 0x9E3779B97F4A7C15L; // Fibonacci hashing
        return (int) (x >>> 32) & (table.length - 1);
    }
}

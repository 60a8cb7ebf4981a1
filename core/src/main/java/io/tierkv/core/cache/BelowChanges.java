package io.tierkv.core.cache;

import java.util.Arrays;

/**
 * What a lower tier let go of since the cache last asked ({@link LowerTier#drainChanges}):
 * a store returns what it evicted instead of calling the cache (DESIGN.md, "Tier stores and the
 * one owner of block state"; the shape of the evicted keys in vLLM's {@code PrepareStoreOutput},
 * {@code vllm/v1/kv_offload/abstract.py}). Each entry is one of:
 *
 * <ul>
 *   <li>a block id with the hash it held when its copy left a tier (a host copy evicted, or one
 *       the cache's own spill let go of): the cache frees the id if it still holds that hash, nothing references it
 *       and its copy is now kept by hash alone (on disk) or nowhere;</li>
 *   <li>a key alone ({@link #NO_BLOCK}): a disk record of that hash went; the cache settles the
 *       block it indexes under the key (its disk copy settled first: {@code DiskCopies#settleIfGone}).</li>
 * </ul>
 *
 * Every entry may be stale by the time the cache reads it (the id freed and reused, the key
 * written again): the cache checks each against what holds under its lock, so a stale entry
 * changes nothing. Growable parallel arrays, reused between drains; not thread-safe: the cache
 * owns one and fills and reads it with its lock held, and a lower tier may keep one of its own,
 * under its own lock, to note changes in until the cache drains them ({@link #moveTo}).
 */
public final class BelowChanges {

    /** {@link #blockId} of an entry that names a key only. */
    public static final int NO_BLOCK = -1;

    private int[] ids = new int[16];
    private long[] his = new long[16];
    private long[] los = new long[16];
    private int size;

    /** Creates an empty list. */
    public BelowChanges() {
    }

    /**
     * Adds an entry.
     *
     * @param blockId the block whose copy left a tier, or {@link #NO_BLOCK} for a key whose disk
     *                record went
     * @param hashHi  the hash it held then, high word
     * @param hashLo  low word
     */
    public void add(int blockId, long hashHi, long hashLo) {
        if (size == ids.length) {
            ids = Arrays.copyOf(ids, size * 2);
            his = Arrays.copyOf(his, size * 2);
            los = Arrays.copyOf(los, size * 2);
        }
        ids[size] = blockId;
        his[size] = hashHi;
        los[size] = hashLo;
        size++;
    }

    /** {@return entries held} */
    public int size() {
        return size;
    }

    /**
     * Adds every entry to {@code out}, in order, and empties this list.
     *
     * @param out the list to add to
     */
    public void moveTo(BelowChanges out) {
        for (int i = 0; i < size; i++) {
            out.add(ids[i], his[i], los[i]);
        }
        size = 0;
    }

    int blockId(int i) {
        return ids[i];
    }

    long hashHi(int i) {
        return his[i];
    }

    long hashLo(int i) {
        return los[i];
    }

    void clear() {
        size = 0;
    }
}

package io.tierkv.core.cache;

import java.lang.foreign.MemorySegment;

/**
 * What lies below the top tier: the hook through which {@link PagedKvCache} demotes sealed blocks
 * and promotes them back. The tier manager in module {@code tiers} implements it over pinned host
 * memory and the disk tier; a single-tier cache has none.
 *
 * <p>Calls arrive without the cache lock held, with the block pinned (in transit): nobody else
 * reads, moves or frees it until the call returns. Implementations are thread-safe.
 */
public interface LowerTier {

    /**
     * Copies a sealed block down and confirms the copy is complete.
     *
     * @param blockId the block
     * @param hashHi  its hash, high word (0 if the block has no hash)
     * @param hashLo  its hash, low word
     * @param tokens  its B token ids (native-order ints)
     * @param source  its bytes in the top tier
     * @return true if a complete copy now exists below; false leaves nothing behind below
     */
    boolean demote(int blockId, long hashHi, long hashLo, MemorySegment tokens, MemorySegment source);

    /**
     * Copies a block's bytes up into a top-tier slot.
     *
     * @param blockId       the block
     * @param destination   the top-tier slot to fill
     * @param deadlineNanos {@link System#nanoTime()} by which to give up
     * @return true if the destination now holds the block's bytes; false if the block was lost
     *         (corrupt, missing, evicted) or timed out, in which case the destination will not
     *         be written after this call returns
     */
    boolean promote(int blockId, MemorySegment destination, long deadlineNanos);

    /**
     * @param blockId a block
     * @return whether a complete copy of the block exists below (so its top slot can be dropped
     *         without a copy)
     */
    boolean hasCopy(int blockId);

    /**
     * Looks up a hash that the top tier's index does not hold (for example a block recovered from
     * disk) and, if found, binds it to a new block id.
     *
     * @param blockId   the fresh id to bind it to
     * @param hashHi    hash, high word
     * @param hashLo    hash, low word
     * @param tokensOut receives the stored B token ids
     * @return true if found and bound
     */
    boolean adopt(int blockId, long hashHi, long hashLo, MemorySegment tokensOut);

    /**
     * Forgets everything held below for a block id (the block was freed or its id reused). Keyed
     * copies that can serve later prefix hits (disk) may be kept by hash.
     *
     * @param blockId the block
     */
    void forget(int blockId);
}

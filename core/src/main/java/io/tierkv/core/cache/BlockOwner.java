package io.tierkv.core.cache;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.locks.ReentrantLock;

/**
 * What the cache, the one owner of every block's state, lends the tiers below it ({@link
 * LowerTier#attach}): its lock, the manager lock, and read-only views of three of its per-block
 * facts (identity, hash, referenced). A tier below keeps its own per-block facts under this same lock, so every fact about a
 * block is read and changed under one lock, and the tier reads the cache's facts instead of
 * keeping copies of them (DESIGN.md, "Tier stores and the one owner of block state").
 *
 * <p>Thread-safety: {@link #lock()} and {@link #identity} may be called from any thread; {@link
 * #hashHi}, {@link #hashLo} and {@link #referenced} only with {@link #lock()} held.
 */
public interface BlockOwner {

    /**
     * {@return the manager lock} A tier below guards its own per-block facts with it. It is
     * reentrant: the cache holds it when it calls {@link LowerTier#pinBelow}, {@link
     * LowerTier#unpinBelow}, {@link LowerTier#forget}, {@link LowerTier#drainChanges} and {@link
     * LowerTier#settleDrop}, and releases it for every call that copies bytes, so a tier that
     * releases it for slow work (a disk write, a wait) releases it entirely.
     */
    ReentrantLock lock();

    /**
     * {@return a view of block {@code blockId}'s {@link io.tierkv.core.prefix.BlockIdentity}} The
     * record is the block's while the tier holds the id: from the move that hands the block down
     * until {@link LowerTier#forget}, because the cache rewrites a record only for an id it has
     * freed. Read it with {@link #lock()} held, or copy it first.
     *
     * @param blockId a block id, {@code 0 <= blockId < maxBlocks}
     */
    MemorySegment identity(int blockId);

    /**
     * {@return the high word of block {@code blockId}'s hash}, 0 for a block sealed without one. The
     * cache's one record of it, set before the block is handed down (a demotion, an adoption) and
     * kept until {@link LowerTier#forget}, as {@link #identity} is: a tier below keeps no copy.
     * Lock held.
     *
     * @param blockId a block id, {@code 0 <= blockId < maxBlocks}
     */
    long hashHi(int blockId);

    /**
     * {@return the low word of block {@code blockId}'s hash}, as {@link #hashHi}. Lock held.
     *
     * @param blockId a block id, {@code 0 <= blockId < maxBlocks}
     */
    long hashLo(int blockId);

    /**
     * {@return whether block {@code blockId} is referenced (sealed, and a table, lease or match
     * holds it)}: the cache then keeps it HELD, and the tier below must not evict any copy it holds
     * of the block (a copy that may be its only one). The cache's one record of this fact; {@link
     * LowerTier#pinBelow} and {@link LowerTier#unpinBelow} announce its changes in the same hold of
     * the lock. Lock held.
     *
     * @param blockId a block id, {@code 0 <= blockId < maxBlocks}
     */
    boolean referenced(int blockId);
}

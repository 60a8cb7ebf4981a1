package io.tierkv.core.cache;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.locks.ReentrantLock;

/**
 * What the cache, the one owner of every block's state, lends the tiers below it ({@link
 * LowerTier#attach}): its lock, the manager lock; read-only views of three of its per-block facts
 * (identity, hash, referenced); and the record of where a block is held below the top tier (its
 * host slot and {@linkplain #belowBits below bits}), which the tier below writes here instead of
 * keeping it itself. Every fact about a block is thus kept once, by the cache, and read and
 * changed under one lock (DESIGN.md, "Tier stores and the one owner of block state"). What a
 * tier keeps of its own is keyed by its own resources: its slots' bytes and policy, and the disk
 * store's holds on its records.
 *
 * <p>Thread-safety: {@link #lock()}, {@link #identity} and {@link #maxBlocks} may be called from
 * any thread; every other method only with {@link #lock()} held.
 */
public interface BlockOwner {

    /** Below bit: the device holds the block too, so its host copy is a clean second copy. */
    byte HOST_CLEAN = 1;
    /** Below bit: a disk record holds the block. */
    byte ON_DISK = 2;
    /** Below bit: a move below (a spill, a promotion, a late copy) reads the block's host slot. */
    byte HOST_MOVING = 4;
    /** Below bit: out of the host policy while it waits in a mover's host-to-disk queue. */
    byte HOST_QUEUED = 8;
    /**
     * Below bit: this id holds one pin on its disk record (referenced, ON_DISK, no host slot). The
     * cache's own: it sets and clears it as it pins and releases records ({@link DiskRecords}), and
     * a tier below leaves it as it is.
     */
    byte DISK_PINNED = 32;

    /** {@return block ids, {@code maxBlocks}: every id-keyed method takes {@code 0 <= blockId < maxBlocks()}} */
    int maxBlocks();

    /**
     * {@return block {@code blockId}'s host slot, or -1 if no host slot holds it} Lock held.
     *
     * @param blockId a block id, {@code 0 <= blockId < maxBlocks}
     */
    int hostSlot(int blockId);

    /**
     * Records the host slot that holds block {@code blockId}, or -1 for none; the tier below calls
     * this as its copy arrives or goes. Lock held. The cache frees an id only after {@link
     * LowerTier#forget}, which leaves it -1.
     *
     * @param blockId  a block id, {@code 0 <= blockId < maxBlocks}
     * @param hostSlot a host slot of the tier below, or -1
     */
    void setHostSlot(int blockId, int hostSlot);

    /**
     * {@return block {@code blockId}'s below bits: {@link #HOST_CLEAN}, {@link #ON_DISK}, {@link
     * #HOST_MOVING}, {@link #HOST_QUEUED}, {@link #DISK_PINNED}; 0 for a block held nowhere below}
     * Lock held.
     *
     * @param blockId a block id, {@code 0 <= blockId < maxBlocks}
     */
    byte belowBits(int blockId);

    /**
     * Records block {@code blockId}'s below bits, as {@link #belowBits} reads them. Lock held; 0
     * once the tier below has let go of the id ({@link LowerTier#forget}).
     *
     * @param blockId a block id, {@code 0 <= blockId < maxBlocks}
     * @param bits    the bits
     */
    void setBelowBits(int blockId, byte bits);

    /**
     * {@return the manager lock} A tier below guards its own per-block facts with it. It is
     * reentrant: the cache holds it when it calls {@link LowerTier#forget}, {@link
     * LowerTier#drainChanges} and the {@link HostSlots} methods, and releases it for every call that copies bytes, so a tier that
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
     * of the block (a copy that may be its only one). The cache's one record of this fact, which it changes
     * itself (pinning or releasing the block's disk record in the same hold of the lock). Lock
     * held.
     *
     * @param blockId a block id, {@code 0 <= blockId < maxBlocks}
     */
    boolean referenced(int blockId);
}

package io.tierkv.tiers;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.tierkv.core.KvLayout;
import io.tierkv.core.cache.BelowChanges;
import io.tierkv.core.cache.BlockOwner;
import io.tierkv.core.event.KvEventSink;
import io.tierkv.core.event.KvMedium;
import io.tierkv.core.policy.EvictionPolicies;
import io.tierkv.core.policy.EvictionPolicy;
import io.tierkv.core.pool.SlotAllocator;
import io.tierkv.core.prefix.BlockIdentity;
import io.tierkv.natives.PinnedHostBuffer;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The host tier's own facts, under the manager lock ({@link #lock}, lent by the cache), and its
 * access to the facts the cache keeps for it: per host slot its bytes (a range of the pinned
 * buffer); the host policy and the slot counts. The parts of the host tier read and write these
 * fields directly, always with {@link #lock} held.
 *
 * <pre>
 * per host slot: [bytesPerBlock bytes] at hs * bytesPerBlock in one pinned buffer (no segment
 *                object per slot: copies take the offset)
 * ids whose host copy left, with their hashes, until the cache drains them
 * </pre>
 * Where a block is held here, its host slot ({@link #hostSlot}), its state bits ({@link
 * #state}: {@link #CLEAN}, {@link #ON_DISK}, {@link #MOVING}, {@link #QUEUED}), is the cache's
 * record ({@link BlockOwner#hostSlot}, {@link BlockOwner#belowBits}): this tier writes it there and
 * keeps no copy, so the cache's invariants see it in the same hold of the lock as its own facts.
 * The pins ids hold on disk records are the cache's alone ({@link BlockOwner#DISK_PINNED}): this
 * tier leaves that bit as it is.
 * A block's hash and identity are the cache's records of the id ({@link #hashHi}, {@link
 * #identityOf}): this tier keeps no copy of either. The cache sets them before it hands the id
 * down (a demotion, an adoption) and keeps them until {@link HostTier#forget}, so they are the
 * block's for as long as this tier holds the id.
 */
final class HostBlocks {

    /** The device holds the block too: this host copy is a clean second copy ({@link BlockOwner#HOST_CLEAN}). */
    static final byte CLEAN = BlockOwner.HOST_CLEAN;
    /** A disk record holds the block ({@link BlockOwner#ON_DISK}). */
    static final byte ON_DISK = BlockOwner.ON_DISK;
    /** A spill or a promotion reads the host slot ({@link BlockOwner#HOST_MOVING}). */
    static final byte MOVING = BlockOwner.HOST_MOVING;
    /** Out of the host policy while it waits in the mover's host-to-disk queue ({@link BlockOwner#HOST_QUEUED}). */
    static final byte QUEUED = BlockOwner.HOST_QUEUED;

    /**
     * The manager lock ({@link BlockOwner#lock()}), lent by the cache at {@link #attach}; this
     * tier's own lock until then (construction only: nothing moves before the cache attaches).
     */
    ReentrantLock lock = new ReentrantLock();
    @GuardedBy("lock") final SlotAllocator slots;
    /** Every host slot's bytes, slot {@code hs} at {@link #slotOffset}: read and written by copies that take the offset. */
    final MemorySegment slotBytes;
    private final long bytesPerSlot;
    /** Host slots, fixed at construction (read without the lock). */
    final int slotCount;
    /** {@link BlockIdentity#bytes} of B token ids. */
    final long identityBytes;
    /** The cache's view of its own records ({@link io.tierkv.core.cache.LowerTier#attach}); set once, at build. */
    BlockOwner owner;
    @GuardedBy("lock") final EvictionPolicy policy;
    /** Block ids, fixed at construction. */
    final int maxBlocks;
    /** Host slots taken for a copy in flight (a demotion, a load, an adoption's read). */
    @GuardedBy("lock") int reservedHostSlots;
    /** Host slots of blocks the cache freed while a spill or late promotion read them. */
    @GuardedBy("lock") int orphanedSlots;
    /** Told when a host slot takes a block's copy or gives it up ({@link KvMedium#CPU}). */
    @GuardedBy("lock") KvEventSink events = KvEventSink.NONE;
    /** Ids whose host copy left for room since the cache last drained them, with the hashes they held. */
    @GuardedBy("lock") private final BelowChanges left = new BelowChanges();
    /** Whether {@link #left} holds any: read without the lock so an empty drain takes none. */
    private volatile boolean leftPending;

    /**
     * Allocates the tables.
     *
     * @param layout     the block layout
     * @param pinned     the host slots' memory, {@code hostBlocks * bytesPerBlock} bytes
     * @param hostBlocks host slots
     * @param maxBlocks  block ids
     * @param policyName the host policy
     */
    HostBlocks(KvLayout layout, PinnedHostBuffer pinned, int hostBlocks, int maxBlocks, String policyName) {
        int bytes = layout.bytesPerBlock();
        this.slots = new SlotAllocator(hostBlocks);
        this.slotBytes = pinned.segment();
        this.bytesPerSlot = bytes;
        this.slotCount = hostBlocks;
        this.identityBytes = BlockIdentity.bytes(layout.blockSizeTokens());
        this.policy = EvictionPolicies.create(policyName, maxBlocks);
        this.maxBlocks = maxBlocks;
    }

    /**
     * {@return the high word of the block's hash: the cache's record ({@link BlockOwner#hashHi}),
     * 0 for a block sealed without one} Lock held.
     */
    @GuardedBy("lock")
    long hashHi(int blockId) {
        return owner.hashHi(blockId);
    }

    /** {@return the low word of the block's hash, as {@link #hashHi}} */
    @GuardedBy("lock")
    long hashLo(int blockId) {
        return owner.hashLo(blockId);
    }

    /** {@return whether the block has a hash (a block sealed without one is never written to disk)} Lock held. */
    @GuardedBy("lock")
    boolean hasHash(int blockId) {
        return (hashHi(blockId) | hashLo(blockId)) != 0;
    }

    /** {@return the host slot that holds the block, or -1: the cache's record ({@link BlockOwner#hostSlot})} Lock held. */
    @GuardedBy("lock")
    int hostSlot(int blockId) {
        return owner.hostSlot(blockId);
    }

    /** {@return the block's state bits here: the cache's record ({@link BlockOwner#belowBits})} Lock held. */
    @GuardedBy("lock")
    byte state(int blockId) {
        return owner.belowBits(blockId);
    }

    /** Sets the block's state bits here to {@code bits}. Lock held. */
    @GuardedBy("lock")
    void setState(int blockId, byte bits) {
        owner.setBelowBits(blockId, bits);
    }

    /** {@return whether the block has any of state bits {@code flags}} Lock held. */
    @GuardedBy("lock")
    boolean is(int blockId, int flags) {
        return (owner.belowBits(blockId) & flags) != 0;
    }

    /** Sets state bits {@code flags} of the block. Lock held. */
    @GuardedBy("lock")
    void mark(int blockId, int flags) {
        owner.setBelowBits(blockId, (byte) (owner.belowBits(blockId) | flags));
    }

    /** Clears state bits {@code flags} of the block. Lock held. */
    @GuardedBy("lock")
    void unmark(int blockId, int flags) {
        owner.setBelowBits(blockId, (byte) (owner.belowBits(blockId) & ~flags));
    }

    /** Forgets everything this tier knew of an id with no host slot left (the cache released its pin already). Lock held. */
    @GuardedBy("lock")
    void clear(int blockId) {
        setState(blockId, (byte) 0);
    }

    /**
     * Puts a block's copy in host slot {@code hs} and reports it findable on the host (its hash
     * and identity read from the cache's records). Lock held.
     */
    @GuardedBy("lock")
    void place(int blockId, int hs) {
        owner.setHostSlot(blockId, hs);
        if (events.enabled()) {
            events.blockStored(KvMedium.CPU, hashHi(blockId), hashLo(blockId), identityOf(blockId));
        }
    }

    /**
     * Detaches a block from its host slot, if it has one, and reports it no longer findable on the
     * host. Lock held, and the id still the block's (before the cache frees it).
     */
    @GuardedBy("lock")
    void unplace(int blockId) {
        if (hostSlot(blockId) >= 0) {
            events.blockRemoved(KvMedium.CPU, hashHi(blockId), hashLo(blockId));
            owner.setHostSlot(blockId, -1);
        }
    }

    /** Ends a promotion's read of the host copy (the cache keeps the block in transit meanwhile). */
    @GuardedBy("lock")
    void endMove(int blockId, byte addFlag) {
        // A queued spill of a block promoted meanwhile is skipped: QUEUED goes with MOVING.
        setState(blockId, (byte) ((state(blockId) & ~(MOVING | QUEUED)) | addFlag));
        if (hostSlot(blockId) >= 0) {
            policy.onAdmit(blockId, 0, hashLo(blockId));
        }
    }

    /**
     * Notes that a block's host copy was evicted for room, for
     * the cache to settle ({@link HostTier#drainChanges}). Lock held.
     */
    @GuardedBy("lock")
    void noteLeft(int blockId, long hi, long lo) {
        left.add(blockId, hi, lo);
        leftPending = true;
    }

    /** {@return whether notes of {@link #noteLeft} wait to be drained; no lock} */
    boolean hasLeft() {
        return leftPending;
    }

    /** Moves the notes of {@link #noteLeft} into {@code out} and forgets them; takes the lock only if there are any. */
    void drainLeft(BelowChanges out) {
        if (!leftPending) {
            return;
        }
        lock.lock();
        try {
            left.moveTo(out);
            leftPending = false;
        } finally {
            lock.unlock();
        }
    }

    /** {@return the first byte of host slot {@code hs} in {@link #slotBytes}} */
    long slotOffset(int hs) {
        return hs * bytesPerSlot;
    }

    /**
     * {@return host slot {@code hs}'s bytes as a segment of their own: a new view, for the disk and
     * remote calls, whose own cost dwarfs it; the device copies take {@link #slotOffset} instead}
     */
    MemorySegment slotView(int hs) {
        return slotBytes.asSlice(slotOffset(hs), bytesPerSlot);
    }

    /**
     * Takes the cache's lock and records ({@link io.tierkv.core.cache.LowerTier#attach}), once, at
     * build, before any other thread sees this tier (the movers start after).
     */
    void attach(BlockOwner owner) {
        this.owner = owner;
        this.lock = owner.lock();
    }

    /**
     * {@return whether the cache holds the block referenced: then no copy of it here or on disk
     * may be lost} The cache's HELD bit, its one record of this fact ({@link BlockOwner#referenced}).
     */
    @GuardedBy("lock")
    boolean needed(int blockId) {
        return owner.referenced(blockId);
    }

    /**
     * {@return block {@code blockId}'s identity: a view of the cache's record} The record is the
     * block's while this tier holds the id (placed, or in transit to or from it); read it with the
     * lock held, since the cache may free and reuse the id once the lock is released.
     */
    MemorySegment identityOf(int blockId) {
        return owner.identity(blockId);
    }
}

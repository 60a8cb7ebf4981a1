package io.tierkv.core.cache;

import io.tierkv.core.error.CorruptBlockException;

import static io.tierkv.core.cache.BlockStates.QUEUED;
import static io.tierkv.core.cache.BlockStates.SEALED;

/**
 * What the tier manager (module {@code tiers}) and its movers ask of a cache: drain candidates
 * into a mover's queues and demote them, read ahead (promote or load without a lease), hand back
 * late slots, and settle what the tiers below let go of (free blocks whose copies below went or
 * are kept by hash). Not runtime API: a runtime reads and writes blocks through {@link Sequence}
 * and {@link BlockLease}. Obtained from {@link PagedKvCache#tierControl()}; thread-safe (each call
 * takes the cache lock).
 */
public final class TierControl {

    private final PagedKvCache cache;

    TierControl(PagedKvCache cache) {
        this.cache = cache;
    }

    /**
     * Tells where a block's copy is below the top tier ({@link BelowCopies#residence}): for a
     * mover choosing a read-ahead's path, and for tests. A disk record found gone is settled on
     * the way.
     *
     * @param blockId a block id, {@code 0 <= blockId < maxBlocks}
     * @return {@link LowerTier#RESIDENT_HOST}, {@link LowerTier#RESIDENT_DISK} or {@link
     *         LowerTier#RESIDENT_NOWHERE}
     * @throws IndexOutOfBoundsException if blockId is out of range
     */
    public int residence(int blockId) {
        Checks.index("blockId", blockId, cache.options().maxBlocks(), "maxBlocks ");
        cache.lock.lock();
        try {
            return cache.residence(blockId);
        } finally {
            cache.lock.unlock();
        }
    }

    /**
     * Read-ahead from disk: copies a sealed block held only on disk into a host slot (keeping the
     * record), so a later promotion is a host copy. A mover calls this for its disk-to-host queue.
     *
     * @param blockId a block id
     * @return true if the block is in a host slot now because of this call; false if it was not
     *         held only on disk, is moving, or the host tier had no room (nothing changed), or
     *         its record was missing or corrupt (a counted loss below; its next lease fails)
     */
    public boolean loadBelow(int blockId) {
        cache.lock.lock();
        try {
            return !cache.closed && cache.residence(blockId) == LowerTier.RESIDENT_DISK
                    && cache.moves.below.run(blockId, true);
        } finally {
            cache.lock.unlock();
        }
    }

    /**
     * Takes up to {@code maxBlocks} candidates to leave the top tier, in policy order, out of the
     * candidates and offers each to a mover's bounded queue; a refused offer (queue full) ends the
     * call and leaves that block a candidate. A queued block stays out of the candidates until
     * {@link #demoteQueued} drains it or its state changes (a freed block forgets it was queued).
     *
     * @param maxBlocks most blocks to queue, >= 0
     * @param queue     offered each block id; returns false when full
     * @return blocks queued
     */
    public int queueCandidates(int maxBlocks, java.util.function.IntPredicate queue) {
        cache.lock.lock();
        try {
            int queued = 0;
            while (queued < maxBlocks && !cache.closed) {
                int victim = cache.policy.victim();
                if (victim < 0 || !queue.test(victim)) {
                    break;
                }
                cache.blocks.bits[victim] |= QUEUED;
                cache.policy.onRemove(victim);
                queued++;
            }
            return queued;
        } finally {
            cache.lock.unlock();
        }
    }

    /**
     * Drains one entry of a mover's device-to-host queue: demotes the block if it is still queued
     * and still a candidate (sealed, unleased, not recent, on the top tier, not moving).
     *
     * @param blockId a block id taken from the queue
     * @return true if the block left the top tier; false if its state changed since it was queued
     *         (freed, leased, protected, moved) and it was skipped
     */
    public boolean demoteQueued(int blockId) {
        cache.lock.lock();
        try {
            if ((cache.blocks.bits[blockId] & QUEUED) == 0) {
                return false;
            }
            cache.blocks.bits[blockId] &= ~QUEUED;
            cache.refresh(blockId);
            if (cache.closed || !cache.policy.contains(blockId)) {
                return false;
            }
            cache.admission.vacate(blockId);
            return cache.blocks.slot[blockId] < 0;
        } finally {
            cache.lock.unlock();
        }
    }

    /**
     * Takes up to {@code maxBlocks} host blocks, in the host policy's order, into a mover's
     * host-to-disk queue ({@link HostRoom#queueSpills}): a clean host copy is dropped instead; a
     * refused offer (queue full) or a block without a hash ends the call. Nothing is queued without
     * a disk below, or without a lower tier.
     *
     * @param maxBlocks most blocks, >= 0
     * @param queue     offered each block id; returns false when full
     * @return blocks queued or dropped
     */
    public int queueSpills(int maxBlocks, java.util.function.IntPredicate queue) {
        if (cache.moves.hostRoom == null) {
            return 0;
        }
        cache.lock.lock();
        try {
            return cache.closed ? 0 : cache.moves.hostRoom.queueSpills(maxBlocks, queue);
        } finally {
            cache.lock.unlock();
        }
    }

    /**
     * Drains one entry of a mover's host-to-disk queue: spills the block to disk if it is still
     * queued in its host slot and nothing else moves it ({@link HostRoom#spillQueued}).
     *
     * @param blockId a block id taken from the queue
     * @return true if it spilled; false if its state changed since it was queued (skipped), or the
     *         disk refused it (it stays on the host, back in the host policy)
     */
    public boolean spillQueued(int blockId) {
        if (cache.moves.hostRoom == null) {
            return false;
        }
        cache.lock.lock();
        try {
            return !cache.closed && cache.moves.hostRoom.spillQueued(blockId);
        } finally {
            cache.lock.unlock();
        }
    }

    /**
     * Makes up to {@code maxBlocks} blocks leave the host tier by the host policy's order ({@link
     * HostRoom}): clean copies dropped, hashed blocks spilled to disk, unreferenced blocks evicted
     * (their ids freed when the cache next settles, {@link #settleBelow}).
     *
     * @param maxBlocks most blocks, >= 0
     * @return blocks that left their host slots; 0 without a lower tier
     * @throws IllegalArgumentException if maxBlocks is negative
     */
    public int evictHost(int maxBlocks) {
        if (maxBlocks < 0) {
            throw new IllegalArgumentException("maxBlocks: " + maxBlocks + " (expected >= 0)");
        }
        if (cache.moves.hostRoom == null) {
            return 0;
        }
        cache.lock.lock();
        try {
            return cache.closed ? 0 : cache.moves.hostRoom.evict(maxBlocks);
        } finally {
            cache.lock.unlock();
        }
    }

    /**
     * Returns top-tier slots of timed-out promotions whose copies have since ended, and host slots
     * of late demotions whose copies have; a mover calls this periodically.
     *
     * @return top-tier slots handed back
     */
    public int reclaimLateSlotsNow() {
        cache.lock.lock();
        try {
            return cache.closed ? 0 : cache.admission.reclaimLateSlotsNow();
        } finally {
            cache.lock.unlock();
        }
    }

    /**
     * Settles what the lower tier let go of since the last call ({@link
     * LowerTier#drainChanges}): an id whose copy is now kept by hash alone (spilled to disk) is
     * freed if nothing references it, since a later prefix match finds the record by hash
     * ({@link DiskRecords#adopt}); a block whose only copy went (a host copy evicted, a disk record
     * evicted or found damaged) is freed if nothing references it and lost otherwise (its next
     * lease fails with {@link CorruptBlockException}). Each entry is checked under this lock
     * against the block as it is now: a block on the top tier, moving, or an id holding another
     * hash by now is left alone. The movers call this every cycle; the cache calls it after its
     * own demotions and moves below.
     *
     * @return entries settled (each changed something or was found stale)
     */
    public int settleBelow() {
        if (!cache.moves.settle.mayHaveWork()) {
            return 0; // a mover's idle cycle takes no cache lock for this
        }
        cache.lock.lock();
        try {
            return cache.moves.settle.run();
        } finally {
            cache.lock.unlock();
        }
    }

    /**
     * Read-ahead: brings a sealed block held below up to the top tier without leasing it (a
     * later lease finds it there unless it was demoted again meanwhile). A prefetch that waits
     * for a slot ends, having moved nothing, as soon as another party (a lease, another prefetch)
     * brings the block up or starts moving it. A block that already holds 65,535 references
     * cannot take the move's and is left where it is.
     *
     * @param blockId a block id
     * @return true if the block was promoted by this call
     */
    public boolean prefetch(int blockId) {
        cache.lock.lock();
        try {
            if (cache.closed || cache.blocks.state(blockId) != SEALED || !cache.blocks.needsPromotion(blockId)
                    || cache.blocks.refsFull(blockId)) { // it cannot take the move's reference
                return false;
            }
            cache.blocks.addRef(blockId); // pinned while it moves, so it cannot be freed
            cache.blocks.leases[blockId]++;
            cache.refresh(blockId);
            try {
                int s = cache.admission.slotFor(blockId, cache.admissionDeadline());
                if (s == Admission.SLOT_NOT_NEEDED) {
                    return false; // up, moving or lost by another party's doing
                }
                cache.moves.promote.run(blockId, s);
                cache.policy.onAccess(blockId);
                return true;
            } catch (io.tierkv.core.error.TierKvException e) {
                return false;
            } finally {
                cache.leases.release(blockId);
            }
        } finally {
            cache.lock.unlock();
        }
    }

    /**
     * Moves up to {@code maxBlocks} candidates off the top tier, by policy order. A background
     * mover calls this under pressure; allocation calls the same path when the tier is full.
     * Without a lower tier, leaving is eviction of cached cache.blocks.
     *
     * @param maxBlocks most blocks to move, >= 0
     * @return blocks that left the top tier
     * @throws IllegalArgumentException if maxBlocks is negative
     */
    public int demoteCandidates(int maxBlocks) {
        if (maxBlocks < 0) {
            throw new IllegalArgumentException("maxBlocks: " + maxBlocks + " (expected >= 0)");
        }
        cache.lock.lock();
        try {
            int moved = 0;
            while (moved < maxBlocks && !cache.closed) {
                int victim = cache.policy.victim();
                if (victim < 0) {
                    break;
                }
                int before = cache.admission.slots.freeCount();
                cache.admission.vacate(victim);
                if (cache.admission.slots.freeCount() > before) {
                    moved++;
                }
            }
            return moved;
        } finally {
            cache.lock.unlock();
        }
    }

    /**
     * Moves one specific block off the top tier now, if it is a candidate (sealed, unleased, not
     * recent, not moving): explicit offload.
     *
     * @param blockId the block
     * @return true if the block left the top tier
     */
    public boolean demoteBlock(int blockId) {
        cache.lock.lock();
        try {
            cache.checkOpen();
            return demoteHeld(blockId);
        } finally {
            cache.lock.unlock();
        }
    }

    /**
     * {@link #demoteBlock}'s move, for a caller that holds the cache lock once (a per-cache budget
     * making room): the demotion, and a host victim's spill for its room, release it while they
     * copy, which a second hold would defeat.
     */
    @SuppressWarnings("GuardedBy") // cache.lock held by the caller (CacheBudget), another path
    boolean demoteHeld(int blockId) {
        if (!cache.policy.contains(blockId)) {
            return false;
        }
        cache.admission.vacate(blockId);
        return cache.blocks.slot[blockId] < 0;
    }

    /**
     * Checks the cache's invariants and the tiers' below it in one snapshot: {@code below} runs
     * with the cache lock held, so no block moves between the two checks (a move's unlocked copy
     * shows as in transit on both sides). {@code below} must take only locks that come after the
     * cache lock.
     *
     * @param below the lower tiers' check, returning their violations
     * @return every violation, the cache's first; empty when consistent
     */
    public java.util.List<String> checkInvariants(java.util.function.Supplier<java.util.List<String>> below) {
        return cache.checkInvariants(below);
    }

    /**
     * Sets where device KV events go ({@link DeviceEvents}). Set it before the first sequence
     * opens; events for blocks already findable are not replayed.
     *
     * @param sink the sink, called with this cache's lock held; {@link io.tierkv.core.event.KvEventSink#NONE} for none
     * @throws NullPointerException if sink is null
     */
    public void setEventSink(io.tierkv.core.event.KvEventSink sink) {
        java.util.Objects.requireNonNull(sink, "sink");
        cache.lock.lock();
        try {
            cache.events.setSink(sink);
        } finally {
            cache.lock.unlock();
        }
    }
}

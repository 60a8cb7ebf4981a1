package io.tierkv.core.cache;

import io.tierkv.core.error.CorruptBlockException;

import static io.tierkv.core.cache.BlockStates.FREE;
import static io.tierkv.core.cache.BlockStates.QUEUED;
import static io.tierkv.core.cache.BlockStates.SEALED;

/**
 * What the tier manager (module {@code tiers}) and its movers ask of a cache: drain candidates
 * into a mover's queues and demote them, read ahead (promote or load without a lease), hand back
 * late slots, and free blocks whose copies below went or are kept by hash. Not runtime API: a
 * runtime reads and writes blocks through {@link Sequence} and {@link BlockLease}. Obtained from
 * {@link PagedKvCache#tierControl()}; thread-safe (each call takes the cache lock).
 */
public final class TierControl {

    private final PagedKvCache cache;

    TierControl(PagedKvCache cache) {
        this.cache = cache;
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
            return !cache.closed && cache.lower != null && cache.lower.residence(blockId) == LowerTier.RESIDENT_DISK
                    && cache.moves.moveBelow(blockId, true);
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
                cache.blocks.flags[victim] |= QUEUED;
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
            if ((cache.blocks.flags[blockId] & QUEUED) == 0) {
                return false;
            }
            cache.blocks.flags[blockId] &= ~QUEUED;
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
     * Returns top-tier slots of timed-out promotions whose copies have since ended; a mover calls
     * this periodically.
     *
     * @return slots handed back
     */
    public int reclaimLateSlotsNow() {
        cache.lock.lock();
        try {
            return cache.admission.reclaimLateSlotsNow();
        } finally {
            cache.lock.unlock();
        }
    }

    /**
     * Called by a lower tier when it dropped its only copy of a block (for example disk eviction):
     * a block nobody references is freed; a referenced one is marked lost (its next lease fails
     * with {@link CorruptBlockException}). Nothing happens if the block is on the top tier, moving,
     * or has a copy below again ({@link LowerTier#residence}, asked under this lock: the lower tier
     * decided to call without it, and the block may have been demoted since).
     *
     * @param blockId the block whose lower copy is gone
     */
    public void droppedBelow(int blockId) {
        cache.lock.lock();
        try {
            if (cache.blocks.state[blockId] == FREE || cache.blocks.slot[blockId] >= 0 || cache.blocks.inTransit(blockId)) {
                return;
            }
            if (cache.lower.residence(blockId) != LowerTier.RESIDENT_NOWHERE) {
                return; // a copy arrived below after the lower tier checked (without this lock)
            }
            cache.goneBelow(blockId);
        } finally {
            cache.lock.unlock();
        }
    }

    /**
     * Read-ahead: brings a sealed block held below up to the top tier without leasing it (a
     * later lease finds it there unless it was demoted again meanwhile). A prefetch that waits
     * for a slot ends, having moved nothing, as soon as another party (a lease, another prefetch)
     * brings the block up or starts moving it.
     *
     * @param blockId a block id
     * @return true if the block was promoted by this call
     */
    public boolean prefetch(int blockId) {
        cache.lock.lock();
        try {
            if (cache.closed || cache.blocks.state[blockId] != SEALED || !cache.blocks.needsPromotion(blockId)) {
                return false;
            }
            cache.blocks.refs[blockId]++; // pinned while it moves, so it cannot be freed
            cache.blocks.leases[blockId]++;
            cache.refresh(blockId);
            try {
                int s = cache.admission.slotFor(blockId, cache.admissionDeadline());
                if (s == Admission.SLOT_NOT_NEEDED) {
                    return false; // up, moving or lost by another party's doing
                }
                cache.moves.promote(blockId, s);
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
     * Called by a lower tier that needs room: frees a block held only below if nothing references
     * it (a cached block), so the lower tier can drop its copy. Counted as an eviction. The lower
     * tier calls with its own lock released, so the id may have been freed and taken by another
     * block since it decided: the block's hash names which block it meant, and an id holding
     * another hash is left alone.
     *
     * @param blockId a block the lower tier holds
     * @param hashHi  that block's hash, high word
     * @param hashLo  that block's hash, low word
     * @return true if the block was freed (the lower tier has been told through {@link LowerTier#forget})
     */
    public boolean evictIfUnreferenced(int blockId, long hashHi, long hashLo) {
        return freeIfUnreferenced(blockId, hashHi, hashLo, true);
    }

    /**
     * Called by a lower tier whose copy of a block is now keyed by its hash alone (spilled to
     * disk): frees the block id if nothing references it, since a later prefix match finds the
     * record by hash ({@link LowerTier#adopt}). Not an eviction: the bytes are kept. As for
     * {@link #evictIfUnreferenced}, an id that holds another hash by now is left alone.
     *
     * @param blockId a block now held only by hash below
     * @param hashHi  that block's hash, high word
     * @param hashLo  that block's hash, low word
     * @return true if the id was freed
     */
    public boolean retireIfUnreferenced(int blockId, long hashHi, long hashLo) {
        return freeIfUnreferenced(blockId, hashHi, hashLo, false);
    }

    private boolean freeIfUnreferenced(int blockId, long hashHi, long hashLo, boolean eviction) {
        cache.lock.lock();
        try {
            BlockStates b = cache.blocks;
            if (b.state[blockId] == FREE || b.refs[blockId] != 0 || b.slot[blockId] >= 0 || b.inTransit(blockId)
                    || b.hashHi[blockId] != hashHi || b.hashLo[blockId] != hashLo) {
                return false;
            }
            if (eviction) {
                cache.counters.evictions++;
            } else {
                cache.counters.retiredIds++;
            }
            cache.freeBlock(blockId);
            return true;
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
            if (!cache.policy.contains(blockId)) {
                return false;
            }
            cache.admission.vacate(blockId);
            return cache.blocks.slot[blockId] < 0;
        } finally {
            cache.lock.unlock();
        }
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

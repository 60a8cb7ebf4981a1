package io.tierkv.tiers;

import io.tierkv.core.cache.HostSlots;
import java.lang.foreign.MemorySegment;

import static io.tierkv.tiers.HostBlocks.CLEAN;
import static io.tierkv.tiers.HostBlocks.MOVING;
import static io.tierkv.tiers.HostBlocks.QUEUED;

/**
 * The host tier as a slot store ({@link HostSlots}): free slots, the host policy's victims, and
 * what a block entering or leaving a slot needs done here (a copy committed to its slot, a clean
 * copy dropped, a spill's source held and released, an unreferenced copy evicted).
 * Which block leaves, and how, the cache decides ({@code HostRoom} in core), and the cache writes a
 * spill to disk itself ({@code MoveBelow}); this class decides nothing. The cache learns of the
 * ids evicted from {@link HostTier#drainChanges}; this class never calls it, nor any store below.
 */
// Every method but releaseReserved, view and the staging buffers' runs with the manager lock (h.lock) held by a caller in another
// class (the cache's HostRoom, HostTier), which Error Prone cannot relate to h.lock.
@SuppressWarnings("GuardedBy")
final class HostSlotStore implements HostSlots {

    private final HostTier t;
    private final HostBlocks h;

    HostSlotStore(HostTier t) {
        this.t = t;
        this.h = t.blocks;
    }

    @Override
    public int reserveFree() {
        int s = h.slots.allocate();
        if (s >= 0) {
            h.reservedHostSlots++;
        }
        return s;
    }

    /** {@inheritDoc} Takes the lock itself (reentrant), so a copy that threw may call it without. */
    @Override
    public void releaseReserved(int hs) {
        h.lock.lock();
        try {
            h.reservedHostSlots--;
            h.slots.free(hs);
        } finally {
            h.lock.unlock();
        }
    }

    @Override
    public int victim() {
        return h.policy.victim();
    }

    @Override
    public int victimCount() {
        return h.policy.size();
    }

    @Override
    public boolean spills() {
        return t.disk != null;
    }

    @Override
    public void fill(int blockId, int hs) {
        h.reservedHostSlots--;
        h.place(blockId, hs);
        h.policy.onAdmit(blockId, 0, h.hashLo(blockId));
    }

    @Override
    public MemorySegment view(int hs) {
        return h.slotView(hs);
    }

    /** {@inheritDoc} No lock; see {@code StagingPool}. */
    @Override
    public int acquireStaging() {
        return t.staging.acquire();
    }

    @Override
    public MemorySegment staging(int buffer) {
        return t.staging.block(buffer);
    }

    @Override
    public void releaseStaging(int buffer) {
        t.staging.release(buffer);
    }

    @Override
    public void dropClean(int victim) {
        h.policy.onRemove(victim);
        t.counters.hostCleanDrops.increment();
        dropHostCopy(victim);
    }

    /** {@inheritDoc} Lock held. */
    @Override
    public boolean evict(int victim) {
        if (h.hostSlot(victim) < 0 || h.is(victim, MOVING | QUEUED) || h.needed(victim)) {
            return false; // not a victim to evict: another move has it, or it is referenced (its only copy stays)
        }
        long hi = h.hashHi(victim);
        long lo = h.hashLo(victim);
        t.counters.hostEvictions.increment(); // nothing references it: its bytes go, the cache frees the id
        dropHostCopy(victim);
        h.noteLeft(victim, hi, lo);
        return true;
    }

    @Override
    public void keep(int victim) {
        h.policy.onRemove(victim);
        if (h.hostSlot(victim) >= 0 && !h.is(victim, MOVING | QUEUED)) {
            h.policy.onAdmit(victim, 0, h.hashLo(victim));
        }
    }

    @Override
    public void queue(int victim) {
        h.policy.onRemove(victim);
        h.mark(victim, QUEUED);
    }

    @Override
    public boolean unqueue(int blockId) {
        if (!h.is(blockId, QUEUED)) {
            return false;
        }
        h.unmark(blockId, QUEUED);
        return h.hostSlot(blockId) >= 0 && !h.is(blockId, MOVING); // else it left, or a promotion reads it
    }

    /** {@inheritDoc} Lock held. */
    @Override
    public boolean prepareSpill(int blockId) {
        if (h.hostSlot(blockId) < 0 || h.is(blockId, MOVING | CLEAN) || !h.hasHash(blockId)) {
            return false;
        }
        h.policy.onRemove(blockId);
        h.unmark(blockId, QUEUED); // a mover's queued entry for it finds it gone and skips it
        h.mark(blockId, MOVING);
        return true;
    }

    /** {@inheritDoc} Lock held. */
    @Override
    public void endSpill(int blockId, int hs, boolean left) {
        if (endRead(blockId, hs)) {
            return;
        }
        if (left) {
            dropHostCopy(blockId);
        } else {
            h.policy.onAdmit(blockId, 0, h.hashLo(blockId)); // stays: back in the policy
        }
    }

    /**
     * Ends a read of host slot {@code hs} made with the lock released (a spill's write, a remote
     * offer). If the cache freed the block meanwhile the slot is an orphan: freed now. Lock held.
     *
     * @return whether the block was freed meanwhile (nothing more to do); else it is not MOVING now
     */
    private boolean endRead(int victim, int hs) {
        if (h.hostSlot(victim) != hs) { // freed by the cache while it moved: the slot is an orphan now
            h.orphanedSlots--;
            h.slots.free(hs);
            return true;
        }
        h.unmark(victim, MOVING);
        return false;
    }

    /** Drops a block's host copy, if it has one, and its CLEAN mark. Lock held. */
    void dropHostCopy(int blockId) {
        h.policy.onRemove(blockId);
        if (h.hostSlot(blockId) >= 0) {
            h.slots.free(h.hostSlot(blockId));
            h.unplace(blockId);
        }
        h.unmark(blockId, CLEAN);
    }
}

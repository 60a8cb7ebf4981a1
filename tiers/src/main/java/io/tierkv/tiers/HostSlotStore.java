package io.tierkv.tiers;

import io.tierkv.core.cache.HostSlots;
import io.tierkv.core.error.TierKvException;
import io.tierkv.tiers.disk.store.DiskTier;
import java.lang.foreign.MemorySegment;

import static io.tierkv.tiers.HostBlocks.CLEAN;
import static io.tierkv.tiers.HostBlocks.MOVING;
import static io.tierkv.tiers.HostBlocks.NOT_STORED;
import static io.tierkv.tiers.HostBlocks.ON_DISK;
import static io.tierkv.tiers.HostBlocks.QUEUED;
import static io.tierkv.tiers.HostBlocks.STORED;

/**
 * The host tier as a slot store ({@link HostSlots}): free slots, the host policy's victims, and
 * what a block leaving a slot needs done here (a clean copy dropped, a spill written to disk, an
 * eviction offered to the remote store). Which block leaves, and how, the cache decides ({@code
 * HostRoom} in core); this class decides nothing. The cache learns of the ids that left from
 * {@link HostTier#drainChanges}; this class never calls it. The manager lock is released around
 * every disk write and remote offer (lock order: cache, disk).
 */
// Every method but releaseReserved runs with the manager lock (h.lock) held by a caller in another
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

    /**
     * {@inheritDoc} A referenced block whose disk record was a second clean copy gets that record
     * pinned now ({@link HostTier#diskCopyHeld}).
     */
    @Override
    public void dropClean(int victim) {
        h.policy.onRemove(victim);
        t.counters.hostCleanDrops.increment();
        dropHostCopy(victim);
        t.pins.holdDiskCopy(victim);
    }

    /**
     * {@inheritDoc} Offered to the remote store when there is no disk tier (the host is the lowest
     * local tier) and the block has a hash, with the lock released. A victim that became referenced
     * meanwhile stays, back in the policy.
     */
    @Override
    public boolean evict(int victim) {
        if (h.hostSlot(victim) < 0 || h.is(victim, MOVING | QUEUED) || h.needed(victim)) {
            return false; // not a victim to evict: another move has it, or it is referenced (its only copy stays)
        }
        long hi = h.hashHi(victim);
        long lo = h.hashLo(victim);
        if (t.disk == null && t.remote != null && (hi | lo) != 0) {
            int hs = h.hostSlot(victim);
            MemorySegment identity = h.copyIdentity(victim); // the cache may reuse the id once the lock is released
            h.policy.onRemove(victim);
            h.mark(victim, MOVING);
            h.unlockForWork();
            try {
                t.remote.push.offer(hi, lo, identity, h.slotView(hs));
            } catch (RuntimeException | Error e) { // an offer that broke its contract: the block stays as it was
                h.lock.lock();
                endFailedRead(victim, hs, hi, lo, false);
                throw e;
            }
            h.lock.lock();
            if (endRead(victim, hs, hi, lo, DiskTier.NO_PIN)) {
                return true; // freed by the cache meanwhile
            }
            if (h.needed(victim)) {
                h.policy.onAdmit(victim, 0, lo); // referenced meanwhile: it stays
                return false;
            }
        }
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

    /**
     * Plans a spill ({@link HostTier#prepareSpill}), in the cache's hold of the lock that puts the
     * block in transit: takes the block's host copy as the spill's source (out of the policy and
     * any mover queue, MOVING) if it can spill: a disk below, a host slot, no other move reading
     * it, not a clean copy, a hash. Changes nothing otherwise. Lock held.
     *
     * @return whether {@link #spill} may write it
     */
    boolean prepareSpill(int blockId) {
        if (t.disk == null || h.hostSlot(blockId) < 0 || h.is(blockId, MOVING | CLEAN) || !h.hasHash(blockId)) {
            return false;
        }
        h.policy.onRemove(blockId);
        h.unmark(blockId, QUEUED); // a mover's queued entry for it finds it gone and skips it
        h.mark(blockId, MOVING);
        return true;
    }

    /**
     * Spills a block {@link #prepareSpill} took as a source to disk ({@link HostTier#spill}):
     * pinned as it is written if the cache holds it referenced, since its record may become its
     * only copy. A spill the disk refuses leaves the block in its slot, back in the policy. Either
     * way the spill ends here (MOVING cleared), and the id is noted for the cache
     * ({@link HostBlocks#noteLeft}) only if it left, which retires it (kept by hash) when it next
     * settles; this tier never calls the cache. The lock is released only for the disk write;
     * held on entry and exit.
     *
     * @return whether the block is on disk now and its host slot free
     */
    boolean spill(int victim) {
        assert h.is(victim, MOVING) && h.hostSlot(victim) >= 0 : "spill of block " + victim + " without prepareSpill";
        int hs = h.hostSlot(victim);
        long hi = h.hashHi(victim);
        long lo = h.hashLo(victim);
        boolean pin = h.needed(victim);
        MemorySegment identity;
        try {
            identity = h.copyIdentity(victim); // copied under the lock: the cache may close once it is released
        } catch (IllegalStateException e) { // the cache closed since the spill was planned: nothing is written
            h.unmark(victim, MOVING);
            h.policy.onAdmit(victim, 0, lo); // as it was before the plan
            return false;
        }
        if (pin) {
            h.pinningSpills++;
        }
        h.unlockForWork();
        long stored;
        try {
            stored = writeToDisk(victim, hi, lo, hs, identity, pin);
        } catch (RuntimeException | Error e) { // a failure writeToDisk does not count as a refusal: the block stays
            h.lock.lock();
            endFailedRead(victim, hs, hi, lo, pin);
            throw e;
        }
        h.lock.lock();
        if (pin) {
            h.pinningSpills--;
        }
        long heldPin = pin ? stored : DiskTier.NO_PIN; // a pinning spill returns its pin
        if (endRead(victim, hs, hi, lo, heldPin)) {
            return true;
        }
        boolean kept;
        try {
            kept = stored != NOT_STORED && t.pins.settlePin(victim, hi, lo, heldPin);
        } catch (RuntimeException | Error e) {
            h.policy.onAdmit(victim, 0, lo); // stays: back in the policy
            throw e;
        }
        if (!kept) {
            h.policy.onAdmit(victim, 0, lo); // stays: back in the policy
            return false;
        }
        h.mark(victim, ON_DISK); // the record is found again by hash: the cache retires the id if unreferenced
        dropHostCopy(victim);
        h.noteLeft(victim, hi, lo);
        return true;
    }

    /**
     * Ends a read of host slot {@code hs} whose write below threw (a spill's, a remote offer's): the
     * block stays in its slot, back in the policy. Lock held.
     */
    private void endFailedRead(int victim, int hs, long hi, long lo, boolean pin) {
        if (pin) {
            h.pinningSpills--;
        }
        if (!endRead(victim, hs, hi, lo, DiskTier.NO_PIN)) {
            h.policy.onAdmit(victim, 0, lo);
        }
    }

    /**
     * Ends a read of host slot {@code hs} made with the lock released (a spill's write, a remote
     * offer). If the cache freed the block meanwhile the slot is an orphan: freed now, with the
     * pin the read took, if any, on the key {@code hi, lo} the read was for. Lock held.
     *
     * @return whether the block was freed meanwhile (nothing more to do); else it is not MOVING now
     */
    private boolean endRead(int victim, int hs, long hi, long lo, long heldPin) {
        if (h.hostSlot(victim) != hs) { // freed by the cache while it moved: the slot is an orphan now
            h.orphanedSlots--;
            h.slots.free(hs);
            if (heldPin != DiskTier.NO_PIN) {
                t.disk.pinning().unpin(hi, lo, heldPin); // the id is gone (perhaps reused): its pin goes too
            }
            return true;
        }
        h.unmark(victim, MOVING);
        return false;
    }

    /**
     * Writes a host block to disk, with {@code identity}, a copy of its identity taken under the
     * lock ({@link HostBlocks#copyIdentity}). No lock held.
     *
     * @return the pin on its record if {@code pin} ({@link DiskTier#putPinned}), {@link HostBlocks#STORED}
     *         if stored without one, {@link HostBlocks#NOT_STORED} if the disk declined or refused it
     */
    private long writeToDisk(int blockId, long hi, long lo, int hs, MemorySegment identity, boolean pin) {
        long start = System.nanoTime();
        try {
            long stored = pin ? t.disk.putPinned(hi, lo, identity, h.slotView(hs))
                    : t.disk.put(hi, lo, identity, h.slotView(hs)) ? STORED : NOT_STORED;
            if (stored != NOT_STORED) {
                t.counters.diskSpills.record(blockId, t.layout.bytesPerBlock(), System.nanoTime() - start);
            }
            return stored;
        } catch (TierKvException | java.io.UncheckedIOException | IllegalStateException e) {
            // Any failed write leaves the block here as it was, counted: a disk that is full or
            // refuses, an I/O error, or a channel closed under an interrupted thread (NIO closes a
            // file channel when the thread using it is interrupted; the interrupt stays set).
            // Propagating it would leave the block marked MOVING and every promotion of it waiting
            // for a move that never ends (found by a review: a Jlama session interrupted mid-run).
            t.counters.diskSpillFailures.increment();
            TierEvents.fault("spill of block " + blockId + " failed: " + e);
            return NOT_STORED;
        }
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

package io.tierkv.tiers;

import com.google.errorprone.annotations.concurrent.GuardedBy;
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
 * Room on the host tier: free slots, and victims by the host policy: a clean copy is dropped, a
 * hashed block spills to disk, an unreferenced block is evicted. The cache learns of the ids that
 * left from {@link HostTier#drainChanges}; this class never calls it. The manager lock is released
 * around every disk write (lock order: cache, host, disk).
 */
final class HostRoom {

    private final HostTier t;
    private final HostBlocks h;

    HostRoom(HostTier t) {
        this.t = t;
        this.h = t.blocks;
    }

    /**
     * Finds a free host slot, making room by policy order: clean copies are dropped, hashed
     * blocks spill to disk, unreferenced blocks are evicted.
     *
     * @return a host slot, or -1 if nothing could leave
     */
    int reserveHostSlot() {
        h.lock.lock();
        try {
            int attempts = h.policy.size() + 1;
            while (attempts-- > 0) {
                int s = allocateReserved();
                if (s >= 0) {
                    return s;
                }
                int victim = h.policy.victim();
                if (victim < 0) {
                    return -1;
                }
                if (h.is(victim, CLEAN)) {
                    dropCleanCopy(victim);
                    continue;
                }
                if (!leaveHost(victim, true)) {
                    toBackOfPolicy(victim); // cannot leave now
                }
            }
            return allocateReserved();
        } finally {
            h.lock.unlock();
        }
    }

    /** A free host slot counted as reserved, or -1 if none is free. Lock held. */
    @GuardedBy("h.lock")
    int allocateReserved() {
        int s = h.slots.allocate();
        if (s >= 0) {
            h.reservedHostSlots++;
        }
        return s;
    }

    /** Frees a reserved host slot no copy was issued into (the copy threw before it started). */
    void releaseReserved(int hs) {
        h.lock.lock();
        try {
            h.reservedHostSlots--;
            h.slots.free(hs);
        } finally {
            h.lock.unlock();
        }
    }

    /** A host slot free now, reserved (no eviction, no spill), or -1. */
    int freeHostSlot() {
        h.lock.lock();
        try {
            return allocateReserved();
        } finally {
            h.lock.unlock();
        }
    }

    /**
     * Spills a victim to disk or, if {@code mayFree} and the spill fails, evicts it if nothing
     * references it (not {@link HostBlocks#needed}): its host copy is dropped here, under this lock, so no pin can
     * arrive for a copy that is going. Either way the id is noted for the cache
     * ({@link HostBlocks#noteLeft}), which retires it (kept by hash) or frees it (evicted) when it
     * next settles; this tier never calls the cache. A victim that stays is back in the policy
     * (callers with {@code mayFree} move it to the policy's back). The lock is released only for
     * the disk write; held on entry and exit.
     */
    @SuppressWarnings("GuardedBy") // the callers (HostTier, this class) hold blocks.lock, h.lock here
    boolean leaveHost(int victim, boolean mayFree) {
        int hs = h.hostSlot(victim);
        long hi = h.hashHi(victim);
        long lo = h.hashLo(victim);
        boolean pin = h.needed(victim); // its record may become its only copy: pin it as it is written
        boolean toDisk = t.disk != null && (hi | lo) != 0;
        boolean toRemote = !toDisk && t.remote != null && (hi | lo) != 0 && !pin && mayFree;
        // Copied now, before anything changes (it throws once the cache has closed): once the lock
        // is released the cache may free the id and reuse its record.
        MemorySegment identity = toDisk || toRemote ? h.copyIdentity(victim) : null;
        h.policy.onRemove(victim);
        h.mark(victim, MOVING);
        long stored = NOT_STORED;
        if (pin) {
            h.pinningSpills++;
        }
        h.unlockForWork();
        try {
            if (toDisk) {
                stored = writeToDisk(victim, hi, lo, hs, identity, pin);
            } else if (toRemote) {
                t.remote.push.offer(hi, lo, identity, h.slotView(hs)); // host is the lowest local tier
            }
        } finally {
            h.lock.lock();
            if (pin) {
                h.pinningSpills--;
            }
        }
        boolean spilled = stored != NOT_STORED;
        long heldPin = pin ? stored : DiskTier.NO_PIN; // a pinning spill returns its pin
        if (h.hostSlot(victim) != hs) { // freed by the cache while it moved: the slot is an orphan now
            h.orphanedSlots--;
            h.slots.free(hs);
            if (heldPin != DiskTier.NO_PIN) {
                t.disk.pinning().unpin(hi, lo, heldPin); // the id is gone (perhaps reused): its pin goes too
            }
            return true;
        }
        h.unmark(victim, MOVING);
        if (spilled) {
            spilled = t.pins.settlePin(victim, hi, lo, heldPin);
        }
        if (spilled) {
            h.mark(victim, ON_DISK); // the record is found again by hash: the cache retires the id if unreferenced
        } else if (mayFree && !h.needed(victim)) {
            t.counters.hostEvictions.increment(); // nothing references it: its bytes go, the cache frees the id
        } else {
            h.policy.onAdmit(victim, 0, lo); // stays: back in the policy
            return false;
        }
        dropHostCopy(victim);
        h.noteLeft(victim, hi, lo);
        return true;
    }

    /**
     * Writes a host block to disk, with {@code identity}, a copy of its identity taken under the
     * lock ({@link HostBlocks#copyIdentity}). No lock held.
     *
     * @return the pin on its record if {@code pin} ({@link DiskTier#putPinned}), {@link HostBlocks#STORED}
     *         if stored without one, {@link HostBlocks#NOT_STORED} if the disk declined or refused it
     */
    long writeToDisk(int blockId, long hi, long lo, int hs, MemorySegment identity, boolean pin) {
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

    /**
     * Drops a clean host copy (the device holds the block too). A referenced block whose disk
     * record was a second clean copy gets that record pinned now: the device may hand its slot
     * over to the record at any time (the cache takes the record over, {@link HostTier#diskCopyHeld}). Lock held.
     */
    @GuardedBy("h.lock")
    void dropCleanCopy(int victim) {
        h.policy.onRemove(victim);
        t.counters.hostCleanDrops.increment();
        dropHostCopy(victim);
        t.pins.holdDiskCopy(victim);
    }

    /**
     * Puts a victim that could not leave (spill refused, still referenced) at the back of the
     * policy, unless it left the host or started moving while the lock was released (a promotion
     * re-admits it when it ends). Lock held.
     */
    @GuardedBy("h.lock")
    void toBackOfPolicy(int victim) {
        h.policy.onRemove(victim);
        if (h.hostSlot(victim) >= 0 && !h.is(victim, MOVING | QUEUED)) {
            h.policy.onAdmit(victim, 0, h.hashLo(victim));
        }
    }

    @SuppressWarnings("GuardedBy") // the callers (HostTier, this class) hold blocks.lock, h.lock here
    void dropHostCopy(int blockId) {
        h.policy.onRemove(blockId);
        if (h.hostSlot(blockId) >= 0) {
            h.slots.free(h.hostSlot(blockId));
            h.unplace(blockId);
        }
        h.unmark(blockId, CLEAN);
    }

    /**
     * Takes up to {@code max} host blocks, in policy order, out of the policy and offers each to
     * the mover's host-to-disk queue; a refused offer (queue full) ends the call. A clean copy
     * (the device holds the block too) is dropped instead, at no cost.
     *
     * @param max   most blocks, >= 0
     * @param queue offered each block id; false when full
     * @return blocks queued or dropped
     */
    int queueSpills(int max, java.util.function.IntPredicate queue) {
        if (t.disk == null) {
            return 0;
        }
        h.lock.lock();
        try {
            int done = 0;
            while (done < max) {
                int victim = h.policy.victim();
                if (victim < 0 || (h.hashHi(victim) | h.hashLo(victim)) == 0) {
                    break;
                }
                if (h.is(victim, CLEAN)) { // the device holds it too: dropping costs nothing
                    dropCleanCopy(victim);
                } else if (queue.test(victim)) {
                    h.policy.onRemove(victim);
                    h.mark(victim, QUEUED);
                } else {
                    break;
                }
                done++;
            }
            return done;
        } finally {
            h.lock.unlock();
        }
    }

    /**
     * Drains one entry of the host-to-disk queue: spills the block if it is still queued in its
     * host slot.
     *
     * @param blockId a block id from the queue
     * @return true if it spilled; false if its state changed since it was queued (skipped), or the
     *         disk refused it (it stays on the host)
     */
    boolean spillQueued(int blockId) {
        h.lock.lock();
        try {
            if (!h.is(blockId, QUEUED)) {
                return false;
            }
            h.unmark(blockId, QUEUED);
            if (h.hostSlot(blockId) < 0 || h.is(blockId, MOVING)) {
                return false; // left the host, or a promotion is reading it (it re-admits the block)
            }
            return leaveHost(blockId, false);
        } finally {
            h.lock.unlock();
        }
    }

    /**
     * Drops up to {@code count} host blocks by policy order (clean copies, spills, unreferenced).
     *
     * @param count most blocks to remove, >= 0
     * @return blocks that left the host tier
     */
    int evict(int count) {
        int done = 0;
        h.lock.lock();
        try {
            int attempts = h.policy.size();
            while (done < count && attempts-- > 0) {
                int victim = h.policy.victim();
                if (victim < 0) {
                    break;
                }
                if (h.is(victim, CLEAN)) {
                    dropCleanCopy(victim);
                    done++;
                } else if (leaveHost(victim, true)) {
                    done++;
                } else {
                    toBackOfPolicy(victim);
                }
            }
        } finally {
            h.lock.unlock();
        }
        return done;
    }
}

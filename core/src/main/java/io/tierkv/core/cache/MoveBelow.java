package io.tierkv.core.cache;

import java.lang.foreign.MemorySegment;

import static io.tierkv.core.cache.BlockOwner.ON_DISK;
import static io.tierkv.core.cache.BlockStates.HELD;
import static io.tierkv.core.cache.BlockStates.SEALED;
import static io.tierkv.core.cache.BlockStates.TRANSIT;

/**
 * The spill and load moves between the tiers below (host to disk for room, a mover's queue or a
 * sequence's budget; disk to host for read-ahead), in vLLM's prepare/complete shape with both
 * stores driven from here, and the offer of a host victim to the remote store ({@link #offer}):
 * <ul>
 *   <li>spill: plan under the cache lock (the block TRANSIT; its host copy taken as the source,
 *       {@link HostSlots#prepareSpill}), write with the lock released ({@link DiskRecords#write},
 *       pinned as it is written if the block is referenced), commit under the lock (the pin made
 *       to match whether the block is referenced now, {@link DiskCopies#settleSpillPin}; ON_DISK;
 *       the host slot freed, {@link HostSlots#endSpill}; the id noted to be retired if nothing
 *       references it). A refused write leaves the block in its host slot as it was.</li>
 *   <li>load: plan (the block TRANSIT, its disk copy found held, a host slot reserved by
 *       {@link HostRoom#reserve}), read into the slot with the lock released ({@link
 *       DiskRecords#load}, the slot's bytes lent by {@link HostSlots#view}), commit
 *       (the slot the block's, {@link HostSlots#fill}, its pin released; or the slot given back and
 *       the miss settled, a block left without a copy freed or lost).</li>
 * </ul>
 * One instance per cache, called with the cache lock held once.
 */
final class MoveBelow {

    private final PagedKvCache cache;
    private final BlockStates b;
    private final LowerTier lower;

    MoveBelow(PagedKvCache cache, LowerTier lower) {
        this.cache = cache;
        this.b = cache.blocks;
        this.lower = lower;
    }

    /**
     * Moves a sealed block that is not on the top tier between the tiers below ({@code up}: disk to
     * host, else host to disk), pinned in transit with the lock released while it moves. A load
     * that found the block's only copy missing or damaged leaves it without a copy anywhere: it is
     * freed if nothing references it, else lost now (unindexed, so no match hands it out; its next
     * lease fails). A move that throws leaves the block where it was, or frees it if its last
     * reference ended meanwhile and the index does not hold it.
     *
     * @return whether the block moved
     */
    @SuppressWarnings("GuardedBy") // cache.lock held by the caller (Admission, TierControl, PagedKvCache), another path
    boolean run(int id, boolean up) {
        if (lower == null || cache.closed || b.state(id) != SEALED || b.slot[id] >= 0 || b.inTransit(id)
                || (up && b.hostSlot[id] >= 0)) {
            return false; // closed: its records are freed (a room-making loop may get here after a close)
        }
        b.bits[id] |= TRANSIT;
        int result = NOT_MOVED;
        boolean returned = false;
        try {
            result = up ? load(id) : spill(id);
            returned = true;
        } finally {
            b.bits[id] &= ~TRANSIT;
            if (!returned) { // the move ends by its exception: the block stays where it was, and waiters wake
                cache.endTransit(id); // freed if its last reference ended meanwhile and the index holds it not
                cache.signalChange();
            }
        }
        if (result == MISSED && cache.residence(id) == LowerTier.RESIDENT_NOWHERE) {
            cache.goneBelow(id);
        }
        cache.endTransit(id);
        cache.moves.settle.run(); // a load makes room on the host tier, a spill may evict disk records
        cache.signalChange();
        return result == MOVED;
    }

    /** {@link #load}, {@link #spill} result: the block moved. */
    private static final int MOVED = 0;
    /** {@link #load}, {@link #spill} result: nothing changed (no room, refused, or not movable now). */
    private static final int NOT_MOVED = 1;
    /** {@link #load} result: the block's disk copy is gone (a read that missed, settled; or found gone). */
    private static final int MISSED = 2;

    /** Reads the block's disk record into a host slot reserved for it. Lock held; released for the read. */
    @SuppressWarnings("GuardedBy") // cache.lock held: see run
    private int load(int id) {
        HostSlots host = lower.hostSlots();
        DiskRecords disk = cache.disks.disk;
        if (!cache.disks.held(id)) {
            return MISSED; // no disk copy, or its record went
        }
        int hs = cache.moves.hostRoom.reserve(); // victims may spill for it, the lock released
        if (hs < 0) {
            return NOT_MOVED;
        }
        if (!cache.disks.held(id)) { // its record found gone while room was made (a pin broken meanwhile)
            host.releaseReserved(hs);
            return MISSED;
        }
        long hi = b.hashHi[id];
        long lo = b.hashLo[id];
        int read = DiskRecords.MISSED; // stays a miss if the read throws
        cache.lock.unlock();
        try {
            read = disk.load(id, hi, lo, cache.identities.of(id), host.view(hs));
        } finally {
            cache.lock.lock();
            if (read == DiskRecords.LOADED) {
                cache.disks.releasePin(id); // the host slot holds it now; a spill pins the record again
                host.fill(id, hs); // the disk record stays too, unless it was evicted meanwhile
            } else {
                host.releaseReserved(hs);
            }
        }
        if (read != DiskRecords.LOADED) {
            cache.disks.settleMiss(id, read == DiskRecords.FOREIGN);
            return MISSED;
        }
        return MOVED;
    }

    /**
     * Writes the block's host copy to the disk store and commits where it is. Lock held; released
     * for the write. A write that throws (a store that broke its contract) leaves the block in its
     * host slot, back in the policy.
     */
    @SuppressWarnings("GuardedBy") // cache.lock held: see run
    private int spill(int id) {
        HostSlots host = lower.hostSlots();
        DiskRecords disk = cache.disks.disk;
        if (disk == null) {
            return NOT_MOVED;
        }
        // Copied before the plan: the cache may close (and free its records) while the lock is released.
        MemorySegment identity = cache.identities.copyOf(id);
        if (!host.prepareSpill(id)) {
            return NOT_MOVED;
        }
        int hs = b.hostSlot[id];
        long hi = b.hashHi[id];
        long lo = b.hashLo[id];
        boolean pin = (b.bits[id] & HELD) != 0;
        if (pin) {
            cache.disks.pinningSpills++;
        }
        long stored = DiskRecords.NOT_STORED;
        boolean left = false;
        cache.lock.unlock();
        assert !cache.lock.isHeldByCurrentThread() : "the cache lock held across a disk write: a caller held it twice";
        try {
            stored = disk.write(id, hi, lo, identity, host.view(hs), pin);
        } finally {
            cache.lock.lock();
            if (pin) {
                cache.disks.pinningSpills--;
            }
            assert b.hostSlot[id] == hs : "block " + id + " left its host slot while in transit";
            try {
                if (stored != DiskRecords.NOT_STORED) {
                    left = cache.disks.settleSpillPin(id, hi, lo, pin ? stored : DiskRecords.NO_PIN);
                }
                if (left) {
                    b.below[id] |= ON_DISK; // found again by hash: the cache retires the id if unreferenced
                }
            } finally {
                host.endSpill(id, hs, left);
            }
        }
        if (!left) {
            return NOT_MOVED;
        }
        cache.moves.settle.note(id, hi, lo);
        return MOVED;
    }

    /**
     * Offers a host victim's bytes to the remote store before {@link HostRoom} evicts it, where the
     * host is the lowest local tier: planned as a spill is (the block TRANSIT, its host copy taken
     * as the source, {@link HostSlots#prepareSpill}), copied into the store's outbox with the lock
     * released ({@link RemoteRecords#offer}, which never blocks), and ended with the block still in
     * its host slot ({@link HostSlots#endSpill}), so the caller checks it again before it evicts
     * it: it may have been referenced meanwhile. Nothing is offered for a block without a hash, in
     * transit, or not held in a host slot. Lock held; released for the copy.
     *
     * @param id an unreferenced block held in a host slot
     */
    @SuppressWarnings("GuardedBy") // cache.lock held by the caller (HostRoom), another path
    void offer(int id) {
        RemoteRecords remote = cache.moves.remote;
        long hi = b.hashHi[id];
        long lo = b.hashLo[id];
        if (remote == null || cache.closed || (hi | lo) == 0 || b.inTransit(id) || b.hostSlot[id] < 0) {
            return;
        }
        HostSlots host = lower.hostSlots();
        // Copied before the plan: the cache may close (and free its records) while the lock is released.
        MemorySegment identity = cache.identities.copyOf(id);
        if (!host.prepareSpill(id)) {
            return;
        }
        int hs = b.hostSlot[id];
        b.bits[id] |= TRANSIT;
        cache.lock.unlock();
        assert !cache.lock.isHeldByCurrentThread() : "the cache lock held across a copy out: a caller held it twice";
        try {
            remote.offer(hi, lo, identity, host.view(hs));
        } finally {
            cache.lock.lock();
            b.bits[id] &= ~TRANSIT;
            assert b.hostSlot[id] == hs : "block " + id + " left its host slot while in transit";
            host.endSpill(id, hs, false); // it stays, back in the host policy, until the caller evicts it
            cache.endTransit(id);
            cache.signalChange();
        }
    }
}

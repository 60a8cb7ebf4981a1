package io.tierkv.tiers;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.tierkv.tiers.disk.store.DiskTier;

import static io.tierkv.tiers.HostBlocks.ON_DISK;
import static io.tierkv.tiers.HostBlocks.PINNED;

/**
 * Keeps the disk records of referenced blocks pinned, one pin per id, and settles pins whose
 * records went (broken pins). All methods run with the manager lock held unless they say otherwise.
 *
 * <h2>Referenced blocks are never lost below</h2>
 * Whether a block is referenced is the cache's fact, its HELD bit, read here through {@link
 * HostBlocks#needed} under the one lock; the cache announces its changes ({@link
 * HostTier#pinBelow}, {@link HostTier#unpinBelow}, {@link HostTier#forget}) in the same hold. A
 * host slot never drops a referenced block without a copy elsewhere (it leaves only by a spill, or
 * as a clean copy of a device-resident block). Its disk record is pinned in the disk tier exactly
 * while the block is referenced, ON_DISK and has no host slot (PINNED: this id holds one pin on the
 * record). The pin is taken in the same disk-tier call that writes the record ({@link
 * DiskTier#putPinned} when the block is referenced as the spill starts), so there is no moment at
 * which the record is evictable and already the only copy; if the block became referenced during
 * the spill, the record is pinned before the host slot is
 * dropped, and a record gone by then means the spill failed and the block stays on the host. A
 * disk tier that cannot make room without evicting pinned records refuses the spill
 * ({@code CapacityExhaustedException}, counted in {@link TierStats#diskSpillFailures()}); the
 * block stays in its host slot, and host pressure falls back to the paths that exist for a full
 * host (demotions refused, device admission waits, {@code CapacityExhaustedException} or
 * {@code BudgetExceededException}). Nothing is lost. Unreferenced records stay ordinary LRU
 * records. Disk pins are taken and dropped under the manager lock (before the disk tier's locks);
 * the cache calls in with it held.
 *
 * <h2>Pin ownership, and a pinned record found damaged</h2>
 * A pin names one record (the serial {@link io.tierkv.tiers.disk.store.RecordPins#pin} returns, kept per id), never a key:
 * several ids may hold the same hash (a block sealed while another indexed its hash keeps its own
 * id and shares the record), and a key may hold a new record after the old one went. A pinned
 * record still leaves the disk when it fails verification (found by any reader: a promotion, a
 * read, read-ahead, a match, a spill that verifies it) or is removed; its pins become broken pins
 * ({@link io.tierkv.tiers.disk.store.RecordPins#pinBroken}, asked without the disk lock). Every id holding one finds out the
 * next time anything asks about its disk copy ({@link HostTier#diskCopyHeld}, which the cache asks for
 * where a block is and whether a copy takes over from the device,
 * {@link HostTier#pinBelow}, a promotion, read or read-ahead), and at once for the
 * indexed id through the eviction notice ({@link HostTier#settleDrop}): the copy is gone (ON_DISK
 * and PINNED cleared) and the broken pin released through {@link io.tierkv.tiers.disk.store.RecordPins#unpin}, which touches no
 * other record. A block left without a copy anywhere is then lost as a counted event (the cache
 * marks it LOST: its next lease or read fails with {@code CorruptBlockException}); a block with
 * another copy (device, host) loses nothing.
 *
 * <h2>Reports made without the lock are settled against what holds now</h2>
 * An eviction notice and a read that missed (a promotion, a read, a read-ahead load) are learnt
 * with the manager lock released, and may be stale by the time it is taken: the key may have been
 * written again meanwhile (a later spill of the block, or of another id of the same identity) and
 * pinned for this id by a prefix match. Such a report clears a copy only if it is gone now
 * ({@link #settleIfGone}); a soak run lost a referenced block once in about 45 runs when a
 * read-ahead's miss cleared a record pinned after it.
 */
final class DiskPins {

    private final HostTier t;
    private final HostBlocks h;

    DiskPins(HostTier t) {
        this.t = t;
        this.h = t.blocks;
    }

    /**
     * Whether this id's disk copy is there: ON_DISK, and for a PINNED id its pin not broken. A
     * broken pin (the record failed verification or was removed since) is settled here: the copy
     * is gone ({@link #diskCopyGone}). Lock held.
     */
    @SuppressWarnings("GuardedBy") // the callers (HostTier, HostSlotStore, HostInvariants) hold h.lock here
    boolean diskCopyHeld(int blockId) {
        if (!h.is(blockId, ON_DISK)) {
            return false;
        }
        if (h.is(blockId, PINNED) && !h.closed && t.disk.pinning().pinBroken(h.diskPin(blockId))) {
            diskCopyGone(blockId);
            return false;
        }
        return true;
    }

    /**
     * Counts and reports a read of this id's disk record that missed (a promotion, a read, a
     * read-ahead load), made with the manager lock released, and settles under the lock what it says
     * about the copy. A record of another identity under the key ({@link DiskTier#COLLISION}) is
     * no copy of this block: the copy is gone and the pin, if any, released. Any other miss is
     * re-checked ({@link #settleIfGone}): another id of the same identity may have spilled the
     * key again meanwhile and a prefix match pinned that record for this id; clearing the copy
     * then would lose a referenced block whose record is on disk. Takes the manager lock.
     *
     * @param found what {@link DiskTier#load} returned, {@code < 0}
     */
    void settleMiss(int blockId, int found) {
        t.counters.diskMisses.increment();
        TierEvents.fault("disk miss for block " + blockId);
        h.lock.lock();
        try {
            if (found == DiskTier.COLLISION) {
                diskCopyGone(blockId);
            } else {
                settleIfGone(blockId);
            }
        } finally {
            h.lock.unlock();
        }
    }

    /**
     * Settles a report that this id's disk record went, made with the lock released (an eviction
     * notice, a read that missed): the report may be stale, so the copy is gone only if it still
     * is now. For an id holding a pin that is exactly whether its pin is broken; for one holding
     * none, whether no record holds its key (a key written again since, by a later spill of the
     * same block or of another id of the same identity, is on disk again, and a prefix match may
     * have pinned it for this id meanwhile). A copy gone is cleared ({@link #diskCopyGone}). Lock
     * held.
     *
     * @return whether this id had a disk copy and it is gone now
     */
    @SuppressWarnings("GuardedBy") // the callers (HostTier, HostSlotStore, HostInvariants) hold h.lock here
    boolean settleIfGone(int blockId) {
        boolean gone = h.is(blockId, ON_DISK)
                && (h.is(blockId, PINNED) ? t.disk.pinning().pinBroken(h.diskPin(blockId))
                        : !t.disk.contains(h.hashHi(blockId), h.hashLo(blockId)));
        if (gone) {
            diskCopyGone(blockId);
        }
        return gone;
    }

    /** This id's disk record is gone: clears ON_DISK and releases its pin, if it holds one. Lock held. */
    @SuppressWarnings("GuardedBy") // the callers (HostTier, HostSlotStore, HostInvariants) hold h.lock here
    void diskCopyGone(int blockId) {
        releaseDiskPin(blockId);
        h.clearOnDisk(blockId);
    }

    /**
     * Releases this id's pin, if it holds one: from its record, or the broken pin the record left
     * when it failed verification or was removed (after close there is nothing to release: a
     * lease released late only clears the bit). Lock held.
     */
    @SuppressWarnings("GuardedBy") // the callers (HostTier, HostSlotStore, HostInvariants) hold h.lock here
    void releaseDiskPin(int blockId) {
        if (h.is(blockId, PINNED)) {
            long pin = h.takeDiskPin(blockId);
            if (!h.closed) {
                t.disk.pinning().unpin(h.hashHi(blockId), h.hashLo(blockId), pin);
            }
        }
    }

    /**
     * After a spill, before the host slot goes: makes the record's pin match whether the block is
     * referenced now (the cache may have said so, or the opposite, while the lock was released). Lock
     * held.
     *
     * @param heldPin the pin the spill took ({@link DiskTier#NO_PIN} for none)
     * @return false if the record is no copy to rely on: the block became referenced and its record was
     *         evicted before it could be pinned, or the pinned record failed verification (found
     *         by another reader) meanwhile. The spill then counts as failed and the block stays
     *         on the host
     */
    @SuppressWarnings("GuardedBy") // the callers (HostTier, HostSlotStore, HostInvariants) hold h.lock here
    boolean settlePin(int victim, long hi, long lo, long heldPin) {
        boolean needed = h.needed(victim);
        long pin = heldPin;
        if (pin != DiskTier.NO_PIN && (!needed || t.disk.pinning().pinBroken(pin))) {
            boolean broken = !t.disk.pinning().unpin(hi, lo, pin);
            pin = DiskTier.NO_PIN;
            if (broken) {
                return false;
            }
        } else if (needed && pin == DiskTier.NO_PIN) {
            pin = t.disk.pinning().pin(hi, lo);
            if (pin == DiskTier.NO_PIN) {
                return false;
            }
        }
        if (needed) {
            h.setDiskPin(victim, pin);
        }
        return true;
    }

    /**
     * For a referenced block held on disk without a host slot: pins its record if this id does not
     * hold a pin yet. A record already gone (evicted before the pin; its notice not yet drained,
     * or pinned and since found damaged: a broken pin) clears ON_DISK at once, so nothing trusts
     * it meanwhile ({@link HostTier#diskCopyHeld}). Lock held.
     *
     * @return whether the record is on disk and pinned by this id
     */
    @SuppressWarnings("GuardedBy") // the callers (HostTier, HostSlotStore, HostInvariants) hold h.lock here
    boolean holdDiskCopy(int blockId) {
        byte st = h.state(blockId);
        if (!h.needed(blockId) || (st & ON_DISK) == 0 || h.hostSlot(blockId) >= 0) {
            return false;
        }
        if ((st & PINNED) != 0) {
            return diskCopyHeld(blockId); // false if the pinned record failed verification since
        }
        long pin = t.disk.pinning().pin(h.hashHi(blockId), h.hashLo(blockId));
        if (pin != DiskTier.NO_PIN) {
            h.setDiskPin(blockId, pin);
            return true;
        }
        h.clearOnDisk(blockId);
        return false;
    }

    /** Compares the disk's pins with those the ids hold, in one disk call; see {@code HostInvariants}. Lock held. */
    @SuppressWarnings("GuardedBy") // the callers (HostTier, HostSlotStore, HostInvariants) hold h.lock here
    void checkDiskPins(java.util.List<String> bad) {
        java.util.Map<Long, int[]> holders = new java.util.LinkedHashMap<>(); // pin -> {ids holding it, one of them}
        for (int id = 0; id < h.maxBlocks; id++) {
            if (h.is(id, PINNED)) {
                int[] holder = holders.computeIfAbsent(h.diskPin(id), p -> new int[2]);
                holder[0]++;
                holder[1] = id;
            }
        }
        int n = holders.size();
        long[] his = new long[n];
        long[] los = new long[n];
        long[] pins = new long[n];
        int[] counts = new int[n];
        int i = 0;
        for (var e : holders.entrySet()) {
            int id = e.getValue()[1];
            his[i] = h.hashHi(id);
            los[i] = h.hashLo(id);
            pins[i] = e.getKey();
            counts[i++] = e.getValue()[0];
        }
        String problem = t.disk.pinning().checkPins(his, los, pins, counts, n);
        if (problem != null) {
            bad.add("disk pins: " + problem);
        }
    }
}

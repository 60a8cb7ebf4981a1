package io.tierkv.core.cache;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static io.tierkv.core.cache.BlockOwner.DISK_PINNED;
import static io.tierkv.core.cache.BlockOwner.ON_DISK;
import static io.tierkv.core.cache.BlockStates.HELD;

/**
 * The cache's record of which ids are bound to a disk record (ON_DISK) and which hold a pin on it
 * (DISK_PINNED, the pin kept per id in {@link BlockStates#diskPins}), kept by the cache's own
 * moves: the disk store ({@link DiskRecords}) only writes, reads, pins and unpins records when
 * told. Every method is called with the cache lock held.
 *
 * <h2>Referenced blocks are never lost below</h2>
 * A referenced block's (HELD) disk record is pinned exactly while it is referenced, ON_DISK and
 * has no host slot. A spill of a referenced block takes the pin in the same store call that writes
 * the record ({@link DiskRecords#write}), so there is no moment at which the record is evictable
 * and already the only copy; if the block became referenced during the spill, the record is
 * pinned in the spill's commit before the host slot is dropped ({@link #settleSpillPin}), and a
 * record gone by then means the spill failed and the block stays on the host. A store that cannot
 * make room without evicting pinned records refuses the spill; the block stays in its host slot.
 * Unreferenced records stay ordinary LRU records.
 *
 * <h2>A pinned record found damaged</h2>
 * A pin names one record, never a key: several ids may hold the same hash and share a record, and
 * a key may hold a new record after the old one went. A pinned record still leaves the disk when
 * it fails verification or is removed; its pin becomes broken ({@link DiskRecords#pinBroken}).
 * Every id holding one finds out the next time anything asks about its disk copy ({@link #held}:
 * a residence, a take-over, a pin, a promotion, read or load), and at once for the indexed id
 * through the store's departed keys ({@link SettleBelow}): the copy is gone (ON_DISK and
 * DISK_PINNED cleared) and the broken pin released. A block left without a copy anywhere is then
 * lost as a counted event; a block with another copy loses nothing.
 *
 * <h2>Reports made without the lock are settled against what holds now</h2>
 * A departed key and a read that missed are learnt with the cache lock released and may be stale
 * by the time it is taken: the key may have been written again meanwhile (a later spill of the
 * block, or of another id of the same identity) and pinned for this id by a prefix match. Such a
 * report clears a copy only if it is gone now ({@link #settleIfGone}); a soak run lost a
 * referenced block once in about 45 runs when a read-ahead's miss cleared a record pinned after
 * it.
 */
// Every method runs with the cache lock held by a caller in another class, which Error Prone
// cannot relate to this class's cache.lock (it has no aliasing).
@SuppressWarnings("GuardedBy")
final class DiskCopies {

    private final PagedKvCache cache;
    private final BlockStates b;
    /** The disk store below the host, or null: then no id is ever ON_DISK by a spill. */
    final DiskRecords disk;
    /** Spills in flight that pin as they write: the store holds a pin no id records yet meanwhile. */
    int pinningSpills;

    DiskCopies(PagedKvCache cache, DiskRecords disk) {
        this.cache = cache;
        this.b = cache.blocks;
        this.disk = disk;
    }

    /**
     * {@return whether this id's disk copy is there: ON_DISK, and for a pinned id its pin not
     * broken} A broken pin is settled here: the copy is gone ({@link #letGo}).
     *
     * @param id a block id
     */
    boolean held(int id) {
        if ((b.below[id] & ON_DISK) == 0) {
            return false;
        }
        if ((b.below[id] & DISK_PINNED) != 0 && !cache.closed && disk.pinBroken(pinOf(id))) {
            letGo(id);
            return false;
        }
        return true;
    }

    /**
     * Settles a read of this id's disk record that missed (a promotion, a read, a load), made with
     * the lock released. A record of another identity under the key is no copy of this block: the
     * copy is gone. Any other miss is re-checked ({@link #settleIfGone}).
     *
     * @param foreign whether the record under the key was another identity's
     */
    void settleMiss(int id, boolean foreign) {
        if (foreign) {
            letGo(id);
        } else {
            settleIfGone(id);
        }
    }

    /**
     * Settles a report that this id's disk record went: the copy is gone only if it still is now.
     * For an id holding a pin that is exactly whether its pin is broken; for one holding none,
     * whether no record holds its key.
     *
     * @return whether this id had a disk copy and it is gone now
     */
    boolean settleIfGone(int id) {
        if ((b.below[id] & ON_DISK) == 0 || cache.closed) {
            return false;
        }
        boolean gone = (b.below[id] & DISK_PINNED) != 0 ? disk.pinBroken(pinOf(id))
                : !disk.contains(b.hashHi[id], b.hashLo[id]);
        if (gone) {
            letGo(id);
        }
        return gone;
    }

    /** This id lets go of its disk record (gone, or another copy holds the block now): ON_DISK cleared, pin released. */
    void letGo(int id) {
        releasePin(id);
        b.below[id] &= ~ON_DISK;
    }

    /**
     * Releases this id's pin, if it holds one: from its record, or the broken pin the record left.
     * After close there is nothing to release (the store closes after the cache): the mark goes.
     */
    void releasePin(int id) {
        if ((b.below[id] & DISK_PINNED) != 0) {
            long pin = pinOf(id);
            b.diskPins.remove(id);
            b.below[id] &= ~DISK_PINNED;
            if (!cache.closed) {
                disk.unpin(b.hashHi[id], b.hashLo[id], pin);
            }
        }
    }

    /**
     * For a block now referenced: whether a copy below holds it. A host slot always does (a host
     * slot never drops a referenced block without a copy elsewhere); else its disk record, pinned
     * now ({@link #hold}).
     */
    boolean pinBelow(int id) {
        return b.hostSlot[id] >= 0 || hold(id);
    }

    /**
     * For a block no longer referenced: releases its pin. One held by hash alone (on disk, no host
     * slot) is noted for {@link SettleBelow}, which retires its id if nothing references it then.
     */
    void unpinBelow(int id) {
        releasePin(id);
        if (b.hostSlot[id] < 0 && (b.below[id] & ON_DISK) != 0) {
            cache.moves.settle.note(id, b.hashHi[id], b.hashLo[id]);
        }
    }

    /**
     * For a referenced block held on disk without a host slot: pins its record if this id does
     * not hold a pin yet. A record already gone (evicted before the pin, its departure not yet
     * settled; or pinned and since found damaged) clears ON_DISK at once.
     *
     * @return whether the record is on disk and pinned by this id
     */
    boolean hold(int id) {
        if ((b.bits[id] & HELD) == 0 || (b.below[id] & ON_DISK) == 0 || b.hostSlot[id] >= 0) {
            return false;
        }
        if ((b.below[id] & DISK_PINNED) != 0) {
            return held(id); // false if the pinned record failed verification since
        }
        long pin = disk.pin(b.hashHi[id], b.hashLo[id]);
        if (pin != DiskRecords.NO_PIN) {
            setPin(id, pin);
            return true;
        }
        b.below[id] &= ~ON_DISK;
        return false;
    }

    /**
     * In a spill's commit, before the host slot goes: makes the record's pin match whether the
     * block is referenced now (it may have become so, or stopped, while the lock was released).
     *
     * @param heldPin the pin the write took ({@link DiskRecords#NO_PIN} for none)
     * @return false if the record is no copy to rely on: the block became referenced and its
     *     record was evicted before it could be pinned, or the pinned record failed verification
     *     meanwhile. The spill then fails and the block stays on the host
     */
    boolean settleSpillPin(int id, long hi, long lo, long heldPin) {
        boolean needed = (b.bits[id] & HELD) != 0;
        long pin = heldPin;
        if (pin != DiskRecords.NO_PIN && (!needed || disk.pinBroken(pin))) {
            boolean broken = !disk.unpin(hi, lo, pin);
            pin = DiskRecords.NO_PIN;
            if (broken) {
                return false;
            }
        } else if (needed && pin == DiskRecords.NO_PIN) {
            pin = disk.pin(hi, lo);
            if (pin == DiskRecords.NO_PIN) {
                return false;
            }
        }
        if (needed) {
            setPin(id, pin);
        }
        return true;
    }

    /**
     * Adds what is wrong with the disk copies to {@code bad}: a pin held by an id that is not
     * referenced, ON_DISK and without a host slot; an id bound to disk by a zero hash; and, unless
     * a pinning spill is in flight, pins the ids hold that differ from the store's.
     */
    void check(List<String> bad) {
        Map<Long, int[]> holders = new LinkedHashMap<>(); // pin -> {ids holding it, one of them}
        for (int id = 0; id < b.capacity(); id++) {
            if (b.state(id) == BlockStates.FREE) {
                continue; // a free id held below is CacheInvariants' to report
            }
            boolean pinned = (b.below[id] & DISK_PINNED) != 0;
            if (pinned && ((b.bits[id] & HELD) == 0 || (b.below[id] & ON_DISK) == 0 || b.hostSlot[id] >= 0)) {
                bad.add("block " + id + " holds a disk pin but below bits " + b.below[id] + " host slot "
                        + b.hostSlot[id] + " HELD=" + ((b.bits[id] & HELD) != 0)
                        + " (expected referenced, ON_DISK, no host slot)");
            }
            if ((b.below[id] & ON_DISK) != 0 && (b.hashHi[id] | b.hashLo[id]) == 0) {
                bad.add("block " + id + " is held on disk by a zero hash");
            }
            if (pinned) {
                int[] holder = holders.computeIfAbsent(pinOf(id), p -> new int[2]);
                holder[0]++;
                holder[1] = id;
            }
        }
        if (disk == null || cache.closed || pinningSpills != 0) {
            return;
        }
        int n = holders.size();
        long[] his = new long[n];
        long[] los = new long[n];
        long[] pins = new long[n];
        int[] counts = new int[n];
        int i = 0;
        for (var e : holders.entrySet()) {
            int id = e.getValue()[1];
            his[i] = b.hashHi[id];
            los[i] = b.hashLo[id];
            pins[i] = e.getKey();
            counts[i++] = e.getValue()[0];
        }
        String problem = disk.checkPins(his, los, pins, counts, n);
        if (problem != null) {
            bad.add("disk pins: " + problem);
        }
    }

    /** {@return the pin this id holds, or {@link DiskRecords#NO_PIN}} */
    long pinOf(int id) {
        return b.diskPins.get(id, 0, DiskRecords.NO_PIN);
    }

    private void setPin(int id, long pin) {
        b.diskPins.set(id, 0, pin);
        b.below[id] |= DISK_PINNED;
    }
}

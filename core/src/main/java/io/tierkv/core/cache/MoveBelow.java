package io.tierkv.core.cache;

import static io.tierkv.core.cache.BlockStates.SEALED;
import static io.tierkv.core.cache.BlockStates.TRANSIT;

/**
 * The spill and load moves between the tiers below (host to disk for room, a mover's queue or a
 * sequence's budget; disk to host for read-ahead): plan under the cache lock (the block TRANSIT;
 * a load's host slot reserved by {@link HostRoom#reserve}; a spill's source taken by {@link
 * LowerTier#prepareSpill} in the same hold), copy with the lock released ({@link
 * LowerTier#spill}, {@link LowerTier#load}), commit under the lock (a load that found the only
 * copy gone frees or loses the block). What a spill let go of (the id now kept by hash) reaches
 * the cache as {@link BelowChanges}, settled at the end. One instance per cache, called with the
 * cache lock held once.
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
     * lease fails).
     *
     * @return whether the block moved
     */
    @SuppressWarnings("GuardedBy") // cache.lock held by the caller (Admission, TierControl, PagedKvCache), another path
    boolean run(int id, boolean up) {
        if (lower == null || b.state(id) != SEALED || b.slot[id] >= 0 || b.inTransit(id)) {
            return false;
        }
        b.bits[id] |= TRANSIT;
        boolean ok = false;
        boolean returned = false;
        int hs = -1;
        try {
            if (up) {
                hs = cache.moves.hostRoom.reserve(); // a load's destination; victims may spill for it
            }
            if (up ? hs >= 0 : lower.prepareSpill(id)) { // a spill's source is held in this hold of the lock
                cache.lock.unlock();
                try {
                    ok = up ? lower.load(id, cache.identities.of(id), hs) : lower.spill(id);
                } finally {
                    cache.lock.lock();
                }
            }
            returned = true;
        } finally {
            b.bits[id] &= ~TRANSIT;
            if (!returned) {
                cache.signalChange(); // the move ends by its exception: wake those waiting for it
            }
        }
        if (!ok && up && hs >= 0 && cache.residence(id) == LowerTier.RESIDENT_NOWHERE) {
            cache.goneBelow(id);
        }
        cache.endTransit(id);
        cache.moves.settle.run(); // a load makes room on the host tier, a spill may evict disk records
        cache.signalChange();
        return ok;
    }
}

package io.tierkv.core.cache;

import java.lang.foreign.MemorySegment;

import static io.tierkv.core.cache.BlockStates.TRANSIT;

/**
 * The demote move (top tier to the tier below): plan under the cache lock (the block TRANSIT,
 * its slot the source, a host slot reserved as the destination by {@link HostRoom#reserve}, which
 * may spill or evict host victims for it), copy with the lock released ({@link LowerTier#demote}),
 * commit under the lock (the host slot the block's, {@link HostSlots#fill}, and its top-tier slot
 * released; else the block kept where it was). One instance per cache, called with the cache lock held.
 */
final class Demote {

    private final PagedKvCache cache;
    private final BlockStates b;
    private final LowerTier lower;

    Demote(PagedKvCache cache, LowerTier lower) {
        this.cache = cache;
        this.b = cache.blocks;
        this.lower = lower;
    }

    /**
     * Demotes one sealed block now: copies it down with the lock released, then frees its slot.
     * No host room, or a refused copy, leaves the block on the top tier (out of the policy until its state next
     * changes), or, if nothing references it, drops it from the index entirely (a clean miss).
     * The copy that landed stays below until the commit: the block is in transit, and no move
     * below takes a block in transit ({@link HostRoom} keeps such a victim; {@link MoveBelow}
     * skips it).
     */
    @SuppressWarnings("GuardedBy") // cache.lock held by the caller (Admission, TierControl, PagedKvCache), another path
    void run(int id) {
        b.bits[id] |= TRANSIT;
        boolean ok = false;
        boolean returned = false;
        int hs = -1;
        try {
            hs = cache.moves.hostRoom.reserve(); // victims may spill meanwhile, the lock released
            if (hs >= 0) {
                int src = b.slot[id];
                MemorySegment identity = cache.identities.of(id);
                long hi = b.hashHi[id];
                long lo = b.hashLo[id];
                cache.lock.unlock();
                try {
                    ok = lower.demote(id, hi, lo, identity, src, hs);
                    RemoteRecords remote = cache.moves.remote;
                    if (ok && remote != null && remote.writesThrough() && (hi | lo) != 0) {
                        remote.offer(hi, lo, identity, lower.hostSlots().view(hs)); // hs is still only this move's
                    }
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
        if (ok) {
            cache.disks.letGo(id); // the host slot holds it now; a spill binds it to a record again
            lower.hostSlots().fill(id, hs);
            cache.counters.demotions++;
            cache.releaseSlot(id);
        } else {
            cache.counters.failedDemotions++;
            if (b.refs[id] == 0) {
                cache.counters.evictions++;
                cache.freeBlock(id);
            }
        }
        cache.endTransit(id);
        cache.moves.settle.run(); // the host tier may have spilled or evicted victims to make room for it
        cache.signalChange();
    }
}

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
     * changes, so a loop making room moves on to the next victim), or, if nothing references it,
     * drops it from the index entirely (a clean miss). A move that throws (a copy that failed, a
     * victim's spill or a write-through offer that threw) leaves the block where it was: on the top
     * tier and a candidate again, as before the move (or freed, if its last reference ended
     * meanwhile and the index does not hold it); the exception reaches the caller, so no loop
     * picks it again at once. The copy that landed stays below until the commit: the block is in
     * transit, and no move below takes a block in transit ({@link HostRoom} keeps such a victim;
     * {@link MoveBelow} skips it).
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
                    if (ok) {
                        offerWrittenThrough(hi, lo, identity, hs);
                    }
                } finally {
                    cache.lock.lock();
                }
            }
            returned = true;
        } finally {
            b.bits[id] &= ~TRANSIT;
            if (!returned) { // the move ends by its exception: the block stays as it was, and waiters wake
                cache.refresh(id);
                cache.endTransit(id); // freed if its last reference ended meanwhile and the index holds it not
                cache.signalChange();
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

    /**
     * Offers a block whose copy landed in host slot {@code hs} to a write-through remote store,
     * the lock released; an offer that throws (a store that broke its contract) frees the slot,
     * which the commit never takes then, and the exception ends the move.
     */
    private void offerWrittenThrough(long hi, long lo, MemorySegment identity, int hs) {
        RemoteRecords remote = cache.moves.remote;
        if (remote == null || !remote.writesThrough() || (hi | lo) == 0) {
            return;
        }
        HostSlots host = lower.hostSlots();
        try {
            remote.offer(hi, lo, identity, host.view(hs)); // hs is still only this move's
        } catch (RuntimeException | Error e) {
            host.releaseReserved(hs);
            throw e;
        }
    }
}

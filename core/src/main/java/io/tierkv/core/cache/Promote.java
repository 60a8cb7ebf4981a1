package io.tierkv.core.cache;

import io.tierkv.core.error.CorruptBlockException;
import io.tierkv.core.error.TransferTimeoutException;

import static io.tierkv.core.cache.BlockStates.TRANSIT;

/**
 * The promote move (from the tier below into a top-tier slot taken for it): plan under the cache
 * lock (the block TRANSIT, the slot reserved), copy with the lock released ({@link
 * LowerTier#promote}, host or disk), commit under the lock (the slot is the block's; or freed and
 * the block lost; or parked until a late copy lands). One instance per cache, called with the
 * cache lock held.
 */
final class Promote {

    private final PagedKvCache cache;
    private final BlockStates b;
    private final LowerTier lower;

    Promote(PagedKvCache cache, LowerTier lower) {
        this.cache = cache;
        this.b = cache.blocks;
        this.lower = lower;
    }

    /**
     * Promotes a block into a slot taken for it, with the lock released while it copies; the slot
     * is the block's on success, freed or parked (a late copy) otherwise.
     *
     * @return the slot
     * @throws TransferTimeoutException if the copy does not complete in time
     * @throws CorruptBlockException    if the block is lost below
     */
    @SuppressWarnings("GuardedBy") // cache.lock held by the caller (Admission, TierControl, PagedKvCache), another path
    int run(int id, int s) {
        Admission admission = cache.admission;
        admission.reserve();
        b.bits[id] |= TRANSIT;
        long timeoutNanos = cache.options.promotionTimeoutNanos();
        long hi = b.hashHi[id]; // read under the lock: the block is TRANSIT, so its hash stays
        long lo = b.hashLo[id];
        int result = LowerTier.LOST;
        boolean returned = false;
        cache.lock.unlock();
        try {
            result = lower.promote(id, hi, lo, s, timeoutNanos); // the identity, where needed, from the attached records
            returned = true;
        } finally {
            cache.lock.lock();
            b.bits[id] &= ~TRANSIT;
            admission.unreserve();
            admission.reclaimLateSlots(); // a promotion that waited for a late copy of its block saw it land
            if (!returned) { // it threw before issuing its copy or after waiting for it: the block stays below
                admission.freeSlot(s); // and the slot goes back, which wakes the waiters (a match waiting for this move)
                cache.endTransit(id);
            }
        }
        if (result == LowerTier.PROMOTED) {
            cache.counters.promotions++;
            b.slot[id] = s;
            cache.events.stored(id);
            cache.refresh(id);
            cache.endTransit(id);
            cache.signalChange();
            return s;
        }
        cache.counters.failedPromotions++;
        if (result == LowerTier.TIMED_OUT) {
            admission.parkLateSlot(); // stays allocated until the lower tier says the late copy is done
        } else {
            admission.freeSlot(s);
            cache.markLost(id);
        }
        cache.endTransit(id);
        cache.signalChange();
        if (result == LowerTier.TIMED_OUT) {
            throw new TransferTimeoutException("promote block " + id, timeoutNanos);
        }
        throw new CorruptBlockException("block " + id, "missing or corrupt below the top tier", -1, -1);
    }
}

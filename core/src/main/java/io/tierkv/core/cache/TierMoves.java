package io.tierkv.core.cache;

import io.tierkv.core.error.CorruptBlockException;
import io.tierkv.core.error.TransferTimeoutException;
import java.lang.foreign.MemorySegment;

import static io.tierkv.core.cache.BlockStates.SEALED;
import static io.tierkv.core.cache.BlockStates.TRANSIT;

/**
 * The cache's moves between the top tier and the tier below: demote, promote, and the moves
 * between the tiers below (spill, load) that the cache starts. Each one plans under the cache
 * lock, marks the block TRANSIT, releases the lock for the copy, and takes it back to commit: the
 * new location on success, the source as it was on failure. Every method is called with the
 * cache lock held and returns with it held.
 */
final class TierMoves {

    private final PagedKvCache cache;
    private final BlockStates b;
    private final LowerTier lower;
    /** Filled by {@link LowerTier#drainChanges} and read back in {@link #settleBelow}; lock held. */
    private final BelowChanges changes = new BelowChanges();

    TierMoves(PagedKvCache cache, LowerTier lower) {
        this.cache = cache;
        this.b = cache.blocks;
        this.lower = lower;
    }

    /**
     * Demotes one sealed block now: copies it down with the lock released, then frees its slot.
     * A refused copy leaves the block on the top tier (out of the policy until its state next
     * changes), or, if nothing references it, drops it from the index entirely (a clean miss).
     * So does a copy that is gone from below again by the time the lock is taken back
     * ({@link LowerTier#residence}): the lower tier may move it on (spill it to disk) as soon as it
     * lands, and drop that record before anything references the block, so the top-tier slot is
     * then the block's only copy and a reference taken meanwhile would lose it with the slot.
     */
    @SuppressWarnings("GuardedBy") // cache.lock held by the caller (Admission, TierControl, PagedKvCache), another path
    void demote(int id) {
        b.flags[id] |= TRANSIT;
        int src = b.slot[id];
        MemorySegment identity = cache.identities.of(id);
        long hi = b.hashHi[id];
        long lo = b.hashLo[id];
        boolean ok = false;
        cache.lock.unlock();
        try {
            ok = lower.demote(id, hi, lo, identity, src);
        } finally {
            cache.lock.lock();
            b.flags[id] &= ~TRANSIT;
        }
        ok = ok && lower.residence(id) != LowerTier.RESIDENT_NOWHERE; // its copy below may have gone on down and been dropped meanwhile
        if (ok) {
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
        settleBelow(); // the host tier may have spilled or evicted victims to make room for it
        cache.signalChange();
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
    int promote(int id, int s) {
        Admission admission = cache.admission;
        admission.reserve();
        b.flags[id] |= TRANSIT;
        long timeoutNanos = cache.options.promotionTimeoutNanos();
        int result = LowerTier.LOST;
        cache.lock.unlock();
        try {
            result = lower.promote(id, cache.identities.of(id), s, timeoutNanos);
        } finally {
            cache.lock.lock();
            b.flags[id] &= ~TRANSIT;
            admission.unreserve();
            admission.reclaimLateSlots(); // a promotion that waited for a late copy of its block saw it land
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
    boolean moveBelow(int id, boolean up) {
        if (lower == null || b.state[id] != SEALED || b.slot[id] >= 0 || b.inTransit(id)) {
            return false;
        }
        b.flags[id] |= TRANSIT;
        boolean ok = false;
        cache.lock.unlock();
        try {
            ok = up ? lower.load(id, cache.identities.of(id)) : lower.spill(id);
        } finally {
            cache.lock.lock();
            b.flags[id] &= ~TRANSIT;
        }
        if (!ok && up && lower.residence(id) == LowerTier.RESIDENT_NOWHERE) {
            cache.goneBelow(id);
        }
        cache.endTransit(id);
        settleBelow(); // a load makes room on the host tier, a spill may evict disk records
        cache.signalChange();
        return ok;
    }

    /**
     * Settles what the lower tier let go of on its own ({@link TierControl#settleBelow}). An entry
     * counts only for a SEALED block not on the top tier and not moving that still holds the hash
     * the entry names; then, by where its copy is now: nowhere, it is gone below
     * ({@link PagedKvCache#goneBelow}: freed, or lost if referenced); on disk only, after its host
     * copy left, its id is retired if nothing references it (the record is found again by hash);
     * on the host, nothing. A key's entry ({@link BelowChanges#NO_BLOCK}) names the block indexed
     * under it, and the lower tier settles that block's disk copy first ({@link LowerTier#settleDrop}).
     *
     * @return entries drained
     */
    @SuppressWarnings("GuardedBy") // cache.lock held by the caller (TierControl, this class), another path
    int settleBelow() {
        if (lower == null) {
            return 0;
        }
        changes.clear();
        lower.drainChanges(changes);
        int n = changes.size();
        for (int i = 0; i < n; i++) {
            long hi = changes.hashHi(i);
            long lo = changes.hashLo(i);
            boolean byKey = changes.blockId(i) == BelowChanges.NO_BLOCK;
            int id = byKey ? cache.prefix.index.get(hi, lo) : changes.blockId(i);
            if (id < 0 || b.state[id] != SEALED || b.slot[id] >= 0 || b.inTransit(id)
                    || b.hashHi[id] != hi || b.hashLo[id] != lo) {
                continue; // stale: freed, reused, back up, or moving (its move settles it)
            }
            int where = byKey ? lower.settleDrop(id, hi, lo) : lower.residence(id);
            if (where == LowerTier.RESIDENT_NOWHERE) {
                cache.goneBelow(id);
            } else if (where == LowerTier.RESIDENT_DISK && !byKey && b.refs[id] == 0) {
                cache.counters.retiredIds++;
                cache.freeBlock(id);
            }
        }
        changes.clear();
        return n;
    }

    /**
     * Copies a sealed block to {@code out} from the tier holding it, without promoting it: the
     * block is flagged TRANSIT for the copy (nobody moves, frees or reuses it meanwhile), the copy
     * runs with the lock released, and a block found lost below is marked LOST. Called WITHOUT
     * the lock; takes it itself.
     *
     * @throws CorruptBlockException    if the block is lost below
     * @throws TransferTimeoutException if another move of it does not end in time
     */
    void readSealed(int id, MemorySegment out) {
        int s;
        cache.lock.lock();
        try {
            cache.checkOpen();
            cache.admission.awaitSettled(id, 0); // reads the clock only if the block is moving
            cache.policy.onAccess(id);
            b.flags[id] |= TRANSIT;
            cache.refresh(id);
            s = b.slot[id];
        } finally {
            cache.lock.unlock();
        }
        boolean copied = false;
        boolean lost = false;
        try {
            if (s >= 0) {
                MemorySegment.copy(cache.slotMemory(s), 0, out, 0, cache.blockBytes);
                copied = true;
            } else {
                copied = lower.read(id, cache.identities.of(id), out);
                lost = !copied;
            }
        } finally {
            cache.lock.lock();
            try {
                b.flags[id] &= ~TRANSIT;
                if (lost) {
                    cache.markLost(id);
                } else if (copied && s >= 0) {
                    cache.counters.deviceReads++;
                }
                cache.refresh(id);
                cache.endTransit(id);
                cache.signalChange();
            } finally {
                cache.lock.unlock();
            }
        }
        if (lost) {
            throw new CorruptBlockException("block " + id, "missing or corrupt below the top tier", -1, -1);
        }
    }
}

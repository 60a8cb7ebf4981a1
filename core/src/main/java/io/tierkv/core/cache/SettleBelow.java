package io.tierkv.core.cache;

import static io.tierkv.core.cache.BlockStates.SEALED;

/**
 * Settles what the tiers below let go of on their own ({@link LowerTier#drainChanges}): the one
 * place the cache learns of evictions and spills it did not start, and decides under its lock what
 * they mean for each block. One instance per cache, called with the cache lock held.
 */
final class SettleBelow {

    private final PagedKvCache cache;
    private final BlockStates b;
    private final LowerTier lower;
    /** Filled by {@link LowerTier#drainChanges} and read back in {@link #run}; lock held. */
    private final BelowChanges changes = new BelowChanges();

    SettleBelow(PagedKvCache cache, LowerTier lower) {
        this.cache = cache;
        this.b = cache.blocks;
        this.lower = lower;
    }

    /**
     * Settles what the lower tier let go of on its own ({@link TierControl#settleBelow}). An entry
     * counts only for a SEALED block not on the top tier and not moving that still holds the hash
     * the entry names; then, by where its copy is now: nowhere, it is gone below
     * ({@link PagedKvCache#goneBelow}: freed, or lost if referenced); on disk only, after its host
     * copy left, its id is retired if nothing references it (the record is found again by hash);
     * on the host, nothing. A key's entry ({@link BelowChanges#NO_BLOCK}) names the block indexed
     * under it, and the lower tier settles that block's disk copy first
     * ({@link LowerTier#settleDrop}). Nothing is drained once the cache is closed.
     *
     * @return entries drained
     */
    @SuppressWarnings("GuardedBy") // cache.lock held by the caller (TierControl, this class), another path
    int run() {
        if (lower == null || cache.closed) {
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
}

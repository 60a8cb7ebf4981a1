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
    /** Entries to settle: those kept from the last run, then what {@link LowerTier#drainChanges} added; lock held. */
    private BelowChanges changes = new BelowChanges();
    /** Entries kept for the next run (their blocks were moving); swapped with {@link #changes}; lock held. */
    private BelowChanges kept = new BelowChanges();
    /** Ids the cache's own moves let go of ({@link #note}), settled by the next run; lock held. */
    private final BelowChanges noted = new BelowChanges();
    /** Whether the last run kept entries, or ids were noted since: read without the lock by {@link #mayHaveWork}. */
    private volatile boolean keptAny;

    SettleBelow(PagedKvCache cache, LowerTier lower) {
        this.cache = cache;
        this.b = cache.blocks;
        this.lower = lower;
    }

    /**
     * Settles what the lower tier let go of ({@link TierControl#settleBelow}). An entry
     * counts only for a SEALED block not on the top tier and not moving that still holds the hash
     * the entry names; then, by where its copy is now: nowhere, it is gone below
     * ({@link PagedKvCache#goneBelow}: freed, or lost if referenced); on disk only, after its host
     * copy left (or its reference ended, {@link #note}), its id is retired if nothing references it
     * (the record is found again by hash);
     * on the host, nothing. A key's entry ({@link BelowChanges#NO_BLOCK}) names the block indexed
     * under it, whose disk copy is settled first ({@link DiskCopies#settleIfGone}: the notice
     * may be stale, the key written again since). An entry whose block is moving (in transit) is kept for the
     * next run: the move may end with the block below (a load, a failed promotion) and the copy
     * the entry reports gone. So is every entry after one whose
     * settling threw. Nothing is drained once the cache is closed.
     *
     * @return entries settled or found stale (not those kept)
     */
    @SuppressWarnings("GuardedBy") // cache.lock held by the caller (TierControl, this class), another path
    int run() {
        if (lower == null || cache.closed) {
            return 0;
        }
        noted.moveTo(changes);
        lower.drainChanges(changes);
        int n = changes.size();
        int i = 0;
        try {
            for (; i < n; i++) {
                settle(i);
            }
        } finally {
            for (int j = i + 1; j < n; j++) {
                kept.add(changes.blockId(j), changes.hashHi(j), changes.hashLo(j)); // after one that threw
            }
            BelowChanges next = kept;
            kept = changes;
            kept.clear();
            changes = next;
            keptAny = changes.size() > 0 || noted.size() > 0; // noted while this run settled
        }
        return n - changes.size();
    }

    /**
     * Notes a block whose host copy the cache's own move let go of (a spill), or whose reference
     * ended while only its disk record holds it, for the next run: an id held by hash alone is
     * retired then if nothing references it (the record is found again by hash). Lock held.
     */
    void note(int id, long hashHi, long hashLo) {
        noted.add(id, hashHi, hashLo);
        keptAny = true;
    }

    /**
     * Whether a run may find anything: entries kept from the last run, or changes the lower tier
     * says it holds ({@link LowerTier#hasChanges}). Without the lock: a change that arrives just
     * after a false answer waits for the next call.
     */
    boolean mayHaveWork() {
        return lower != null && (keptAny || lower.hasChanges());
    }

    /** Settles entry {@code i} of {@link #changes}, or keeps it for the next run if its block is moving. */
    @SuppressWarnings("GuardedBy") // cache.lock held: see run
    private void settle(int i) {
        long hi = changes.hashHi(i);
        long lo = changes.hashLo(i);
        boolean byKey = changes.blockId(i) == BelowChanges.NO_BLOCK;
        int id = byKey ? cache.prefix.index.get(hi, lo) : changes.blockId(i);
        if (id < 0 || b.state(id) != SEALED || b.hashHi[id] != hi || b.hashLo[id] != lo) {
            return; // stale: freed or reused
        }
        if (b.inTransit(id)) { // before the top-tier check: a demotion in flight still has its slot
            kept.add(changes.blockId(i), hi, lo);
            return;
        }
        if (b.slot[id] >= 0) {
            return; // back on the top tier
        }
        if (byKey) {
            cache.disks.settleIfGone(id);
        }
        int where = cache.residence(id);
        if (where == LowerTier.RESIDENT_NOWHERE) {
            cache.goneBelow(id);
        } else if (where == LowerTier.RESIDENT_DISK && !byKey && b.refs[id] == 0) {
            cache.counters.retiredIds++;
            cache.freeBlock(id);
        }
    }
}

package io.tierkv.core.cache;

/**
 * The cache's event counters, one field per {@link CacheStats} counter of the same name,
 * incremented in place by the parts of the cache that count them. Not thread-safe: written and
 * read under the cache lock.
 */
final class CacheCounters {

    long prefixHitBlocks;
    long prefixHitBlocksBelow;
    long prefixMissBlocks;
    long hashCollisions;
    long evictions;
    long demotions;
    long cleanDrops;
    long failedDemotions;
    long promotions;
    long failedPromotions;
    long copiesOnWrite;
    long deviceReads;
    long lostBlocks;
    long retiredIds;
    long admissionWaits;
    long admissionFailures;
    long hostAllocationFailures;

    /**
     * A snapshot of these counters with the cache's gauges and its budget's counters.
     *
     * @param deviceCapacityBlocks top-tier slots
     * @param deviceUsedBlocks     top-tier slots in use
     * @param liveBlocks           block ids in use
     * @param cachedBlocks         sealed blocks nobody references
     * @param leasedOnlyBlocks     sealed blocks that leases alone hold
     * @param indexedBlocks        prefix index entries
     * @param budget               the per-cache budgets, for their counters
     * @return the snapshot
     */
    CacheStats snapshot(int deviceCapacityBlocks, int deviceUsedBlocks, int liveBlocks, int cachedBlocks,
            int leasedOnlyBlocks, int indexedBlocks, CacheBudget budget) {
        return new CacheStats(deviceCapacityBlocks, deviceUsedBlocks, liveBlocks, cachedBlocks, indexedBlocks,
                prefixHitBlocks, prefixHitBlocksBelow, prefixMissBlocks, hashCollisions, evictions,
                demotions, cleanDrops, failedDemotions, promotions, failedPromotions, copiesOnWrite,
                retiredIds, admissionWaits, admissionFailures, budget.demotions(), budget.spills(),
                budget.refusedSpills(), deviceReads, lostBlocks, leasedOnlyBlocks, hostAllocationFailures);
    }
}

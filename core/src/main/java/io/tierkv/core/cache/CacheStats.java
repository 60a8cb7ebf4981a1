package io.tierkv.core.cache;

/**
 * An immutable snapshot of a {@link PagedKvCache}'s counters.
 *
 * @param deviceCapacityBlocks top-tier slots
 * @param deviceUsedBlocks     top-tier slots holding a block or reserved for a move
 * @param liveBlocks           block ids in use (any tier)
 * @param cachedBlocks         blocks with reference count 0 and a hash (reusable, evictable)
 * @param indexedBlocks        entries in the prefix index
 * @param prefixHitBlocks      full blocks matched (any tier)
 * @param prefixHitBlocksBelow of those, blocks found below the top tier
 * @param prefixMissBlocks     lookups that ended a match (no entry, token ids differed, or the block
 *                             held 65,535 references)
 * @param hashCollisions       hash hits rejected because the stored block identity differed (context,
 *                             parent hash or token ids), in the index or below it
 * @param evictions            blocks dropped entirely to make room
 * @param demotions            blocks copied down and removed from the top tier
 * @param cleanDrops           top-tier copies dropped because a clean copy existed below
 * @param failedDemotions      demotions the lower tier refused (source kept)
 * @param promotions           blocks copied back up
 * @param failedPromotions     promotions that found the block lost or timed out
 * @param copiesOnWrite        shared unsealed blocks copied before a divergent write
 * @param retiredIds           unreferenced block ids freed because their bytes are kept by hash below (disk)
 * @param admissionWaits       allocations that had to wait for space
 * @param admissionFailures    allocations that failed with CapacityExhaustedException
 * @param budgetDemotions      a sequence's own blocks demoted to keep it within its per-cache device budget
 * @param budgetSpills         a sequence's own host blocks spilled to disk to keep it within its host budget
 * @param budgetRefusedSpills  such spills refused by the sequence's disk budget or by the disk tier
 * @param deviceReads          whole-block reads ({@link Sequence#readBlock}) served from the top tier
 * @param lostBlocks           blocks a sequence's table references, found lost below (their only copy
 *                             missing or damaged), each counted once: unindexed, and every lease or read
 *                             of them fails with {@link io.tierkv.core.error.CorruptBlockException} until
 *                             their references end
 * @param leasedOnlyBlocks     sealed blocks that leases alone hold now, no sequence's table: a
 *                             read-ahead promoting a block ahead of its lease ({@link
 *                             TierControl#prefetch}, on a mover), or a lease on a block whose sequences
 *                             closed. Not in {@code cachedBlocks} meanwhile; with every sequence closed
 *                             and every runtime lease released, {@code liveBlocks - cachedBlocks -
 *                             leasedOnlyBlocks} counts exactly the ids leaked, in one snapshot, while
 *                             the movers run
 * @param hostAllocationFailures copies to the host (demotions, read-ahead loads, remote fetches)
 *                             refused because no host slot could be made free ({@code HostRoom});
 *                             0 without a lower tier
 */
public record CacheStats(int deviceCapacityBlocks, int deviceUsedBlocks, int liveBlocks, int cachedBlocks,
        int indexedBlocks, long prefixHitBlocks, long prefixHitBlocksBelow, long prefixMissBlocks,
        long hashCollisions, long evictions, long demotions, long cleanDrops, long failedDemotions,
        long promotions, long failedPromotions, long copiesOnWrite, long retiredIds, long admissionWaits,
        long admissionFailures, long budgetDemotions, long budgetSpills, long budgetRefusedSpills,
        long deviceReads, long lostBlocks, int leasedOnlyBlocks, long hostAllocationFailures) {
}

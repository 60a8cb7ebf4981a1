package io.tierkv.tiers;

import io.tierkv.core.StoreStats;
import io.tierkv.core.cache.CacheStats;
import io.tierkv.core.pressure.PressureMode;
import io.tierkv.tiers.disk.DiskStats;
import java.util.Map;

/**
 * An immutable snapshot of a {@link KvBlockManager}.
 *
 * @param cache                 the block model's counters (device tier, prefix hits and misses, evictions)
 * @param hostCapacityBlocks    host slots
 * @param hostUsedBlocks        host slots in use
 * @param demotions             device to host moves
 * @param promotions            host (or disk) to device moves
 * @param diskSpills            host to disk moves
 * @param diskLoads             disk to device loads (through staging)
 * @param diskToHost            disk to host loads (read-ahead of blocks held only on disk)
 * @param diskMisses            disk reads that found nothing usable (missing or corrupt)
 * @param diskSpillFailures     spills the disk tier refused (disk full, reservation failed, or no room
 *                              it could make without evicting records pinned for referenced blocks);
 *                              the block stayed on the host
 * @param diskAdoptions         prefix hits served from disk records without a live block id
 * @param hostAllocationFailures copies to the host (demotions, read-ahead loads, remote fetches) refused
 *                              because no host slot could be made (the cache's count, {@link
 *                              io.tierkv.core.cache.CacheStats#hostAllocationFailures})
 * @param hostCleanDrops        clean host copies dropped to make room
 * @param hostEvictions         unreferenced blocks freed to make host room
 * @param moverErrors           errors sent to the mover's handler
 * @param queues                the mover's bounded queue per path: offers, rejections, moves, skips
 * @param pinnedBytesRequested  host bytes asked to be pinned
 * @param pinnedBytes           host bytes actually pinned
 * @param pressureMode          mode in force
 * @param nanosInMode           time spent in each mode
 * @param disk                  the disk tier's counters, or null without a disk tier
 * @param hostReads             whole-block reads ({@code Sequence.readBlock}) served from the host tier
 * @param diskReads             whole-block reads served from the disk tier (checksum verified)
 * @param remote                the remote tier's counters, or null without one
 */
public record TierStats(CacheStats cache, int hostCapacityBlocks, int hostUsedBlocks, MoveStats demotions,
        MoveStats promotions, MoveStats diskSpills, MoveStats diskLoads, MoveStats diskToHost, long diskMisses,
        long diskSpillFailures,
        long diskAdoptions,
        long hostAllocationFailures, long hostCleanDrops, long hostEvictions, long moverErrors,
        Map<MovePath, QueueStats> queues,
        long pinnedBytesRequested, long pinnedBytes, PressureMode pressureMode, Map<PressureMode, Long> nanosInMode,
        DiskStats disk, MoveStats hostReads, MoveStats diskReads, RemoteTierStats remote) {

    /**
     * Validates and copies.
     *
     * @throws NullPointerException if {@code queues} is null
     */
    public TierStats {
        queues = Map.copyOf(queues);
    }

    /**
     * The remote tier: the store's own counters and what the manager sent and fetched.
     *
     * @param where        the store, as it describes itself (its URL)
     * @param store        the store's counters: lookups, hits, bytes each way, faults, the breaker
     * @param pushOffered  blocks that left the lowest local tier and were offered to the outbox
     * @param pushDropped  of those, blocks not sent because the outbox was full
     * @param pushPending  blocks in the outbox now, not yet answered by the store
     * @param fetched      blocks prefix matches fetched from the store into host slots
     * @param adopted      of those, blocks the matches took (the rest were freed unused)
     */
    public record RemoteTierStats(String where, StoreStats store, long pushOffered,
            long pushDropped, int pushPending, long fetched, long adopted) {
    }

    /**
     * One path's bounded queue in the mover.
     *
     * @param capacity  most entries waiting
     * @param depth     entries waiting now
     * @param queued    offers accepted
     * @param rejected  offers refused because the queue was full
     * @param moved     entries drained whose block moved
     * @param skipped   entries drained that moved nothing: the block had changed state since it
     *                  was queued (freed, its id reused, leased, moved already), or the target
     *                  refused it (no room, a disk refusal or miss); nothing lost either way
     * @param cancelled entries dropped at shutdown
     */
    public record QueueStats(int capacity, int depth, long queued, long rejected, long moved, long skipped,
            long cancelled) {
    }

    /**
     * One direction of moves.
     *
     * @param blocks      blocks moved
     * @param bytes       bytes moved
     * @param p50Nanos    median latency (demotions and promotions: of one move in eight, the sample
     *                    their timing takes; every other direction times each move)
     * @param p99Nanos    99th percentile latency, sampled as {@code p50Nanos}
     */
    public record MoveStats(long blocks, long bytes, long p50Nanos, long p99Nanos) {

        static MoveStats of(TierCounters.Move m) {
            return m.snapshot();
        }
    }
}

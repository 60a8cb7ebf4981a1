package io.tierkv.bench.cli;

import io.tierkv.tiers.TierStats;
import java.util.List;
import java.util.Locale;

/**
 * The outcome of one replay: what {@code tierkv replay} prints and {@code --report} writes as JSON.
 *
 * <h2>Definitions</h2>
 * <ul>
 *   <li><b>hitRate</b> = hitTokens / promptTokens, token-weighted over every prompt token of every
 *       request (rejected requests included, as misses): a request's hit tokens are its matched
 *       full blocks times the trace's block size, capped at its prompt length (the trace's last,
 *       partial block is stored as a full block of tokens derived from its id, so it can hit).
 *   <li><b>ceilingHitRate</b>: the same quantity for an infinite cache, computed beside the replay
 *       from a set of the ids seen so far (a request hits its longest leading run of seen ids).
 *   <li><b>hits</b>: matched blocks by the tier the match found them on: device vs below is
 *       the manager's own prefix-hit counters (exact); below is split into disk = min(below,
 *       disk-to-device loads) and host = the rest. Exact with {@code --movers 0}; with movers,
 *       promotion on match can load a block from disk twice (promoted, dropped, promoted
 *       again), which tilts the split towards disk.
 *   <li><b>matchPromote</b>: per request, the wall time of {@code matchPrefix} plus leasing every
 *       matched block onto the device (promotions included, payload verification excluded).
 * </ul>
 *
 * @param source             where the requests came from
 * @param format             mooncake, azure or generator
 * @param traceBlockTokens   block size the trace's ids were cut at
 * @param setup              the configuration
 * @param requests           requests replayed
 * @param rejectedRequests   requests that could not get blocks in time (capacity exhausted)
 * @param firstRejection     why the first rejected request was rejected, or null
 * @param promptTokens       sum of prompt lengths
 * @param hitTokens          prompt tokens served from the cache (see hitRate)
 * @param hitRate            hitTokens / promptTokens
 * @param ceilingHitRate     the infinite-capacity hit rate of the same requests
 * @param prefillTokens      prompt tokens written (misses, padded to whole blocks)
 * @param decodeTokens       answer tokens appended
 * @param hits               matched blocks by tier
 * @param moves              blocks and bytes moved per direction
 * @param events             demotions, promotions, evictions by cause, failures
 * @param matchPromote       latency of match + promote, microseconds
 * @param wallSeconds        wall time of the replay (manager construction excluded)
 * @param requestsPerSecond  requests / wallSeconds
 * @param tokensPerSecond    (prompt + decode tokens) / wallSeconds
 * @param invariantViolations the manager's invariant check after the replay (empty when consistent)
 * @param remote             the remote tier's counters (store lookups, hits, bytes each way, faults,
 *                           breaker; blocks fetched, adopted, pushed), or null without {@code --remote}
 */
public record ReplayReport(String source, String format, int traceBlockTokens, Setup setup, long requests,
        long rejectedRequests, String firstRejection, long promptTokens, long hitTokens, double hitRate, double ceilingHitRate,
        long prefillTokens, long decodeTokens, Hits hits, Moves moves, Events events, Latency matchPromote,
        double wallSeconds, double requestsPerSecond, double tokensPerSecond, List<String> invariantViolations,
        TierStats.RemoteTierStats remote) {

    /**
     * The configuration of a replay.
     *
     * @param layout          layout as text
     * @param blockTokens     manager block size B
     * @param bytesPerBlock   bytes of one block
     * @param tiered          true: KvBlockManager (device, host, disk); false: single-tier block model
     * @param deviceBlocks    device capacity in blocks
     * @param deviceTokens    device capacity in tokens
     * @param hostBlocks      host capacity in blocks
     * @param diskBytes       disk budget in bytes (0: none)
     * @param compression     disk compression
     * @param policy          eviction policy
     * @param payload         full or none
     * @param recentBlocks    recent blocks protected on the device
     * @param movers          mover threads
     * @param maxDecodeTokens decode cap per request (-1: none)
     * @param speed           timestamp speed factor (0: as fast as possible)
     */
    public record Setup(String layout, int blockTokens, long bytesPerBlock, boolean tiered, long deviceBlocks,
            long deviceTokens, long hostBlocks, long diskBytes, String compression, String policy, String payload,
            int recentBlocks, int movers, int maxDecodeTokens, double speed) {
    }

    /**
     * Matched blocks by tier.
     *
     * @param matchedBlocks manager blocks matched by prefix ({@code CacheStats.prefixHitBlocks}; a request
     *                      that starts over after a lost block counts its matches again)
     * @param device        found on the device by the match ({@code CacheStats.prefixHitBlocks - prefixHitBlocksBelow})
     * @param host          found below the device and not loaded from disk
     * @param disk          found below the device and loaded from the disk tier ({@code TierStats.diskLoads})
     * @param lost          matched blocks whose lease failed because their bytes were gone below (their only
     *                      copy missing or found damaged); never read; the request started over. A lost block
     *                      that no detected corruption explains ({@code lost > events.corruptRecords}) makes
     *                      {@code tierkv replay} exit with 1
     */
    public record Hits(long matchedBlocks, long device, long host, long disk, long lost) {
    }

    /**
     * One direction of block moves.
     *
     * @param blocks blocks moved
     * @param bytes  bytes moved
     */
    public record Move(long blocks, long bytes) {
    }

    /**
     * Block moves per direction, and payload traffic.
     *
     * @param deviceToHost    demotions
     * @param hostToDevice    promotions from the host tier
     * @param hostToDisk      spills to disk
     * @param diskToDevice    promotions from the disk tier (through the staging buffer)
     * @param payloadWritten  bytes written into blocks by the replay (prefill and decode)
     * @param payloadVerified bytes read back and checked (payload full)
     */
    public record Moves(Move deviceToHost, Move hostToDevice, Move hostToDisk, Move diskToDevice,
            long payloadWritten, long payloadVerified) {
    }

    /**
     * Tier events.
     *
     * @param demotions         blocks copied down from the device
     * @param promotions        blocks copied up to the device
     * @param failedDemotions   demotions the lower tier refused
     * @param failedPromotions  promotions that failed (lost or timed out)
     * @param evictions         blocks dropped from the cache entirely (any tier)
     * @param hostEvictions     of which: unreferenced blocks freed to make host room (no disk below)
     * @param diskEvictions     disk records dropped to stay within the disk budget; a record held by
     *                          hash alone (its block id retired) is not counted in {@code evictions},
     *                          so this may exceed it
     * @param deviceCleanDrops  device copies dropped because a clean copy existed below
     * @param hostCleanDrops    clean host copies dropped to make room
     * @param diskSpills        blocks written from host to disk
     * @param copiesOnWrite     shared unsealed blocks copied before a write
     * @param admissionFailures allocations that failed (requests rejected)
     * @param verifyFailures    matched blocks whose bytes differed from what was written
     * @param corruptRecords    disk records found damaged and quarantined ({@code DiskStats.corruptMisses})
     * @param compressionRatio  disk raw / stored bytes (1.0 without disk)
     */
    public record Events(long demotions, long promotions, long failedDemotions, long failedPromotions, long evictions,
            long hostEvictions, long diskEvictions, long deviceCleanDrops, long hostCleanDrops, long diskSpills,
            long copiesOnWrite, long admissionFailures, long verifyFailures, long corruptRecords,
            double compressionRatio) {
    }

    /**
     * A latency distribution in microseconds.
     *
     * @param count  samples
     * @param mean   mean
     * @param p50    median
     * @param p90    90th percentile
     * @param p99    99th percentile
     * @param p999   99.9th percentile
     * @param max    maximum
     */
    public record Latency(long count, double mean, double p50, double p90, double p99, double p999, double max) {
    }

    /**
     * The human-readable summary printed after a replay.
     *
     * @return several lines of text
     */
    public String summary() {
        StringBuilder b = new StringBuilder();
        Setup s = setup;
        line(b, "source", source + " (" + format + ", ids per " + traceBlockTokens + " tokens)");
        line(b, "layout", s.layout + ", B=" + s.blockTokens + ", " + Sizes.bytes(s.bytesPerBlock) + " per block");
        line(b, "tiers", s.tiered
                ? "device " + s.deviceBlocks + " blocks (" + s.deviceTokens + " tokens), host " + s.hostBlocks
                        + " blocks" + (s.diskBytes > 0 ? ", disk " + Sizes.bytes(s.diskBytes) + " " + s.compression
                                : ", no disk")
                : "single tier: device " + s.deviceBlocks + " blocks (" + s.deviceTokens + " tokens), no lower tier");
        line(b, "policy", s.policy + ", payload " + s.payload + ", movers " + s.movers + ", recent " + s.recentBlocks
                + (s.maxDecodeTokens >= 0 ? ", decode cap " + s.maxDecodeTokens : ""));
        line(b, "requests", requests + (rejectedRequests > 0 ? " (" + rejectedRequests + " rejected; first: "
                + firstRejection + ")" : ""));
        line(b, "prompt tokens", promptTokens + " (prefilled " + prefillTokens + ", decoded " + decodeTokens + ")");
        line(b, "hit rate", String.format(Locale.ROOT, "%.4f  (%d tokens; infinite-capacity ceiling %.4f)", hitRate,
                hitTokens, ceilingHitRate));
        line(b, "hits by tier", String.format(Locale.ROOT, "device %d, host %d, disk %d blocks (of %d matched%s)",
                hits.device, hits.host, hits.disk, hits.matchedBlocks, hits.lost > 0 ? ", " + hits.lost + " lost"
                        + (hits.lost > events.corruptRecords ? ", NOT EXPLAINED by the " + events.corruptRecords
                                + " damaged disk records found" : "") : ""));
        line(b, "moved", "device->host " + mv(moves.deviceToHost) + ", host->device " + mv(moves.hostToDevice)
                + ", host->disk " + mv(moves.hostToDisk) + ", disk->device " + mv(moves.diskToDevice));
        line(b, "payload", "written " + Sizes.bytes(moves.payloadWritten) + ", verified "
                + Sizes.bytes(moves.payloadVerified) + (events.verifyFailures > 0
                        ? ", " + events.verifyFailures + " BLOCKS DIFFERED" : ""));
        line(b, "demotions", events.demotions + " (failed " + events.failedDemotions + "), promotions "
                + events.promotions + " (failed " + events.failedPromotions + ")");
        line(b, "evictions", events.evictions + " blocks freed (host full " + events.hostEvictions
                + " of them); disk budget dropped " + events.diskEvictions
                + " records (those held by hash alone are not in the blocks freed); clean drops device " + events.deviceCleanDrops + ", host "
                + events.hostCleanDrops + "; disk spills " + events.diskSpills
                + String.format(Locale.ROOT, " (ratio %.2f)", events.compressionRatio));
        if (remote != null) {
            var st = remote.store();
            line(b, "remote", String.format(Locale.ROOT, "%s: %d lookups found %d blocks; fetched %d (%d adopted by "
                    + "matches, counted in host hits above); sent %d of %d offered (%d dropped by a full outbox, %d "
                    + "by the store, %d present, %d still in the outbox); out %s, in %s; %d timeouts, %d errors, %d "
                    + "damaged, %d collisions, breaker %s", remote.where(), st.lookups(), st.lookupHits(),
                    remote.fetched(), remote.adopted(), st.puts(), remote.pushOffered(), remote.pushDropped(),
                    st.putsDropped(), st.putsPresent(), remote.pushPending(),
                    Sizes.bytes(st.bytesWritten()), Sizes.bytes(st.bytesRead()), st.timeouts(), st.errors(),
                    st.damaged(), st.collisions(), st.breakerState()));
        }
        line(b, "match+promote", String.format(Locale.ROOT,
                "p50 %.1f us, p90 %.1f us, p99 %.1f us, p99.9 %.1f us, max %.1f us (mean %.1f us)", matchPromote.p50,
                matchPromote.p90, matchPromote.p99, matchPromote.p999, matchPromote.max, matchPromote.mean));
        line(b, "wall time", String.format(Locale.ROOT, "%.2f s, %.1f requests/s, %.0f tokens/s", wallSeconds,
                requestsPerSecond, tokensPerSecond));
        if (!invariantViolations.isEmpty()) {
            line(b, "INVARIANTS", invariantViolations.size() + " violated: " + invariantViolations.get(0));
        }
        return b.toString();
    }

    private static String mv(Move m) {
        return m.blocks + " (" + Sizes.bytes(m.bytes) + ")";
    }

    private static void line(StringBuilder b, String key, String value) {
        b.append(String.format(Locale.ROOT, "%-14s %s%n", key + ":", value));
    }
}

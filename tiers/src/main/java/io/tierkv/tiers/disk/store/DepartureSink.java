package io.tierkv.tiers.disk.store;

import java.lang.foreign.MemorySegment;

/**
 * Receives the records the tier evicts, verified, just before their bytes go: how blocks
 * leaving the lowest local tier reach the tier below (a remote store).
 */
@FunctionalInterface
public interface DepartureSink {
    /**
     * A verified record is about to be evicted. Called with the disk tier's lock held: copy
     * what is kept and return at once (never block, never call the tier). The segments are
     * valid for the call only.
     *
     * @param hashHi   block hash, high 64 bits
     * @param hashLo   block hash, low 64 bits
     * @param identity the record's {@link io.tierkv.core.prefix.BlockIdentity}
     * @param payload  the block's bytes, decoded
     */
    void departing(long hashHi, long hashLo, MemorySegment identity, MemorySegment payload);
}

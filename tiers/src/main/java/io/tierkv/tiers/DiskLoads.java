package io.tierkv.tiers;

import io.tierkv.core.cache.LowerTier;
import io.tierkv.natives.GpuEvent;
import io.tierkv.tiers.disk.store.DiskTier;
import java.lang.foreign.MemorySegment;

/**
 * The host tier's read of a disk record for the cache's promotion of a block held only on disk,
 * through a staging buffer to the device (the cache's read-ahead loads and reads out read the
 * disk store themselves, {@code DiskRecordStore}). It reads with the manager lock released, under
 * the key the cache passes, gets bytes only from a record of the identity the cache passes, and counts
 * a miss ({@link TierStats#diskMisses()}); what a miss means for the block's copy the cache settles
 * under its lock ({@code DiskCopies}). The cache holds the block in transit meanwhile. Thread-safe.
 */
final class DiskLoads {

    private final HostTier t;
    private final DeviceTier device;

    DiskLoads(HostTier t, DeviceTier device) {
        this.t = t;
        this.device = device;
    }

    /**
     * Promotes a block held only on disk: its record, under the key the cache holds for it
     * ({@code hi}, {@code lo}) and verified against {@code identity}, through a staging buffer
     * into device slot {@code deviceSlot}; waits for the device copy (the staging buffer is reused
     * next).
     *
     * @return {@link LowerTier#PROMOTED}, or a miss ({@link #missed})
     */
    int promote(int blockId, long hi, long lo, MemorySegment identity, int deviceSlot, long start) {
        long sampledStart = t.counters.promotions.startTimer(); // promotions share one sampled histogram
        int found;
        int buffer = t.staging.acquire();
        try {
            found = t.disk.load(hi, lo, identity, t.staging.block(buffer));
            if (found >= 0) {
                t.counters.diskLoads.record(blockId, t.layout.bytesPerBlock(), System.nanoTime() - start);
                GpuEvent ev = device.copyFromHost(t.staging.block(buffer), 0, deviceSlot);
                ev.synchronize(); // the staging buffer is reused next: wait for the copy whatever the deadline
                ev.close();
            }
        } finally {
            t.staging.release(buffer);
        }
        if (found < 0) {
            return missed(blockId, found);
        }
        t.counters.promotions.recordSampledLatency(blockId, t.layout.bytesPerBlock(), sampledStart); // counted by the cache
        return LowerTier.PROMOTED;
    }

    /**
     * Counts and reports a read of a disk record that missed.
     *
     * @param found what {@link DiskTier#load} returned, {@code < 0}
     * @return {@link LowerTier#FOREIGN} for a record of another identity under the key ({@link
     *     DiskTier#COLLISION}), else {@link LowerTier#LOST}
     */
    private int missed(int blockId, int found) {
        t.counters.diskMisses.increment();
        TierEvents.fault("disk miss for block " + blockId);
        return found == DiskTier.COLLISION ? LowerTier.FOREIGN : LowerTier.LOST;
    }
}

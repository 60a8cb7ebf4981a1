package io.tierkv.tiers;

import io.tierkv.core.cache.LowerTier;
import io.tierkv.natives.GpuEvent;
import io.tierkv.tiers.disk.store.DiskTier;
import java.lang.foreign.MemorySegment;

import static io.tierkv.tiers.HostBlocks.ON_DISK;

/**
 * The host tier's two moves that read a disk record for the cache: a promotion of a block held
 * only on disk (through a staging buffer to the device) and a read-ahead load (into a host slot,
 * the record kept). Each reads with the manager lock released, gets bytes only from a record of the
 * identity the cache passes, and settles a miss against what holds under the lock
 * ({@code DiskPins#settleMiss}). The cache holds the block in transit meanwhile. Thread-safe.
 */
final class DiskLoads {

    private final HostTier t;
    private final HostBlocks blocks;
    private final DeviceTier device;

    DiskLoads(HostTier t, DeviceTier device) {
        this.t = t;
        this.blocks = t.blocks;
        this.device = device;
    }

    /**
     * Promotes a block held only on disk: its record, under the key the cache holds for it
     * ({@code hi}, {@code lo}; a key read here in a second hold of the lock may be gone by then)
     * and verified against {@code identity}, through a staging buffer into device slot
     * {@code deviceSlot}; waits for the device copy (the staging buffer is reused next).
     *
     * @return {@link LowerTier#PROMOTED}, or {@link LowerTier#LOST} for a missing or damaged record
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
        if (found < 0) { // settled after the buffer went back: it takes the manager lock ({@link StagingPool})
            t.pins.settleMiss(blockId, found);
            return LowerTier.LOST;
        }
        t.counters.promotions.recordSampledLatency(blockId, t.layout.bytesPerBlock(), sampledStart); // counted by the cache
        return LowerTier.PROMOTED;
    }

    /**
     * Read-ahead: copies a block held only on disk into host slot {@code hs}, which the cache
     * reserved for it, keeping the record; see {@link LowerTier#load}. The slot is freed on every
     * path that does not fill it.
     *
     * @return true if the block is in host slot {@code hs} now
     */
    boolean load(int blockId, MemorySegment identity, int hs) {
        long hi = 0;
        long lo = 0;
        boolean held = false;
        blocks.lock.lock();
        try {
            held = t.disk != null && blocks.hostSlot(blockId) < 0 && blocks.is(blockId, ON_DISK)
                    && t.pins.diskCopyHeld(blockId); // false if its record failed verification since it was pinned
            if (held) {
                hi = blocks.hashHi(blockId);
                lo = blocks.hashLo(blockId);
            }
        } finally {
            if (!held) { // also when the check threw (a disk closed meanwhile)
                t.hostSlots.releaseReserved(hs);
            }
            blocks.lock.unlock();
        }
        if (!held) {
            return false;
        }
        long start = System.nanoTime();
        int found = DiskTier.ABSENT; // stays a miss if the read throws
        try {
            found = t.disk.load(hi, lo, identity, blocks.slotView(hs));
        } finally {
            blocks.lock.lock();
            try {
                blocks.reservedHostSlots--;
                if (found >= 0) { // verified bytes; the id cannot change while the cache pins it in transit
                    t.pins.releaseDiskPin(blockId); // the host slot holds it now; a spill pins the record again
                    blocks.place(blockId, hs); // the disk record stays too, unless it was evicted meanwhile
                    blocks.policy.onAdmit(blockId, 0, lo);
                } else {
                    blocks.slots.free(hs); // a miss: the lease that needs the block finds it and reports it
                }
            } finally {
                blocks.lock.unlock();
            }
        }
        if (found < 0) {
            t.pins.settleMiss(blockId, found); // counted here: a lease that follows finds the copy gone without another read
            return false;
        }
        t.counters.diskToHost.record(blockId, t.layout.bytesPerBlock(), System.nanoTime() - start);
        return true;
    }
}

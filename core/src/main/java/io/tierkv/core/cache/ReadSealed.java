package io.tierkv.core.cache;

import io.tierkv.core.error.CorruptBlockException;
import io.tierkv.core.error.TransferTimeoutException;
import java.lang.foreign.MemorySegment;

import static io.tierkv.core.cache.BlockStates.TRANSIT;

/**
 * A whole-block read ({@link Sequence#readBlock}) from whichever tier holds the block, without
 * promoting it: plan under the cache lock (the block TRANSIT), copy with the lock released (from
 * the top-tier slot, the host copy by {@link LowerTier#read}, or the disk record by {@link
 * DiskRecords#read}), end under the lock (a disk miss settled, a block found lost below marked
 * LOST). One instance per cache; takes the cache lock itself.
 */
final class ReadSealed {

    private final PagedKvCache cache;
    private final BlockStates b;
    private final LowerTier lower;

    ReadSealed(PagedKvCache cache, LowerTier lower) {
        this.cache = cache;
        this.b = cache.blocks;
        this.lower = lower;
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
    void run(int id, MemorySegment out) {
        int s;
        boolean onHost;
        boolean onDisk; // only a disk record holds it, found held
        long hi;
        long lo;
        cache.lock.lock();
        try {
            cache.checkOpen();
            cache.admission.awaitSettled(id, 0); // reads the clock only if the block is moving
            cache.policy.onAccess(id);
            b.bits[id] |= TRANSIT;
            cache.refresh(id);
            s = b.slot[id];
            onHost = s < 0 && lower != null && b.hostSlot[id] >= 0;
            onDisk = s < 0 && lower != null && !onHost && cache.disks.held(id);
            hi = b.hashHi[id];
            lo = b.hashLo[id];
        } finally {
            cache.lock.unlock();
        }
        boolean copied = false;
        boolean lost = s < 0 && !onHost && !onDisk;
        int read = DiskRecords.LOADED;
        try {
            if (s >= 0) {
                MemorySegment.copy(cache.slotMemory(s), 0, out, 0, cache.blockBytes);
                copied = true;
            } else if (onHost) {
                copied = lower.read(id, out); // the host slot stays while the block is in transit
                lost = !copied;
            } else if (onDisk) {
                read = cache.disks.disk.read(id, hi, lo, cache.identities.of(id), out);
                copied = read == DiskRecords.LOADED;
                lost = !copied;
            }
        } finally {
            cache.lock.lock();
            try {
                b.bits[id] &= ~TRANSIT;
                if (read != DiskRecords.LOADED) {
                    cache.disks.settleMiss(id, read == DiskRecords.FOREIGN); // a disk read that missed
                }
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

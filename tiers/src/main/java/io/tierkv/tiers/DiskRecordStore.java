package io.tierkv.tiers;

import io.tierkv.core.KvLayout;
import io.tierkv.core.cache.DiskRecords;
import io.tierkv.core.error.TierKvException;
import io.tierkv.tiers.disk.store.DiskTier;
import java.lang.foreign.MemorySegment;

/**
 * The disk tier as the cache's moves drive it ({@link DiskRecords}: spills, loads, promotions'
 * staged reads, reads out, adoptions, pins): records keyed by hash and the pins on them, over
 * {@link DiskTier} and its {@link DiskTier#pinning()}. A write that fails is counted here ({@link
 * TierStats#diskSpillFailures()}) and reported as stored nothing, so the block stays on the host;
 * a read that misses is counted ({@link TierStats#diskMisses()}) and reported by kind, for the
 * cache to settle. Calls nothing above it. Thread-safe.
 */
final class DiskRecordStore implements DiskRecords {

    private final DiskTier disk;
    private final KvLayout layout;
    private final TierCounters counters;
    /** Transfer buffers shared with the host tier's disk promotions; an adoption only tries for one. */
    private final StagingPool staging;
    /** Whether {@link #adopt} reads and verifies the bytes (the manager's promotion on match). */
    private volatile boolean readOnAdopt = true;

    DiskRecordStore(DiskTier disk, KvLayout layout, TierCounters counters, StagingPool staging) {
        this.disk = disk;
        this.layout = layout;
        this.counters = counters;
        this.staging = staging;
    }

    /**
     * Sets whether {@link #adopt} reads and verifies a record's bytes when a prefix match finds it,
     * or only its header and token ids; before first use.
     *
     * @param enabled true to read the bytes at adoption (the default)
     */
    void readOnAdopt(boolean enabled) {
        this.readOnAdopt = enabled;
    }

    @Override
    public boolean verifiesOnAdopt() {
        return readOnAdopt;
    }

    /**
     * {@inheritDoc} Without a host slot, a staging buffer is only tried for ({@link
     * StagingPool#tryAcquire}): the caller holds the manager lock, and a disk promotion that holds
     * the buffer needs that lock for its commit (it gives the buffer back first). A read into a host slot counts as a
     * disk-to-host move.
     */
    @Override
    public int adopt(int blockId, long hashHi, long hashLo, MemorySegment identity, MemorySegment into) {
        long start = System.nanoTime();
        int found;
        boolean verify = readOnAdopt || into != null; // a slot lent is always filled
        if (into != null) {
            found = disk.load(hashHi, hashLo, identity, into);
        } else if (!verify) {
            found = disk.match(hashHi, hashLo, identity);
        } else {
            int buffer = staging.tryAcquire();
            if (buffer < 0) {
                found = disk.match(hashHi, hashLo, identity); // header and identity only, as without readOnAdopt
            } else {
                try {
                    found = disk.load(hashHi, hashLo, identity, staging.block(buffer));
                } finally {
                    staging.release(buffer);
                }
            }
        }
        if (verify && found == DiskTier.ABSENT) {
            found = DiskTier.DAMAGED; // the caller just saw the key: damaged, or evicted since
        }
        if (found == DiskTier.COLLISION) {
            return FOREIGN;
        }
        if (found < 0) {
            if (found != DiskTier.ABSENT) {
                counters.diskMisses.increment(); // damaged (quarantined), or evicted since it was seen
            }
            return MISSED;
        }
        if (into != null) {
            counters.diskToHost.record(blockId, layout.bytesPerBlock(), System.nanoTime() - start);
        }
        counters.diskAdoptions.increment();
        return LOADED;
    }

    /**
     * {@inheritDoc} Any failed write (a disk that is full or refuses, an I/O error, or a channel
     * closed under an interrupted thread: NIO closes a file channel when the thread using it is
     * interrupted, and the interrupt stays set) is counted and stores nothing. Propagating it
     * would leave the block marked moving and every promotion of it waiting for a move that never
     * ends (found by a review: a Jlama session interrupted mid-run).
     */
    @Override
    public long write(int blockId, long hashHi, long hashLo, MemorySegment identity, MemorySegment block, boolean pin) {
        long start = System.nanoTime();
        try {
            long stored = pin ? disk.putPinned(hashHi, hashLo, identity, block)
                    : disk.put(hashHi, hashLo, identity, block) ? STORED : NOT_STORED;
            if (stored != NOT_STORED) {
                counters.diskSpills.record(blockId, layout.bytesPerBlock(), System.nanoTime() - start);
            }
            return stored;
        } catch (TierKvException | java.io.UncheckedIOException | IllegalStateException e) {
            counters.diskSpillFailures.increment();
            TierEvents.fault("spill of block " + blockId + " failed: " + e);
            return NOT_STORED;
        }
    }

    /**
     * {@inheritDoc} The cache's loads read into a host slot: counted as disk-to-host moves ({@link
     * TierStats#diskToHost()}).
     */
    @Override
    public int load(int blockId, long hashHi, long hashLo, MemorySegment identity, MemorySegment out) {
        return read(blockId, hashHi, hashLo, identity, out, counters.diskToHost);
    }

    /** {@inheritDoc} Counted as a disk-to-device load ({@link TierStats#diskLoads()}). */
    @Override
    public int stage(int blockId, long hashHi, long hashLo, MemorySegment identity, MemorySegment out) {
        return read(blockId, hashHi, hashLo, identity, out, counters.diskLoads);
    }

    /** {@inheritDoc} Counted as a disk read out ({@link TierStats#diskReads()}). */
    @Override
    public int read(int blockId, long hashHi, long hashLo, MemorySegment identity, MemorySegment out) {
        return read(blockId, hashHi, hashLo, identity, out, counters.diskReads);
    }

    /** Reads a record into {@code out}, timed into {@code move} on a hit, a counted miss otherwise. */
    private int read(int blockId, long hashHi, long hashLo, MemorySegment identity, MemorySegment out,
            TierCounters.Move move) {
        long start = System.nanoTime();
        int found = disk.load(hashHi, hashLo, identity, out);
        if (found < 0) {
            counters.diskMisses.increment();
            TierEvents.fault("disk miss for block " + blockId);
            return found == DiskTier.COLLISION ? FOREIGN : MISSED;
        }
        move.record(blockId, layout.bytesPerBlock(), System.nanoTime() - start);
        return LOADED;
    }

    @Override
    public boolean contains(long hashHi, long hashLo) {
        return disk.contains(hashHi, hashLo);
    }

    @Override
    public long pin(long hashHi, long hashLo) {
        return disk.pinning().pin(hashHi, hashLo);
    }

    @Override
    public boolean unpin(long hashHi, long hashLo, long pin) {
        return disk.pinning().unpin(hashHi, hashLo, pin);
    }

    @Override
    public boolean pinBroken(long pin) {
        return disk.pinning().pinBroken(pin);
    }

    @Override
    public String checkPins(long[] hashHi, long[] hashLo, long[] pins, int[] holders, int n) {
        return disk.pinning().checkPins(hashHi, hashLo, pins, holders, n);
    }

    /** {@inheritDoc} Through the disk tier's departure sink ({@code DiskMaintenance#setDepartureSink}). */
    @Override
    public void setDepartures(Departures departures) {
        disk.maintenance().setDepartureSink(departures == null ? null : departures::departing);
    }
}

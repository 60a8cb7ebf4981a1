package io.tierkv.tiers;

import io.tierkv.core.KvLayout;
import io.tierkv.core.cache.BelowChanges;
import io.tierkv.core.cache.BlockOwner;
import io.tierkv.core.cache.DiskRecords;
import io.tierkv.core.cache.HostSlots;
import io.tierkv.core.cache.LowerTier;
import io.tierkv.core.cache.RemoteRecords;
import io.tierkv.natives.GpuEvent;
import io.tierkv.natives.PinnedHostBuffer;
import io.tierkv.tiers.disk.store.DiskTier;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.IntConsumer;

import static io.tierkv.tiers.HostBlocks.CLEAN;
import static io.tierkv.tiers.HostBlocks.MOVING;

/**
 * Everything below the device: pinned host slots and, optionally, the disk tier under them.
 *
 * <h2>Residency</h2>
 * A block id demoted from the device gets a host slot, which the cache reserved for it. Host
 * blocks leave in the order of this tier's policy ({@code hostPolicy}), as the cache decides
 * ({@code HostRoom}, driving {@link #hostSlots}): a <em>clean</em> host copy (the device also holds
 * the block, kept after a promotion) is simply dropped; a block with a hash spills to disk (the
 * cache writes it, {@link #diskRecords}), after which it is held by hash alone; a block nobody
 * references is evicted; a referenced block with no disk below stays. A copy arriving in a host
 * slot (a demotion, a read-ahead load, which the cache reads from the disk store itself) is the
 * cache's to commit ({@code HostSlots#fill}).
 * This tier never calls the cache: what it evicted, and disk records that went, are drained
 * by the cache ({@link #drainChanges}), which frees or retires those ids under its own lock. Disk
 * records are keyed by block hash, so they outlive block ids and serve later prefix hits (the
 * cache adopts them, {@code DiskRecordStore#adopt}; the blocks the cache fetched ahead from the
 * remote store it commits to the host slots it reserved for them, {@code HostSlots#fill}; this
 * tier never calls the remote store: {@link #remoteRecords}).
 *
 * Where a block is held here (its host slot and state bits) is the cache's record, which this tier
 * writes ({@link BlockOwner#hostSlot}, {@link BlockOwner#belowBits}); per-slot layout: {@code
 * HostBlocks}.
 *
 * <h2>Identity</h2>
 * Host slots hold blocks by id, so a host hit is the block's own bytes, and the block's identity
 * is the cache's record of the id, which this tier reads, under its lock, and keeps no copy of
 * while it holds the id ({@link #attach}; the cache rewrites a record only after {@link #forget}).
 * Everything that goes to or comes from disk, which holds records by hash, names the identity: a
 * spill (the cache's) writes a copy of the record with the bytes (and a record of another
 * identity under the key refuses the spill: the block stays here); every disk read
 * (promotion, read, read-ahead, adoption on a match) passes the identity the cache holds for the
 * block and gets bytes only from a record of exactly that identity. A record of another identity is a counted collision and, for a block
 * bound to it, a disk miss: never another block's bytes.
 *
 * <h2>Parts</h2>
 * {@code HostBlocks} holds this tier's per-slot facts and reads and writes its per-id facts in the
 * cache's records, all under the one lock;
 * {@code HostSlotStore} is the slot store the cache's moves drive (free slots, victims, copies
 * committed, a spill's source, staging buffers, evictions; which block leaves is the cache's
 * choice); {@code DiskRecordStore} is the disk tier as the store the cache's moves write, read and
 * pin; {@code RemoteTier} (optional) is the remote store the cache's moves offer the blocks
 * leaving the lowest local tier and fetch from for prefix matches, handed to the cache here
 * ({@link #remoteRecords});
 * {@code LateCopies} tracks copies that missed their deadline; {@code HostInvariants} recounts.
 *
 * <h2>Concurrency and lock order</h2>
 * One lock: this tier's facts are guarded by the cache's own lock, the manager lock, lent at
 * {@link #attach}, which comes before the disk tier's locks. Whether a block is referenced is the
 * cache's fact (its HELD bit, read through {@link BlockOwner#referenced}), not a copy kept here.
 * This tier never calls the cache; a block the cache spills to disk is first marked MOVING, in the
 * cache's hold that plans the spill ({@code HostSlotStore#prepareSpill}), and the lock released
 * for the cache's write. A block freed
 * by the cache while it is MOVING is detached from its slot at once (its id may be reused
 * straight away) and the orphaned slot is freed by the move when it ends, so a slot being read
 * is never reused. Device copies run on the device tier's stream outside every lock.
 *
 * <h2>Failure</h2>
 * A demotion gets its host slot from the cache, which makes the room ({@code HostRoom}) or
 * refuses the demotion itself; one whose copy does not complete by its deadline leaves the device
 * copy as it was, parks the host slot until the copy has ended ({@link #releaseLateSlots}) and
 * returns false; one whose copy's event reports a failure (final: no write of it lands later)
 * frees the host slot and throws. A promotion that times out
 * keeps both copies and parks the device slot until its late copy completes; a later promotion of
 * the same block waits for that copy and ends the late move itself when it lands
 * ({@code LateCopies.endLandedPromotions}; the device slot stays the cache's to take back, and this
 * tier does not call the cache for it). A disk miss or a corrupt record is a counted miss
 * ({@link LowerTier#LOST}, {@link LowerTier#FOREIGN}), never bytes; the cache settles it.
 */
final class HostTier implements LowerTier, AutoCloseable {

    /**
     * Keys of departed disk records handed to the cache per {@link #drainChanges}: the cache
     * settles each under its lock (at most one disk lookup apiece), so this bounds
     * how long one drain holds it; the rest wait for the next drain (a mover cycle, a demotion),
     * meanwhile their blocks miss at a match as their records would.
     */
    private static final int MAX_DRAINED_KEYS = 256;

    final KvLayout layout;
    private final DeviceTier device;
    private final PinnedHostBuffer pinned;
    /** Every per-id and per-slot fact of this tier, and its lock. */
    final HostBlocks blocks;
    final DiskTier disk;
    final StagingPool staging;
    private volatile IntConsumer matchedBelowListener = id -> { };
    private final long copyTimeoutNanos;
    final LateCopies lateCopies;
    final ConcurrentLinkedQueue<long[]> diskEvicted = new ConcurrentLinkedQueue<>();
    final TierCounters counters;
    /** The disk tier as the store the cache's moves drive; null without a disk. */
    private final DiskRecordStore diskRecords;
    /** The slot store the cache drives ({@link #hostSlots}). */
    final HostSlotStore hostSlots;
    /** The remote store below the lowest local tier, or null; this tier never calls it. */
    private RemoteTier remote;

    HostTier(KvLayout layout, DeviceTier device, PinnedHostBuffer pinned, int hostBlocks, int maxBlocks,
            String policyName, DiskTier disk, StagingPool staging, long copyTimeoutNanos, TierCounters counters) {
        this.layout = layout;
        this.device = device;
        this.pinned = pinned;
        this.blocks = new HostBlocks(layout, pinned, hostBlocks, maxBlocks, policyName);
        this.disk = disk;
        this.staging = staging;
        this.copyTimeoutNanos = copyTimeoutNanos;
        this.counters = counters;
        this.lateCopies = new LateCopies(blocks);
        this.diskRecords = disk == null ? null : new DiskRecordStore(disk, layout, counters, staging);
        this.hostSlots = new HostSlotStore(this);
        if (disk != null) {
            disk.maintenance().setEvictionListener((hi, lo) -> diskEvicted.add(new long[] {hi, lo}));
        }
    }

    /**
     * Puts a remote store below the lowest local tier, for the cache to drive ({@link
     * #remoteRecords}). Called once, at build, before the cache is built on this tier.
     */
    void attachRemote(RemoteTier r) {
        this.remote = r;
    }

    /** {@inheritDoc} The store {@link #attachRemote} put below; this tier never calls it. */
    @Override
    public RemoteRecords remoteRecords() {
        return remote;
    }

    @Override
    public void attach(BlockOwner owner) {
        blocks.attach(owner);
    }

    /** Sets where host KV events go ({@link io.tierkv.core.event.KvMedium#CPU}); before first use. */
    void setEventSink(io.tierkv.core.event.KvEventSink sink) {
        blocks.lock.lock();
        try {
            blocks.events = sink;
        } finally {
            blocks.lock.unlock();
        }
    }

    /**
     * {@inheritDoc} DISK: the disk tier's keys. The host slots' hashes (CPU) the cache reads from
     * its own records; REMOTE is a shared store, whose keys this manager keeps no copy of.
     */
    @Override
    public java.util.List<io.tierkv.core.event.KvBlockHash> findableHashes(io.tierkv.core.event.KvMedium medium) {
        java.util.List<io.tierkv.core.event.KvBlockHash> out = new java.util.ArrayList<>();
        if (medium == io.tierkv.core.event.KvMedium.DISK && disk != null) {
            disk.maintenance().forEachKey((hi, lo) -> out.add(new io.tierkv.core.event.KvBlockHash(hi, lo)));
        }
        return out;
    }

    @Override
    public DiskRecords diskRecords() {
        return diskRecords;
    }

    /** {@inheritDoc} The slot store the cache's {@code HostRoom} drives. */
    @Override
    public HostSlots hostSlots() {
        return hostSlots;
    }

    @Override
    public boolean demote(int blockId, long hi, long lo, MemorySegment identity, int deviceSlot, int hs) {
        long start = counters.demotions.startTimer();
        GpuEvent ev;
        try {
            ev = device.copyToHost(deviceSlot, blocks.slotBytes, blocks.slotOffset(hs));
        } catch (RuntimeException | Error e) { // not issued (a device gone): the slot is free again
            hostSlots.releaseReserved(hs);
            throw e;
        }
        boolean done;
        try {
            done = DeviceTier.await(ev, copyTimeoutNanos);
        } catch (RuntimeException | Error e) { // the copy failed (its event says so, and a failure is final)
            try {
                ev.close();
            } catch (RuntimeException | Error closing) {
                e.addSuppressed(closing);
            }
            hostSlots.releaseReserved(hs); // no write of it lands later: the slot is free again, reported once (thrown)
            throw e;
        }
        if (!done) {
            blocks.lock.lock();
            try {
                blocks.reservedHostSlots--;
                lateCopies.parkDemotion(ev, hs); // host slot parked until the copy lands
            } finally {
                blocks.lock.unlock();
            }
            return false;
        }
        ev.close();
        counters.demotions.recordSampled(blockId, layout.bytesPerBlock(), start);
        return true; // the slot stays reserved for the cache's commit (HostSlots#fill)
    }

    /**
     * {@inheritDoc}
     *
     * <p>A host slot that a spill or a late promotion reads is {@link #SOURCE_BUSY}, unless the
     * late promotion's copy has landed: such moves are ended here (their device slots wait for
     * the cache's next {@link #releaseLateSlots}), or the block would wait forever.
     */
    @Override
    @SuppressWarnings("GuardedBy") // the cache holds the manager lock, blocks.lock, for this call
    public int preparePromote(int blockId) {
        if (blocks.hostSlot(blockId) >= 0 && blocks.is(blockId, MOVING)) {
            lateCopies.endLandedPromotions();
            if (blocks.is(blockId, MOVING)) {
                return SOURCE_BUSY;
            }
        }
        int hs = blocks.hostSlot(blockId);
        if (hs >= 0) {
            blocks.mark(blockId, MOVING);
            blocks.policy.onRemove(blockId);
            return hs;
        }
        return SOURCE_NONE;
    }

    /**
     * {@inheritDoc}
     *
     * <p>A promotion from the host makes no view of the block's identity, takes no lock unless
     * its copy times out, and reads no clock unless its copy must be waited for (the timeout counts
     * from then) or it is the one in {@link TierCounters.Move#SAMPLE_EVERY} timed.
     */
    @Override
    public int promote(int blockId, int source, int deviceSlot, long timeoutNanos) {
        return promoteFromHost(blockId, source, deviceSlot, timeoutNanos);
    }

    /**
     * {@inheritDoc} Counted with the promotions' sampled latency, from when the promotion began
     * (its wait for a staging buffer and its disk read included), as a promotion from the host is.
     */
    @Override
    public int promoteStaged(int blockId, int buffer, int deviceSlot, long startNanos) {
        long start = counters.promotions.startTimerAt(startNanos); // promotions share one sampled histogram
        GpuEvent ev = device.copyFromHost(staging.block(buffer), 0, deviceSlot);
        try {
            ev.synchronize(); // the staging buffer is reused next: wait for the copy whatever the deadline
        } finally {
            ev.close();
        }
        counters.promotions.recordSampledLatency(blockId, layout.bytesPerBlock(), start); // counted by the cache
        return PROMOTED;
    }

    /** Host slot {@code hs} (MOVING since {@link #preparePromote}) to the device. */
    private int promoteFromHost(int blockId, int hs, int deviceSlot, long timeoutNanos) {
        long start = counters.promotions.startTimer();
        GpuEvent ev = device.copyFromHost(blocks.slotBytes, blocks.slotOffset(hs), deviceSlot);
        if (!DeviceTier.await(ev, timeoutNanos)) {
            blocks.lock.lock();
            try {
                lateCopies.parkPromotion(ev, deviceSlot, blockId); // keep MOVING until it lands
            } finally {
                blocks.lock.unlock();
            }
            return TIMED_OUT;
        }
        ev.close();
        counters.promotions.recordSampledLatency(blockId, layout.bytesPerBlock(), start); // counted by the cache
        return PROMOTED;
    }

    /**
     * {@inheritDoc}
     *
     * <p>A host source ends its read: the host copy stays, CLEAN if the device holds the block now.
     * A timed-out copy keeps it MOVING until the copy lands ({@code LateCopies}).
     */
    @Override
    @SuppressWarnings("GuardedBy") // the cache holds the manager lock, blocks.lock, for this call
    public void completePromote(int blockId, int source, int result) {
        if (source >= 0 && result != TIMED_OUT) {
            blocks.endMove(blockId, result == PROMOTED ? CLEAN : 0);
        }
    }

    /** {@inheritDoc} Copied under the lock. */
    @Override
    public boolean read(int blockId, MemorySegment out) {
        long start = System.nanoTime();
        int hs;
        blocks.lock.lock();
        try {
            hs = blocks.hostSlot(blockId);
            if (hs >= 0) { // copied under the lock: the slot cannot be dropped or reused meanwhile
                MemorySegment.copy(blocks.slotBytes, blocks.slotOffset(hs), out, 0, layout.bytesPerBlock());
                blocks.policy.onAccess(blockId);
            }
        } finally {
            blocks.lock.unlock();
        }
        if (hs < 0) {
            return false;
        }
        counters.hostReads.record(blockId, layout.bytesPerBlock(), System.nanoTime() - start);
        return true;
    }

    @Override
    public void matchedBelow(int blockId) {
        matchedBelowListener.accept(blockId);
    }

    /** @param listener told (under the cache lock, so it must not block) of each prefix hit below the device */
    void onMatchedBelow(IntConsumer listener) {
        this.matchedBelowListener = listener;
    }

    /**
     * {@inheritDoc} Host copies evicted ({@code HostSlotStore#evict}), then the keys of
     * disk records evicted, removed or quarantined since the last call, at most
     * {@value #MAX_DRAINED_KEYS} of them per call (the cache holds its lock meanwhile; the movers
     * drain the rest on their next cycles).
     */
    @Override
    public void drainChanges(BelowChanges out) {
        blocks.drainLeft(out);
        long[] key;
        for (int n = 0; n < MAX_DRAINED_KEYS && (key = diskEvicted.poll()) != null; n++) {
            out.add(BelowChanges.NO_BLOCK, key[0], key[1]);
        }
    }

    @Override
    public boolean hasChanges() {
        return blocks.hasLeft() || !diskEvicted.isEmpty();
    }

    /**
     * Sets whether the disk store's adoption ({@code DiskRecordStore#adopt}) reads and verifies a
     * record's bytes (into a free host slot) when a prefix match finds it, or only its header and
     * token ids.
     *
     * @param enabled true to read the bytes at adoption (the default)
     */
    void readOnAdopt(boolean enabled) {
        if (diskRecords != null) {
            diskRecords.readOnAdopt(enabled);
        }
    }

    @Override
    public void forget(int blockId) {
        blocks.lock.lock();
        try {
            if (blocks.is(blockId, MOVING) && blocks.hostSlot(blockId) >= 0) {
                // A spill or a late promotion is reading the slot: detach it now (the id may be
                // reused at once); the spill, or the late copy's release, frees the orphaned slot.
                lateCopies.orphanPromotion(blockId, blocks.hostSlot(blockId));
                blocks.orphanedSlots++;
                blocks.policy.onRemove(blockId);
                blocks.unplace(blockId);
                blocks.clear(blockId);
                return;
            }
            hostSlots.dropHostCopy(blockId);
            blocks.clear(blockId);
        } finally {
            blocks.lock.unlock();
        }
    }

    /** @return host slots in use */
    int usedBlocks() {
        blocks.lock.lock();
        try {
            return blocks.slots.usedCount();
        } finally {
            blocks.lock.unlock();
        }
    }

    /** @return transfer staging buffers of one block each */
    int stagingBuffers() {
        return staging.capacity();
    }

    /** @return host slots */
    int capacityBlocks() {
        return blocks.slotCount; // fixed at construction: no lock
    }

    @Override
    public void close() {
        blocks.lock.lock();
        try {
            lateCopies.awaitAll();
            staging.close();
        } finally {
            blocks.lock.unlock();
        }
    }

    @Override
    public void releaseLateSlots(IntConsumer sink) {
        lateCopies.releaseLateSlots(sink);
    }

    /** {@return host-side invariant violations, empty when consistent; see {@code HostInvariants}} */
    java.util.List<String> checkInvariants() {
        return HostInvariants.check(this);
    }
}

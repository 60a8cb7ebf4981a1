package io.tierkv.tiers;

import io.tierkv.core.KvLayout;
import io.tierkv.core.budget.BudgetKind;
import io.tierkv.core.budget.BudgetLedger;
import io.tierkv.core.budget.Budgets;
import io.tierkv.core.cache.CacheDiagnostics;
import io.tierkv.core.cache.CacheOptions;
import io.tierkv.core.cache.CacheStats;
import io.tierkv.core.cache.PagedKvCache;
import io.tierkv.core.cache.Sequence;
import io.tierkv.core.cache.SequenceOptions;
import io.tierkv.core.error.BudgetExceededException;
import io.tierkv.core.pressure.PressureMonitor;
import io.tierkv.core.spi.BlockStore;
import io.tierkv.natives.PinnedHostBuffer;
import io.tierkv.tiers.disk.store.DiskTier;
import io.tierkv.tiers.disk.store.KeySpace;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Objects;

/**
 * The KV backend a runtime links: a {@link PagedKvCache} whose top tier is device memory, with
 * pinned host memory (and optionally a disk tier) below it, and background movers that drain a
 * bounded queue per {@link MovePath}: demotions by pressure mode, spills, read-ahead. Sequences
 * may carry per-cache budgets per tier ({@link SequenceOptions#withBudgets}), checked against
 * {@link #budgets()} when they open.
 *
 * <pre>{@code
 * try (var kv = KvBlockManager.builder(layout)
 *         .device(new EmulatedDevice(1L << 30), 512L << 20)
 *         .host(1L << 30)
 *         .disk(DiskOptions.at(dir).withBudgetBytes(8L << 30))
 *         .recentDeviceBlocks(4)
 *         .build();
 *      var seq = kv.openSequence(SequenceOptions.salt("tenant-a"))) {
 *     int cached = seq.matchPrefix(prompt);
 *     ...
 * }
 * }</pre>
 *
 * <p>Thread-safe: sequences may be used from different threads, one thread per sequence at a
 * time. {@link #close()} stops the movers, waits for moves in flight and frees every tier once.
 */
public final class KvBlockManager implements AutoCloseable {

    private final KvLayout layout;
    private final DeviceTier device;
    private final PinnedHostBuffer pinned;
    private final HostTier host;
    private final DiskTier disk;
    /** The remote tier, or null. */
    private final RemoteTier remote;
    private final PagedKvCache cache;
    private final PressureMonitor monitor;
    private final TierCounters counters;
    private final MoverPool movers;
    private final BudgetLedger pool;
    private final Budgets capacity;
    private final long[] charged = new long[BudgetKind.values().length];
    /** The KV event queue, or null without a listener. */
    private final KvEventQueue events;
    private volatile boolean closed;

    KvBlockManager(KvBlockManagerBuilder b, TierSizes sizes) {
        this.layout = b.layout;
        int blockBytes = layout.bytesPerBlock();
        int deviceBlocks = Math.toIntExact(sizes.deviceBlocks());
        int hostBlocks = Math.toIntExact(sizes.hostBlocks());
        int maxBlocks = Math.toIntExact(sizes.maxBlocks());
        this.pool = b.pool;
        this.counters = new TierCounters();
        DeviceTier dev = null;
        PinnedHostBuffer pin = null;
        DiskTier dsk = null;
        RemoteTier rmt = null;
        try {
            charge(BudgetKind.DEVICE, (long) deviceBlocks * blockBytes);
            charge(BudgetKind.HOST, (long) hostBlocks * blockBytes);
            charge(BudgetKind.TRANSFER, sizes.transferBytes());
            if (b.disk != null) {
                charge(BudgetKind.DISK, b.disk.budgetBytes());
            }
            dev = new DeviceTier(b.runtime, deviceBlocks, blockBytes);
            pin = b.runtime.allocatePinnedHost((long) hostBlocks * blockBytes); // zero; not touched here
            KeySpace keySpace = b.generatedHashKey ? KeySpace.generated(b.hashAlgorithm)
                    : KeySpace.of(b.hashAlgorithm, b.hashKey);
            dsk = b.disk == null ? null : DiskTier.open(b.disk, layout, keySpace);
            byte[] hashKey = !b.generatedHashKey ? b.hashKey
                    : dsk != null ? dsk.keySpace().storedKey() : randomHashKey();
            StagingPool stagingPool = new StagingPool(sizes.stagingBuffers(), blockBytes);
            this.host = new HostTier(layout, dev, pin, hostBlocks, maxBlocks, b.policy, dsk, stagingPool,
                    b.promotionTimeoutNanos, counters);
            if (b.remote != null) { // before the cache, which reads it once (LowerTier#remoteRecords)
                BlockStore store = b.remote.open(layout.fingerprint());
                try {
                    rmt = new RemoteTier(store, layout, hostBlocks, b.remoteWriteThrough);
                } catch (RuntimeException | Error e) { // its outbox not allocated: the store alone is open
                    store.close();
                    throw e;
                }
                host.attachRemote(rmt);
            }
            CacheOptions options = new CacheOptions(layout, deviceBlocks, maxBlocks, b.policy, b.hashAlgorithm,
                    b.recentDeviceBlocks, b.admissionTimeoutNanos, b.promotionTimeoutNanos, hashKey);
            this.cache = new PagedKvCache(options, dev, host);
        } catch (RuntimeException | Error e) { // an Error too (out of memory in a constructor): nothing opened stays open
            if (rmt != null) {
                rmt.close();
            }
            if (dsk != null) {
                dsk.close();
            }
            if (pin != null) {
                pin.close();
            }
            if (dev != null) {
                dev.close();
            }
            releaseCharges();
            throw e;
        }
        this.capacity = new Budgets((long) deviceBlocks * blockBytes, (long) hostBlocks * blockBytes,
                (long) host.stagingBuffers() * blockBytes, b.disk == null ? Budgets.MAX_BYTES : b.disk.budgetBytes());
        this.device = dev;
        this.pinned = pin;
        this.disk = dsk;
        this.remote = rmt;
        this.events = b.kvEventListener == null ? null
                : new KvEventQueue(b.kvEventListener, b.kvEventQueueCapacity, layout.blockSizeTokens());
        if (events != null) {
            cache.tierControl().setEventSink(events);
            host.setEventSink(events);
            if (dsk != null) {
                dsk.maintenance().setEventSink(events); // the records recovered at open are stored DISK now
            }
            if (rmt != null) {
                rmt.setEventSink(events);
            }
        }
        this.monitor = new PressureMonitor(b.watermarks, System.nanoTime());
        this.movers = new MoverPool(cache, host, monitor, b.watermarks, counters, b.errorHandler, b.movers,
                b.moveQueueCapacity);
        host.readOnAdopt(b.promoteOnMatch); // without promotion a match only binds disk records; readBlock reads them once
        if (movers.hasThreads() && b.promoteOnMatch) {
            host.onMatchedBelow(movers::requestPromotion); // promotion on match, in the background
        }
    }

    /**
     * Starts a builder.
     *
     * @param layout the block layout
     * @return a builder with defaults: LRU, SHA-256 block hashes (unkeyed), 2 recent blocks, one mover,
     *         DESIGN.md watermarks
     */
    public static KvBlockManagerBuilder builder(KvLayout layout) {
        return new KvBlockManagerBuilder(layout);
    }

    /**
     * Opens a sequence. Its per-cache budgets, if any, are checked against this manager's
     * ({@link #budgets()}) and enforced at each new block (see {@code CacheBudget} in the core
     * module for the charging rule).
     *
     * @param options salt, keys, priority, budgets
     * @return the sequence; close it
     * @throws NullPointerException     if options is null
     * @throws IllegalArgumentException if a per-cache budget is larger than this manager's, smaller
     *                                  than one block, or (device) smaller than the tail plus the
     *                                  recent blocks; the message names the field, value and bound
     * @throws IllegalStateException after close
     */
    public Sequence openSequence(SequenceOptions options) {
        Objects.requireNonNull(options, "options");
        Budgets own = options.budgets();
        if (own != null) {
            String name = "cache[" + options.salt() + "]";
            own.checkWithin(capacity, name);
            long block = layout.bytesPerBlock();
            long tail = (cache.options().recentDeviceBlocks() + 1L) * block;
            if (own.deviceBytes() < tail) {
                throw new IllegalArgumentException(name + ".deviceBytes: " + own.deviceBytes()
                        + " (expected >= (recentDeviceBlocks + 1) x bytesPerBlock " + tail
                        + ": the tail and the recent blocks stay on the device)");
            }
            for (BudgetKind k : BudgetKind.values()) {
                if (own.bytes(k) < block) {
                    throw new IllegalArgumentException(name + "." + Budgets.field(k) + ": " + own.bytes(k)
                            + " (expected >= bytesPerBlock " + block + ")");
                }
            }
        }
        return cache.openSequence(options);
    }

    /**
     * Returns this manager's own pool: the bytes its tiers hold (device and host slots, transfer
     * staging buffers, the disk budget; {@link Budgets#MAX_BYTES} for disk without a disk tier).
     * Per-cache budgets must fit inside it.
     *
     * @return the manager's budgets; immutable
     */
    public Budgets budgets() {
        return capacity;
    }

    /**
     * Iterates one layer of a sequence's blocks in order, leasing each and promoting the next
     * {@code readAheadBlocks} in the background, so attention can run blockwise over more context
     * than the device holds. The stream covers the {@code sequence.blockCount()} blocks the
     * sequence holds when this is called; blocks appended later are not streamed.
     *
     * @param sequence        the sequence, open
     * @param layer           the layer, {@code 0 <= layer < layers}
     * @param readAheadBlocks blocks to request ahead, >= 0; with per-cache budgets, at most
     *                        {@code transferBytes / bytesPerBlock} (read-ahead promotions in flight
     *                        are what the sequence's transfer budget counts)
     * @return the reader; close it
     * @throws NullPointerException      if sequence is null
     * @throws IndexOutOfBoundsException if layer is out of range
     * @throws IllegalArgumentException  if readAheadBlocks is negative, or the sequence was opened by
     *                                   another manager
     * @throws IllegalStateException     if the sequence is closed
     * @throws BudgetExceededException   if the read-ahead would exceed the sequence's transfer budget
     */
    public BlockStream stream(Sequence sequence, int layer, int readAheadBlocks) {
        Objects.requireNonNull(sequence, "sequence");
        if (!sequence.isOf(cache)) { // its block ids name blocks of another manager
            throw new IllegalArgumentException("sequence: opened by another manager (expected one of this manager's "
                    + "openSequence)");
        }
        if (sequence.isClosed()) {
            throw new IllegalStateException("sequence is closed");
        }
        if (layer < 0 || layer >= layout.layers()) {
            throw new IndexOutOfBoundsException("layer: " + layer + " (expected 0 <= layer < layers "
                    + layout.layers() + ")");
        }
        if (readAheadBlocks < 0) {
            throw new IllegalArgumentException("readAheadBlocks: " + readAheadBlocks + " (expected >= 0)");
        }
        Budgets own = sequence.options().budgets();
        long bytes = (long) readAheadBlocks * layout.bytesPerBlock();
        if (own != null && bytes > own.transferBytes()) {
            throw new BudgetExceededException("cache[" + sequence.options().salt() + "].transferBytes", bytes, 0,
                    own.transferBytes());
        }
        return new BlockStream(this, sequence, layer, readAheadBlocks);
    }

    /** Queues a read-ahead promotion; see {@code MoverPool#requestPromotion}. */
    void requestPromotion(int blockId) {
        movers.requestPromotion(blockId);
    }

    /** {@return the block model under this manager: for this package and its tests, not runtime API} */
    PagedKvCache cache() {
        return cache;
    }

    /**
     * A read-only view of the device tier's block state (where a block is, its hash and reference
     * count, slots in use), for tools, tests and diagnostics.
     *
     * @return the view; thread-safe, changes nothing
     */
    public CacheDiagnostics diagnostics() {
        return cache.diagnostics();
    }

    /**
     * Leases one block by id, as a block table names it ({@link Sequence#blockId}): promotes it to
     * the device if it lies below, and pins it there until {@link #releaseLease}. For runtimes that
     * keep their own block tables; a {@link Sequence#lease} does the same by token range.
     *
     * @param blockId a live block id, {@code 0 <= blockId < maxBlocks}
     * @return the block's device bytes ({@code bytesPerBlock}), valid until the lease is released
     * @throws IndexOutOfBoundsException if blockId is out of range
     * @throws IllegalStateException     if the block is free or the manager is closed
     * @throws io.tierkv.core.error.CorruptBlockException    if its bytes were lost below the device
     * @throws io.tierkv.core.error.TransferTimeoutException if its promotion did not complete in time
     * @throws io.tierkv.core.error.CapacityExhaustedException if no device slot came free in time
     */
    public MemorySegment acquireLease(int blockId) {
        return cache.acquireLease(blockId);
    }

    /**
     * Releases a lease taken with {@link #acquireLease}.
     *
     * @param blockId the leased block
     * @throws IndexOutOfBoundsException if blockId is out of range
     * @throws IllegalStateException     if the block holds no lease
     */
    public void releaseLease(int blockId) {
        cache.releaseLease(blockId);
    }

    /**
     * Demotes one block off the device now, if it may leave (sealed, unleased, outside every open
     * sequence's recent blocks, not moving): an explicit offload. A copy below is made (or a clean
     * one kept) before its device slot is freed.
     *
     * @param blockId a block id
     * @return true if the block left the device
     * @throws IllegalStateException if the manager is closed
     */
    public boolean demoteBlock(int blockId) {
        return cache.tierControl().demoteBlock(blockId);
    }

    /** {@return a fresh random block hash key of 32 bytes, for a generated key without a disk tier to keep it} */
    private static byte[] randomHashKey() {
        byte[] key = new byte[32];
        new java.security.SecureRandom().nextBytes(key);
        return key;
    }

    /** {@return the disk tier, or null without one: for tests of this package that reach below the facade} */
    DiskTier diskTier() {
        return disk;
    }

    /**
     * The validated options of the block model under the device tier: device and maximum blocks,
     * policy, hash algorithm, recent blocks, timeouts.
     *
     * @return the options; immutable
     */
    public CacheOptions options() {
        return cache.options();
    }

    /** {@return the layout} */
    public KvLayout layout() {
        return layout;
    }

    /**
     * Demotes up to {@code count} device candidates now, by policy order.
     *
     * @param count most blocks, >= 0
     * @return blocks that left the device
     * @throws IllegalArgumentException if count is negative
     */
    public int demote(int count) {
        return cache.tierControl().demoteCandidates(count);
    }

    /**
     * Removes up to {@code count} blocks from the host tier by policy order (clean copies dropped,
     * hashed blocks spilled to disk, unreferenced blocks freed).
     *
     * @param count most blocks, >= 0
     * @return blocks that left the host tier
     * @throws IllegalArgumentException if count is negative
     */
    public int evictHost(int count) {
        if (count < 0) {
            throw new IllegalArgumentException("count: " + count + " (expected >= 0)");
        }
        int left = cache.tierControl().evictHost(count);
        cache.tierControl().settleBelow(); // frees or retires the ids that left
        return left;
    }

    /**
     * Runs one mover cycle on the calling thread (for managers built with no mover threads, and
     * tests). An error of the cycle is handled as on a mover thread: counted in
     * {@link TierStats#moverErrors()} and passed to the configured {@link KvBlockManagerBuilder#errorHandler},
     * not thrown.
     *
     * @return units of work done in this cycle: blocks demoted, promoted, spilled to disk and loaded from
     *         disk, and late device slots reclaimed (what the cache settled below does not count); 0
     *         when there was nothing to do (or the cycle failed and its error went to the handler)
     */
    public int runMoverCycle() {
        return movers.runCycle();
    }

    /**
     * {@return an immutable snapshot; thread-safe. After {@link #close()} (which stops the movers
     * first) it gives the final counts, so a caller that totals managers reads it after the close}
     */
    public TierStats stats() {
        CacheStats cs = cache.stats();
        return new TierStats(cs, host.capacityBlocks(), host.usedBlocks(),
                TierStats.MoveStats.of(counters.demotions),
                counters.promotions.snapshot(cs.promotions(), layout.bytesPerBlock()), // the cache counts promotions
                TierStats.MoveStats.of(counters.diskSpills), TierStats.MoveStats.of(counters.diskLoads),
                TierStats.MoveStats.of(counters.diskToHost),
                counters.diskMisses.sum(), counters.diskSpillFailures.sum(), counters.diskAdoptions.sum(),
                cs.hostAllocationFailures(), counters.hostCleanDrops.sum(), counters.hostEvictions.sum(),
                counters.moverErrors.sum(),
                movers.queueStats(), pinned.requestedBytes(), pinned.pinnedBytes(), monitor.mode(),
                monitor.nanosInMode(System.nanoTime()), disk == null ? null : disk.stats(),
                TierStats.MoveStats.of(counters.hostReads), TierStats.MoveStats.of(counters.diskReads),
                remote == null ? null : remote.stats());
    }

    /**
     * The KV event queue's counters: events queued, dropped (queue full), batches and events
     * delivered, listener errors.
     *
     * @return the counters, or empty without a listener ({@link KvBlockManagerBuilder#kvEvents}); thread-safe
     */
    public java.util.Optional<io.tierkv.tiers.events.KvEventStats> kvEventStats() {
        return events == null ? java.util.Optional.empty() : java.util.Optional.of(events.stats());
    }

    /**
     * Checks the block model's and the host tier's invariants in one snapshot (the host's under
     * the cache's lock, so a move cannot fall between the two checks); thread-safe.
     *
     * @return violations, empty when consistent
     */
    public List<String> checkInvariants() {
        return cache.tierControl().checkInvariants(host::checkInvariants); // one snapshot: cache, host, disk locks in order
    }

    /**
     * Stops the movers (a move in flight finishes), cancels what is still queued (entries hold no
     * slot or buffer), closes every sequence and frees every tier exactly once; idempotent. Leases
     * and streams still open end with it: a stream's {@link BlockStream#next()} throws {@code
     * IllegalStateException} ("sequence is closed"), closing a lease or stream does nothing more,
     * and every block segment one of them hands out is unmapped, so reading it throws the JDK's
     * {@code IllegalStateException} ("Already closed") instead of returning bytes of freed memory.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        movers.stop();
        if (events != null) {
            events.close(); // what is queued, then AllBlocksCleared; the closes below report nothing
        }
        cache.close();
        host.close();
        if (disk != null) {
            disk.close();
        }
        if (remote != null) {
            remote.close(); // after the tiers that offer it blocks
        }
        device.close();
        pinned.close();
        releaseCharges();
    }

    private void charge(BudgetKind kind, long bytes) {
        if (pool != null) {
            pool.charge(kind, bytes);
            charged[kind.ordinal()] += bytes;
        }
    }

    private void releaseCharges() {
        if (pool != null) {
            for (BudgetKind k : BudgetKind.values()) {
                if (charged[k.ordinal()] > 0) {
                    pool.release(k, charged[k.ordinal()]);
                    charged[k.ordinal()] = 0;
                }
            }
        }
    }
}

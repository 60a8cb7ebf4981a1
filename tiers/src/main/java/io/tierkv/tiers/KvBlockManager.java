package io.tierkv.tiers;

import io.tierkv.core.KvLayout;
import io.tierkv.core.budget.BudgetKind;
import io.tierkv.core.budget.BudgetLedger;
import io.tierkv.core.budget.Budgets;
import io.tierkv.core.budget.MachineMemory;
import io.tierkv.core.cache.CacheOptions;
import io.tierkv.core.cache.LowerTier;
import io.tierkv.core.cache.PagedKvCache;
import io.tierkv.core.cache.Sequence;
import io.tierkv.core.cache.SequenceOptions;
import io.tierkv.core.error.BudgetExceededException;
import io.tierkv.core.error.MachineLimitException;
import io.tierkv.core.policy.EvictionPolicies;
import io.tierkv.core.pressure.PressureMonitor;
import io.tierkv.core.pressure.PressureWatermarks;
import io.tierkv.core.prefix.HashAlgorithm;
import io.tierkv.natives.GpuRuntime;
import io.tierkv.natives.PinnedHostBuffer;
import io.tierkv.tiers.disk.DiskOptions;
import io.tierkv.tiers.disk.DiskTier;
import io.tierkv.tiers.disk.KeySpace;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.function.ToLongFunction;

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
    private final PagedKvCache cache;
    private final PressureMonitor monitor;
    private final TierCounters counters;
    private final List<Mover> movers = new ArrayList<>();
    private final List<Thread> moverThreads = new ArrayList<>();
    private final MoveQueue[] queues = new MoveQueue[MovePath.values().length];
    /** Runs {@link #runMoverCycle()}: a mover's state is its final fields, so callers may share it. */
    private final Mover inlineMover;
    private final BudgetLedger pool;
    private final Budgets capacity;
    private final long[] charged = new long[BudgetKind.values().length];
    private volatile boolean closed;

    private KvBlockManager(Builder b, TierSizes sizes) {
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
            CacheOptions options = new CacheOptions(layout, deviceBlocks, maxBlocks, b.policy, b.hashAlgorithm,
                    b.recentDeviceBlocks, b.admissionTimeoutNanos, b.promotionTimeoutNanos, hashKey);
            this.cache = new PagedKvCache(options, dev, host);
            host.bind(cache);
        } catch (RuntimeException e) {
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
        this.monitor = new PressureMonitor(b.watermarks, System.nanoTime());
        for (MovePath p : MovePath.values()) {
            queues[p.ordinal()] = new MoveQueue(b.moveQueueCapacity);
        }
        inlineMover = new Mover(cache, host, monitor, b.watermarks, counters, b.errorHandler, queues);
        for (int i = 0; i < b.movers; i++) {
            Mover m = new Mover(cache, host, monitor, b.watermarks, counters, b.errorHandler, queues);
            Thread t = Thread.ofPlatform().daemon().name("tierkv-mover-" + i).start(m);
            movers.add(m);
            moverThreads.add(t);
        }
        host.readOnAdopt(b.promoteOnMatch); // without promotion a match only binds disk records; readBlock reads them once
        if (!movers.isEmpty() && b.promoteOnMatch) {
            host.onMatchedBelow(this::requestPromotion); // promotion on match, in the background
        }
    }

    /**
     * Starts a builder.
     *
     * @param layout the block layout
     * @return a builder with defaults: LRU, SHA-256 block hashes (unkeyed), 2 recent blocks, one mover,
     *         DESIGN.md watermarks
     */
    public static Builder builder(KvLayout layout) {
        return new Builder(layout);
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
     * @throws IllegalArgumentException  if readAheadBlocks is negative
     * @throws IllegalStateException     if the sequence is closed
     * @throws BudgetExceededException   if the read-ahead would exceed the sequence's transfer budget
     */
    public BlockStream stream(Sequence sequence, int layer, int readAheadBlocks) {
        Objects.requireNonNull(sequence, "sequence");
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

    /**
     * Queues a read-ahead promotion on its path (DISK_TO_HOST for a block held only on disk, else
     * HOST_TO_DEVICE) and wakes a mover; without mover threads the next {@link #runMoverCycle()}
     * drains it. A full queue rejects the request (counted); the lease that needs the block still
     * promotes it. May be called under the cache lock: takes only the host tier's and the queue's.
     */
    void requestPromotion(int blockId) {
        MovePath path = host.residence(blockId) == LowerTier.RESIDENT_DISK ? MovePath.DISK_TO_HOST
                : MovePath.HOST_TO_DEVICE;
        queues[path.ordinal()].offer(blockId);
        if (!movers.isEmpty()) {
            movers.get(blockId % movers.size()).wake();
        }
    }

    /** {@return the block model under this manager (for leases by block id and diagnostics)} */
    public PagedKvCache cache() {
        return cache;
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
        return cache.demoteCandidates(count);
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
        return host.evict(count);
    }

    /**
     * Runs one mover cycle on the calling thread (for managers built with no mover threads, and
     * tests). An error of the cycle is handled as on a mover thread: counted in
     * {@link TierStats#moverErrors()} and passed to the configured {@link Builder#errorHandler},
     * not thrown.
     *
     * @return units of work done in this cycle: blocks demoted, promoted, spilled to disk and loaded from
     *         disk, plus records forwarded to the disk tier and late device slots reclaimed; 0 when
     *         there was nothing to do (or the cycle failed and its error went to the handler)
     */
    public int runMoverCycle() {
        return inlineMover.cycle();
    }

    /** {@return an immutable snapshot; thread-safe} */
    public TierStats stats() {
        return new TierStats(cache.stats(), host.capacityBlocks(), host.usedBlocks(),
                TierStats.MoveStats.of(counters.demotions), TierStats.MoveStats.of(counters.promotions),
                TierStats.MoveStats.of(counters.diskSpills), TierStats.MoveStats.of(counters.diskLoads),
                TierStats.MoveStats.of(counters.diskToHost),
                counters.diskMisses.sum(), counters.diskSpillFailures.sum(), counters.diskAdoptions.sum(), counters.hostAllocationFailures.sum(),
                counters.hostCleanDrops.sum(), counters.hostEvictions.sum(), counters.moverErrors.sum(),
                queueStats(), pinned.requestedBytes(), pinned.pinnedBytes(), monitor.mode(),
                monitor.nanosInMode(System.nanoTime()), disk == null ? null : disk.stats(),
                TierStats.MoveStats.of(counters.hostReads), TierStats.MoveStats.of(counters.diskReads));
    }

    private java.util.Map<MovePath, TierStats.QueueStats> queueStats() {
        java.util.Map<MovePath, TierStats.QueueStats> m = new java.util.EnumMap<>(MovePath.class);
        for (MovePath p : MovePath.values()) {
            m.put(p, queues[p.ordinal()].stats());
        }
        return m;
    }

    /**
     * Checks the block model's and the host tier's invariants.
     *
     * @return violations, empty when consistent
     */
    public List<String> checkInvariants() {
        List<String> bad = new ArrayList<>(cache.checkInvariants());
        bad.addAll(host.checkInvariants());
        return bad;
    }

    /**
     * Stops the movers (a move in flight finishes), cancels what is still queued (entries hold no
     * slot or buffer), closes every sequence and frees every tier exactly once; idempotent.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        movers.forEach(Mover::stop); // no interrupt: it would close a file channel in mid-write
        for (Thread t : moverThreads) {
            java.util.concurrent.locks.LockSupport.unpark(t);
            try {
                t.join(10_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        for (MoveQueue q : queues) {
            q.cancel();
        }
        cache.close();
        host.close();
        if (disk != null) {
            disk.close();
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

    /**
     * Builds a {@link KvBlockManager}; {@link #build()} validates every option and names the
     * field, the value and the bound of the first bad one. Not thread-safe.
     */
    public static final class Builder {
        private final KvLayout layout;
        private GpuRuntime runtime;
        private long deviceBytes;
        private long hostBytes;
        private long transferBytes = -1;
        private DiskOptions disk;
        private String policy = "lru";
        private HashAlgorithm hashAlgorithm = HashAlgorithm.SHA256_128;
        private byte[] hashKey = new byte[0];
        private boolean generatedHashKey;
        private int recentDeviceBlocks = 2;
        private PressureWatermarks watermarks = PressureWatermarks.defaults();
        private BudgetLedger pool;
        private long admissionTimeoutNanos = CacheOptions.DEFAULT_ADMISSION_TIMEOUT_NANOS;
        private long promotionTimeoutNanos = CacheOptions.DEFAULT_PROMOTION_TIMEOUT_NANOS;
        private int movers = 1;
        private int moveQueueCapacity = 256;
        private boolean promoteOnMatch = true;
        private Consumer<Throwable> errorHandler = t -> System.getLogger("io.tierkv.tiers.Mover")
                .log(System.Logger.Level.WARNING, "mover error", t);
        private Supplier<Optional<MachineMemory>> machineMemory = MachineMemory::now;
        private ToLongFunction<Path> usableDiskBytes = MachineFit::usableBytes;

        private Builder(KvLayout layout) {
            if (layout == null) {
                throw new IllegalArgumentException("layout: null (expected a KvLayout)");
            }
            this.layout = layout;
        }

        /**
         * Sets the device tier: its runtime and its byte budget.
         *
         * @param gpu         the runtime whose memory holds the device tier (a detected GPU or an EmulatedDevice)
         * @param budgetBytes device bytes for blocks, at least one block
         * @return this
         */
        public Builder device(GpuRuntime gpu, long budgetBytes) {
            this.runtime = gpu;
            this.deviceBytes = budgetBytes;
            return this;
        }

        /**
         * Sets the pinned host tier's byte budget.
         *
         * @param budgetBytes pinned host bytes for blocks, at least one block
         * @return this
         */
        public Builder host(long budgetBytes) {
            this.hostBytes = budgetBytes;
            return this;
        }

        /**
         * Sets the transfer staging budget.
         *
         * @param budgetBytes transfer staging bytes, at least one block, at most
         *                    {@link Budgets#MAX_BYTES} (default: one block)
         * @return this
         */
        public Builder transfer(long budgetBytes) {
            this.transferBytes = budgetBytes;
            return this;
        }

        /**
         * Adds a disk tier under the host tier.
         *
         * @param options the disk tier under the host tier
         * @return this
         */
        public Builder disk(DiskOptions options) {
            this.disk = options;
            return this;
        }

        /**
         * Sets the eviction policy.
         *
         * @param name eviction policy for device and host ordering, one of {@code EvictionPolicies.names()}
         * @return this
         */
        public Builder policy(String name) {
            this.policy = name;
            return this;
        }

        /**
         * Sets the block hash function. The default, {@link HashAlgorithm#SHA256_128}, resists
         * crafted collisions, so tenants who share a manager cannot aim a prompt at another
         * tenant's blocks; {@link HashAlgorithm#MURMUR3_128} is faster but invertible (a block
         * colliding with any given one is computed in microseconds): choose it only for a single
         * trusted tenant. Either way every hit compares the block's identity, so a collision is a
         * counted miss, never another block's bytes. A persistent disk directory keeps the
         * function it was written with and refuses another.
         *
         * @param algorithm block hash function
         * @return this
         */
        public Builder hashAlgorithm(HashAlgorithm algorithm) {
            this.hashAlgorithm = algorithm;
            return this;
        }

        /**
         * Keys the SHA-256 block hash with a secret of this deployment (HMAC-SHA256, RFC 2104):
         * without the key nobody can compute which prompts share a block, let alone aim at one.
         * This key is never written anywhere; a persistent disk directory records its fingerprint
         * and refuses a manager opened with another key (or none), so a restart must be given the
         * same key to find its records ({@link #generatedHashKey} keeps a key in the directory
         * instead).
         *
         * @param key the secret, at least {@value io.tierkv.core.prefix.BlockHasher#MIN_KEY_BYTES}
         *            bytes, or empty for none (the default); copied
         * @return this
         */
        public Builder hashKey(byte[] key) {
            this.hashKey = key == null ? null : key.clone();
            return this;
        }

        /**
         * Keys the SHA-256 block hash with a secret generated for this deployment: with a
         * persistent disk tier, 32 random bytes made when its directory is created and kept in the
         * directory's owner-only metadata file, so every restart over it hashes with the same key and
         * finds its records; otherwise a fresh random key per manager. A directory made with an
         * unkeyed hash or a supplied key refuses it, and a supplied key (or none) is refused by a
         * directory that keeps a generated one. Exclusive with {@link #hashKey}.
         *
         * @return this
         */
        public Builder generatedHashKey() {
            this.generatedHashKey = true;
            return this;
        }

        /**
         * Sets how many recent sealed blocks of each open sequence stay on the device.
         *
         * @param blocks sealed blocks at the end of each open sequence kept on the device, >= 0
         * @return this
         */
        public Builder recentDeviceBlocks(int blocks) {
            this.recentDeviceBlocks = blocks;
            return this;
        }

        /**
         * Sets the pressure watermarks.
         *
         * @param marks pressure watermarks, not null
         * @return this
         */
        public Builder watermarks(PressureWatermarks marks) {
            this.watermarks = marks;
            return this;
        }

        /**
         * Shares pool budgets with other managers.
         *
         * @param ledger pool budgets shared by several managers; this manager charges its tiers at
         *               build and returns them at close
         * @return this
         */
        public Builder pool(BudgetLedger ledger) {
            this.pool = ledger;
            return this;
        }

        /**
         * Sets how long a new block waits for space.
         *
         * @param nanos how long a new block waits for space before CapacityExhaustedException, >= 0
         * @return this
         */
        public Builder admissionTimeoutNanos(long nanos) {
            this.admissionTimeoutNanos = nanos;
            return this;
        }

        /**
         * Sets how long one copy between tiers may take.
         *
         * @param nanos how long one copy between tiers may take before it is given up, > 0
         * @return this
         */
        public Builder promotionTimeoutNanos(long nanos) {
            this.promotionTimeoutNanos = nanos;
            return this;
        }

        /**
         * Sets the number of background mover threads.
         *
         * @param threads background mover threads, 0..8 (0: moves happen on demand, and queued
         *                read-ahead waits for {@link KvBlockManager#runMoverCycle()})
         * @return this
         */
        public Builder movers(int threads) {
            this.movers = threads;
            return this;
        }

        /**
         * Sets the capacity of each of the mover's queues (one per {@link MovePath}).
         *
         * @param entries block ids each queue holds before it rejects more, 1..65536 (default 256)
         * @return this
         */
        public Builder moveQueueCapacity(int entries) {
            this.moveQueueCapacity = entries;
            return this;
        }

        /**
         * Sets whether a prefix match that finds a block below the device asks a background mover
         * to promote it at once, ahead of the lease that usually follows (promotion on match).
         * A runtime that copies matched blocks out with {@link Sequence#readBlock} instead of
         * leasing them turns it off: the promotion would move every block it reads twice. Without
         * mover threads there is no promotion on match either way. Turned off, a match that finds
         * a block only on disk reads the record's header and token ids, not its bytes: the
         * {@code readBlock} (or lease) that follows reads and verifies them once, straight from
         * disk, and a damaged payload is a {@code CorruptBlockException} there rather than a
         * prefix miss at the match. Turned on, the match reads the record into a free host slot.
         *
         * @param enabled whether to promote on match (default true)
         * @return this
         */
        public Builder promoteOnMatch(boolean enabled) {
            this.promoteOnMatch = enabled;
            return this;
        }

        /**
         * Sets the handler of mover errors.
         *
         * @param handler receives every error of the movers and of {@link KvBlockManager#runMoverCycle()}
         *                (they go on); not null
         * @return this
         */
        public Builder errorHandler(Consumer<Throwable> handler) {
            this.errorHandler = handler;
            return this;
        }

        /**
         * Replaces what the size checks read from the machine (for tests: a machine smaller than
         * this one, so that a refusal cannot turn into an allocation that fills this one).
         *
         * @param memory      the machine's memory, as {@link MachineMemory#now()} reads it
         * @param usableBytes usable bytes of the file system holding a directory, or -1 if unknown
         * @return this
         */
        Builder machine(Supplier<Optional<MachineMemory>> memory, ToLongFunction<Path> usableBytes) {
            this.machineMemory = Objects.requireNonNull(memory, "memory");
            this.usableDiskBytes = Objects.requireNonNull(usableBytes, "usableBytes");
            return this;
        }

        /**
         * Validates and builds.
         *
         * @return the manager; close it
         * @throws IllegalArgumentException naming the field, value and bound of a bad option
         * @throws MachineLimitException if what the build commits up front does not fit what the
         *                               machine has now, checked before anything is allocated (see
         *                               the README's "Sizes are checked against the machine"): the
         *                               device slots against the device's free memory (a GPU's minus a
         *                               reserve of 1/64 of its memory, 64 MiB to 1 GiB); the emulated
         *                               device's slots, the pinned host buffer, the staging buffers and
         *                               the block metadata together against {@code MemAvailable} (or a
         *                               container's limit) minus the heap the JVM may still commit minus
         *                               a reserve (1/32 of {@code MemTotal}, 256 MiB to 2 GiB); the
         *                               block metadata against the largest heap; what the disk tier reserves
         *                               when it opens against usable disk space. The message names the
         *                               option ({@code device.budgetBytes}, {@code host.budgetBytes},
         *                               {@code disk.budgetBytes}), its value and the bound
         * @throws io.tierkv.core.error.BudgetExceededException if the pool cannot take this manager's tiers
         * @throws IllegalStateException if the device runtime is closed, or the disk tier's directory
         *                               is locked by another manager or process, or holds persistent
         *                               records of another layout without
         *                               {@link DiskOptions#wipeOnLayoutMismatch()} (see
         *                               {@link DiskTier#open}); nothing is left allocated
         * @throws io.tierkv.natives.GpuException if the device runtime cannot allocate the device tier
         *                               or the pinned host buffer ({@code isOutOfMemory()} when they do
         *                               not fit); nothing is left allocated
         */
        public KvBlockManager build() {
            long block = layout.bytesPerBlock();
            if (runtime == null) {
                throw new IllegalArgumentException("device: not set (expected device(GpuRuntime, budgetBytes))");
            }
            if (watermarks == null) {
                throw new IllegalArgumentException("watermarks: null (expected PressureWatermarks, e.g. PressureWatermarks.defaults())");
            }
            if (errorHandler == null) {
                throw new IllegalArgumentException("errorHandler: null (expected a Consumer<Throwable>)");
            }
            if (hashAlgorithm == null) {
                throw new IllegalArgumentException("hashAlgorithm: null (expected SHA256_128 or MURMUR3_128)");
            }
            if (hashKey == null) {
                throw new IllegalArgumentException("hashKey: null (expected a key, or an empty array for none)");
            }
            io.tierkv.core.prefix.BlockHasher.checkKey(hashAlgorithm, hashKey);
            if (generatedHashKey && hashKey.length > 0) {
                throw new IllegalArgumentException("hashKey: " + hashKey.length + " bytes with generatedHashKey"
                        + " (expected one of them)");
            }
            if (generatedHashKey) {
                KeySpace.generated(hashAlgorithm); // refuses MURMUR3_128, naming hashKey
            }
            checkAtLeast("device.budgetBytes", deviceBytes, block);
            checkAtLeast("host.budgetBytes", hostBytes, block);
            if (transferBytes != -1) {
                checkAtLeast("transfer.budgetBytes", transferBytes, block);
            }
            long cap = Budgets.MAX_BYTES;
            for (Object[] f : new Object[][] {{"device.budgetBytes", deviceBytes}, {"host.budgetBytes", hostBytes},
                    {"transfer.budgetBytes", transferBytes}}) {
                if ((long) f[1] > cap) {
                    throw new IllegalArgumentException(f[0] + ": " + f[1] + " (expected <= " + cap + ")");
                }
            }
            if (disk != null && disk.budgetBytes() < block) {
                throw new IllegalArgumentException("disk.budgetBytes: " + disk.budgetBytes()
                        + " (expected >= bytesPerBlock " + block + ")");
            }
            if (disk != null) {
                try {
                    DiskTier.check(disk, layout);
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException("disk." + e.getMessage(), e);
                }
            }
            if (!EvictionPolicies.names().contains(policy)) {
                throw new IllegalArgumentException("policy: '" + policy + "' (expected one of " + EvictionPolicies.names() + ")");
            }
            if (recentDeviceBlocks < 0) {
                throw new IllegalArgumentException("recentDeviceBlocks: " + recentDeviceBlocks + " (expected >= 0)");
            }
            if (deviceBytes / block <= recentDeviceBlocks) {
                throw new IllegalArgumentException("recentDeviceBlocks: " + recentDeviceBlocks
                        + " (expected < device blocks " + deviceBytes / block + ")");
            }
            if (movers < 0 || movers > 8) {
                throw new IllegalArgumentException("movers: " + movers + " (expected 0 <= movers <= 8)");
            }
            if (moveQueueCapacity < 1 || moveQueueCapacity > 1 << 16) {
                throw new IllegalArgumentException("moveQueueCapacity: " + moveQueueCapacity
                        + " (expected 1 <= moveQueueCapacity <= 65536)");
            }
            if (admissionTimeoutNanos < 0) {
                throw new IllegalArgumentException("admissionTimeoutNanos: " + admissionTimeoutNanos + " (expected >= 0)");
            }
            if (promotionTimeoutNanos <= 0) {
                throw new IllegalArgumentException("promotionTimeoutNanos: " + promotionTimeoutNanos + " (expected > 0)");
            }
            TierSizes sizes = TierSizes.of(layout, deviceBytes, hostBytes, transferBytes, disk);
            MachineFit.check(sizes, runtime, disk, machineMemory.get(), usableDiskBytes);
            sizes.checkSlots();
            return new KvBlockManager(this, sizes);
        }

        private static void checkAtLeast(String field, long value, long block) {
            if (value < block) {
                throw new IllegalArgumentException(field + ": " + value + " (expected >= bytesPerBlock " + block
                        + "; a block larger than its tier cannot be stored)");
            }
        }
    }
}

package io.tierkv.tiers;

import io.tierkv.core.KvLayout;
import io.tierkv.core.budget.BudgetLedger;
import io.tierkv.core.budget.Budgets;
import io.tierkv.core.budget.MachineMemory;
import io.tierkv.core.error.MachineLimitException;
import io.tierkv.core.cache.CacheOptions;
import io.tierkv.core.cache.Sequence;
import io.tierkv.core.policy.EvictionPolicies;
import io.tierkv.core.pressure.PressureWatermarks;
import io.tierkv.core.prefix.HashAlgorithm;
import io.tierkv.natives.GpuRuntime;
import io.tierkv.core.spi.BlockStoreFactory;
import io.tierkv.tiers.disk.DiskOptions;
import io.tierkv.tiers.disk.store.DiskTier;
import io.tierkv.tiers.disk.store.KeySpace;
import java.nio.file.Path;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.function.ToLongFunction;

/**
 * Builds a {@link KvBlockManager}; {@link #build()} validates every option and names the
 * field, the value and the bound of the first bad one. Not thread-safe.
 */
public final class KvBlockManagerBuilder {
    /** {@link #transferBytes} when {@link #transfer} was not called. */
    static final long UNSET = -1;
    final KvLayout layout;
    GpuRuntime runtime;
    long deviceBytes;
    long hostBytes;
    /** What {@link #transfer} set; {@link #UNSET} (the default, one block) if it was not called. */
    long transferBytes = UNSET;
    /** Whether {@link #transfer} was called: then {@link #build()} checks its value, whatever it is. */
    private boolean transferSet;
    DiskOptions disk;
    BlockStoreFactory remote;
    boolean remoteWriteThrough;
    String policy = "lru";
    HashAlgorithm hashAlgorithm = HashAlgorithm.SHA256_128;
    byte[] hashKey = new byte[0];
    boolean generatedHashKey;
    int recentDeviceBlocks = DEFAULT_RECENT_DEVICE_BLOCKS;
    PressureWatermarks watermarks = PressureWatermarks.defaults();
    BudgetLedger pool;
    long admissionTimeoutNanos = CacheOptions.DEFAULT_ADMISSION_TIMEOUT_NANOS;
    long promotionTimeoutNanos = CacheOptions.DEFAULT_PROMOTION_TIMEOUT_NANOS;
    int movers = 1;
    int moveQueueCapacity = 256;
    boolean promoteOnMatch = true;
    io.tierkv.tiers.events.KvEventListener kvEventListener;
    int kvEventQueueCapacity = DEFAULT_KV_EVENT_QUEUE_CAPACITY;
    Consumer<Throwable> errorHandler = t -> System.getLogger("io.tierkv.tiers.Mover")
            .log(System.Logger.Level.WARNING, "mover error", t);
    Supplier<Optional<MachineMemory>> machineMemory = MachineMemory::now;
    ToLongFunction<Path> usableDiskBytes = MachineFit::usableBytes;

    /** {@link #kvEvents(io.tierkv.tiers.events.KvEventListener)}'s queue capacity, in events. */
    public static final int DEFAULT_KV_EVENT_QUEUE_CAPACITY = 65_536;

    KvBlockManagerBuilder(KvLayout layout) {
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
    public KvBlockManagerBuilder device(GpuRuntime gpu, long budgetBytes) {
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
    public KvBlockManagerBuilder host(long budgetBytes) {
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
    public KvBlockManagerBuilder transfer(long budgetBytes) {
        this.transferBytes = budgetBytes;
        this.transferSet = true;
        return this;
    }

    /**
     * Adds a disk tier under the host tier.
     *
     * @param options the disk tier under the host tier
     * @return this
     */
    public KvBlockManagerBuilder disk(DiskOptions options) {
        this.disk = options;
        return this;
    }

    /**
     * Adds a remote tier below the lowest local one: a shared block store (Valkey/Redis through
     * module {@code remote}: {@code .remote(RemoteOptions.of("redis://host:6379"))}). Records the
     * disk tier evicts are sent to it, verified, before their bytes go (without a disk tier: the
     * unreferenced host blocks freed for room), through a bounded outbox that never blocks the
     * tier (a full outbox drops the block, counted); a prefix match that misses locally looks the
     * rest of its chain up in it and fetches the leading blocks found into host slots, with every
     * lock released, verified against the identities the match computed. The store is opened by
     * {@link #build()} and closed with the manager. Store faults (unreachable, timeouts, an open
     * breaker) are counted misses and dropped writes, never a failed call: the manager keeps
     * serving from its local tiers.
     *
     * @param store opens the store for this layout ({@code RemoteOptions} is one); null for none
     * @return this
     */
    public KvBlockManagerBuilder remote(BlockStoreFactory store) {
        this.remote = store;
        return this;
    }

    /**
     * Sends every block to the remote store as soon as it reaches the host tier (its first copy
     * off the device, where its bytes are readable by the CPU on any device), not only when it
     * leaves the lowest local tier: other machines find it sooner, at the cost of one network
     * write per demoted block. Without {@link #remote} it has no effect. Default false.
     *
     * @param enabled whether to write through at demotion
     * @return this
     */
    public KvBlockManagerBuilder remoteWriteThrough(boolean enabled) {
        this.remoteWriteThrough = enabled;
        return this;
    }

    /**
     * Sets the eviction policy.
     *
     * @param name eviction policy for device and host ordering, one of {@code EvictionPolicies.names()}
     * @return this
     */
    public KvBlockManagerBuilder policy(String name) {
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
    public KvBlockManagerBuilder hashAlgorithm(HashAlgorithm algorithm) {
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
    public KvBlockManagerBuilder hashKey(byte[] key) {
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
    public KvBlockManagerBuilder generatedHashKey() {
        this.generatedHashKey = true;
        return this;
    }

    /** Recent sealed blocks of each open sequence kept on the device unless {@link #recentDeviceBlocks} says otherwise. */
    public static final int DEFAULT_RECENT_DEVICE_BLOCKS = 2;

    /**
     * Sets how many recent sealed blocks of each open sequence stay on the device (default
     * {@value #DEFAULT_RECENT_DEVICE_BLOCKS}); the device must hold more blocks than this.
     *
     * @param blocks sealed blocks at the end of each open sequence kept on the device, >= 0
     * @return this
     */
    public KvBlockManagerBuilder recentDeviceBlocks(int blocks) {
        this.recentDeviceBlocks = blocks;
        return this;
    }

    /**
     * Sets the pressure watermarks.
     *
     * @param marks pressure watermarks, not null
     * @return this
     */
    public KvBlockManagerBuilder watermarks(PressureWatermarks marks) {
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
    public KvBlockManagerBuilder pool(BudgetLedger ledger) {
        this.pool = ledger;
        return this;
    }

    /**
     * Sets how long a new block waits for space.
     *
     * @param nanos how long a new block waits for space before CapacityExhaustedException, >= 0
     * @return this
     */
    public KvBlockManagerBuilder admissionTimeoutNanos(long nanos) {
        this.admissionTimeoutNanos = nanos;
        return this;
    }

    /**
     * Sets how long one copy between tiers may take.
     *
     * @param nanos how long one copy between tiers may take before it is given up, > 0
     * @return this
     */
    public KvBlockManagerBuilder promotionTimeoutNanos(long nanos) {
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
    public KvBlockManagerBuilder movers(int threads) {
        this.movers = threads;
        return this;
    }

    /**
     * Sets the capacity of each of the mover's queues (one per {@link MovePath}).
     *
     * @param entries block ids each queue holds before it rejects more, 1..65536 (default 256)
     * @return this
     */
    public KvBlockManagerBuilder moveQueueCapacity(int entries) {
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
    public KvBlockManagerBuilder promoteOnMatch(boolean enabled) {
        this.promoteOnMatch = enabled;
        return this;
    }

    /**
     * Sends KV events ({@code BlockStored}, {@code BlockRemoved}, {@code AllBlocksCleared} for the
     * GPU, CPU and DISK media) to a listener, through a bounded queue of
     * {@link #DEFAULT_KV_EVENT_QUEUE_CAPACITY} events drained by one thread of the manager. See
     * {@link #kvEvents(io.tierkv.tiers.events.KvEventListener, int)}.
     *
     * @param listener receives the batches; null for none (the default)
     * @return this
     */
    public KvBlockManagerBuilder kvEvents(io.tierkv.tiers.events.KvEventListener listener) {
        return kvEvents(listener, DEFAULT_KV_EVENT_QUEUE_CAPACITY);
    }

    /**
     * Sends KV events to a listener through a bounded queue. Each tier reports a block when it
     * becomes findable there and when it stops being so (the disk tier's recovered records on
     * open); the data path never waits: a full queue drops the event, counts it
     * ({@link KvBlockManager#kvEventStats()}) and leaves a gap in the batch sequence numbers
     * ({@link io.tierkv.tiers.events.KvEventBatch}). The listener runs on the manager's event
     * thread. Closing the manager delivers what is queued and a final {@code AllBlocksCleared}.
     * Without a listener every report is a call on a no-op sink.
     *
     * <p>The queue is a ring of primitive slots: a report allocates nothing and takes no lock.
     * Its capacity counts the events waiting and those of the batch being delivered (freed when
     * the listener returns); it takes {@code slots * (48 + 4 * B)} bytes of heap, slots being
     * queueCapacity rounded up to a power of two, allocated when the manager is built.
     *
     * @param listener      receives the batches; null for none (the default)
     * @param queueCapacity most events waiting or being delivered, >= 1, and at most a quarter of
     *                      the max heap by the bytes above; checked by {@link #build()}
     * @return this
     */
    public KvBlockManagerBuilder kvEvents(io.tierkv.tiers.events.KvEventListener listener, int queueCapacity) {
        this.kvEventListener = listener;
        this.kvEventQueueCapacity = queueCapacity;
        return this;
    }

    /**
     * Sets the handler of mover errors.
     *
     * @param handler receives every error of the movers and of {@link KvBlockManager#runMoverCycle()}
     *                (they go on); not null. Runs on the mover's thread; an exception it throws is
     *                logged (at WARNING, logger {@code io.tierkv.tiers.Mover}), not thrown, and the
     *                mover goes on
     * @return this
     */
    public KvBlockManagerBuilder errorHandler(Consumer<Throwable> handler) {
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
    KvBlockManagerBuilder machine(Supplier<Optional<MachineMemory>> memory, ToLongFunction<Path> usableBytes) {
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
        if (kvEventQueueCapacity < 1) {
            throw new IllegalArgumentException("kvEventQueueCapacity: " + kvEventQueueCapacity + " (expected >= 1)");
        }
        if (kvEventListener != null) {
            long ringBytes = KvEventRing.maxHeapBytes(kvEventQueueCapacity, layout.blockSizeTokens());
            long heapBytes = Runtime.getRuntime().maxMemory();
            if (ringBytes > heapBytes / 4) {
                throw new IllegalArgumentException("kvEventQueueCapacity: " + kvEventQueueCapacity + " events of "
                        + layout.blockSizeTokens() + " tokens take " + ringBytes + " bytes of heap (expected <= "
                        + heapBytes / 4 + ", a quarter of the JVM's max heap " + heapBytes + ")");
            }
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
        if (transferSet) {
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
                disk.checkFor(layout);
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

package io.tierkv.bench.jmh;

import io.tierkv.core.DType;
import io.tierkv.core.KvLayout;
import io.tierkv.core.cache.BlockLease;
import io.tierkv.core.cache.CacheOptions;
import io.tierkv.core.cache.PagedKvCache;
import io.tierkv.core.cache.Sequence;
import io.tierkv.core.cache.SequenceOptions;
import io.tierkv.core.pool.SlabMemory;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;

/**
 * Read a block view: lease a top-tier-resident block, read from it, release the lease.
 *
 * <p><b>Scenario.</b> Single-tier {@link PagedKvCache}s over pre-touched {@link SlabMemory}, 64
 * sealed blocks each (layout 8 layers x 8 KV heads x 64, F16; block size 16 tokens = 256 KiB, or
 * as the {@code blockSizeTokens} parameter says). One operation leases the next block of the 64 in
 * turn, reads one long from its segment and releases it. {@link #leaseReferenced}: the blocks
 * belong to an open sequence (reference count 1, not eviction candidates).
 * {@link #leaseCached}: the blocks belong to a closed sequence (reference count 0, cached): a
 * lease takes the block out of the eviction policy and the release puts it back, the path a
 * tiered cache takes for every sealed block outside the recent window. {@link #sequenceLease}:
 * the runtime-facing {@link Sequence#lease(int, int)} for one block, which returns a
 * {@link BlockLease} object. {@link #lockLimit}: an uncontended {@link ReentrantLock} lock +
 * unlock, the floor under any lease, since leases change metadata under the cache lock.
 *
 * <p><b>Worst case.</b> {@link #leaseCached} (policy removal and re-admission per lease). A block
 * held only below the top tier costs a promotion, measured in
 * {@code DemotePromoteBenchmark}. {@code PagedKvCache.acquireLease} returns the slot's segment and
 * allocates nothing; {@code Sequence.lease} allocates its {@code BlockLease} and two arrays per
 * call (see {@code -prof gc}).
 *
 * <p>Target (issue 4): lease + release at least 10 M per second on one thread, no heap allocation.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Threads(1)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xms1g", "-Xmx1g"})
public class LeaseBenchmark {

    /** Creates the state; JMH sets the parameters and calls {@link #setUp()}. */
    public LeaseBenchmark() {
    }

    /** Sealed blocks leased in turn. */
    static final int BLOCKS = 64;

    /**
     * Block size in tokens: 4, 16, 64, 128 = 64 KiB, 256 KiB, 1 MiB, 2 MiB blocks with this
     * layout (a lease copies nothing: the figure should not depend on it).
     */
    @Param({"4", "16", "64", "128"})
    public int blockSizeTokens;

    /** Eviction policy; matters for {@link #leaseCached}. */
    @Param({"lru", "s3fifo"})
    public String policy;

    private final ReentrantLock lock = new ReentrantLock();
    private SlabMemory referencedMemory;
    private SlabMemory cachedMemory;
    private PagedKvCache referenced;
    private PagedKvCache cached;
    private Sequence open;
    private final int[] referencedIds = new int[BLOCKS];
    private final int[] cachedIds = new int[BLOCKS];
    private int next;
    private long counter;

    /** Builds both caches, fills 64 blocks in each, and touches every block. */
    @Setup(Level.Trial)
    public void setUp() {
        KvLayout layout = KvLayout.of(8, 8, 64, DType.F16, blockSizeTokens);
        referencedMemory = new SlabMemory(BLOCKS, layout.bytesPerBlock());
        cachedMemory = new SlabMemory(BLOCKS, layout.bytesPerBlock());
        CacheOptions options = CacheOptions.of(layout, BLOCKS).withPolicy(policy);
        referenced = new PagedKvCache(options, referencedMemory, null);
        cached = new PagedKvCache(options, cachedMemory, null);
        open = referenced.openSequence(SequenceOptions.salt("bench"));
        fill(open, layout, 0, referencedIds);
        try (Sequence closing = cached.openSequence(SequenceOptions.salt("bench"))) {
            fill(closing, layout, 1_000_000, cachedIds);
        }
        for (int i = 0; i < BLOCKS; i++) {
            referencedMemory.slot(i).fill((byte) 1);
            cachedMemory.slot(i).fill((byte) 1);
        }
    }

    private static void fill(Sequence seq, KvLayout layout, int firstToken, int[] ids) {
        MemorySegment kv = MemorySegment.ofArray(new byte[layout.tokenVectorBytes()]);
        for (int t = 0; t < BLOCKS * layout.blockSizeTokens(); t++) {
            int pos = seq.appendToken(firstToken + t);
            for (int l = 0; l < layout.layers(); l++) {
                seq.write(l, pos, kv, kv);
            }
        }
        if (seq.sealedBlocks() != BLOCKS) {
            throw new IllegalStateException("sealed " + seq.sealedBlocks() + " of " + BLOCKS + " blocks");
        }
        for (int i = 0; i < BLOCKS; i++) {
            ids[i] = seq.blockId(i);
        }
    }

    /** Closes the caches and frees their memory. */
    @TearDown(Level.Trial)
    public void tearDown() {
        open.close();
        referenced.close();
        cached.close();
        referencedMemory.close();
        cachedMemory.close();
    }

    /**
     * Lease a block held by an open sequence, read a long, release.
     *
     * @return the long read
     */
    @Benchmark
    public long leaseReferenced() {
        int id = referencedIds[next++ & (BLOCKS - 1)];
        MemorySegment block = referenced.acquireLease(id);
        long x = block.get(ValueLayout.JAVA_LONG, 0);
        referenced.releaseLease(id);
        return x;
    }

    /**
     * Lease a cached block (reference count 0, an eviction candidate), read a long, release.
     *
     * @return the long read
     */
    @Benchmark
    public long leaseCached() {
        int id = cachedIds[next++ & (BLOCKS - 1)];
        MemorySegment block = cached.acquireLease(id);
        long x = block.get(ValueLayout.JAVA_LONG, 0);
        cached.releaseLease(id);
        return x;
    }

    /**
     * The runtime-facing range lease, for one block of an open sequence.
     *
     * @return the long read
     */
    @Benchmark
    public long sequenceLease() {
        int b = (next++ & (BLOCKS - 1)) * blockSizeTokens;
        try (BlockLease lease = open.lease(b, b + blockSizeTokens)) {
            return lease.block(0).get(ValueLayout.JAVA_LONG, 0);
        }
    }

    /**
     * Floor: an uncontended lock and unlock around a counter update.
     *
     * @return the counter
     */
    @Benchmark
    public long lockLimit() {
        lock.lock();
        try {
            return ++counter;
        } finally {
            lock.unlock();
        }
    }
}

package io.tierkv.bench.jmh;

import io.tierkv.core.DType;
import io.tierkv.core.KvLayout;
import io.tierkv.core.cache.CacheOptions;
import io.tierkv.core.cache.PagedKvCache;
import io.tierkv.core.cache.Sequence;
import io.tierkv.core.cache.SequenceOptions;
import io.tierkv.core.pool.SlabMemory;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.TimeUnit;
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
 * Append one token to a sequence and write its K and V for every layer, against plain
 * {@link MemorySegment#copy} of the same bytes to the same offsets of one flat region.
 *
 * <p><b>Scenario.</b> A single-tier {@link PagedKvCache} over pre-touched {@link SlabMemory}
 * (128 MiB of blocks) with layout 8 layers x 8 KV heads x head dim 64, F16 (1 KiB per token
 * vector, 16 KiB per token for all layers, K and V); the block size sweeps 4, 16, 64 and 128
 * tokens, that is 64 KiB, 256 KiB, 1 MiB and 2 MiB blocks. One operation is one token:
 * {@link Sequence#appendToken} followed by {@code 8 x Sequence.write(layer, pos, k, v)}. Every
 * token id is new, so every block seals with a new hash. One long-lived sequence fills the whole
 * cache; when it holds every slot it is closed (its sealed blocks stay cached) and a new one is
 * opened, whose allocations then evict the cached blocks by the {@code policy} under test. So the
 * block allocation, sealing (hashing, indexing), eviction and the sequence reopening
 * ({@code openSequence} allocates a few hundred bytes once per cache-full of tokens) are all
 * amortised into the per-token figure, as in steady decoding. {@link #copyLimit} copies the same
 * 16 KiB per token to the same block-relative offsets of one flat region of the same size: the
 * physical limit for these writes.
 *
 * <p><b>Worst case.</b> The token that opens a block (lock, slot allocation, eviction of a cached
 * block, clearing its written-bits) and the token that completes one (hashing B token ids,
 * indexing) are the slow ones; with B = 4 they come every fourth token. Run with
 * {@code -prof gc}: {@code gc.alloc.rate.norm} should be near 0 B/op (issue 2).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Threads(1)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xms1g", "-Xmx1g"})
public class AppendTokenBenchmark {

    /** Creates the state; JMH sets the parameters and calls {@link #setUp()}. */
    public AppendTokenBenchmark() {
    }

    /** Bytes of blocks in the cache (and in the flat region of the limit). */
    static final long CACHE_BYTES = 128L << 20;

    /** Block size in tokens: 4, 16, 64, 128 = 64 KiB, 256 KiB, 1 MiB, 2 MiB blocks. */
    @Param({"4", "16", "64", "128"})
    public int blockSizeTokens;

    /** Eviction policy that chooses which cached block a new block replaces. */
    @Param({"lru", "s3fifo"})
    public String policy;

    private KvLayout layout;
    private SlabMemory memory;
    private PagedKvCache cache;
    private Sequence seq;
    private int tokensPerCache;
    private int nextToken;
    private Arena arena;
    private MemorySegment k;
    private MemorySegment v;
    private MemorySegment flat;
    private long flatPosition;
    private long[] layerOffsetK;
    private long[] layerOffsetV;

    /** Builds the cache and the flat region, and writes both over their whole size once. */
    @Setup(Level.Trial)
    public void setUp() {
        layout = KvLayout.of(8, 8, 64, DType.F16, blockSizeTokens);
        int blocks = (int) (CACHE_BYTES / layout.bytesPerBlock());
        memory = new SlabMemory(blocks, layout.bytesPerBlock());
        cache = new PagedKvCache(CacheOptions.of(layout, blocks).withPolicy(policy), memory, null);
        tokensPerCache = blocks * blockSizeTokens;
        arena = Arena.ofShared();
        k = arena.allocate(layout.tokenVectorBytes(), 64);
        v = arena.allocate(layout.tokenVectorBytes(), 64);
        for (int i = 0; i < k.byteSize(); i++) {
            k.set(ValueLayout.JAVA_BYTE, i, (byte) i);
            v.set(ValueLayout.JAVA_BYTE, i, (byte) ~i);
        }
        flat = arena.allocate(CACHE_BYTES, 4096);
        flat.fill((byte) 0);
        layerOffsetK = new long[layout.layers()];
        layerOffsetV = new long[layout.layers()];
        for (int l = 0; l < layout.layers(); l++) {
            layerOffsetK[l] = layout.offsetOf(l, KvLayout.K, 0);
            layerOffsetV[l] = layout.offsetOf(l, KvLayout.V, 0);
        }
        seq = cache.openSequence(SequenceOptions.salt("bench"));
        // Two passes over the whole cache: the second one already evicts cached blocks.
        for (int i = 0; i < 2 * tokensPerCache; i++) {
            tierkv();
            copyLimit();
        }
    }

    /** Closes the cache and frees the memory. */
    @TearDown(Level.Trial)
    public void tearDown() {
        seq.close();
        cache.close();
        memory.close();
        arena.close();
    }

    /**
     * TierKV: append one token and write its K and V for every layer.
     *
     * @return the token's position
     */
    @Benchmark
    public int tierkv() {
        if (seq.length() == tokensPerCache) {
            seq.close(); // its blocks stay cached; the next sequence's blocks evict them
            seq = cache.openSequence(SequenceOptions.salt("bench"));
        }
        int pos = seq.appendToken(nextToken++);
        for (int l = 0, n = layout.layers(); l < n; l++) {
            seq.write(l, pos, k, v);
        }
        return pos;
    }

    /**
     * Limit: the same bytes to the same offsets of one flat region with plain copies.
     *
     * @return the byte offset of the token's block
     */
    @Benchmark
    public long copyLimit() {
        long t = flatPosition++;
        if (flatPosition == tokensPerCache) {
            flatPosition = 0;
        }
        long block = (t / blockSizeTokens) * layout.bytesPerBlock();
        long tokenOffset = (t % blockSizeTokens) * layout.tokenVectorBytes();
        int n = layout.tokenVectorBytes();
        for (int l = 0, layers = layout.layers(); l < layers; l++) {
            MemorySegment.copy(k, 0, flat, block + layerOffsetK[l] + tokenOffset, n);
            MemorySegment.copy(v, 0, flat, block + layerOffsetV[l] + tokenOffset, n);
        }
        return block;
    }
}

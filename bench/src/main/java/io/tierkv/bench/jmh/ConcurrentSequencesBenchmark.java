package io.tierkv.bench.jmh;

import io.tierkv.core.DType;
import io.tierkv.core.KvLayout;
import io.tierkv.core.cache.CacheOptions;
import io.tierkv.core.cache.PagedKvCache;
import io.tierkv.core.cache.Sequence;
import io.tierkv.core.cache.SequenceOptions;
import io.tierkv.core.pool.SlabMemory;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * How the block model scales with threads that each work on their own sequence of one shared
 * cache: run it with {@code -t 1} and {@code -t 2} and compare the total throughput (issue 13:
 * "a JMH run with 2 threads over distinct sequences (lease, append, match) and how it scales
 * against 1 thread").
 *
 * <p><b>Scenario.</b> One single-tier {@link PagedKvCache} over pre-touched {@link SlabMemory}
 * (layout 2 layers x 2 KV heads x 64, F16, 16 tokens per block: 16 KiB blocks; 4,096 slots),
 * shared by every thread; each thread has sequences of its own (a salt per thread).
 * {@link #lease}: lease one of its own open sequence's 8 sealed blocks, read a long, release.
 * {@link #appendToken}: append a token to its own sequence and write its K and V in every layer
 * (a block seals every 16 tokens; a sequence is closed at 64 blocks and a new one opened, so
 * sealed blocks are cached and evicted by LRU as the cache fills). {@link #matchPrefix}: open a
 * sequence, match a cached 16-block prompt shared by all threads (its blocks referenced by
 * every matching thread at once), close it.
 *
 * <p>Every metadata change takes the cache's one lock (DESIGN.md, Concurrency): the figure shows
 * what that lock costs two threads, not a per-thread ideal of 2x.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xms1g", "-Xmx1g"})
public class ConcurrentSequencesBenchmark {

    /** Creates the benchmark (JMH instantiates it). */
    public ConcurrentSequencesBenchmark() {
    }

    static final KvLayout LAYOUT = KvLayout.of(2, 2, 64, DType.F16, 16);
    static final int SLOTS = 4096;
    static final int PROMPT_BLOCKS = 16;
    static final int LEASED_BLOCKS = 8;
    static final int SEQUENCE_BLOCKS = 64;

    /** The cache every thread shares, and the cached prompt every {@link #matchPrefix} matches. */
    @State(Scope.Benchmark)
    public static class Shared {
        /** Creates the state. */
        public Shared() {
        }

        SlabMemory memory;
        PagedKvCache cache;
        final int[] prompt = new int[PROMPT_BLOCKS * LAYOUT.blockSizeTokens()];
        final AtomicInteger threads = new AtomicInteger();

        /** Builds the cache, touches every slot and caches the shared prompt. */
        @Setup(Level.Trial)
        public void setUp() {
            memory = new SlabMemory(SLOTS, LAYOUT.bytesPerBlock());
            for (int i = 0; i < SLOTS; i++) {
                memory.slot(i).fill((byte) 1);
            }
            cache = new PagedKvCache(CacheOptions.of(LAYOUT, SLOTS), memory, null);
            for (int i = 0; i < prompt.length; i++) {
                prompt[i] = 7_000_000 + i;
            }
            try (Sequence s = cache.openSequence(SequenceOptions.salt("shared"))) {
                append(s, prompt, prompt.length);
            }
        }

        /** Closes the cache and frees its memory. */
        @TearDown(Level.Trial)
        public void tearDown() {
            cache.close();
            memory.close();
        }
    }

    /** One thread's sequences: an open one whose sealed blocks it leases, and one it appends to. */
    @State(Scope.Thread)
    public static class Mine {
        /** Creates the state. */
        public Mine() {
        }

        SequenceOptions options;
        Sequence leased;
        final int[] leasedIds = new int[LEASED_BLOCKS];
        Sequence appending;
        int nextToken;
        int next;
        final MemorySegment kv = MemorySegment.ofArray(new byte[LAYOUT.tokenVectorBytes()]);

        /**
         * Opens this thread's sequences under a salt of its own.
         *
         * @param shared the shared cache
         */
        @Setup(Level.Trial)
        public void setUp(Shared shared) {
            int thread = shared.threads.getAndIncrement();
            options = SequenceOptions.salt("thread-" + thread);
            nextToken = 1_000_000 * (thread + 1);
            leased = shared.cache.openSequence(options);
            int[] tokens = new int[LEASED_BLOCKS * LAYOUT.blockSizeTokens()];
            for (int i = 0; i < tokens.length; i++) {
                tokens[i] = nextToken++;
            }
            append(leased, tokens, tokens.length);
            for (int i = 0; i < LEASED_BLOCKS; i++) {
                leasedIds[i] = leased.blockId(i);
            }
            appending = shared.cache.openSequence(options);
        }

        /** Closes this thread's sequences. */
        @TearDown(Level.Trial)
        public void tearDown() {
            leased.close();
            appending.close();
        }
    }

    private static void append(Sequence s, int[] tokens, int n) {
        MemorySegment kv = MemorySegment.ofArray(new byte[LAYOUT.tokenVectorBytes()]);
        for (int t = 0; t < n; t++) {
            int pos = s.appendToken(tokens[t]);
            for (int l = 0; l < LAYOUT.layers(); l++) {
                s.write(l, pos, kv, kv);
            }
        }
    }

    /**
     * Lease one of this thread's sealed blocks, read a long, release.
     *
     * @param shared the shared cache
     * @param mine   this thread's sequences
     * @return the long read
     */
    @Benchmark
    public long lease(Shared shared, Mine mine) {
        int id = mine.leasedIds[mine.next++ & (LEASED_BLOCKS - 1)];
        MemorySegment block = shared.cache.acquireLease(id);
        long x = block.get(ValueLayout.JAVA_LONG, 0);
        shared.cache.releaseLease(id);
        return x;
    }

    /**
     * Append a token to this thread's sequence and write it in every layer.
     *
     * @param shared the shared cache
     * @param mine   this thread's sequences
     * @return the token's position
     */
    @Benchmark
    public int appendToken(Shared shared, Mine mine) {
        if (mine.appending.length() == SEQUENCE_BLOCKS * LAYOUT.blockSizeTokens()) {
            mine.appending.close(); // its blocks stay cached; later sequences' blocks evict them
            mine.appending = shared.cache.openSequence(mine.options);
        }
        int pos = mine.appending.appendToken(mine.nextToken++);
        for (int l = 0; l < LAYOUT.layers(); l++) {
            mine.appending.write(l, pos, mine.kv, mine.kv);
        }
        return pos;
    }

    /**
     * Open a sequence, match the shared 16-block prompt, close it.
     *
     * @param shared the shared cache
     * @return tokens matched
     */
    @Benchmark
    public int matchPrefix(Shared shared) {
        try (Sequence s = shared.cache.openSequence(SequenceOptions.salt("shared"))) {
            return s.matchPrefix(shared.prompt);
        }
    }
}

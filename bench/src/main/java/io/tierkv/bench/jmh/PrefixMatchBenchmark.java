package io.tierkv.bench.jmh;

import io.tierkv.core.DType;
import io.tierkv.core.KvLayout;
import io.tierkv.core.cache.CacheOptions;
import io.tierkv.core.cache.PagedKvCache;
import io.tierkv.core.cache.Sequence;
import io.tierkv.core.cache.SequenceOptions;
import io.tierkv.core.pool.SlabMemory;
import io.tierkv.core.prefix.BlockHasher;
import io.tierkv.core.prefix.HashAlgorithm;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.HashMap;
import java.util.SplittableRandom;
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
 * Prefix match of 1,000-token prompts against an index of about 1 million cached blocks, against
 * a plain {@code HashMap<Long, Integer>} lookup chain of the same 62 chained block hashes and
 * against the hashing alone.
 *
 * <p><b>Scenario.</b> A single-tier {@link PagedKvCache} over {@link SlabMemory} with a tiny layout
 * (1 layer, 1 KV head, head dim 1, INT8, B = 16 tokens: 32-byte blocks) and
 * {@code maxBlocks = deviceBlocks = 1,000,000}, policy lru. The setup writes 16,000 prompts of
 * 1,000 random token ids (62 full blocks each; 992,000 sealed, indexed, cached blocks; the 8-token
 * tails are dropped at close). One op ({@link #matchPrefix}): open a fresh sequence, match a prompt
 * chosen at random, close the sequence (the matched blocks return to the cache).
 * {@code match = full}: the prompt is cached (62 blocks matched: 62 chained block hashes, 62
 * index probes, 62 identity comparisons, 62 references taken and dropped). {@code hash}: the block
 * hash function, the default SHA-256-128 or the opt-in MurmurHash3, so one run gives the cost of
 * the collision-resistant default (issue 12); {@link #hashOnly} / 62 is the cost of one block's hash.
 * {@code match = none}: its first token differs, so the first probe misses (one hash, one probe:
 * the floor of a miss).
 * <ul>
 * <li>{@link #hashMapChain}: the peer: the same 62 chained 128-bit hashes computed with
 * {@link BlockHasher} and looked up in a {@code HashMap<Long, Integer>} holding the low words of all
 * 992,000 block hashes (boxing the key, as such a map does); stops at the first miss. No token
 * comparison, no reference counting, no eviction-policy update: what a plain map costs.</li>
 * <li>{@link #hashOnly}: the limit: the 62 chained hashes alone.</li>
 * </ul>
 *
 * <p><b>Worst case.</b> Prompts are chosen at random from 16,000, so the index and block metadata
 * (tens of MiB) miss the caches on most probes, as in a large server; with a hot prompt the figure
 * would be better. One thread, no contention on the cache lock.
 *
 * <p>Target (issue 7): none stated beyond measuring it; the ratio to the plain map shows what the
 * cache's bookkeeping costs.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Threads(1)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xms2g", "-Xmx2g"})
public class PrefixMatchBenchmark {

    /** Creates the benchmark; its state lives in the nested state class. */
    public PrefixMatchBenchmark() {
    }

    /** Blocks of the cache. */
    static final int BLOCKS = 1_000_000;
    /** Tokens per prompt. */
    static final int PROMPT_TOKENS = 1_000;
    /** Prompts written. */
    static final int PROMPTS = 16_000;
    /** Tokens per block. */
    static final int B = 16;

    /** The filled cache, the peer map and the prompts. */
    @State(Scope.Thread)
    public static class Index {

        /** Creates the state; JMH sets the parameters and runs the fixtures. */
        public Index() {
        }

        /** full: every block of the prompt is cached; none: the first block misses. */
        @Param({"full", "none"})
        public String match;

        /** The block hash function: the default SHA-256-128 or the opt-in MurmurHash3. */
        @Param({"SHA256_128", "MURMUR3_128"})
        public String hash;

        /** The cache. */
        PagedKvCache cache;
        /** The prompts as matched (the first token changed for {@code none}). */
        int[][] prompts;
        /** The same prompts as native ints, for the hasher. */
        MemorySegment[] promptSegments;
        /** Low hash words of every cached block. */
        HashMap<Long, Integer> map;
        /** The hasher of the peer, of {@link #hash}'s function. */
        BlockHasher hasher;
        /** Salt hash of the peer. */
        long[] salt = new long[2];
        /** Expected matched tokens. */
        int expected;
        private SlabMemory memory;
        private SplittableRandom random;

        /** Fills the cache and the map; matches every prompt once (warm). */
        @Setup(Level.Trial)
        public void setUp() {
            KvLayout layout = KvLayout.of(1, 1, 1, DType.INT8, B);
            memory = new SlabMemory(BLOCKS, layout.bytesPerBlock());
            HashAlgorithm algorithm = HashAlgorithm.valueOf(hash);
            hasher = new BlockHasher(algorithm);
            cache = new PagedKvCache(CacheOptions.of(layout, BLOCKS).withPolicy("lru").withHashAlgorithm(algorithm),
                    memory, null);
            SplittableRandom r = new SplittableRandom(42);
            prompts = new int[PROMPTS][PROMPT_TOKENS];
            promptSegments = new MemorySegment[PROMPTS];
            MemorySegment kv = MemorySegment.ofArray(new byte[layout.tokenVectorBytes()]);
            int full = PROMPT_TOKENS / B;
            map = new HashMap<>(2 * PROMPTS * full);
            hasher.hashSalt("bench", salt);
            for (int p = 0; p < PROMPTS; p++) {
                int[] tokens = prompts[p];
                for (int t = 0; t < PROMPT_TOKENS; t++) {
                    tokens[t] = r.nextInt(32_000);
                }
                try (Sequence seq = cache.openSequence(SequenceOptions.salt("bench"))) {
                    for (int t = 0; t < PROMPT_TOKENS; t++) {
                        int pos = seq.appendToken(tokens[t]);
                        seq.write(0, pos, kv, kv);
                    }
                }
                MemorySegment seg = MemorySegment.ofArray(tokens.clone());
                long hi = 0;
                long lo = 0;
                for (int b = 0; b < full; b++) {
                    hasher.hashBlock(salt[0], salt[1], hi, lo, new long[0], seg, (long) b * B, B);
                    hi = hasher.hi();
                    lo = hasher.lo();
                    map.put(lo, p * full + b);
                }
            }
            if ("none".equals(match)) {
                for (int[] tokens : prompts) {
                    tokens[0] = 32_000 + tokens[0];
                }
            }
            for (int p = 0; p < PROMPTS; p++) {
                promptSegments[p] = MemorySegment.ofArray(prompts[p]);
            }
            expected = "full".equals(match) ? full * B : 0;
            random = new SplittableRandom(7);
            for (int p = 0; p < PROMPTS; p++) {
                try (Sequence seq = cache.openSequence(SequenceOptions.salt("bench"))) {
                    int n = seq.matchPrefix(prompts[p]);
                    if (n != expected) {
                        throw new IllegalStateException("prompt " + p + " matched " + n + ", expected " + expected);
                    }
                }
                int m = mapChain(p);
                if (m != expected / B) {
                    throw new IllegalStateException("map chain of prompt " + p + " found " + m);
                }
            }
            System.out.printf("%nindexed blocks %,d, cached %,d, map %,d%n", cache.stats().indexedBlocks(),
                    cache.stats().cachedBlocks(), map.size());
        }

        /**
         * A random prompt.
         *
         * @return its index
         */
        int nextPrompt() {
            return random.nextInt(PROMPTS);
        }

        /**
         * The peer: chained hashes looked up in the map, up to the first miss.
         *
         * @param p the prompt
         * @return blocks found
         */
        int mapChain(int p) {
            MemorySegment seg = promptSegments[p];
            long hi = 0;
            long lo = 0;
            int found = 0;
            long[] none = NO_KEYS;
            for (int b = 0; b < PROMPT_TOKENS / B; b++) {
                hasher.hashBlock(salt[0], salt[1], hi, lo, none, seg, (long) b * B, B);
                hi = hasher.hi();
                lo = hasher.lo();
                if (map.get(lo) == null) {
                    break;
                }
                found++;
            }
            return found;
        }

        /** Checks invariants and frees the cache. */
        @TearDown(Level.Trial)
        public void tearDown() {
            var bad = cache.checkInvariants();
            cache.close();
            memory.close();
            if (!bad.isEmpty()) {
                throw new IllegalStateException("invariants: " + bad);
            }
        }
    }

    private static final long[] NO_KEYS = new long[0];

    /**
     * Opens a sequence, matches a random prompt, closes the sequence.
     *
     * @param s the index
     * @return tokens matched
     */
    @Benchmark
    public int matchPrefix(Index s) {
        try (Sequence seq = s.cache.openSequence(SequenceOptions.salt("bench"))) {
            return seq.matchPrefix(s.prompts[s.nextPrompt()]);
        }
    }

    /**
     * Peer: the same chain of hashes looked up in a plain {@code HashMap<Long, Integer>}.
     *
     * @param s the index
     * @return blocks found
     */
    @Benchmark
    public int hashMapChain(Index s) {
        return s.mapChain(s.nextPrompt());
    }

    /**
     * Limit: the 62 chained hashes of a random prompt alone.
     *
     * @param s the index
     * @return the last low word
     */
    @Benchmark
    public long hashOnly(Index s) {
        MemorySegment seg = s.promptSegments[s.nextPrompt()];
        BlockHasher h = s.hasher;
        long hi = 0;
        long lo = 0;
        for (int b = 0; b < PROMPT_TOKENS / B; b++) {
            h.hashBlock(s.salt[0], s.salt[1], hi, lo, NO_KEYS, seg, (long) b * B, B);
            hi = h.hi();
            lo = h.lo();
        }
        return lo;
    }
}

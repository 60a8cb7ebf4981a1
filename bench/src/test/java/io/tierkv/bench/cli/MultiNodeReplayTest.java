package io.tierkv.bench.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.bench.trace.TraceRequest;
import io.tierkv.core.DType;
import io.tierkv.core.KvLayout;
import io.tierkv.core.cache.CacheOptions;
import io.tierkv.core.cache.PagedKvCache;
import io.tierkv.core.cache.Sequence;
import io.tierkv.core.cache.SequenceOptions;
import io.tierkv.core.pool.SlabMemory;
import io.tierkv.core.testing.SharedData;
import io.tierkv.remote.testing.RedisTargets;
import io.tierkv.remote.RemoteEviction;
import io.tierkv.remote.RemoteOptions;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The multi-node replay (issue 14) against a real redis-server: routing, the shared store's hits,
 * and the Mooncake result on the real conversation trace.
 */
class MultiNodeReplayTest {

    private static final int B = 512;
    /** The smallest layout (1 KiB per 512-token block): the replay's work is metadata and the store's round trips. */
    private static final KvLayout LAYOUT = KvLayout.of(1, 1, 1, DType.INT8, B);

    private static RemoteOptions lru(String url, long capacityBlocks) {
        return RemoteOptions.of(url).withNamespace("test-" + System.nanoTime()).withEviction(RemoteEviction.LRU)
                .withLruCapacityBlocks(capacityBlocks);
    }

    private static TraceRequest request(long... ids) {
        return new TraceRequest(0, ids.length * B, 0, ids);
    }

    @Test
    void aPromptChainHashesAsTheCacheSealsTheSameTokens() {
        int[] tokens = new int[5 * B];
        for (int i = 0; i < tokens.length; i++) {
            tokens[i] = i * 7919 % 32000;
        }
        try (SlabMemory memory = new SlabMemory(8, LAYOUT.bytesPerBlock());
                PagedKvCache cache = new PagedKvCache(CacheOptions.of(LAYOUT, 8), memory, null);
                PromptChain chain = new PromptChain(B);
                Sequence s = cache.openSequence(SequenceOptions.defaults())) {
            MemorySegment zero = MemorySegment.ofArray(new byte[LAYOUT.bytesPerBlock()]);
            for (int b = 0; b < 5; b++) {
                s.appendBlock(tokens, b * B, zero);
            }
            chain.compute(tokens, 5);
            assertEquals(5, chain.blocks());
            for (int b = 0; b < 5; b++) {
                assertArrayEquals(new long[] {chain.hashHi()[b], chain.hashLo()[b]},
                        cache.diagnostics().blockHash(s.blockId(b)), "block " + b);
            }
        }
    }

    /**
     * Three requests on three nodes: the third shares the first's two blocks. Round robin sends it
     * to a node that does not hold them (no local hit; the store serves both), prefix routing to
     * the node that does (a local hit of both).
     */
    @Test
    void prefixRoutingFindsTheNodeHoldingThePrefixAndTheStoreServesTheOthers() throws Exception {
        List<TraceRequest> requests = List.of(request(1, 2), request(3, 4), request(1, 2, 5));
        try (RedisTargets redis = RedisTargets.standalone()) {
            MultiNodeReplay.Result rr = new MultiNodeReplay(LAYOUT, 64L * B, MultiNodeReplay.Route.ROUND_ROBIN,
                    lru(redis.url(), 1000), 0).run(requests, B, 3, Progress.none());
            assertEquals(7L * B, rr.promptTokens());
            assertEquals(0, rr.localHitRate(), "round robin: request 2 lands on node 2, which holds nothing");
            assertEquals(2.0 / 7, rr.sharedHitRate(), 1e-12, "the store serves its two shared blocks");
            assertEquals(2.0 / 7, rr.ceilingHitRate(), 1e-12);
            assertEquals(2, rr.remote().hits());
            MultiNodeReplay.Result px = new MultiNodeReplay(LAYOUT, 64L * B, MultiNodeReplay.Route.PREFIX,
                    lru(redis.url(), 1000), 0).run(requests, B, 3, Progress.none());
            assertEquals(2.0 / 7, px.localHitRate(), 1e-12, "prefix routing: request 2 goes to node 0, which holds 1, 2");
            assertEquals(2.0 / 7, px.sharedHitRate(), 1e-12);
            assertArrayEquals(new double[] {2.0 / 5, 0, 0}, px.localNodeHitRates(), 1e-12,
                    "requests 0 and 2 on node 0 (ties to the fewest prompt tokens), request 1 on node 1");
            assertEquals(0, px.remote().hits(), "nothing left for the store to serve");
        }
    }

    /**
     * The Mooncake paper's Figure 10 setting on the real conversation trace: 10 nodes of 3e6
     * tokens of single-tier device cache each, a shared store with an owned LRU of 3e7 tokens.
     * The shared store must at least double the local hit rate, and stay within the trace's
     * infinite-cache ceiling (0.374).
     */
    @Test
    void onTheConversationTraceTheSharedStoreMoreThanDoublesTheLocalHitRate() throws Exception {
        Path file = SharedData.require("traces/mooncake-fast25/conversation_trace.jsonl");
        List<TraceRequest> requests = TraceInput.load(file, TraceInput.Format.MOONCAKE, B, -1, 0).requests();
        try (RedisTargets redis = RedisTargets.standalone()) {
            MultiNodeReplay.Result r = new MultiNodeReplay(LAYOUT, 3_000_000, MultiNodeReplay.Route.ROUND_ROBIN,
                    lru(redis.url(), 30_000_000 / B), 0).run(requests, B, 10, Progress.none());
            System.out.printf("10 nodes, round robin: local %.4f, shared %.4f, ceiling %.4f, %.1f s%n",
                    r.localHitRate(), r.sharedHitRate(), r.ceilingHitRate(), r.wallSeconds());
            assertEquals(12_031, r.requests());
            double ceiling = (double) ReplayHitRateTest.referenceInfinite(requests) / r.promptTokens();
            assertEquals(ceiling, r.ceilingHitRate(), 1e-12, "the ceiling counted independently");
            assertTrue(r.sharedHitRate() >= 2 * r.localHitRate(), "shared " + r.sharedHitRate() + " local "
                    + r.localHitRate());
            assertTrue(r.sharedHitRate() <= r.ceilingHitRate() + 1e-12);
            assertEquals(0, r.remote().errors() + r.remote().timeouts(), "a quiet store: no fault");
            assertEquals(0, r.rejectedRequests());
        }
    }
}

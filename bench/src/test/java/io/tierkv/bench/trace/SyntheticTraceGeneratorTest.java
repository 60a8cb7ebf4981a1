package io.tierkv.bench.trace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class SyntheticTraceGeneratorTest {

    private static final GeneratorOptions SMALL = GeneratorOptions.defaults().withRequests(2_000);

    @Test
    void theSameOptionsGiveTheSameTraceAndAnotherSeedAnotherOne() {
        List<TraceRequest> a = SyntheticTraceGenerator.generate(SMALL);
        List<TraceRequest> b = SyntheticTraceGenerator.generate(SMALL);
        assertEquals(a, b);
        assertNotEquals(a, SyntheticTraceGenerator.generate(SMALL.withSeed(43)));
    }

    @Test
    void requestsArriveInOrderWithOneIdPerBlock() {
        List<TraceRequest> trace = SyntheticTraceGenerator.generate(SMALL);
        assertEquals(2_000, trace.size());
        long previous = 0;
        for (TraceRequest r : trace) {
            assertTrue(r.timestampMillis() >= previous);
            previous = r.timestampMillis();
            assertEquals((r.inputLength() + 511) / 512, r.blockCount());
        }
        // 2,000 Poisson arrivals at 4 per second take about 500 s.
        assertEquals(500_000.0, trace.getLast().timestampMillis(), 50_000.0);
    }

    @Test
    void idsFormAPrefixTreeEachIdAlwaysAtOneDepthAfterOneParent() {
        Map<Long, Long> parent = new HashMap<>();
        Map<Long, Integer> depth = new HashMap<>();
        for (TraceRequest r : SyntheticTraceGenerator.generate(SMALL)) {
            for (int i = 0; i < r.blockCount(); i++) {
                long id = r.blockHash(i);
                long p = i == 0 ? Long.MIN_VALUE : r.blockHash(i - 1);
                int depthOf = i;
                assertEquals(p, (long) parent.computeIfAbsent(id, k -> p), "parent of " + id);
                assertEquals(i, (int) depth.computeIfAbsent(id, k -> depthOf), "depth of " + id);
            }
        }
    }

    @Test
    void aTurnResendsThePreviousTurnsFullBlocks() {
        // One system prompt, no documents, one session at a time: each request either opens a
        // session or continues the previous one. User messages of 50..150 tokens and answers of
        // 128..384 tell the two apart: a continuation adds exactly one user message to the
        // previous prompt and answer, a new session is shorter than those.
        GeneratorOptions o = SMALL.withSystemPrompts(1, 2_048).withDocuments(0, 0, 0.0).withSessions(3, 100, 256, 1);
        List<TraceRequest> trace = SyntheticTraceGenerator.generate(o);
        int continuations = 0;
        for (int i = 1; i < trace.size(); i++) {
            TraceRequest prev = trace.get(i - 1);
            TraceRequest r = trace.get(i);
            int added = r.inputLength() - prev.inputLength() - prev.outputLength();
            if (added < 50 || added > 150) {
                continue; // a new session
            }
            continuations++;
            int full = prev.inputLength() / 512;
            for (int b = 0; b < full; b++) {
                assertEquals(prev.blockHash(b), r.blockHash(b), "request " + i + " block " + b);
            }
            if (prev.inputLength() % 512 != 0) {
                assertNotEquals(prev.blockHash(full), r.blockHash(full), "a partial block is not a full one");
            }
        }
        // Sessions last 1..5 turns, 3 on average: about 2/3 of requests continue one.
        assertEquals(2.0 / 3.0, continuations / (double) trace.size(), 0.05);
    }

    @Test
    void systemPromptsAreSharedByZipfPopularity() {
        List<TraceRequest> trace = SyntheticTraceGenerator.generate(SMALL.withDocuments(0, 0, 0.0));
        Map<Long, Integer> firstBlocks = new HashMap<>();
        for (TraceRequest r : trace) {
            firstBlocks.merge(r.blockHash(0), 1, Integer::sum);
        }
        assertTrue(firstBlocks.size() <= 8, firstBlocks.size() + " distinct first blocks for 8 system prompts");
        int top = firstBlocks.values().stream().mapToInt(Integer::intValue).max().orElseThrow();
        // P(rank 1) = 1 / H(8) = 0.368 for exponent 1.
        assertEquals(0.368, top / (double) trace.size(), 0.06);
    }

    @Test
    void theZipfSamplerDrawsRanksByPopularity() {
        SplittableRandom rnd = new SplittableRandom(3);
        ZipfSampler zipf = new ZipfSampler(10, 1.0);
        int[] counts = new int[10];
        int draws = 200_000;
        for (int i = 0; i < draws; i++) {
            counts[zipf.sample(rnd)]++;
        }
        double h10 = 2.9289682539682538;
        for (int k = 0; k < 10; k++) {
            assertEquals(1.0 / (k + 1) / h10, counts[k] / (double) draws, 0.005, "rank " + k);
        }
        ZipfSampler uniform = new ZipfSampler(4, 0.0);
        int[] u = new int[4];
        for (int i = 0; i < draws; i++) {
            u[uniform.sample(rnd)]++;
        }
        for (int k = 0; k < 4; k++) {
            assertEquals(0.25, u[k] / (double) draws, 0.005, "rank " + k);
        }
    }

    @Test
    void optionsAreValidatedWithFieldValueAndBound() {
        GeneratorOptions d = GeneratorOptions.defaults();
        assertEquals("requests: 0 (expected >= 1)",
                assertThrows(IllegalArgumentException.class, () -> d.withRequests(0)).getMessage());
        assertEquals("documentProbability: 1.5 (expected in [0, 1])",
                assertThrows(IllegalArgumentException.class, () -> d.withDocuments(10, 10, 1.5)).getMessage());
        assertEquals("requestsPerSecond: 0.0 (expected in (0, 1e6])",
                assertThrows(IllegalArgumentException.class, () -> d.withRequestsPerSecond(0)).getMessage());
        assertEquals("blockSizeTokens: -16 (expected >= 1)",
                assertThrows(IllegalArgumentException.class, () -> d.withBlockSizeTokens(-16)).getMessage());
    }

    @Test
    void smallBlocksWorkToo() {
        List<TraceRequest> trace = SyntheticTraceGenerator.generate(SMALL.withRequests(50).withBlockSizeTokens(16));
        for (TraceRequest r : trace) {
            assertEquals((r.inputLength() + 15) / 16, r.blockCount());
        }
    }
}

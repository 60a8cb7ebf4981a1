package io.tierkv.jlama;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.github.tjake.jlama.model.AbstractModel;
import com.github.tjake.jlama.model.ModelSupport;
import com.github.tjake.jlama.safetensors.DType;
import io.tierkv.core.cache.CacheStats;
import io.tierkv.core.cache.SequenceOptions;
import io.tierkv.tiers.KvBlockManager;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/**
 * What a runtime does that a single session on one thread does not (found by a review, each
 * failing before its fix): one model directory loaded with other load options must not share
 * blocks; sessions on several threads must give stock Jlama's tokens (Jlama's forward is not safe
 * for concurrent calls, so the adapter runs one step at a time) and count their own prefix hits;
 * closing the adapter during a step must wait for it; a refused call must take nothing.
 */
class JlamaSessionSafetyTest extends RandomD256Fixture {

    private static void assertNoLeak(KvBlockManager kv) {
        assertTrue(kv.checkInvariants().isEmpty(), kv.checkInvariants().toString());
        CacheStats c = kv.stats().cache();
        assertEquals(0, c.leasedOnlyBlocks(), "leased-only " + c);
        assertEquals(c.cachedBlocks(), c.liveBlocks(), "live blocks not cached (leaked) " + c);
    }

    /** Weights quantized to Q4 at load compute other KV than the F32 load of the same directory. */
    @Test
    void theSameDirectoryLoadedWithOtherOptionsSharesNoBlocks() {
        AbstractModel q = ModelSupport.loadModel(modelDir.toFile(), null, DType.F32, DType.F32, Optional.of(DType.Q4),
                Optional.empty());
        try {
            assertNotEquals(TierKvJlama.loadKey(model), TierKvJlama.loadKey(q));
            int[] prompt = longPrompt();
            Generation stockQ = StockJlama.generate(q, prompt, 16, Prefill.TOKEN_BY_TOKEN, false);
            long key = ModelFingerprint.of(modelDir); // the README's key: the same for both loads
            try (KvBlockManager kv = manager(16, 64).host(4L << 20).build()) {
                try (TierKvJlama j = TierKvJlama.install(model, kv);
                     JlamaSession s = j.openSession(SequenceOptions.salt("t").withExtraKeys(key))) {
                    s.generate(prompt, 2, Prefill.TOKEN_BY_TOKEN, false, l -> { });
                }
                try (TierKvJlama j = TierKvJlama.install(q, kv);
                     JlamaSession s = j.openSession(SequenceOptions.salt("t").withExtraKeys(key))) {
                    Generation g = s.generate(prompt, 16, Prefill.TOKEN_BY_TOKEN, false, l -> { });
                    assertEquals(0, g.cachedTokens(), "the F32 load's blocks are not the Q4 load's");
                    assertArrayEquals(stockQ.tokens(), g.tokens());
                }
                assertNoLeak(kv);
            }
        } finally {
            q.close();
        }
    }

    /** Four sessions at once, sharing a first block: each gives stock Jlama's tokens, twice. */
    @Test
    void sessionsOnThreadsGiveStockTokens() throws Exception {
        int[] base = longPrompt();
        int n = 4;
        int[][] prompts = new int[n][];
        Generation[] stock = new Generation[n];
        for (int i = 0; i < n; i++) {
            prompts[i] = base.clone();
            prompts[i][20] = i == 0 ? base[20] : 300 + i; // the first blocks shared, the later ones differ
            stock[i] = StockJlama.generate(model, prompts[i], 16, Prefill.TOKEN_BY_TOKEN, false);
        }
        try (KvBlockManager kv = manager(4, 256).host(4L << 20).build();
             TierKvJlama jlama = TierKvJlama.install(model, kv)) {
            ExecutorService ex = Executors.newFixedThreadPool(n);
            try {
                for (int round = 0; round < 2; round++) {
                    CountDownLatch go = new CountDownLatch(1);
                    List<Future<Generation>> fs = new ArrayList<>();
                    for (int i = 0; i < n; i++) {
                        int k = i;
                        fs.add(ex.submit(() -> {
                            go.await();
                            try (JlamaSession s = jlama.openSession(SequenceOptions.salt("c"))) {
                                return s.generate(prompts[k], 16, Prefill.TOKEN_BY_TOKEN, false, l -> { });
                            }
                        }));
                    }
                    go.countDown();
                    for (int i = 0; i < n; i++) {
                        assertArrayEquals(stock[i].tokens(), fs.get(i).get().tokens(), "round " + round + " session " + i);
                    }
                }
            } finally {
                ex.shutdownNow();
            }
            assertNoLeak(kv);
        }
    }

    /** A generation's hits are its own: hits x B equals its cached tokens, with other sessions matching at once. */
    @Test
    void sessionsOnThreadsCountTheirOwnPrefixHits() throws Exception {
        int[] prompt = longPrompt();
        try (KvBlockManager kv = manager(4, 256).host(4L << 20).build();
             TierKvJlama jlama = TierKvJlama.install(model, kv)) {
            try (JlamaSession s = jlama.openSession(SequenceOptions.salt("h"))) {
                s.generate(prompt, 1, Prefill.TOKEN_BY_TOKEN, false, l -> { });
            }
            int n = 4;
            ExecutorService ex = Executors.newFixedThreadPool(n);
            try {
                CountDownLatch go = new CountDownLatch(1);
                List<Future<Generation>> fs = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    fs.add(ex.submit(() -> {
                        go.await();
                        try (JlamaSession s = jlama.openSession(SequenceOptions.salt("h"))) {
                            return s.generate(prompt, 8, Prefill.TOKEN_BY_TOKEN, false, l -> { });
                        }
                    }));
                }
                go.countDown();
                for (Future<Generation> f : fs) {
                    Generation g = f.get();
                    assertEquals(36, g.cachedTokens());
                    assertEquals(new PrefixHits(9, 0, 0), g.hits(), "for " + g.cachedTokens() + " cached tokens");
                }
            } finally {
                ex.shutdownNow();
            }
        }
    }

    /**
     * The adapter closed from another thread at random points of a generation: the close waits for
     * the step in flight, and the generation ends at its next step with "is closed" (before: the
     * lease was released under Jlama's feet, "no lease" mid-step).
     */
    @Test
    void closingTheAdapterDuringAGenerationWaitsForItsStep() throws Exception {
        int[] prompt = longPrompt();
        Map<String, Integer> outcomes = new TreeMap<>();
        ExecutorService ex = Executors.newSingleThreadExecutor();
        Random rnd = new Random(1);
        try (KvBlockManager kv = manager(4, 256).host(4L << 20).build()) {
            for (int it = 0; it < 60; it++) {
                TierKvJlama jlama = TierKvJlama.install(model, kv);
                JlamaSession s = jlama.openSession(SequenceOptions.salt("r" + it));
                CountDownLatch started = new CountDownLatch(1);
                Future<Generation> f = ex.submit(() -> s.generate(prompt, 40, Prefill.TOKEN_BY_TOKEN, false,
                        l -> started.countDown()));
                started.await();
                long until = System.nanoTime() + rnd.nextInt(3_000_000);
                while (System.nanoTime() < until) {
                    Thread.onSpinWait();
                }
                jlama.close();
                String outcome;
                try {
                    f.get();
                    outcome = "completed";
                } catch (ExecutionException e) {
                    String m = String.valueOf(e.getCause().getMessage());
                    outcome = e.getCause().getClass().getSimpleName() + ": "
                            + m.replace(s.id().toString(), "ID");
                }
                outcomes.merge(outcome, 1, Integer::sum);
            }
            assertNoLeak(kv);
        } finally {
            ex.shutdownNow();
        }
        outcomes.remove("completed");
        assertEquals(List.of("IllegalStateException: session ID is closed"), List.copyOf(outcomes.keySet()),
                outcomes.toString());
    }

    /** A prompt past the model's context is refused before the match: the session is untouched and still generates. */
    @Test
    void aRefusedCallTakesNothingAndTheSessionStillGenerates() {
        int[] prompt = longPrompt();
        try (KvBlockManager kv = manager(16, 64).host(4L << 20).build();
             TierKvJlama jlama = TierKvJlama.install(model, kv)) {
            try (JlamaSession s = jlama.openSession(SequenceOptions.salt("c"))) {
                s.generate(prompt, 2);
            }
            try (JlamaSession s = jlama.openSession(SequenceOptions.salt("c"))) {
                IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> s.generate(prompt, 600));
                assertTrue(e.getMessage().startsWith("prompt + steps - 1: 636 (expected <= the model's context length"),
                        e.getMessage());
                assertEquals(0, s.sequence().length(), "the refused call matched nothing into the sequence");
                assertEquals(32, s.generate(prompt, 2).cachedTokens());
            }
            assertNoLeak(kv);
        }
    }
}

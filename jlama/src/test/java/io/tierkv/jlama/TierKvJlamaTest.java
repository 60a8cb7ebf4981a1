package io.tierkv.jlama;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.github.tjake.jlama.safetensors.DType;
import io.tierkv.core.KvLayout;
import io.tierkv.core.cache.SequenceOptions;
import io.tierkv.tiers.KvBlockManager;
import io.tierkv.tiers.TierStats;
import io.tierkv.tiers.disk.DiskOptions;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Jlama on TierKV against stock Jlama on jlama-random-d256 (head size 64, 4 layers, 2 KV heads). */
class TierKvJlamaTest extends RandomD256Fixture {

    @TempDir
    Path dir;

    @Test
    void installRefusesAManagerWhoseLayoutIsNotTheModelsAndCloseGivesJlamaItsCacheBack() {
        KvLayout wrong = KvLayout.of(4, 4, 64, io.tierkv.core.DType.F32, 16); // 4 KV heads, the model has 2
        try (KvBlockManager kv = KvBlockManager.builder(wrong).device(gpu, 4L << 20).host(1L << 20).movers(0).build()) {
            IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                    () -> TierKvJlama.install(model, kv));
            assertTrue(e.getMessage().contains("kvHeads=2"), e.getMessage());
        }
        try (KvBlockManager kv = manager(16, 8).host(1L << 20).build()) {
            TierKvJlama jlama = TierKvJlama.install(model, kv);
            org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class, () -> TierKvJlama.install(model, kv));
            JlamaSession open = jlama.openSession(SequenceOptions.defaults());
            jlama.close();
            org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class, () -> open.generate(ref.prompt(), 1));
            TierKvJlama.install(model, kv).close(); // Jlama's own cache was put back, so a new adapter installs
            assertArrayEquals(ref.greedy(), StockJlama.generate(model, ref.prompt(), ref.greedy().length, false).tokens());
        }
    }

    @Test
    void everyBlockOnTheDeviceGivesStockTokensAndLogitsToTheBit() {
        Generation stock = StockJlama.generate(model, ref.prompt(), ref.greedy().length, true);
        assertArrayEquals(ref.greedy(), stock.tokens(), "stock Jlama against ref.json");
        try (KvBlockManager kv = manager(16, 64).host(4L << 20).build();
             TierKvJlama jlama = TierKvJlama.install(model, kv);
             JlamaSession s = jlama.openSession(SequenceOptions.defaults())) {
            Generation g = s.generate(ref.prompt(), ref.greedy().length, true);
            assertArrayEquals(ref.greedy(), g.tokens());
            assertSameLogits(stock.logits(), g.logits());
            assertEquals(0, g.cachedTokens());
            assertEquals(0, kv.stats().cache().demotions());
            assertTrue(kv.checkInvariants().isEmpty(), kv.checkInvariants().toString());
        }
    }

    @Test
    void blocksSentThroughHostAndDiskAndBackGiveStockTokensAndLogits() {
        int[] prompt = longPrompt();
        Generation stock = StockJlama.generate(model, prompt, 24, true);
        KvLayout layout = TierKvJlama.layoutFor(model, 4);
        try (KvBlockManager kv = manager(4, 16).host(2L * layout.bytesPerBlock()).recentDeviceBlocks(0)
                .disk(DiskOptions.at(dir.resolve("disk")).withBudgetBytes(4L << 20).withSegmentBytes(1L << 20)).build();
             TierKvJlama jlama = TierKvJlama.install(model, kv);
             JlamaSession s = jlama.openSession(SequenceOptions.defaults())) {
            Generation g = s.generate(prompt, 24, Prefill.BATCHED, true, length -> {
                kv.demote(Integer.MAX_VALUE);
                kv.evictHost(Integer.MAX_VALUE);
            });
            assertArrayEquals(stock.tokens(), g.tokens());
            assertSameLogits(stock.logits(), g.logits());
            TierStats st = kv.stats();
            // 60 positions, 15 blocks: each sealed block went down once (later demotions drop the clean
            // device copy), was spilled, and came back from disk for every step that attended over it
            assertEquals(15, st.demotions().blocks(), "demotions " + st.demotions());
            assertEquals(15, st.diskSpills().blocks(), "spills " + st.diskSpills());
            assertTrue(st.cache().cleanDrops() > 200, "clean drops " + st.cache().cleanDrops());
            assertTrue(st.diskLoads().blocks() > 200, "disk loads " + st.diskLoads());
            assertTrue(kv.checkInvariants().isEmpty(), kv.checkInvariants().toString());
        }
    }

    @Test
    void aSecondSessionWithTheSamePromptTakesEveryFullBlockFromTheCache() {
        int[] prompt = longPrompt();
        Generation stock = StockJlama.generate(model, prompt, 16, true);
        try (KvBlockManager kv = manager(16, 64).host(4L << 20).build();
             TierKvJlama jlama = TierKvJlama.install(model, kv)) {
            Generation first;
            try (JlamaSession s = jlama.openSession(SequenceOptions.salt("t"))) {
                first = s.generate(prompt, 16, true);
            }
            Generation second;
            try (JlamaSession s = jlama.openSession(SequenceOptions.salt("t"))) {
                second = s.generate(prompt, 16, true);
            }
            assertEquals(0, first.cachedTokens());
            assertEquals(32, second.cachedTokens());
            assertEquals(new PrefixHits(2, 0, 0), second.hits());
            assertArrayEquals(stock.tokens(), first.tokens());
            assertArrayEquals(stock.tokens(), second.tokens());
            assertSameLogits(stock.logits(), first.logits());
            try (JlamaSession other = jlama.openSession(SequenceOptions.salt("another tenant"))) {
                assertEquals(0, other.generate(prompt, 1).cachedTokens(), "another salt shares nothing");
            }
            assertTrue(kv.checkInvariants().isEmpty(), kv.checkInvariants().toString());
        }
    }

    @Test
    void aPromptSharingOneBlockComputesOnlyTheRest() {
        int[] prompt = longPrompt();
        int[] branch = prompt.clone();
        branch[20] = 300; // diverges in the second block
        Generation stock = StockJlama.generate(model, branch, 8, false);
        try (KvBlockManager kv = manager(16, 64).host(4L << 20).build();
             TierKvJlama jlama = TierKvJlama.install(model, kv)) {
            try (JlamaSession s = jlama.openSession(SequenceOptions.defaults())) {
                s.generate(prompt, 4);
            }
            try (JlamaSession s = jlama.openSession(SequenceOptions.defaults())) {
                Generation g = s.generate(branch, 8);
                assertEquals(16, g.cachedTokens());
                assertArrayEquals(stock.tokens(), g.tokens());
            }
        }
    }

    @Test
    void tokenByTokenPrefillAfterACachedPrefixContinuesRefJsonForLengthsBatchedJlamaGetsWrong() {
        int[] all = longPrompt();
        try (KvBlockManager kv = manager(4, 64).host(4L << 20).build();
             TierKvJlama jlama = TierKvJlama.install(model, kv)) {
            try (JlamaSession s = jlama.openSession(SequenceOptions.defaults())) {
                s.generate(all, 1, Prefill.TOKEN_BY_TOKEN, false, length -> { });
            }
            for (int n : new int[] {6, 8, 13, 22, 32}) {
                int[] p = java.util.Arrays.copyOf(all, n);
                try (JlamaSession s = jlama.openSession(SequenceOptions.defaults())) {
                    Generation g = s.generate(p, 2, Prefill.TOKEN_BY_TOKEN, false, length -> { });
                    assertEquals((n - 1) / 4 * 4, g.cachedTokens());
                    assertArrayEquals(new int[] {all[n], all[n + 1]}, g.tokens(), "prompt of " + n);
                    assertArrayEquals(StockJlama.generate(model, p, 2, Prefill.TOKEN_BY_TOKEN, false).tokens(), g.tokens());
                }
            }
        }
    }

    @Test
    void afterARestartOverAPersistentDiskTheSamePromptComesFromDisk() {
        int[] prompt = longPrompt();
        Generation stock = StockJlama.generate(model, prompt, 16, false);
        DiskOptions disk = DiskOptions.at(dir.resolve("persistent")).withBudgetBytes(8L << 20).withSegmentBytes(1L << 20).withPersistent(true);
        KvLayout layout = TierKvJlama.layoutFor(model, 16);
        try (KvBlockManager kv = manager(16, 64).host(4L * layout.bytesPerBlock()).disk(disk).build();
             TierKvJlama jlama = TierKvJlama.install(model, kv)) {
            try (JlamaSession s = jlama.openSession(SequenceOptions.salt("t"))) {
                assertArrayEquals(stock.tokens(), s.generate(prompt, 16).tokens());
            }
            kv.demote(Integer.MAX_VALUE);
            kv.evictHost(Integer.MAX_VALUE);
        }
        try (KvBlockManager kv = manager(16, 64).host(4L * layout.bytesPerBlock()).disk(disk).build();
             TierKvJlama jlama = TierKvJlama.install(model, kv);
             JlamaSession s = jlama.openSession(SequenceOptions.salt("t"))) {
            Generation g = s.generate(prompt, 16);
            assertEquals(32, g.cachedTokens());
            assertEquals(new PrefixHits(0, 0, 2), g.hits());
            assertArrayEquals(stock.tokens(), g.tokens());
        }
    }
}

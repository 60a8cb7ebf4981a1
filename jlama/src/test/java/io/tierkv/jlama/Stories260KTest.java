package io.tierkv.jlama;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.github.tjake.jlama.model.AbstractModel;
import com.github.tjake.jlama.model.ModelSupport;
import com.github.tjake.jlama.safetensors.DType;
import io.tierkv.core.KvLayout;
import io.tierkv.core.cache.SequenceOptions;
import io.tierkv.core.testing.SharedData;
import io.tierkv.natives.EmulatedDevice;
import io.tierkv.tiers.KvBlockManager;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * The trained stories260K (head size 8) on TierKV: the 64 greedy ids of its ref.json. Runs in its
 * own surefire execution with {@code -XX:MaxVectorSize=32}: with head size 8 on AVX-512 Jlama's
 * batched attention step does nothing over multi-position KV blocks (see the model's README).
 */
class Stories260KTest {

    @Test
    void theSixtyFourReferenceIdsComeOutOfTierKvAndStockJlama() {
        Path d = SharedData.require("models/stories260K-hf");
        RefJson ref = RefJson.read(d);
        AbstractModel model = ModelSupport.loadModel(d.toFile(), DType.F32, DType.F32);
        try (EmulatedDevice gpu = new EmulatedDevice(16L << 20)) {
            KvLayout layout = TierKvJlama.layoutFor(model, 16);
            assertEquals(KvLayout.of(5, 4, 8, io.tierkv.core.DType.F32, 16), layout);
            try (KvBlockManager kv = KvBlockManager.builder(layout).device(gpu, 8L << 20).host(1L << 20).movers(0).build();
                 TierKvJlama jlama = TierKvJlama.install(model, kv)) {
                try (JlamaSession s = jlama.openSession(SequenceOptions.defaults())) {
                    assertArrayEquals(ref.greedy(), s.generate(ref.prompt(), ref.greedy().length).tokens());
                }
                try (JlamaSession s = jlama.openSession(SequenceOptions.defaults())) {
                    int[] longer = java.util.stream.IntStream.concat(java.util.stream.IntStream.of(ref.prompt()),
                            java.util.stream.IntStream.of(ref.greedy())).toArray();
                    Generation g = s.generate(longer, 8);
                    assertEquals(64, g.cachedTokens(), "the first session's 4 full blocks");
                    assertArrayEquals(StockJlama.generate(model, longer, 8, false).tokens(), g.tokens());
                }
            }
            assertArrayEquals(ref.greedy(), StockJlama.generate(model, ref.prompt(), ref.greedy().length, false).tokens());
        } finally {
            model.close();
        }
    }
}

package io.tierkv.jlama;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.github.tjake.jlama.model.AbstractModel;
import com.github.tjake.jlama.model.ModelSupport;
import com.github.tjake.jlama.safetensors.DType;
import io.tierkv.core.KvLayout;
import io.tierkv.core.testing.SharedData;
import io.tierkv.natives.EmulatedDevice;
import io.tierkv.tiers.KvBlockManager;
import io.tierkv.tiers.KvBlockManagerBuilder;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * What the tests of Jlama on TierKV share: jlama-random-d256 (head size 64, 4 layers, 2 KV heads)
 * loaded once per test class, F32, with its ref.json and a 64 MiB emulated device; managers over
 * it; the longer prompt; bit-exact logit comparison.
 */
abstract class RandomD256Fixture {

    static AbstractModel model;
    static RefJson ref;
    static EmulatedDevice gpu;
    static Path modelDir;

    @BeforeAll
    static void load() {
        modelDir = SharedData.require("models/jlama-random-d256");
        ref = RefJson.read(modelDir);
        model = ModelSupport.loadModel(modelDir.toFile(), DType.F32, DType.F32);
        gpu = new EmulatedDevice(64L << 20);
    }

    @AfterAll
    static void unload() {
        if (model != null) {
            model.close();
        }
        if (gpu != null) {
            gpu.close();
        }
    }

    /** A manager builder over the model's layout at B tokens per block, with that many device blocks, no movers. */
    static KvBlockManagerBuilder manager(int blockTokens, int deviceBlocks) {
        KvLayout layout = TierKvJlama.layoutFor(model, blockTokens);
        return KvBlockManager.builder(layout).device(gpu, (long) deviceBlocks * layout.bytesPerBlock()).movers(0);
    }

    /** A longer prompt: ref's prompt and greedy ids, 37 tokens (two full blocks of 16). */
    static int[] longPrompt() {
        return IntStream.concat(IntStream.of(ref.prompt()), IntStream.of(ref.greedy())).toArray();
    }

    static void assertSameLogits(List<float[]> expected, List<float[]> actual) {
        assertEquals(expected.size(), actual.size());
        for (int i = 0; i < expected.size(); i++) {
            float[] e = expected.get(i);
            float[] a = actual.get(i);
            assertEquals(e.length, a.length);
            for (int j = 0; j < e.length; j++) {
                assertEquals(Float.floatToRawIntBits(e[j]), Float.floatToRawIntBits(a[j]),
                        "step " + i + " logit " + j + ": " + e[j] + " vs " + a[j]);
            }
        }
    }
}

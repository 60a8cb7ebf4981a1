package io.tierkv.jlama.jmh;

import com.github.tjake.jlama.model.AbstractModel;
import com.github.tjake.jlama.model.ModelSupport;
import com.github.tjake.jlama.safetensors.DType;
import io.tierkv.core.KvLayout;
import io.tierkv.core.cache.SequenceOptions;
import io.tierkv.jlama.JlamaSession;
import io.tierkv.jlama.Prefill;
import io.tierkv.jlama.StockJlama;
import io.tierkv.jlama.TierKvJlama;
import io.tierkv.natives.EmulatedDevice;
import io.tierkv.tiers.KvBlockManager;
import io.tierkv.tiers.disk.DiskOptions;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.SplittableRandom;
import java.util.stream.Stream;

/** Shared state of the Jlama benchmarks: the model, a manager and the adapter (jlama-random-d256). */
final class JlamaBenchmarks {

    /** Tokens per block. */
    static final int BLOCK_TOKENS = 16;

    final AbstractModel model;
    final EmulatedDevice gpu;
    final KvBlockManager kv;
    final TierKvJlama jlama;
    final Path diskDir;

    JlamaBenchmarks(int deviceBlocks, int hostBlocks) throws IOException {
        Path dir = Path.of(System.getProperty("tierkv.jlama.model", "../shared/data/models/jlama-random-d256"));
        if (!Files.isRegularFile(dir.resolve("config.json"))) {
            throw new IllegalStateException("model not found: " + dir.toAbsolutePath()
                    + " (set -Dtierkv.jlama.model=DIR)");
        }
        model = ModelSupport.loadModel(dir.toFile(), DType.F32, DType.F32);
        KvLayout layout = TierKvJlama.layoutFor(model, BLOCK_TOKENS);
        gpu = new EmulatedDevice((deviceBlocks + 8L) * layout.bytesPerBlock());
        diskDir = Files.createTempDirectory("tierkv-jlama-bench");
        kv = KvBlockManager.builder(layout)
                .device(gpu, (long) deviceBlocks * layout.bytesPerBlock())
                .host((long) hostBlocks * layout.bytesPerBlock())
                .disk(DiskOptions.at(diskDir.resolve("kv")).withBudgetBytes(512L << 20).withSegmentBytes(16L << 20))
                .recentDeviceBlocks(0)
                .movers(0)
                .build();
        jlama = TierKvJlama.install(model, kv);
    }

    /** Seeded token ids in [3, vocab). */
    int[] tokens(SplittableRandom rnd, int n) {
        int vocab = model.getConfig().vocabularySize;
        return rnd.ints(n, 3, vocab).toArray();
    }

    /** Generates with TierKV in a new session and closes it. */
    int tierKv(int[] prompt, int steps) {
        try (JlamaSession s = jlama.openSession(SequenceOptions.salt("bench"))) {
            int[] t = s.generate(prompt, steps, Prefill.BATCHED, false, length -> { }).tokens();
            return t[t.length - 1];
        }
    }

    /** Generates with stock Jlama. */
    int stock(int[] prompt, int steps) {
        int[] t = StockJlama.generate(model, prompt, steps, Prefill.BATCHED, false).tokens();
        return t[t.length - 1];
    }

    void close() throws IOException {
        jlama.close();
        kv.close();
        gpu.close();
        model.close();
        try (Stream<Path> s = Files.walk(diskDir)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }
}

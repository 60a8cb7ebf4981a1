package io.tierkv.jlama;

import com.github.tjake.jlama.model.AbstractModel;
import com.github.tjake.jlama.tensor.KvBufferCache;
import java.util.Objects;
import java.util.UUID;

/**
 * Stock Jlama: the same greedy loop as {@link JlamaSession#generate} on Jlama's own
 * {@link KvBufferCache} (a fresh one per call, in memory), computing the whole prompt. The
 * baseline TierKV's tokens and logits are compared with.
 */
public final class StockJlama {

    private StockJlama() {
    }

    /**
     * Generates greedily with Jlama's own KV cache.
     *
     * @param model      the model (its installed cache is not used)
     * @param prompt     the prompt's token ids, at least one
     * @param steps      tokens to generate, at least one
     * @param keepLogits whether to keep the logits of every step
     * @return the generation ({@code cachedTokens} 0)
     * @throws IllegalArgumentException if the prompt or steps are empty or exceed the context length
     */
    public static Generation generate(AbstractModel model, int[] prompt, int steps, boolean keepLogits) {
        return generate(model, prompt, steps, Prefill.BATCHED, keepLogits);
    }

    /**
     * Generates greedily with Jlama's own KV cache, prefilling as asked.
     *
     * @param model      the model (its installed cache is not used)
     * @param prompt     the prompt's token ids, at least one
     * @param steps      tokens to generate, at least one
     * @param prefill    how the prompt is computed
     * @param keepLogits whether to keep the logits of every step
     * @return the generation ({@code cachedTokens} 0)
     * @throws IllegalArgumentException if the prompt or steps are empty or exceed the context length
     */
    public static Generation generate(AbstractModel model, int[] prompt, int steps, Prefill prefill,
            boolean keepLogits) {
        Objects.requireNonNull(prefill, "prefill");
        Objects.requireNonNull(model, "model");
        long t0 = System.nanoTime();
        try (KvBufferCache cache = new KvBufferCache(model);
             KvBufferCache.KvBuffer buffer = cache.getKvBuffer(UUID.randomUUID())) {
            Decoder.Steps none = new Decoder.Steps() {
                @Override
                public void before(int[] tokens, int from, int to) {
                }

                @Override
                public void after(int from, int to) {
                    buffer.setCurrentContextPosition(to);
                }
            };
            return Decoder.run(model, buffer, none, prompt.clone(), 0, steps, prefill, keepLogits, t0, () -> PrefixHits.NONE);
        }
    }
}

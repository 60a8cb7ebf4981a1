package io.tierkv.jlama;

import com.github.tjake.jlama.model.AbstractModel;
import com.github.tjake.jlama.tensor.AbstractTensor;
import com.github.tjake.jlama.tensor.KvBufferCache;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * The greedy loop both sides run: Jlama's {@code batchForward} (or {@code forward} per position)
 * over the uncached rest of the prompt from the cached length, then {@code forward} one token at a time, {@code sample} at temperature 0.
 * The KV side only differs in what happens around each step.
 */
final class Decoder {

    /** What a KV backend does around each forward step over positions {@code [from, to)}. */
    interface Steps {
        /** Before a step: the step's token ids, its first position and end position. */
        void before(int[] tokens, int from, int to);

        /** After a step over {@code [from, to)}, once its output is sampled and closed. */
        void after(int from, int to);
    }

    private Decoder() {
    }

    /**
     * Checks a generation's lengths against the model.
     *
     * @param model  the model
     * @param n      prompt tokens
     * @param count  tokens to generate
     * @throws IllegalArgumentException if either is below 1 or prompt + steps - 1 exceeds the context
     */
    static void checkLengths(AbstractModel model, int n, int count) {
        int context = model.getConfig().contextLength;
        if (n < 1 || count < 1) {
            throw new IllegalArgumentException("prompt " + n + " tokens, steps " + count + " (expected >= 1 each)");
        }
        if (n + count - 1 > context) {
            throw new IllegalArgumentException("prompt + steps - 1: " + (n + count - 1)
                    + " (expected <= the model's context length " + context + ")");
        }
    }

    static Generation run(AbstractModel model, KvBufferCache.KvBuffer buffer, Steps steps, int[] prompt, int cached,
            int count, Prefill prefill, boolean keepLogits, long startNanos,
            java.util.function.Supplier<PrefixHits> hits) {
        int n = prompt.length;
        int vocab = model.getConfig().vocabularySize;
        checkLengths(model, n, count);
        List<float[]> logits = new ArrayList<>();
        int[] out = new int[count];
        AbstractTensor<?, ?> logitsTensor = model.makeDenseTensor(vocab);
        try {
            if (prefill == Prefill.BATCHED) {
                int[] rest = Arrays.copyOfRange(prompt, cached, n);
                steps.before(rest, cached, n);
                AbstractTensor<?, ?> h = model.batchForward(rest, cached, buffer);
                out[0] = model.sample(h.slice(h.shape().first() - 1), 0f, 0f, logitsTensor);
                h.close();
                steps.after(cached, n); // after the sample: a step's output is read before another step may run
            } else {
                for (int p = cached; p < n; p++) {
                    steps.before(new int[] {prompt[p]}, p, p + 1);
                    AbstractTensor<?, ?> h = model.forward(prompt[p], p, buffer, Optional.empty());
                    if (p == n - 1) {
                        out[0] = model.sample(h, 0f, 0f, logitsTensor);
                    }
                    h.close();
                    steps.after(p, p + 1);
                }
            }
            keep(keepLogits, logits, logitsTensor, vocab);
            long first = System.nanoTime();
            PrefixHits prefix = hits.get();
            for (int i = 1; i < count; i++) {
                int pos = n + i - 1;
                steps.before(new int[] {out[i - 1]}, pos, pos + 1);
                AbstractTensor<?, ?> t = model.forward(out[i - 1], pos, buffer, Optional.empty());
                out[i] = model.sample(t, 0f, 0f, logitsTensor);
                t.close();
                steps.after(pos, pos + 1);
                keep(keepLogits, logits, logitsTensor, vocab);
            }
            long end = System.nanoTime();
            return new Generation(prompt, out, cached, prefix, first - startNanos, end - first, logits);
        } finally {
            logitsTensor.close();
        }
    }

    private static void keep(boolean keepLogits, List<float[]> logits, AbstractTensor<?, ?> t, int vocab) {
        if (keepLogits) {
            float[] l = new float[vocab];
            for (int i = 0; i < vocab; i++) {
                l[i] = t.dims() == 1 ? t.get(i) : t.get(0, i);
            }
            logits.add(l);
        }
    }
}

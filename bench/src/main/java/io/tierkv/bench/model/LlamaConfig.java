package io.tierkv.bench.model;

import io.tierkv.core.DType;
import io.tierkv.core.KvLayout;

/**
 * The hyper-parameters of a Llama-2-architecture checkpoint, as stored in the seven-int32 header
 * of a llama2.c version-0 ("legacy") export. Immutable and thread-safe.
 *
 * @param dim              model (residual stream) width, floats per token
 * @param hiddenDim        SwiGLU feed-forward width
 * @param layers           transformer layers
 * @param heads            query heads per layer
 * @param kvHeads          key/value heads per layer (grouped-query attention: {@code heads} is a
 *                         multiple of it)
 * @param vocabSize        tokens in the vocabulary
 * @param seqLen           maximum positions the model was built for
 * @param sharedClassifier whether the output classifier reuses the token embedding (the header's
 *                         vocabulary size is positive) or has its own matrix (negative)
 */
public record LlamaConfig(int dim, int hiddenDim, int layers, int heads, int kvHeads, int vocabSize, int seqLen,
        boolean sharedClassifier) {

    /**
     * Validates the shape.
     *
     * @throws IllegalArgumentException naming the field, its value and the bound, when a size is not
     *                                  positive, {@code dim} is not a multiple of {@code heads},
     *                                  {@code heads} not a multiple of {@code kvHeads}, or the head
     *                                  size is odd (RoPE rotates pairs)
     */
    public LlamaConfig {
        positive("dim", dim);
        positive("hiddenDim", hiddenDim);
        positive("layers", layers);
        positive("heads", heads);
        positive("kvHeads", kvHeads);
        positive("vocabSize", vocabSize);
        positive("seqLen", seqLen);
        if (dim % heads != 0) {
            throw new IllegalArgumentException("dim: " + dim + " (expected a multiple of heads=" + heads + ")");
        }
        if (heads % kvHeads != 0) {
            throw new IllegalArgumentException("heads: " + heads + " (expected a multiple of kvHeads=" + kvHeads + ")");
        }
        if ((dim / heads) % 2 != 0) {
            throw new IllegalArgumentException("head size: " + dim / heads + " (expected an even number)");
        }
    }

    /**
     * Returns the floats per attention head, {@code dim / heads}.
     *
     * @return the head size
     */
    public int headSize() {
        return dim / heads;
    }

    /**
     * Returns the floats of one token's K (or V) in one layer, {@code kvHeads * headSize()}.
     *
     * @return the KV vector size
     */
    public int kvDim() {
        return kvHeads * headSize();
    }

    /**
     * Returns how many query heads share one KV head, {@code heads / kvHeads}.
     *
     * @return the grouped-query factor
     */
    public int kvMul() {
        return heads / kvHeads;
    }

    /**
     * The TierKV block layout of this model's KV cache in float32.
     *
     * @param blockSizeTokens B, tokens per block
     * @return {@code KvLayout.of(layers, kvHeads, headSize(), F32, blockSizeTokens)}
     * @throws IllegalArgumentException as {@link KvLayout#KvLayout}
     */
    public KvLayout kvLayout(int blockSizeTokens) {
        return KvLayout.of(layers, kvHeads, headSize(), DType.F32, blockSizeTokens);
    }

    private static void positive(String field, int value) {
        if (value <= 0) {
            throw new IllegalArgumentException(field + ": " + value + " (expected > 0)");
        }
    }
}

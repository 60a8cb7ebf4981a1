package io.tierkv.jlama;

/**
 * How the uncached rest of a prompt is computed.
 *
 * <p>Measured with Jlama 0.8.4 on an AVX2 machine (no AVX-512) on jlama-random-d256: one
 * {@code batchForward} over prompts of 6 to 36 tokens gave wrong next tokens for 13 of the 31
 * lengths (6, 8, 12, 13, 14, 21, 22, 24, 26, 27, 29, 31, 32), with Jlama's own KV as with TierKV;
 * {@code -Djlama.max_batch_size=1} or {@link #TOKEN_BY_TOKEN} gave the right ones for all. The
 * fault is in Jlama's batched kernels, not in the KV cache: with the same split both caches give
 * the same bits.
 */
public enum Prefill {
    /** One Jlama {@code batchForward} over the uncached rest (Jlama's own prefill). */
    BATCHED,
    /** One Jlama {@code forward} per uncached prompt position: slower, exact for every length. */
    TOKEN_BY_TOKEN
}

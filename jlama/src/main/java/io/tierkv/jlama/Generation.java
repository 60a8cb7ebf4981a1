package io.tierkv.jlama;

import java.util.List;

/**
 * One greedy generation.
 *
 * @param prompt          the prompt's token ids
 * @param tokens          the generated token ids, in order
 * @param cachedTokens    prompt tokens taken from the cache instead of computed (0 for stock Jlama)
 * @param hits            the cached blocks by the tier they came from ({@link PrefixHits#NONE} for stock Jlama)
 * @param firstTokenNanos time from the call to the first generated token (prefix match, prefill, sample)
 * @param decodeNanos     time of the remaining {@code tokens.length - 1} tokens
 * @param logits          the logits before each generated token ({@code vocab} floats each), or an
 *                        empty list when not kept
 */
public record Generation(int[] prompt, int[] tokens, int cachedTokens, PrefixHits hits, long firstTokenNanos,
        long decodeNanos, List<float[]> logits) {

    /**
     * Validates.
     *
     * @throws NullPointerException if an array, hits or logits is null
     */
    public Generation {
        prompt = prompt.clone();
        tokens = tokens.clone();
        java.util.Objects.requireNonNull(hits, "hits");
        logits = List.copyOf(logits);
    }

    /** {@return decode speed after the first token: (tokens - 1) per second, 0 with one token} */
    public double decodeTokensPerSecond() {
        return tokens.length <= 1 || decodeNanos <= 0 ? 0 : (tokens.length - 1) * 1e9 / decodeNanos;
    }

    /** {@return a copy of the generated token ids} */
    @Override
    public int[] tokens() {
        return tokens.clone();
    }

    /** {@return a copy of the prompt's token ids} */
    @Override
    public int[] prompt() {
        return prompt.clone();
    }
}

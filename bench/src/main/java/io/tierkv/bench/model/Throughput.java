package io.tierkv.bench.model;

import java.util.function.Supplier;

/**
 * Decode throughput: forward passes (tokens) over wall time, as measured by {@link #measure}.
 *
 * @param tokens forward passes timed
 * @param nanos  wall time of those passes, nanoseconds
 */
public record Throughput(long tokens, long nanos) {

    /**
     * Returns the throughput, {@code tokens * 1e9 / nanos}.
     *
     * @return tokens per second
     */
    public double tokensPerSecond() {
        return tokens * 1e9 / nanos;
    }

    /**
     * Times greedy decoding from BOS: each run takes a fresh store from {@code stores}, decodes
     * {@code steps} tokens with a new {@link Decoder}, and counts its forward passes; warm-up runs
     * (for the JIT) are not counted. Runs on the calling thread.
     *
     * @param model      the weights
     * @param stores     a new, empty store per run, with capacity for {@code steps} positions
     * @param steps      tokens per run, at least 1
     * @param warmupRuns untimed runs first, at least 0
     * @param runs       timed runs, at least 1
     * @return the timed tokens and nanoseconds
     * @throws IllegalArgumentException when an argument is out of range, or as
     *                                  {@link Decoder#generate}
     */
    public static Throughput measure(LlamaModel model, Supplier<? extends KvStore> stores, int steps,
            int warmupRuns, int runs) {
        if (steps < 1 || warmupRuns < 0 || runs < 1) {
            throw new IllegalArgumentException("steps, warmupRuns, runs: " + steps + ", " + warmupRuns + ", " + runs
                    + " (expected >= 1, >= 0, >= 1)");
        }
        int[] bos = {Tokenizer.BOS};
        long tokens = 0;
        long nanos = 0;
        for (int r = 0; r < warmupRuns + runs; r++) {
            Decoder decoder = new Decoder(model, stores.get());
            long start = System.nanoTime();
            decoder.generate(bos, steps);
            long elapsed = System.nanoTime() - start;
            if (r >= warmupRuns) {
                tokens += decoder.position();
                nanos += elapsed;
            }
        }
        return new Throughput(tokens, nanos);
    }
}

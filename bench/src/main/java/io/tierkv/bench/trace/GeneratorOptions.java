package io.tierkv.bench.trace;

/**
 * The shape of a {@link SyntheticTraceGenerator} workload. Every value is validated here, so an
 * invalid configuration cannot exist; {@code withX} returns a validated copy. Token lengths are
 * means: each system prompt, document, user turn and answer draws its length uniformly from
 * {@code [mean/2, 3*mean/2]}.
 *
 * @param seed                seed of every random choice; equal options give equal traces
 * @param requests            number of requests, {@code > 0}
 * @param blockSizeTokens     tokens per block the ids are cut at, {@code > 0}
 * @param systemPrompts       distinct shared system prompts, {@code > 0}; each session draws one by
 *                            Zipf popularity
 * @param systemPromptTokens  mean system prompt length, {@code >= 0}
 * @param documents           distinct documents, {@code >= 0}; a session attaches one by Zipf
 *                            popularity after its system prompt
 * @param documentTokens      mean document length, {@code >= 0}
 * @param documentProbability chance a session attaches a document, in {@code [0, 1]}
 * @param zipfExponent        Zipf exponent s of system prompt and document popularity
 *                            ({@code P(rank k) ~ 1/k^s}), {@code >= 0}; 0 is uniform
 * @param meanTurns           mean number of turns (requests) per session, {@code >= 1}; drawn
 *                            uniformly from {@code [1, 2*meanTurns - 1]}
 * @param userTurnTokens      mean length of a user message, {@code >= 1}
 * @param outputTokens        mean answer length, {@code >= 1}; the answer joins the next turn's prompt
 * @param concurrentSessions  sessions open at once whose turns interleave, {@code >= 1}
 * @param requestsPerSecond   mean Poisson arrival rate, {@code > 0}
 */
public record GeneratorOptions(
        long seed,
        int requests,
        int blockSizeTokens,
        int systemPrompts,
        int systemPromptTokens,
        int documents,
        int documentTokens,
        double documentProbability,
        double zipfExponent,
        int meanTurns,
        int userTurnTokens,
        int outputTokens,
        int concurrentSessions,
        double requestsPerSecond) {

    /**
     * Validates every field.
     *
     * @throws IllegalArgumentException naming the first field out of range, its value and bound
     */
    public GeneratorOptions {
        positive("requests", requests);
        positive("blockSizeTokens", blockSizeTokens);
        positive("systemPrompts", systemPrompts);
        atLeast("systemPromptTokens", systemPromptTokens, 0);
        atLeast("documents", documents, 0);
        atLeast("documentTokens", documentTokens, 0);
        if (!(documentProbability >= 0.0 && documentProbability <= 1.0)) {
            throw new IllegalArgumentException(
                    "documentProbability: " + documentProbability + " (expected in [0, 1])");
        }
        if (!(zipfExponent >= 0.0 && zipfExponent <= 100.0)) {
            throw new IllegalArgumentException("zipfExponent: " + zipfExponent + " (expected in [0, 100])");
        }
        atLeast("meanTurns", meanTurns, 1);
        atLeast("userTurnTokens", userTurnTokens, 1);
        atLeast("outputTokens", outputTokens, 1);
        atLeast("concurrentSessions", concurrentSessions, 1);
        if (!(requestsPerSecond > 0.0 && requestsPerSecond <= 1.0e6)) {
            throw new IllegalArgumentException(
                    "requestsPerSecond: " + requestsPerSecond + " (expected in (0, 1e6])");
        }
        if (meanTurns > (1 << 14)) {
            throw new IllegalArgumentException("meanTurns: " + meanTurns + " (expected <= " + (1 << 14) + ")");
        }
    }

    private static void positive(String name, int v) {
        atLeast(name, v, 1);
    }

    private static void atLeast(String name, int v, int min) {
        if (v < min) {
            throw new IllegalArgumentException(name + ": " + v + " (expected >= " + min + ")");
        }
    }

    /**
     * The built-in workload: seed 42, 5,000 requests of 512-token blocks, 8 system prompts of about
     * 2,048 tokens, 1,000 documents of about 8,192 tokens attached to half of the sessions with
     * Zipf exponent 1.0, 4 turns per session on average with 512-token user messages and
     * 256-token answers, 32 sessions interleaved, 4 requests per second.
     *
     * @return the default options
     */
    public static GeneratorOptions defaults() {
        return new GeneratorOptions(42L, 5_000, 512, 8, 2_048, 1_000, 8_192, 0.5, 1.0, 4, 512, 256, 32, 4.0);
    }

    /**
     * A copy with another seed.
     *
     * @param v the seed
     * @return the copy
     */
    public GeneratorOptions withSeed(long v) {
        return new GeneratorOptions(v, requests, blockSizeTokens, systemPrompts, systemPromptTokens, documents,
                documentTokens, documentProbability, zipfExponent, meanTurns, userTurnTokens, outputTokens,
                concurrentSessions, requestsPerSecond);
    }

    /**
     * A copy with another number of requests.
     *
     * @param v requests, {@code > 0}
     * @return the validated copy
     * @throws IllegalArgumentException if out of range
     */
    public GeneratorOptions withRequests(int v) {
        return new GeneratorOptions(seed, v, blockSizeTokens, systemPrompts, systemPromptTokens, documents,
                documentTokens, documentProbability, zipfExponent, meanTurns, userTurnTokens, outputTokens,
                concurrentSessions, requestsPerSecond);
    }

    /**
     * A copy with another block size.
     *
     * @param v tokens per block, {@code > 0}
     * @return the validated copy
     * @throws IllegalArgumentException if out of range
     */
    public GeneratorOptions withBlockSizeTokens(int v) {
        return new GeneratorOptions(seed, requests, v, systemPrompts, systemPromptTokens, documents,
                documentTokens, documentProbability, zipfExponent, meanTurns, userTurnTokens, outputTokens,
                concurrentSessions, requestsPerSecond);
    }

    /**
     * A copy with other documents.
     *
     * @param count       distinct documents, {@code >= 0}
     * @param meanTokens  mean document length, {@code >= 0}
     * @param probability chance a session attaches one, in {@code [0, 1]}
     * @return the validated copy
     * @throws IllegalArgumentException if out of range
     */
    public GeneratorOptions withDocuments(int count, int meanTokens, double probability) {
        return new GeneratorOptions(seed, requests, blockSizeTokens, systemPrompts, systemPromptTokens, count,
                meanTokens, probability, zipfExponent, meanTurns, userTurnTokens, outputTokens,
                concurrentSessions, requestsPerSecond);
    }

    /**
     * A copy with other system prompts.
     *
     * @param count      distinct system prompts, {@code > 0}
     * @param meanTokens mean system prompt length, {@code >= 0}
     * @return the validated copy
     * @throws IllegalArgumentException if out of range
     */
    public GeneratorOptions withSystemPrompts(int count, int meanTokens) {
        return new GeneratorOptions(seed, requests, blockSizeTokens, count, meanTokens, documents,
                documentTokens, documentProbability, zipfExponent, meanTurns, userTurnTokens, outputTokens,
                concurrentSessions, requestsPerSecond);
    }

    /**
     * A copy with other conversations.
     *
     * @param turns              mean turns per session, {@code >= 1}
     * @param userTokens         mean user message length, {@code >= 1}
     * @param answerTokens       mean answer length, {@code >= 1}
     * @param concurrent         sessions interleaved, {@code >= 1}
     * @return the validated copy
     * @throws IllegalArgumentException if out of range
     */
    public GeneratorOptions withSessions(int turns, int userTokens, int answerTokens, int concurrent) {
        return new GeneratorOptions(seed, requests, blockSizeTokens, systemPrompts, systemPromptTokens, documents,
                documentTokens, documentProbability, zipfExponent, turns, userTokens, answerTokens,
                concurrent, requestsPerSecond);
    }

    /**
     * A copy with another arrival rate.
     *
     * @param v mean requests per second, {@code > 0}
     * @return the validated copy
     * @throws IllegalArgumentException if out of range
     */
    public GeneratorOptions withRequestsPerSecond(double v) {
        return new GeneratorOptions(seed, requests, blockSizeTokens, systemPrompts, systemPromptTokens, documents,
                documentTokens, documentProbability, zipfExponent, meanTurns, userTurnTokens, outputTokens,
                concurrentSessions, v);
    }
}

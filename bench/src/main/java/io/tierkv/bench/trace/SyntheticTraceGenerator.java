package io.tierkv.bench.trace;

import java.util.Arrays;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.SplittableRandom;

/**
 * A seeded, built-in serving workload: multi-turn chat sessions that share system prompts and
 * attach popular documents, interleaved and arriving as a Poisson process. It needs no file and
 * yields the same {@link TraceRequest}s as the trace readers, with real prefix structure.
 *
 * <p><b>Model.</b> A session's context is a list of segments: a system prompt (one of
 * {@code systemPrompts}, by Zipf popularity), with probability {@code documentProbability} a
 * document (one of {@code documents}, by Zipf popularity), then for each turn the user's message
 * and the model's answer. Turn {@code k}'s prompt is the whole context up to its user message, and
 * its answer joins the context of turn {@code k + 1} (as a chat client resends the history).
 * {@code concurrentSessions} sessions are open at once; each request comes from one of them
 * chosen uniformly, and a finished session is replaced by a new one. Inter-arrival times are
 * exponential with mean {@code 1 / requestsPerSecond}.
 *
 * <p><b>Block ids.</b> Block {@code i} of a prompt covers tokens {@code [i*B, min((i+1)*B, n))};
 * its id is a chained 64-bit hash of the previous block's id, the block's length and the (segment,
 * offset range) pieces it covers. Equal ids therefore mean equal prefixes, as in the Mooncake
 * traces; a partial last block gets a different id from the full block a longer prompt has there.
 *
 * <p>Deterministic: equal {@link GeneratorOptions} give equal traces (one {@link SplittableRandom}
 * seeded with {@code seed}). Memory holds the open sessions only. Not thread-safe.
 *
 * <p>Sources: Zipf popularity by inverse-CDF sampling, as in YCSB (B. F. Cooper et al., SoCC 2010);
 * the session shape follows the multi-turn conversation and shared-prompt reuse described for the
 * Mooncake traces (Qin et al., FAST'25, Section 6 and appendix A).
 */
public final class SyntheticTraceGenerator implements TraceReader {

    private static final long SYSTEM_PROMPT = 1L << 56;
    private static final long DOCUMENT = 2L << 56;
    private static final long TURN = 3L << 56;
    private static final long ROOT = 0x7157_4B56_0000_0001L;

    private final GeneratorOptions options;
    private final SplittableRandom rnd;
    private final int[] systemPromptLength;
    private final int[] documentLength;
    private final ZipfSampler systemPromptPopularity;
    private final ZipfSampler documentPopularity;
    private final Session[] open;
    private long sessionsStarted;
    private int emitted;
    private double clockSeconds;

    /**
     * Creates a generator positioned at its first request.
     *
     * @param options the workload's shape
     */
    public SyntheticTraceGenerator(GeneratorOptions options) {
        this.options = options;
        this.rnd = new SplittableRandom(options.seed());
        this.systemPromptLength = new int[options.systemPrompts()];
        for (int i = 0; i < systemPromptLength.length; i++) {
            systemPromptLength[i] = around(options.systemPromptTokens());
        }
        this.documentLength = new int[options.documents()];
        for (int i = 0; i < documentLength.length; i++) {
            documentLength[i] = around(options.documentTokens());
        }
        this.systemPromptPopularity = new ZipfSampler(options.systemPrompts(), options.zipfExponent());
        this.documentPopularity = options.documents() == 0 ? null
                : new ZipfSampler(options.documents(), options.zipfExponent());
        this.open = new Session[options.concurrentSessions()];
        for (int i = 0; i < open.length; i++) {
            open[i] = newSession();
        }
    }

    /**
     * Generates a whole trace.
     *
     * @param options the workload's shape
     * @return {@code options.requests()} requests in arrival order
     */
    public static List<TraceRequest> generate(GeneratorOptions options) {
        return new SyntheticTraceGenerator(options).readAll();
    }

    /**
     * The options this generator follows.
     *
     * @return the options
     */
    public GeneratorOptions options() {
        return options;
    }

    @Override
    public String source() {
        return "generator(seed=" + options.seed() + ", requests=" + options.requests() + ")";
    }

    @Override
    public int blockSizeTokens() {
        return options.blockSizeTokens();
    }

    @Override
    public boolean hasNext() {
        return emitted < options.requests();
    }

    @Override
    public TraceRequest next() {
        if (!hasNext()) {
            throw new NoSuchElementException("the generator made its " + options.requests() + " requests");
        }
        // Poisson arrivals: exponential gaps.
        if (emitted > 0) {
            clockSeconds += -Math.log(1.0 - rnd.nextDouble()) / options.requestsPerSecond();
        }
        int slot = rnd.nextInt(open.length);
        Session s = open[slot];
        int user = around(options.userTurnTokens());
        int answer = around(options.outputTokens());
        s.add(TURN | (s.serial << 16) | (2L * s.turnsDone), user);
        TraceRequest r = new TraceRequest(Math.round(clockSeconds * 1000.0), s.tokens, answer, s.blockIds());
        s.add(TURN | (s.serial << 16) | (2L * s.turnsDone + 1), answer);
        s.turnsDone++;
        if (s.turnsDone == s.turns) {
            open[slot] = newSession();
        }
        emitted++;
        return r;
    }

    @Override
    public void close() {
        // Nothing to release.
    }

    private Session newSession() {
        Session s = new Session(sessionsStarted++, 1 + rnd.nextInt(2 * options.meanTurns() - 1));
        int p = systemPromptPopularity.sample(rnd);
        s.add(SYSTEM_PROMPT | p, systemPromptLength[p]);
        if (documentPopularity != null && rnd.nextDouble() < options.documentProbability()) {
            int d = documentPopularity.sample(rnd);
            s.add(DOCUMENT | d, documentLength[d]);
        }
        return s;
    }

    /** A length drawn uniformly from [mean/2, 3*mean/2]. */
    private int around(int mean) {
        if (mean <= 1) {
            return mean;
        }
        int lo = mean / 2;
        return lo + rnd.nextInt(mean + 1);
    }

    /**
     * Chains a value into a 64-bit hash (SplitMix64's finaliser over {@code h * phi + v}).
     *
     * @param h the hash so far
     * @param v the value
     * @return the new hash
     */
    static long mix(long h, long v) {
        long z = h * 0x9E3779B97F4A7C15L + v;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /** One open conversation: its segments so far (ids and token lengths). */
    private final class Session {
        final long serial;
        final int turns;
        int turnsDone;
        long[] segment = new long[8];
        int[] length = new int[8];
        int segments;
        int tokens;

        Session(long serial, int turns) {
            this.serial = serial;
            this.turns = turns;
        }

        void add(long id, int tokenCount) {
            if (segments == segment.length) {
                segment = Arrays.copyOf(segment, segments * 2);
                length = Arrays.copyOf(length, segments * 2);
            }
            segment[segments] = id;
            length[segments] = tokenCount;
            segments++;
            tokens = Math.addExact(tokens, tokenCount);
        }

        /** Chained ids of the blocks of the whole current context. */
        long[] blockIds() {
            int b = options.blockSizeTokens();
            long[] ids = new long[(int) ((tokens + (long) b - 1) / b)];
            long h = ROOT;
            int seg = 0;
            int segStart = 0; // token position where segment seg starts
            for (int i = 0; i < ids.length; i++) {
                int start = i * b;
                int end = Math.min(start + b, tokens);
                h = mix(h, end - start);
                // Skip segments that end at or before this block's start (zero-length ones too).
                while (segStart + length[seg] <= start && seg < segments - 1) {
                    segStart += length[seg];
                    seg++;
                }
                int s = seg;
                int sStart = segStart;
                while (s < segments && sStart < end) {
                    int from = Math.max(start, sStart) - sStart;
                    int to = Math.min(end, sStart + length[s]) - sStart;
                    if (to > from) {
                        h = mix(mix(mix(h, segment[s]), from), to);
                    }
                    sStart += length[s];
                    s++;
                }
                ids[i] = h;
            }
            return ids;
        }
    }
}

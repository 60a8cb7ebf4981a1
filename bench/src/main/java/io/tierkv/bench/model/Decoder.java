package io.tierkv.bench.model;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.Objects;

/**
 * Greedy decoding of one sequence: the Llama-2 forward pass of llama2.c {@code run.c}
 * ({@code forward()}, float32, same order of operations) with the KV cache in a {@link KvStore}.
 *
 * <p>Per layer: RMSNorm (Zhang and Sennrich, arXiv:1910.07467; eps 1e-5), Q/K/V projections,
 * RoPE on interleaved pairs (Su et al., RoFormer, arXiv:2104.09864; theta 10000), the K and V of
 * the position written to the store, grouped-query attention (Ainslie et al., arXiv:2305.13245)
 * reading every earlier position back from the store, block by block, with softmax over scores
 * scaled by 1/sqrt(head size) (Vaswani et al., arXiv:1706.03762), the output projection and
 * residual, RMSNorm, the SwiGLU feed-forward (Shazeer, arXiv:2002.05202) and residual. Then the
 * final RMSNorm and the classifier give the logits; greedy sampling takes the first maximum.
 *
 * <p>Attention reads the store twice per layer (scores from K, then the weighted sum of V), one
 * run of positions at a time; each run is bulk-copied once from the store's memory into a scratch
 * array ({@code MemorySegment.copy}), which measured faster than element-wise segment reads.
 *
 * <p>Prefix reuse: a decoder may start at a position whose K/V are already in its store (from
 * another decoder, a {@link PagedKvStore#fork}, or a prefix cache), and runs the forward pass only
 * for the positions after it.
 *
 * <p>Not thread-safe: it owns its scratch buffers; use one decoder per sequence and thread. The
 * forward pass allocates nothing on the Java heap (beyond what the store does).
 */
public final class Decoder {

    private final LlamaModel model;
    private final LlamaConfig config;
    private final KvStore kv;
    /** Positions this decoder may reach: min(seqLen, store capacity). */
    private final int limit;
    private final float scale;
    private int position;

    private final float[] x;
    private final float[] xb;
    private final float[] xb2;
    private final float[] q;
    private final float[] k;
    private final float[] v;
    private final float[] hb;
    private final float[] hb2;
    /** Attention weights, {@code [head][position]}, row stride {@link #limit}. */
    private final float[] att;
    private final float[] logits;
    /** One run's K or V, copied out of the store's memory: {@code [token][kvDim]}. */
    private final float[] run;
    private final KvBlockVisitor scorer = this::scoreBlock;
    private final KvBlockVisitor mixer = this::mixBlock;

    /**
     * Creates a decoder at position 0 over an empty store.
     *
     * @param model the weights
     * @param kv    the sequence's KV store
     * @throws IllegalArgumentException as {@link #Decoder(LlamaModel, KvStore, int)}
     */
    public Decoder(LlamaModel model, KvStore kv) {
        this(model, kv, 0);
    }

    /**
     * Creates a decoder that continues a sequence whose K/V for positions [0, startPosition) are
     * already in {@code kv} (prefix reuse). The next {@link #forward} runs at {@code startPosition}.
     *
     * @param model         the weights
     * @param kv            the sequence's KV store
     * @param startPosition positions already present, in [0, min(seqLen, kv.capacity())]
     * @throws IllegalArgumentException when the store's layers or kvDim differ from the model's, or
     *                                  {@code startPosition} is out of range
     */
    public Decoder(LlamaModel model, KvStore kv, int startPosition) {
        this.model = Objects.requireNonNull(model, "model");
        this.kv = Objects.requireNonNull(kv, "kv");
        this.config = model.config();
        if (kv.layers() != config.layers() || kv.kvDim() != config.kvDim()) {
            throw new IllegalArgumentException("kv store: layers=" + kv.layers() + ", kvDim=" + kv.kvDim()
                    + " (expected layers=" + config.layers() + ", kvDim=" + config.kvDim() + " for the model)");
        }
        this.limit = Math.min(config.seqLen(), kv.capacity());
        if (startPosition < 0 || startPosition > limit) {
            throw new IllegalArgumentException("startPosition: " + startPosition + " (expected 0 <= startPosition <= "
                    + limit + ")");
        }
        this.position = startPosition;
        this.scale = (float) Math.sqrt(config.headSize());
        int dim = config.dim();
        x = new float[dim];
        xb = new float[dim];
        xb2 = new float[dim];
        q = new float[dim];
        k = new float[config.kvDim()];
        v = new float[config.kvDim()];
        hb = new float[config.hiddenDim()];
        hb2 = new float[config.hiddenDim()];
        att = new float[config.heads() * limit];
        logits = new float[config.vocabSize()];
        run = new float[limit * config.kvDim()];
    }

    /**
     * Returns the next position to run; positions [0, position()) have their K/V in the store.
     *
     * @return the next position
     */
    public int position() {
        return position;
    }

    /**
     * Runs the forward pass for one token at {@link #position()}, writes its K/V to the store and
     * advances the position.
     *
     * @param token token id in [0, vocabSize)
     * @return the logits over the vocabulary: this decoder's buffer, overwritten by the next call
     * @throws IndexOutOfBoundsException when the token is outside the vocabulary
     * @throws IllegalStateException     when the position has reached min(seqLen, store capacity),
     *                                   or as the store's write and read
     */
    public float[] forward(int token) {
        Objects.checkIndex(token, config.vocabSize());
        if (position >= limit) {
            throw new IllegalStateException("position " + position + ": sequence full (min(seqLen, capacity) = "
                    + limit + ")");
        }
        int pos = position;
        int dim = config.dim();
        int kvDim = config.kvDim();
        int hidden = config.hiddenDim();
        System.arraycopy(model.tokenEmbedding, token * dim, x, 0, dim);
        for (int l = 0; l < config.layers(); l++) {
            rmsnorm(xb, x, model.rmsAtt, l * dim);
            matmul(q, xb, model.wq, l * dim * dim, dim, dim);
            matmul(k, xb, model.wk, l * kvDim * dim, dim, kvDim);
            matmul(v, xb, model.wv, l * kvDim * dim, dim, kvDim);
            rope(q, dim, pos);
            rope(k, kvDim, pos);
            kv.write(l, pos, k, v);

            kv.read(l, pos + 1, scorer);
            for (int h = 0; h < config.heads(); h++) {
                softmax(att, h * limit, pos + 1);
            }
            Arrays.fill(xb, 0f);
            kv.read(l, pos + 1, mixer);

            matmul(xb2, xb, model.wo, l * dim * dim, dim, dim);
            for (int i = 0; i < dim; i++) {
                x[i] += xb2[i];
            }
            rmsnorm(xb, x, model.rmsFfn, l * dim);
            matmul(hb, xb, model.w1, l * hidden * dim, dim, hidden);
            matmul(hb2, xb, model.w3, l * hidden * dim, dim, hidden);
            for (int i = 0; i < hidden; i++) { // SwiGLU: silu(w1 x) * (w3 x)
                float val = hb[i];
                val *= 1.0f / (1.0f + (float) Math.exp(-val));
                hb[i] = val * hb2[i];
            }
            matmul(xb, hb, model.w2, l * dim * hidden, hidden, dim);
            for (int i = 0; i < dim; i++) {
                x[i] += xb[i];
            }
        }
        rmsnorm(x, x, model.rmsFinal, 0);
        matmul(logits, x, model.wcls, 0, dim, config.vocabSize());
        position = pos + 1;
        return logits;
    }

    /**
     * Runs {@link #forward} for {@code tokens[position()]} to the last token: the prompt after the
     * reused prefix. {@code tokens[0..position())} are taken to be the tokens whose K/V the store
     * already holds.
     *
     * @param tokens the whole sequence so far, usually starting with {@link Tokenizer#BOS}
     * @return the logits after the last token (this decoder's buffer)
     * @throws IllegalArgumentException when {@code tokens.length <= position()} (no token to run)
     * @throws IndexOutOfBoundsException as {@link #forward}
     * @throws IllegalStateException     as {@link #forward}
     */
    public float[] prefill(int[] tokens) {
        if (tokens.length <= position) {
            throw new IllegalArgumentException("tokens.length: " + tokens.length + " (expected > position() = "
                    + position + ")");
        }
        float[] out = logits;
        for (int p = position; p < tokens.length; p++) {
            out = forward(tokens[p]);
        }
        return out;
    }

    /**
     * Greedy generation as llama2.c {@code run.c} {@code generate()} with temperature 0:
     * {@link #prefill} the tokens, then take the argmax and feed it back, {@code steps} times,
     * stopping early if the argmax is BOS (which delimits sequences). Runs
     * {@code tokens.length - position() + steps - 1} forward passes.
     *
     * @param tokens the sequence so far, for example {@code {BOS}} or an encoded prompt
     * @param steps  tokens to generate, at least 1
     * @return the generated ids, {@code steps} of them unless BOS came first
     * @throws IllegalArgumentException when {@code steps < 1}, no token is left to run, or the
     *                                  sequence would exceed min(seqLen, store capacity)
     * @throws IndexOutOfBoundsException as {@link #forward}
     */
    public int[] generate(int[] tokens, int steps) {
        if (steps < 1) {
            throw new IllegalArgumentException("steps: " + steps + " (expected >= 1)");
        }
        if ((long) tokens.length + steps - 1 > limit) {
            throw new IllegalArgumentException("tokens.length + steps - 1: " + ((long) tokens.length + steps - 1)
                    + " (expected <= min(seqLen, capacity) = " + limit + ")");
        }
        float[] out = prefill(tokens);
        int[] ids = new int[steps];
        for (int s = 0; ; ) {
            int next = argmax(out);
            if (next == Tokenizer.BOS) {
                return Arrays.copyOf(ids, s);
            }
            ids[s++] = next;
            if (s == steps) {
                return ids;
            }
            out = forward(next);
        }
    }

    /**
     * Greedy sampling.
     *
     * @param logits scores, at least one
     * @return the index of the first maximum
     */
    public static int argmax(float[] logits) {
        int best = 0;
        for (int i = 1; i < logits.length; i++) {
            if (logits[i] > logits[best]) {
                best = i;
            }
        }
        return best;
    }

    /**
     * The token of rank {@code r} in the logits: 0 is the argmax, ties go to the lower id (used to
     * start several greedy sequences from different first tokens).
     *
     * @param logits scores
     * @param r      rank, in [0, logits.length)
     * @return the token id
     */
    public static int rank(float[] logits, int r) {
        boolean[] taken = new boolean[logits.length];
        int best = -1;
        for (int k = 0; k <= r; k++) {
            best = -1;
            for (int i = 0; i < logits.length; i++) {
                if (!taken[i] && (best < 0 || logits[i] > logits[best])) {
                    best = i;
                }
            }
            taken[best] = true;
        }
        return best;
    }

    /** Scores of one run of positions for every query head: q . k / sqrt(headSize), run.c order. */
    private void scoreBlock(int first, int tokens, MemorySegment keys, long keysOffset, MemorySegment values,
            long valuesOffset) {
        int headSize = config.headSize();
        int kvMul = config.kvMul();
        int kvDim = config.kvDim();
        int heads = config.heads();
        MemorySegment.copy(keys, ValueLayout.JAVA_FLOAT, keysOffset, run, 0, tokens * kvDim);
        for (int t = 0; t < tokens; t++) {
            int row = t * kvDim;
            for (int h = 0; h < heads; h++) {
                int base = row + (h / kvMul) * headSize;
                int qo = h * headSize;
                float score = 0f;
                for (int i = 0; i < headSize; i++) {
                    score += q[qo + i] * run[base + i];
                }
                att[h * limit + first + t] = score / scale;
            }
        }
    }

    /** Adds weight x V of one run of positions to every head's output in {@link #xb}, run.c order. */
    private void mixBlock(int first, int tokens, MemorySegment keys, long keysOffset, MemorySegment values,
            long valuesOffset) {
        int headSize = config.headSize();
        int kvMul = config.kvMul();
        int kvDim = config.kvDim();
        int heads = config.heads();
        MemorySegment.copy(values, ValueLayout.JAVA_FLOAT, valuesOffset, run, 0, tokens * kvDim);
        for (int t = 0; t < tokens; t++) {
            int row = t * kvDim;
            for (int h = 0; h < heads; h++) {
                int base = row + (h / kvMul) * headSize;
                int xo = h * headSize;
                float a = att[h * limit + first + t];
                for (int i = 0; i < headSize; i++) {
                    xb[xo + i] += a * run[base + i];
                }
            }
        }
    }

    /** RoPE on interleaved pairs of {@code vec[0..n)} at {@code pos}, each head from dimension 0. */
    private void rope(float[] vec, int n, int pos) {
        int headSize = config.headSize();
        int half = headSize / 2;
        for (int i = 0; i < n; i += 2) {
            int j = pos * half + (i % headSize) / 2;
            float fcr = model.ropeCos[j];
            float fci = model.ropeSin[j];
            float v0 = vec[i];
            float v1 = vec[i + 1];
            vec[i] = v0 * fcr - v1 * fci;
            vec[i + 1] = v0 * fci + v1 * fcr;
        }
    }

    /** RMSNorm of {@code x} (size dim) with gains {@code w[wOffset..]} into {@code out}; may alias. */
    private void rmsnorm(float[] out, float[] in, float[] w, int wOffset) {
        int size = config.dim();
        float ss = 0f;
        for (int j = 0; j < size; j++) {
            ss += in[j] * in[j];
        }
        ss /= size;
        ss += 1e-5f;
        ss = 1.0f / (float) Math.sqrt(ss);
        for (int j = 0; j < size; j++) {
            out[j] = w[wOffset + j] * (ss * in[j]);
        }
    }

    /**
     * {@code out[0..d) = W x}, W row-major {@code [d][n]} at {@code w[wOffset..]}. Each row sums in
     * j order into its own float, as run.c; four rows run side by side only to overlap their
     * add latencies, which leaves every row's result unchanged.
     */
    private static void matmul(float[] out, float[] in, float[] w, int wOffset, int n, int d) {
        int i = 0;
        for (; i + 3 < d; i += 4) {
            int r0 = wOffset + i * n;
            int r1 = r0 + n;
            int r2 = r1 + n;
            int r3 = r2 + n;
            float v0 = 0f;
            float v1 = 0f;
            float v2 = 0f;
            float v3 = 0f;
            for (int j = 0; j < n; j++) {
                float xj = in[j];
                v0 += w[r0 + j] * xj;
                v1 += w[r1 + j] * xj;
                v2 += w[r2 + j] * xj;
                v3 += w[r3 + j] * xj;
            }
            out[i] = v0;
            out[i + 1] = v1;
            out[i + 2] = v2;
            out[i + 3] = v3;
        }
        for (; i < d; i++) {
            int row = wOffset + i * n;
            float val = 0f;
            for (int j = 0; j < n; j++) {
                val += w[row + j] * in[j];
            }
            out[i] = val;
        }
    }

    /** Softmax of {@code a[offset..offset+size)} in place: max subtracted, exp, normalised. */
    private static void softmax(float[] a, int offset, int size) {
        float max = a[offset];
        for (int i = 1; i < size; i++) {
            if (a[offset + i] > max) {
                max = a[offset + i];
            }
        }
        float sum = 0f;
        for (int i = 0; i < size; i++) {
            a[offset + i] = (float) Math.exp(a[offset + i] - max);
            sum += a[offset + i];
        }
        for (int i = 0; i < size; i++) {
            a[offset + i] /= sum;
        }
    }
}

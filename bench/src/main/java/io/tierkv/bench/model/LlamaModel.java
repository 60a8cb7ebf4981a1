package io.tierkv.bench.model;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The weights of a Llama-2-architecture model read from a llama2.c checkpoint, plus the RoPE
 * rotation table derived from its shape. Immutable after {@link #load}: one instance is shared,
 * read-only, by any number of {@link Decoder}s on any threads.
 *
 * <p>File format (llama2.c {@code export.py} version 0, "legacy"; little-endian): a header of
 * seven int32 {@code dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len}, then
 * float32 tensors, row-major {@code [out][in]}: {@code token_embedding[vocab][dim]},
 * {@code rms_att[L][dim]}, {@code wq[L][dim][dim]}, {@code wk[L][kvDim][dim]},
 * {@code wv[L][kvDim][dim]}, {@code wo[L][dim][dim]}, {@code rms_ffn[L][dim]},
 * {@code w1[L][hidden][dim]}, {@code w2[L][dim][hidden]}, {@code w3[L][hidden][dim]},
 * {@code rms_final[dim]}, the unused legacy {@code freq_cis_real} and {@code freq_cis_imag}
 * ({@code [seq_len][head_size / 2]} each) and, only when {@code vocab_size} is negative, a separate
 * classifier {@code wcls[vocab][dim]}. A positive {@code vocab_size} means the classifier is the
 * token embedding (weight tying).
 */
public final class LlamaModel {

    private static final ValueLayout.OfInt I32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final int HEADER_BYTES = 7 * Integer.BYTES;

    /** The shape. */
    final LlamaConfig config;
    /** {@code [vocab][dim]}. */
    final float[] tokenEmbedding;
    /** Attention RMSNorm gains, {@code [layers][dim]}. */
    final float[] rmsAtt;
    /** Query projections, {@code [layers][dim][dim]}. */
    final float[] wq;
    /** Key projections, {@code [layers][kvDim][dim]}. */
    final float[] wk;
    /** Value projections, {@code [layers][kvDim][dim]}. */
    final float[] wv;
    /** Attention output projections, {@code [layers][dim][dim]}. */
    final float[] wo;
    /** Feed-forward RMSNorm gains, {@code [layers][dim]}. */
    final float[] rmsFfn;
    /** SwiGLU gate projections, {@code [layers][hidden][dim]}. */
    final float[] w1;
    /** SwiGLU down projections, {@code [layers][dim][hidden]}. */
    final float[] w2;
    /** SwiGLU up projections, {@code [layers][hidden][dim]}. */
    final float[] w3;
    /** Final RMSNorm gains, {@code [dim]}. */
    final float[] rmsFinal;
    /** Classifier, {@code [vocab][dim]}; the token embedding itself when shared. */
    final float[] wcls;
    /** cos(pos * freq_j) at {@code [pos * headSize / 2 + j]}, for RoPE pair j of every head. */
    final float[] ropeCos;
    /** sin(pos * freq_j), same indexing as {@link #ropeCos}. */
    final float[] ropeSin;

    private LlamaModel(LlamaConfig config, MemorySegment file) {
        this.config = config;
        int dim = config.dim();
        int kvDim = config.kvDim();
        int hidden = config.hiddenDim();
        int layers = config.layers();
        long[] cursor = {HEADER_BYTES};
        tokenEmbedding = take(file, cursor, (long) config.vocabSize() * dim);
        rmsAtt = take(file, cursor, (long) layers * dim);
        wq = take(file, cursor, (long) layers * dim * dim);
        wk = take(file, cursor, (long) layers * kvDim * dim);
        wv = take(file, cursor, (long) layers * kvDim * dim);
        wo = take(file, cursor, (long) layers * dim * dim);
        rmsFfn = take(file, cursor, (long) layers * dim);
        w1 = take(file, cursor, (long) layers * hidden * dim);
        w2 = take(file, cursor, (long) layers * dim * hidden);
        w3 = take(file, cursor, (long) layers * hidden * dim);
        rmsFinal = take(file, cursor, dim);
        cursor[0] += (long) config.seqLen() * config.headSize() * Float.BYTES; // freq_cis_real + freq_cis_imag
        wcls = config.sharedClassifier() ? tokenEmbedding : take(file, cursor, (long) config.vocabSize() * dim);

        // RoPE (Su et al., RoFormer, arXiv:2104.09864) with llama2.c run.c's float32 arithmetic:
        // freq = 1 / 10000^(headDim / headSize), val = pos * freq, rotate by (cos val, sin val).
        int half = config.headSize() / 2;
        ropeCos = new float[config.seqLen() * half];
        ropeSin = new float[config.seqLen() * half];
        for (int pos = 0; pos < config.seqLen(); pos++) {
            for (int j = 0; j < half; j++) {
                float freq = 1.0f / (float) Math.pow(10000.0f, (2 * j) / (float) config.headSize());
                float val = pos * freq;
                ropeCos[pos * half + j] = (float) Math.cos(val);
                ropeSin[pos * half + j] = (float) Math.sin(val);
            }
        }
    }

    /**
     * Reads a llama2.c version-0 checkpoint into Java arrays (the file is mapped, copied and
     * unmapped before this returns).
     *
     * @param checkpoint the {@code .bin} file, for example {@code stories260K.bin}
     * @return the model
     * @throws IOException when the file cannot be read, its header describes an invalid shape, a
     *                     tensor exceeds a Java array, or its length differs from the length the
     *                     header implies (the message gives both)
     */
    public static LlamaModel load(Path checkpoint) throws IOException {
        try (Arena arena = Arena.ofConfined();
                FileChannel ch = FileChannel.open(checkpoint, StandardOpenOption.READ)) {
            long size = ch.size();
            if (size < HEADER_BYTES) {
                throw new IOException(checkpoint + ": " + size + " bytes, shorter than the 28-byte header");
            }
            MemorySegment file = ch.map(FileChannel.MapMode.READ_ONLY, 0, size, arena);
            int[] h = new int[7];
            for (int i = 0; i < h.length; i++) {
                h[i] = file.get(I32, (long) i * Integer.BYTES);
            }
            LlamaConfig config;
            try {
                config = new LlamaConfig(h[0], h[1], h[2], h[3], h[4], Math.abs(h[5]), h[6], h[5] > 0);
            } catch (IllegalArgumentException e) {
                throw new IOException(checkpoint + ": invalid header: " + e.getMessage(), e);
            }
            long expected = HEADER_BYTES + Float.BYTES * expectedFloats(config);
            if (size != expected) {
                throw new IOException(checkpoint + ": " + size + " bytes (expected " + expected + " for " + config
                        + ")");
            }
            return new LlamaModel(config, file);
        }
    }

    /**
     * Returns the model's shape.
     *
     * @return the model's shape
     */
    public LlamaConfig config() {
        return config;
    }

    private static long expectedFloats(LlamaConfig c) throws IOException {
        long dim = c.dim();
        long layers = c.layers();
        long[] tensors = {
            c.vocabSize() * dim, layers * dim, layers * dim * dim, layers * c.kvDim() * dim,
            layers * c.kvDim() * dim, layers * dim * dim, layers * dim, layers * c.hiddenDim() * dim,
            layers * dim * c.hiddenDim(), layers * c.hiddenDim() * dim, dim,
            c.sharedClassifier() ? 0 : c.vocabSize() * dim};
        long total = (long) c.seqLen() * c.headSize();
        for (long n : tensors) {
            if (n > Integer.MAX_VALUE - 8) {
                throw new IOException("tensor of " + n + " floats (expected <= " + (Integer.MAX_VALUE - 8)
                        + ", a Java array) for " + c);
            }
            total += n;
        }
        return total;
    }

    private static float[] take(MemorySegment file, long[] cursor, long count) {
        float[] a = new float[(int) count];
        MemorySegment.copy(file, F32, cursor[0], a, 0, a.length);
        cursor[0] += count * Float.BYTES;
        return a;
    }
}

package io.tierkv.bench.jmh;

import io.tierkv.bench.cli.DecodeCommand;
import io.tierkv.bench.model.Decoder;
import io.tierkv.bench.model.LlamaModel;
import io.tierkv.bench.model.PagedKvStore;
import io.tierkv.bench.model.Tokenizer;
import io.tierkv.core.KvLayout;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Real KV block images for the benchmarks: sealed blocks of greedy stories260K decodes, as TierKV
 * holds them.
 *
 * <p>Sequence {@code s} (0, 1, ...) starts with BOS, then the token of rank {@code s} in the
 * logits after BOS (0: the argmax), then feeds back the argmax (BOS included: the model starts a
 * new story) until the model's 512 positions are full. Its K/V go to a {@link PagedKvStore} with
 * 16-token F32 blocks ({@code [layer][K|V][token][head][dim]}, 5 layers x 4 KV heads x 8 dims:
 * 20,480 bytes per block, the {@code tierkv decode} default), and each of its 32 sealed blocks is
 * copied out through {@link PagedKvStore#read} into one image. The images of sequence 0, then 1,
 * and so on, are laid back to back in one segment; as many sequences are decoded as the requested
 * byte count needs.
 */
final class RealKvBlocks {

    /** Tokens per block of the decode: the {@code tierkv decode} default. */
    static final int BLOCK_TOKENS = 16;
    /** System property that overrides the model directory. */
    static final String MODEL_DIR_PROPERTY = "tierkv.modelDir";

    private RealKvBlocks() {
    }

    /**
     * The model directory: {@code -Dtierkv.modelDir}, else {@link DecodeCommand#DEFAULT_MODEL_DIR}
     * relative to the working directory (the repository root when JMH runs from there).
     *
     * @return the directory (not checked)
     */
    static Path modelDir() {
        return Path.of(System.getProperty(MODEL_DIR_PROPERTY, DecodeCommand.DEFAULT_MODEL_DIR));
    }

    /**
     * Decodes until at least {@code minBytes} of block images exist and returns them back to back.
     *
     * @param dir      holds {@code stories260K.bin}
     * @param minBytes bytes wanted, at least 1
     * @param arena    where the images are allocated
     * @return whole images, {@code ceil(minBytes / 20480)} of them, at least {@code minBytes} bytes
     * @throws IllegalStateException naming the path when the checkpoint is missing
     * @throws IOException           when the checkpoint cannot be read
     */
    static MemorySegment images(Path dir, long minBytes, Arena arena) throws IOException {
        Path checkpoint = dir.resolve("stories260K.bin");
        if (!Files.isRegularFile(checkpoint)) {
            throw new IllegalStateException("data=realkv needs the stories260K model: " + checkpoint.toAbsolutePath()
                    + " is missing (run from the repository root next to ../shared, or pass -jvmArgsAppend -D"
                    + MODEL_DIR_PROPERTY + "=DIR)");
        }
        LlamaModel model = LlamaModel.load(checkpoint);
        KvLayout layout = model.config().kvLayout(BLOCK_TOKENS);
        int positions = model.config().seqLen();
        int perSequence = positions / BLOCK_TOKENS;
        long imageBytes = layout.bytesPerBlock();
        long count = (minBytes + imageBytes - 1) / imageBytes;
        MemorySegment out = arena.allocate(count * imageBytes, 4096);
        long done = 0;
        for (int s = 0; done < count; s++) {
            try (Arena scratch = Arena.ofConfined()) {
                PagedKvStore store = new PagedKvStore(layout, positions, scratch);
                Decoder d = new Decoder(model, store);
                int next = Decoder.rank(d.forward(Tokenizer.BOS), s);
                while (d.position() < positions - 1) {
                    next = Decoder.argmax(d.forward(next));
                }
                d.forward(next);
                long first = done;
                int blocks = (int) Math.min(perSequence, count - done);
                for (int l = 0; l < layout.layers(); l++) {
                    int layer = l;
                    store.read(l, blocks * BLOCK_TOKENS, (pos, tokens, keys, kOff, values, vOff) -> {
                        long image = (first + pos / BLOCK_TOKENS) * imageBytes;
                        long bytes = (long) tokens * layout.tokenVectorBytes();
                        MemorySegment.copy(keys, kOff, out, image + layout.layerOffset(layer, KvLayout.K), bytes);
                        MemorySegment.copy(values, vOff, out, image + layout.layerOffset(layer, KvLayout.V), bytes);
                    });
                }
                done += blocks;
            }
        }
        return out;
    }
}

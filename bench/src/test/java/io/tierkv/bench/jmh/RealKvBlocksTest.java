package io.tierkv.bench.jmh;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.bench.model.ArrayKvStore;
import io.tierkv.bench.model.Decoder;
import io.tierkv.bench.model.LlamaModel;
import io.tierkv.bench.model.Tokenizer;
import io.tierkv.core.KvLayout;
import io.tierkv.core.testing.SharedData;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The benchmark's real KV blocks are the sealed blocks of the decode, in TierKV's block layout. */
class RealKvBlocksTest {

    @TempDir
    Path empty;

    @Test
    void imagesHoldEachSequencesKAndVInTheBlockLayoutBackToBack() throws Exception {
        Path dir = SharedData.require("models/stories260K");
        LlamaModel model = LlamaModel.load(dir.resolve("stories260K.bin"));
        KvLayout layout = model.config().kvLayout(RealKvBlocks.BLOCK_TOKENS);
        int imageBytes = layout.bytesPerBlock();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment images = RealKvBlocks.images(dir, 32L * imageBytes + 1, arena);
            assertEquals(33L * imageBytes, images.byteSize(), "whole images, enough for the bytes asked");
            for (int s = 0; s < 2; s++) { // image 0 opens sequence 0, image 32 sequence 1
                ArrayKvStore reference = ArrayKvStore.forModel(model.config(), RealKvBlocks.BLOCK_TOKENS);
                Decoder d = new Decoder(model, reference);
                float[] logits = d.forward(Tokenizer.BOS).clone();
                int second = s == 0 ? Decoder.argmax(logits) : secondBest(logits);
                int next = Decoder.argmax(d.forward(second));
                while (d.position() < RealKvBlocks.BLOCK_TOKENS) {
                    next = Decoder.argmax(d.forward(next));
                }
                MemorySegment image = images.asSlice(32L * s * imageBytes, imageBytes);
                for (int l = 0; l < layout.layers(); l++) {
                    int layer = l;
                    reference.read(l, RealKvBlocks.BLOCK_TOKENS, (pos, tokens, k, kOff, v, vOff) -> {
                        long bytes = (long) tokens * layout.tokenVectorBytes();
                        assertEquals(-1L, MemorySegment.mismatch(k, kOff, kOff + bytes, image,
                                layout.layerOffset(layer, KvLayout.K), layout.layerOffset(layer, KvLayout.K) + bytes),
                                "K of layer " + layer);
                        assertEquals(-1L, MemorySegment.mismatch(v, vOff, vOff + bytes, image,
                                layout.layerOffset(layer, KvLayout.V), layout.layerOffset(layer, KvLayout.V) + bytes),
                                "V of layer " + layer);
                    });
                }
            }
        }
    }

    @Test
    void aMissingModelFailsNamingThePath() {
        try (Arena arena = Arena.ofConfined()) {
            var e = assertThrows(IllegalStateException.class, () -> RealKvBlocks.images(empty, 1, arena));
            assertTrue(e.getMessage().contains(empty.resolve("stories260K.bin").toString()), e.getMessage());
        }
    }

    private static int secondBest(float[] logits) {
        int best = Decoder.argmax(logits);
        int second = -1;
        for (int i = 0; i < logits.length; i++) {
            if (i != best && (second < 0 || logits[i] > logits[second])) {
                second = i;
            }
        }
        return second;
    }
}

package io.tierkv.tiers.readme;

// README.md "Using it from a runtime" shows this file from the line after this one to its end,
// verbatim: ReadmeSnippetTest compares the two and runs it. Edit both or neither.
import io.tierkv.core.DType;
import io.tierkv.core.KvLayout;
import io.tierkv.core.cache.SequenceOptions;
import io.tierkv.natives.EmulatedDevice;
import io.tierkv.tiers.KvBlockManager;
import io.tierkv.tiers.disk.Compression;
import io.tierkv.tiers.disk.DiskOptions;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;

/** Serves one prompt twice: the first request prefills it, the second finds its full blocks cached. */
final class UsingTierKv {

    /** Runs it: {@code java UsingTierKv.java} with the classes and flags below. */
    public static void main(String[] args) throws Exception {
        int[] prompt = new int[40];                            // token ids, from your tokenizer
        for (int i = 0; i < prompt.length; i++) prompt[i] = 1000 + i;
        Path dir = Files.createTempDirectory("tierkv-disk-");  // the disk tier's own directory
        System.out.println("cached " + serveTwice(prompt, dir) + " of " + prompt.length + " tokens");
        Files.delete(dir);                                     // empty: a tier that is not persistent
    }                                                          // deletes its files when it closes

    /** Returns the tokens the second request found cached: the prompt's full blocks (B = 16). */
    static int serveTwice(int[] prompt, Path dir) {
        var layout = KvLayout.of(32, 8, 128, DType.F16, 16);  // layers, kv heads, head dim, dtype, B
        int cached = 0;                                        // 2 MiB per block: 32 x 2 x 16 x 8 x 128 x 2 B
        try (var gpu = new EmulatedDevice();                   // device memory in host memory, see below
             var kv = KvBlockManager.builder(layout)
                     .device(gpu, 128L << 20)                  // 64 blocks
                     .host(256L << 20)                         // 128 blocks
                     .disk(DiskOptions.at(dir).withBudgetBytes(4L << 30).withCompression(Compression.LZ4))
                     .recentDeviceBlocks(4)
                     .build();
             var arena = Arena.ofConfined()) {
            MemorySegment k = arena.allocate(layout.tokenVectorBytes());  // one token, one layer:
            MemorySegment v = arena.allocate(layout.tokenVectorBytes());  // [kv head][head dim] F16
            for (int request = 0; request < 2; request++) {
                try (var seq = kv.openSequence(SequenceOptions.salt("tenant-a"))) {
                    cached = seq.matchPrefix(prompt);          // full blocks already present, any tier
                    for (int p = cached; p < prompt.length; p++) {   // prefill the rest
                        int pos = seq.appendToken(prompt[p]);
                        for (int l = 0; l < layout.layers(); l++) {
                            forward(l, pos, k, v);             // your model computes K and V here
                            seq.write(l, pos, k, v);
                        }
                    }
                    try (var lease = seq.lease(0, seq.length())) {   // every block on the device, pinned
                        MemorySegment block = lease.block(0);  // offsets: layout.offsetOf(layer, K|V, token)
                        short v5 = block.get(ValueLayout.JAVA_SHORT, layout.offsetOf(3, KvLayout.V, 5));
                        if (v5 != Float.floatToFloat16(-3 - 5 / 64f)) {   // layer 3's V of token 5
                            throw new IllegalStateException("V: " + Float.float16ToFloat(v5));
                        }
                    }
                }                                              // its sealed blocks stay cached
            }
        }
        return cached;
    }

    /** Stands in for a forward pass: every K element of (layer, pos) is layer + pos / 64, V its negation. */
    static void forward(int layer, int pos, MemorySegment k, MemorySegment v) {
        short key = Float.floatToFloat16(layer + pos / 64f);
        short value = Float.floatToFloat16(-layer - pos / 64f);
        for (long i = 0; i < k.byteSize() / 2; i++) {
            k.setAtIndex(ValueLayout.JAVA_SHORT, i, key);
            v.setAtIndex(ValueLayout.JAVA_SHORT, i, value);
        }
    }
}

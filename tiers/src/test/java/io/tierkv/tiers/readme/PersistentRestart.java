package io.tierkv.tiers.readme;

import io.tierkv.core.DType;
import io.tierkv.core.KvLayout;
import io.tierkv.core.cache.SequenceOptions;
import io.tierkv.natives.EmulatedDevice;
import io.tierkv.tiers.KvBlockManager;
import io.tierkv.tiers.disk.DiskOptions;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;

/**
 * The second program {@link ReadmeSnippetTest} runs on the module path: a persistent disk tier
 * (whose deletion journal is what chronicle-bytes, and most of the README's flags, are for) across a
 * restart. Each of two runs matches a 64-token prompt, prefills what it did not find, spills every
 * block to disk and closes; it prints {@code run R cached T}. The second run finds all 64 tokens.
 */
final class PersistentRestart {

    private PersistentRestart() {
    }

    /**
     * Runs it.
     *
     * @param args the disk tier's directory
     */
    public static void main(String[] args) {
        KvLayout layout = KvLayout.of(2, 2, 8, DType.F16, 16);
        long block = layout.bytesPerBlock();
        int[] prompt = new int[64];
        for (int i = 0; i < prompt.length; i++) {
            prompt[i] = 7 * i + 3;
        }
        DiskOptions disk = DiskOptions.at(Path.of(args[0])).withSegmentBytes(1L << 20).withBudgetBytes(16L << 20)
                .withPersistent(true);
        for (int run = 0; run < 2; run++) {
            try (var gpu = new EmulatedDevice(1L << 20);
                 var kv = KvBlockManager.builder(layout).device(gpu, 8 * block).host(8 * block).disk(disk)
                         .recentDeviceBlocks(0).movers(0).build();
                 var arena = Arena.ofConfined()) {
                MemorySegment k = arena.allocate(layout.tokenVectorBytes());
                MemorySegment v = arena.allocate(layout.tokenVectorBytes());
                try (var seq = kv.openSequence(SequenceOptions.salt("tenant-a"))) {
                    int cached = seq.matchPrefix(prompt);
                    System.out.println("run " + run + " cached " + cached);
                    for (int p = cached; p < prompt.length; p++) {
                        int pos = seq.appendToken(prompt[p]);
                        for (int l = 0; l < layout.layers(); l++) {
                            seq.write(l, pos, k, v);
                        }
                    }
                }
                kv.demote(8);
                kv.evictHost(8);
            }
        }
    }
}

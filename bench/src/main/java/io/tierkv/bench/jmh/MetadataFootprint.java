package io.tierkv.bench.jmh;

import io.tierkv.core.DType;
import io.tierkv.core.KvLayout;
import io.tierkv.core.cache.CacheOptions;
import io.tierkv.core.cache.PagedKvCache;
import io.tierkv.core.cache.Sequence;
import io.tierkv.core.cache.SequenceOptions;
import io.tierkv.core.pool.SlabMemory;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * Heap bytes of metadata per block of a {@link PagedKvCache} with one million blocks.
 *
 * <p><b>Scenario.</b> A single-tier cache with {@code maxBlocks = deviceBlocks = 1,000,000} over
 * a tiny layout (1 layer, 1 KV head, head dim 1, INT8, 16 tokens: 32-byte blocks, so the slot
 * memory is small and the metadata dominates). Heap in use ({@code totalMemory - freeMemory}) is read after
 * repeated full collections: before anything, after the {@link SlabMemory} (its per-slot segment
 * objects are heap too, reported apart), after the empty cache, after every block was written by
 * 1,000 open sequences of 1,000 blocks (adds their block tables), and after those sequences closed
 * (every block sealed, hashed, indexed and cached: the steady state of a full cache).
 *
 * <p><b>Worst case.</b> The full, cached state: every block has an index entry and sits in the
 * eviction policy. Off-heap metadata (token ids and written bits per block) is printed apart;
 * it is not heap. G1 rounds arrays larger than half a region up to whole regions, so run it once
 * with {@code -XX:+UseSerialGC} for the exact array sizes as well.
 *
 * <p>Target (issue 2): at most 64 bytes of heap per block.
 */
public final class MetadataFootprint {

    private static final int BLOCKS = 1_000_000;
    private static final int SEQUENCES = 1_000;

    private MetadataFootprint() {
    }

    /**
     * Runs the measurement and prints bytes per block.
     *
     * @param args optional policy name (default {@code lru})
     */
    public static void main(String[] args) {
        String policy = args.length > 0 ? args[0] : "lru";
        KvLayout layout = KvLayout.of(1, 1, 1, DType.INT8, 16);
        long base = HeapProbe.settledUsedBytes();
        SlabMemory memory = new SlabMemory(BLOCKS, layout.bytesPerBlock());
        long afterMemory = HeapProbe.settledUsedBytes();
        PagedKvCache cache = new PagedKvCache(CacheOptions.of(layout, BLOCKS).withPolicy(policy), memory, null);
        long afterCache = HeapProbe.settledUsedBytes();

        List<Sequence> open = new ArrayList<>(SEQUENCES);
        MemorySegment kv = MemorySegment.ofArray(new byte[layout.tokenVectorBytes()]);
        int token = 0;
        int blocksPerSequence = BLOCKS / SEQUENCES;
        for (int s = 0; s < SEQUENCES; s++) {
            Sequence seq = cache.openSequence(SequenceOptions.salt("footprint"));
            for (int t = 0; t < blocksPerSequence * layout.blockSizeTokens(); t++) {
                int pos = seq.appendToken(token++);
                seq.write(0, pos, kv, kv);
            }
            open.add(seq);
        }
        long afterFill = HeapProbe.settledUsedBytes();
        for (Sequence seq : open) {
            seq.close();
        }
        open.clear();
        long afterClose = HeapProbe.settledUsedBytes();
        var stats = cache.stats();

        long offHeap = (long) layout.blockSizeTokens() * Integer.BYTES
                + (long) ((layout.blockSizeTokens() * layout.layers() + 63) / 64) * Long.BYTES;
        System.out.printf("policy %s, %,d blocks of %d B, max heap %,d MiB%n", policy, BLOCKS,
                layout.bytesPerBlock(), Runtime.getRuntime().maxMemory() >> 20);
        System.out.printf("slab slot segments (heap):            %6.1f B/block%n", perBlock(afterMemory - base));
        System.out.printf("cache metadata, empty (heap):         %6.1f B/block%n", perBlock(afterCache - afterMemory));
        System.out.printf("cache + 1,000 open sequences (heap):  %6.1f B/block%n", perBlock(afterFill - afterMemory));
        System.out.printf("cache, all blocks cached (heap):      %6.1f B/block  (target <= 64; cached %,d, indexed %,d)%n",
                perBlock(afterClose - afterMemory), stats.cachedBlocks(), stats.indexedBlocks());
        System.out.printf("cache metadata off heap (tokens, written bits): %d B/block%n", offHeap);
        cache.close();
        memory.close();
    }

    private static double perBlock(long bytes) {
        return (double) bytes / BLOCKS;
    }
}

package io.tierkv.observe;

import io.tierkv.core.DType;
import io.tierkv.core.KvLayout;
import io.tierkv.core.cache.Sequence;
import io.tierkv.core.cache.SequenceOptions;
import io.tierkv.natives.EmulatedDevice;
import io.tierkv.tiers.KvBlockManager;
import io.tierkv.tiers.KvBlockManagerBuilder;
import io.tierkv.tiers.disk.Compression;
import io.tierkv.tiers.disk.DiskOptions;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.Random;

/**
 * A small replay-like workload for the observe tests: documents that share prefixes, requested
 * in a seeded random order by sessions that match their prefix, append the rest and close, under
 * budgets small enough that blocks demote to the host, spill to disk and get evicted from every
 * tier. Movers run on the test's thread ({@code movers(0)}, one cycle per request), so the
 * manager is quiet between calls.
 */
final class Workload {

    static final KvLayout LAYOUT = KvLayout.of(2, 2, 4, DType.F32, 16);
    static final int DEVICE_BLOCKS = 8;
    static final int HOST_BLOCKS = 8;

    private Workload() {
    }

    /** A manager over the emulated device with a persistent disk tier in {@code dir} (small budgets). */
    static KvBlockManager manager(KvBlockManagerBuilder builder, Path dir) {
        long bb = LAYOUT.bytesPerBlock();
        return builder.device(new EmulatedDevice(DEVICE_BLOCKS * bb + (1 << 20)), DEVICE_BLOCKS * bb)
                .host(HOST_BLOCKS * bb).recentDeviceBlocks(0).movers(0).admissionTimeoutNanos(50_000_000L)
                .disk(DiskOptions.at(dir).withSegmentBytes(16 << 10).withBudgetBytes(64 << 10)
                        .withCompression(Compression.NONE).withPersistent(true))
                .build();
    }

    /**
     * Runs {@code requests} requests over 48 documents of 2..6 blocks that share first blocks in
     * groups of three.
     *
     * @return prefix tokens matched, summed
     */
    static long run(KvBlockManager kv, long seed, int requests) {
        Random random = new Random(seed);
        int b = LAYOUT.blockSizeTokens();
        long matched = 0;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment block = arena.allocate(LAYOUT.bytesPerBlock());
            for (int r = 0; r < requests; r++) {
                int doc = random.nextInt(48);
                int[] prompt = prompt(doc, 2 + doc % 5, b);
                try (Sequence seq = kv.openSequence(SequenceOptions.salt("tenant"))) {
                    int cached = seq.matchPrefix(prompt);
                    matched += cached;
                    for (int from = cached; from < prompt.length; from += b) {
                        block.fill((byte) (doc + from));
                        seq.appendBlock(prompt, from, block);
                    }
                }
                kv.runMoverCycle();
                if (r % 7 == 3) {
                    kv.demote(2);
                }
                if (r % 11 == 5) {
                    kv.evictHost(2);
                }
            }
        }
        return matched;
    }

    /** Document {@code doc}'s tokens: its first block shared by its group of three, the rest its own. */
    static int[] prompt(int doc, int blocks, int b) {
        int[] tokens = new int[blocks * b];
        for (int i = 0; i < tokens.length; i++) {
            tokens[i] = i < b ? 1000 * (doc / 3) + i : 100_000 * (doc + 1) + i;
        }
        return tokens;
    }
}

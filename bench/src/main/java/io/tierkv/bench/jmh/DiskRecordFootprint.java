package io.tierkv.bench.jmh;

import io.tierkv.core.DType;
import io.tierkv.core.KvLayout;
import io.tierkv.core.prefix.BlockIdentity;
import io.tierkv.tiers.disk.DiskOptions;
import io.tierkv.tiers.disk.store.DiskFormat;
import io.tierkv.tiers.disk.store.DiskTier;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Heap bytes per record of a persistent {@link DiskTier}, after its records were written and
 * after a close and reopen recovered them (issue 19: at most 64 B per disk record).
 *
 * <p><b>Scenario.</b> Per count N (default 1e4, 1e5 and 1e6): a fresh persistent tier in a
 * temporary directory (layout 1 x 1 x {@code blockBytes/64} F16, 16 tokens, so blocks of
 * {@code blockBytes}, default 256 B; raw records; 64 MiB segments; a budget of the records'
 * bytes plus 10% and four segments), N puts of distinct keys, then a close and an
 * {@link DiskTier#open} that recovers them. Heap in use ({@code totalMemory - freeMemory}) is read
 * after repeated full collections before the open, after the writes and after the recovery; the
 * difference over N is the figure, so it includes the tier's fixed objects (a few KiB, visible
 * at 1e4). The breakdown is the tier's own account of its per-record structures
 * ({@link io.tierkv.tiers.disk.store.DiskMaintenance#heapBytesByStructure()}).
 *
 * <p>The cost side: each count's tier is then opened {@value #TIMED_OPENS} more times and the
 * median open is printed (a warm recovery: files in the page cache, so the index's building and
 * growth show, not the disk; the JIT warms over the counts, so compare the same count across
 * commits, not counts).
 *
 * <p><b>Worst case.</b> Small records, so the per-record structures dominate; no admission
 * filter (pass {@code admit} to add one, sized from the budget). Run with
 * {@code -XX:+UseSerialGC}: G1 rounds large arrays up to whole regions.
 *
 * <p>Arguments: {@code [counts, comma-separated, e.g. 1e4,1e5,1e6] [blockBytes] [admit]}. The JVM
 * needs the flags of the root pom's {@code tierkv.jvm.flags} (the deletion journal's Chronicle
 * mapping needs its {@code --add-opens}); the command is in BENCHMARKS.md.
 */
public final class DiskRecordFootprint {

    private static final int TOKENS = 16;
    private static final long SEGMENT_BYTES = 64L << 20;
    private static final int WARMUP_RECORDS = 2_000;
    private static final int TIMED_OPENS = 5;

    private DiskRecordFootprint() {
    }

    /**
     * Runs the measurement and prints bytes per record.
     *
     * @param args optional counts (default {@code 1e4,1e5,1e6}), block bytes (default 256, a
     *             multiple of 64) and {@code admit}
     * @throws IOException if the temporary directory cannot be created
     */
    public static void main(String[] args) throws IOException {
        String[] countText = (args.length > 0 ? args[0] : "1e4,1e5,1e6").split(",");
        int blockBytes = args.length > 1 ? Integer.parseInt(args[1]) : 256;
        boolean admit = args.length > 2 && args[2].equals("admit");
        if (blockBytes < 64 || blockBytes % 64 != 0) {
            throw new IllegalArgumentException("blockBytes: " + blockBytes + " (expected a multiple of 64, >= 64)");
        }
        KvLayout layout = KvLayout.of(1, 1, blockBytes / 64, DType.F16, TOKENS);
        long recordBytes = DiskFormat.recordBytes(TOKENS, layout.bytesPerBlock());
        Path base = Files.createTempDirectory("tierkv-footprint-");
        System.out.printf("blocks of %d B (raw records of %d B), %s, max heap %,d MiB%n", layout.bytesPerBlock(),
                recordBytes, admit ? "admission filter on" : "no admission filter",
                Runtime.getRuntime().maxMemory() >> 20);
        try {
            // a discarded warm-up round, so the first count pays no class loading
            DiskOptions warmup = options(base.resolve("warmup"), WARMUP_RECORDS, recordBytes, admit);
            writeAndMeasure(warmup, layout, WARMUP_RECORDS, admit, 0);
            recoverAndMeasure(warmup, layout, WARMUP_RECORDS, 0);
            BenchFiles.deleteTree(warmup.directory());
            for (String text : countText) {
                int n = (int) Double.parseDouble(text);
                DiskOptions options = options(base.resolve("tier-" + n), n, recordBytes, admit);
                measure(options, layout, n, admit);
                BenchFiles.deleteTree(options.directory());
            }
        } finally {
            BenchFiles.deleteTree(base);
        }
    }

    /** A persistent tier's options, its budget the records' bytes plus 10% and four segments. */
    private static DiskOptions options(Path dir, int n, long recordBytes, boolean admit) {
        return DiskOptions.at(dir).withPersistent(true).withSegmentBytes(SEGMENT_BYTES).withLowSpaceWarnBytes(0)
                .withAdmitOnSecondSight(admit).withBudgetBytes(n * recordBytes * 11 / 10 + 4 * SEGMENT_BYTES + (1L << 20));
    }

    /**
     * Writes {@code n} records into a fresh tier, closes it, reopens it, and prints the heap each
     * state holds per record. Each state is measured in its own method, so no interpreted frame
     * keeps a closed tier reachable.
     */
    private static void measure(DiskOptions options, KvLayout layout, int n, boolean admit) {
        long before = HeapProbe.settledUsedBytes();
        String writeFigures = writeAndMeasure(options, layout, n, admit, before);
        long beforeOpen = HeapProbe.settledUsedBytes();
        String recoveryFigures = recoverAndMeasure(options, layout, n, beforeOpen);
        System.out.printf("%,10d records: after write %s%n%,10d records: after recovery %s%n", n, writeFigures, n,
                recoveryFigures);
        double[] seconds = new double[TIMED_OPENS];
        for (int i = 0; i < TIMED_OPENS; i++) {
            long t0 = System.nanoTime();
            DiskTier tier = DiskTier.open(options, layout);
            seconds[i] = (System.nanoTime() - t0) / 1e9;
            tier.close();
        }
        java.util.Arrays.sort(seconds);
        System.out.printf("%,10d records: warm recovery (files in the page cache), median of %d opens %.3f s"
                + " (%.3f-%.3f)%n", n, TIMED_OPENS, seconds[TIMED_OPENS / 2], seconds[0], seconds[TIMED_OPENS - 1]);
    }

    private static String writeAndMeasure(DiskOptions options, KvLayout layout, int n, boolean admit,
            long before) {
        try (Arena arena = Arena.ofConfined(); DiskTier tier = DiskTier.open(options, layout)) {
            MemorySegment block = arena.allocate(layout.bytesPerBlock(), 64);
            for (long i = 0; i < block.byteSize() / 8; i++) {
                block.setAtIndex(ValueLayout.JAVA_LONG, i, i * 0x9E3779B97F4A7C15L);
            }
            MemorySegment identity = arena.allocate(BlockIdentity.bytes(TOKENS), 8);
            for (int k = 0; k < n; k++) {
                boolean stored = tier.put(1, k, identity, block);
                if (admit && !stored) {
                    stored = tier.put(1, k, identity, block);
                }
                if (!stored) {
                    throw new IllegalStateException("put " + k + " was not stored");
                }
            }
            return figures(tier, n, HeapProbe.settledUsedBytes() - before);
        }
    }

    private static String recoverAndMeasure(DiskOptions options, KvLayout layout, int n, long before) {
        try (DiskTier tier = DiskTier.open(options, layout)) {
            if (tier.blockCount() != n) {
                throw new IllegalStateException("recovery found " + tier.blockCount() + " of " + n + " records");
            }
            return figures(tier, n, HeapProbe.settledUsedBytes() - before);
        }
    }

    /** The heap the tier added per record, and the tier's own per-structure account of it. */
    private static String figures(DiskTier tier, int n, long heapBytes) {
        StringBuilder sb = new StringBuilder(String.format("%6.1f B/record (target <= 64); structures: ",
                (double) heapBytes / n));
        long total = 0;
        for (var e : tier.maintenance().heapBytesByStructure().entrySet()) {
            sb.append(String.format("%s %.1f, ", e.getKey(), (double) e.getValue() / n));
            total += e.getValue();
        }
        return sb.append(String.format("sum %.1f B/record", (double) total / n)).toString();
    }
}

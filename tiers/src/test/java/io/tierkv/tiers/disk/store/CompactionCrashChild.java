package io.tierkv.tiers.disk.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.core.testing.ChildJava;
import io.tierkv.tiers.disk.Compression;
import io.tierkv.tiers.disk.DiskOptions;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The child JVM of the compaction crash tests, and the parent's side of driving it. Records are
 * raw 16 KiB blocks in 64 MiB segments ({@code raw}) or LZ4 blocks of mixed sizes in 16 MiB
 * segments ({@code lz4}). {@code DIR MODE fill N} writes keys 0..N-1 and removes two of every
 * three (journaled); {@code DIR MODE compact} prints {@code COMPACTING}, compacts in place and
 * waits to be killed.
 */
public final class CompactionCrashChild {

    private CompactionCrashChild() {
    }

    static DiskOptions options(Path dir, boolean lz4) {
        return DiskOptions.at(dir).withSegmentBytes(lz4 ? 16L << 20 : 64L << 20).withBudgetBytes(lz4 ? 512L << 20 : 256L << 20)
                .withLowSpaceWarnBytes(0).withPersistent(true).withCompression(lz4 ? Compression.LZ4 : Compression.NONE);
    }

    /** {@return key k's block: what {@link #main} writes} */
    static MemorySegment block(Arena arena, long k, boolean lz4) {
        return lz4 ? DiskTestSupport.mixedBlock(arena, k) : DiskTestSupport.block(arena, k);
    }

    /**
     * Fills a directory in a child JVM.
     *
     * @throws Exception if the child fails
     */
    static void fill(Path dir, boolean lz4, int n, Path out) throws Exception {
        Process p = new ProcessBuilder(ChildJava.command(List.of("-Xmx256m"), CompactionCrashChild.class,
                dir.toString(), mode(lz4), "fill", Integer.toString(n))).redirectErrorStream(true)
                .redirectOutput(out.toFile()).start();
        assertTrue(p.waitFor(3, TimeUnit.MINUTES), "fill");
        assertEquals(0, p.exitValue(), Files.readString(out));
    }

    /**
     * Starts a compaction in a child JVM and kills it {@code delayMillis} after it starts.
     *
     * @return what the child printed, on one line
     * @throws Exception if the child does not start compacting
     */
    static String killedCompaction(Path dir, boolean lz4, long delayMillis, Path log) throws Exception {
        Process p = new ProcessBuilder(ChildJava.command(List.of("-Xmx256m"), CompactionCrashChild.class,
                dir.toString(), mode(lz4), "compact")).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
        while (!Files.readString(log).contains("COMPACTING") && p.isAlive() && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
        assertTrue(Files.readString(log).contains("COMPACTING"), Files.readString(log));
        Thread.sleep(delayMillis);
        p.destroyForcibly();
        assertTrue(p.waitFor(1, TimeUnit.MINUTES));
        return Files.readString(log).strip().replace('\n', '|');
    }

    private static String mode(boolean lz4) {
        return lz4 ? "lz4" : "raw";
    }

    /**
     * Runs one step.
     *
     * @param args the directory, {@code raw} or {@code lz4}, then {@code fill N} or {@code compact}
     * @throws Exception on failure (the parent reads the output)
     */
    public static void main(String[] args) throws Exception {
        boolean lz4 = args[1].equals("lz4");
        DiskTier tier = DiskTier.open(options(Path.of(args[0]), lz4), DiskTestSupport.LAYOUT);
        if (args[2].equals("fill")) {
            int n = Integer.parseInt(args[3]);
            for (long k = 0; k < n; k++) {
                try (Arena a = Arena.ofConfined()) {
                    if (!DiskTestSupport.put(tier, a, k, block(a, k, lz4))) {
                        throw new IllegalStateException("declined " + k);
                    }
                }
            }
            for (long k = 0; k < n; k++) {
                if (k % 3 != 0) {
                    tier.remove(DiskTestSupport.hi(k), DiskTestSupport.lo(k));
                }
            }
            System.out.println("FILLED " + tier.blockCount() + " in " + tier.stats().segmentCount() + " segment(s)");
            tier.close();
            return;
        }
        System.out.println("COMPACTING " + tier.blockCount());
        System.out.flush();
        System.out.println("COMPACTED " + tier.maintenance().compact());
        System.out.flush();
        Thread.sleep(300_000);
    }
}

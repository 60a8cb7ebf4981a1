package io.tierkv.tiers.disk.store;

import io.tierkv.tiers.disk.Compression;
import io.tierkv.tiers.disk.DiskOptions;
import java.lang.foreign.Arena;
import java.nio.file.Path;

/**
 * The child JVM of {@link CompactionCrashTest}: {@code DIR fill N} writes keys 0..N-1 into one
 * 64 MiB segment and removes two of every three (journaled); {@code DIR compact} prints
 * {@code COMPACTING}, compacts in place and waits to be killed.
 */
public final class CompactionCrashChild {

    private CompactionCrashChild() {
    }

    static DiskOptions options(Path dir) {
        return DiskOptions.at(dir).withSegmentBytes(64L << 20).withBudgetBytes(256L << 20).withLowSpaceWarnBytes(0)
                .withPersistent(true).withCompression(Compression.NONE);
    }

    /**
     * Runs one step.
     *
     * @param args the directory, then {@code fill N} or {@code compact}
     * @throws Exception on failure (the parent reads the output)
     */
    public static void main(String[] args) throws Exception {
        DiskTier tier = DiskTier.open(options(Path.of(args[0])), DiskTestSupport.LAYOUT);
        if (args[1].equals("fill")) {
            int n = Integer.parseInt(args[2]);
            for (long k = 0; k < n; k++) {
                try (Arena a = Arena.ofConfined()) {
                    if (!DiskTestSupport.put(tier, a, k)) {
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

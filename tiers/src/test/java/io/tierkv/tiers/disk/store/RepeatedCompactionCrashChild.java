package io.tierkv.tiers.disk.store;

import io.tierkv.tiers.disk.Compression;
import io.tierkv.tiers.disk.DiskOptions;
import java.lang.foreign.Arena;
import java.nio.file.Path;

/** Child of {@link RepeatedCompactionCrashTest}: {@code DIR fill N} (LZ4, mixed blocks, removes 2 of 3), {@code DIR compact}. */
public final class RepeatedCompactionCrashChild {

    private RepeatedCompactionCrashChild() {
    }

    static DiskOptions options(Path dir) {
        return DiskOptions.at(dir).withSegmentBytes(16L << 20).withBudgetBytes(512L << 20).withLowSpaceWarnBytes(0)
                .withPersistent(true).withCompression(Compression.LZ4);
    }

    public static void main(String[] args) throws Exception {
        DiskTier tier = DiskTier.open(options(Path.of(args[0])), DiskTestSupport.LAYOUT);
        if (args[1].equals("fill")) {
            int n = Integer.parseInt(args[2]);
            for (long k = 0; k < n; k++) {
                try (Arena a = Arena.ofConfined()) {
                    if (!DiskTestSupport.put(tier, a, k, DiskTestSupport.mixedBlock(a, k))) {
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

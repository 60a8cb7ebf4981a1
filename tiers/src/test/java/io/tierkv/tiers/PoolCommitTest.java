package io.tierkv.tiers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.core.DType;
import io.tierkv.core.KvLayout;
import io.tierkv.core.budget.BudgetKind;
import io.tierkv.core.cache.Sequence;
import io.tierkv.core.cache.SequenceOptions;
import io.tierkv.natives.EmulatedDevice;
import io.tierkv.natives.libc.Libc;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * Issue 19 part 3, what was decided: {@link KvBlockManagerBuilder#build()} reserves the pools and
 * commits their pages lazily, on first touch (why: {@code PoolMemory} in the native module), so
 * the process's resident memory grows by far less than the budgets at build and by the pages that
 * blocks are written into afterwards. Before, build() committed every page (RSS grew by 1.00-1.09x
 * the budgets), writing each more than once. Sizes, not times: RSS is this process's
 * ({@code /proc/self/status}), so the test does not depend on the machine's speed.
 */
class PoolCommitTest {

    private static final long MIB = 1L << 20;

    @Test
    void buildOfAOneGibHostPoolGrowsResidentMemoryByFarLessThanItsBudgets() throws IOException {
        KvLayout layout = KvLayout.of(2, 2, 64, DType.F16, 64); // 64 KiB blocks
        long device = 256 * MIB;
        long host = 1024 * MIB;
        System.gc();
        long rssBefore = statusKb("VmRSS:");
        try (EmulatedDevice gpu = new EmulatedDevice(device);
                KvBlockManager kv = KvBlockManager.builder(layout).device(gpu, device).host(host)
                        .recentDeviceBlocks(0).movers(0).build()) {
            long growth = (statusKb("VmRSS:") - rssBefore) << 10;
            assertEquals(host, kv.budgets().bytes(BudgetKind.HOST));
            assertEquals(device, gpu.usedBytes(), "the device pool is allocated whole");
            assertTrue(growth < 128 * MIB, "RSS grew by " + growth / MIB + " MiB in build() of " + (device + host) / MIB
                    + " MiB of pools (expected < 128 MiB: pages are committed on first touch, not at build)");
            int blocks = 1024; // 64 MiB of device slots written
            try (Sequence seq = kv.openSequence(SequenceOptions.salt("commit"))) {
                MemorySegment kvBytes = MemorySegment.ofArray(new byte[layout.tokenVectorBytes()]);
                for (int t = 0; t < blocks * layout.blockSizeTokens(); t++) {
                    int pos = seq.appendToken(t);
                    for (int l = 0; l < layout.layers(); l++) {
                        seq.write(l, pos, kvBytes, kvBytes);
                    }
                }
                // The written slots' own pages (mincore), not the process's RSS, which the JVM's heap
                // moves both ways meanwhile (-20 MiB over these writes was seen once).
                long pages = 0;
                for (int b = 0; b < blocks; b++) {
                    int id = seq.blockId(b);
                    pages += Libc.residentPages(kv.acquireLease(id));
                    kv.releaseLease(id);
                }
                long perBlock = layout.bytesPerBlock() / Libc.pageSizeBytes();
                assertEquals(blocks * perBlock, pages, "every page of the " + blocks + " written blocks is resident "
                        + "(written pages are committed)");
            }
        }
    }

    private static long statusKb(String field) throws IOException {
        return kb(Path.of("/proc/self/status"), field);
    }

    private static long kb(Path file, String field) throws IOException {
        return Files.readAllLines(file).stream().filter(l -> l.startsWith(field))
                .mapToLong(l -> Long.parseLong(l.replaceAll("[^0-9]", ""))).findFirst()
                .orElseThrow(() -> new AssertionError(field + " not in " + file));
    }
}

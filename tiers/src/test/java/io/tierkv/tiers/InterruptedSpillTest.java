package io.tierkv.tiers;

import static io.tierkv.core.testing.TestCaches.blockImage;
import static io.tierkv.core.testing.TestCaches.tokens;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.core.KvLayout;
import io.tierkv.core.cache.BlockLease;
import io.tierkv.core.cache.Sequence;
import io.tierkv.core.cache.SequenceOptions;
import io.tierkv.tiers.disk.Compression;
import io.tierkv.tiers.disk.DiskOptions;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A spill run by a thread that is interrupted (a runtime cancelling a request interrupts the
 * thread that drives it; found by a review of the Jlama adapter): the disk write on that thread
 * failed with {@code ClosedByInterruptException}, the host tier left the block marked moving, and
 * the next promotion of it spun forever (here the write's exception escaped {@code evictHost}
 * before). The disk tier now clears the interrupt for its channel operations and sets it again
 * after, so the segment's channel stays open and the spill succeeds; a spill that fails in any
 * way leaves the block on the host as it was, counted. The interrupt is kept; the manager goes on.
 */
class InterruptedSpillTest {

    @TempDir
    Path dir;

    @Test
    void aSpillOnAnInterruptedThreadLeavesTheBlockOnTheHostAndNothingHangs() {
        KvLayout layout = Managers.LAYOUT;
        int b = layout.blockSizeTokens();
        long bb = layout.bytesPerBlock();
        DiskOptions disk = DiskOptions.at(dir.resolve("kv")).withSegmentBytes(64 << 10).withBudgetBytes(1 << 20)
                .withCompression(Compression.NONE);
        try (KvBlockManager kv = KvBlockManager.builder(layout).device(new io.tierkv.natives.EmulatedDevice(16 * bb
                + (1 << 20)), 8 * bb).host(8 * bb).disk(disk).recentDeviceBlocks(0).movers(0).build();
             Arena arena = Arena.ofShared()) { // read by the timed block's thread too
            MemorySegment image = arena.allocate(bb);
            int[] first = tokens(300, 2 * b);
            try (Sequence f = kv.openSequence(SequenceOptions.defaults())) { // a segment exists: later spills write into it
                for (int i = 0; i < 2; i++) {
                    f.appendBlock(first, i * b, blockImage(image, layout, 3, i * b));
                }
            }
            kv.demote(Integer.MAX_VALUE);
            kv.evictHost(Integer.MAX_VALUE);
            assertEquals(2, kv.stats().disk().blockCount());
            int[] prompt = tokens(700, 4 * b);
            Sequence s = kv.openSequence(SequenceOptions.defaults());
            for (int i = 0; i < 4; i++) {
                s.appendBlock(prompt, i * b, blockImage(image, layout, 7, i * b));
            }
            kv.demote(Integer.MAX_VALUE);
            Thread.currentThread().interrupt();
            try {
                kv.evictHost(Integer.MAX_VALUE); // spills on this interrupted thread
                assertTrue(Thread.currentThread().isInterrupted(), "the interrupt is kept");
            } finally {
                Thread.interrupted();
            }
            assertTimeoutPreemptively(Duration.ofSeconds(20), () -> {
                for (int i = 0; i < 4; i++) {
                    try (BlockLease lease = s.lease(i * b, (i + 1) * b)) { // promotes it back
                        assertEquals(-1, lease.block(0).mismatch(blockImage(image, layout, 7, i * b)), "block " + i);
                    }
                }
            }, "a promotion after the interrupted spill");
            assertTrue(kv.checkInvariants().isEmpty(), kv.checkInvariants().toString());
            s.close();
            kv.demote(Integer.MAX_VALUE);
            kv.evictHost(Integer.MAX_VALUE); // spills go on, on a thread that is not interrupted
            assertEquals(4 * b, kv.openSequence(SequenceOptions.defaults()).matchPrefix(prompt), "found again, below");
        }
    }
}

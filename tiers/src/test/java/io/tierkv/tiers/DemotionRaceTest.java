package io.tierkv.tiers;

import static io.tierkv.core.testing.TestCaches.appendWritten;
import static io.tierkv.core.testing.TestCaches.blockImage;
import static io.tierkv.core.testing.TestCaches.tokens;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.core.cache.PagedKvCache;
import io.tierkv.core.cache.Sequence;
import io.tierkv.core.cache.SequenceOptions;
import io.tierkv.tiers.disk.store.DiskTier;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A demotion copies a block down with the cache lock released; a mover may try to spill that copy
 * to disk (and the disk evict the record), or a runtime evict host blocks, before the cache takes
 * its lock back, and the block may be referenced meanwhile (a prefix match finds it, still on the
 * device). Before, the host tier spilled such a copy on its own, and the demotion had to notice
 * at its commit that the device slot held the only copy left. Now every move below is the cache's,
 * none takes a block in transit, and the landed copy is not even in the host's slots until the
 * demotion's commit records it there ({@code HostSlots#fill}): the host copy stays until the
 * demotion commits, and the block reads back from it.
 */
class DemotionRaceTest {

    @TempDir
    Path dir;

    @Test
    void noMoveBelowTakesACopyWhoseDemotionIsInFlight() {
        int bb = Managers.LAYOUT.bytesPerBlock();
        try (HostDiskStack stack = new HostDiskStack(dir.resolve("kv"), HookedLower::new)) {
            HostTier host = stack.host;
            DiskTier disk = stack.disk;
            PagedKvCache cache = stack.cache;
            HookedLower lower = (HookedLower) stack.lower;
            int id;
            try (Sequence first = cache.openSequence(SequenceOptions.defaults())) {
                appendWritten(first, 7, tokens(0, 16));
                id = first.blockId(0);
            }
            Sequence[] matched = new Sequence[1];
            lower.afterDemote = () -> { // the cache lock is released: this is what a mover and a worker may do now
                java.util.List<Integer> queued = new java.util.ArrayList<>();
                assertEquals(0, cache.tierControl().queueSpills(4, queued::add), "a mover finds no host copy to queue");
                assertEquals(List.of(), queued);
                assertFalse(cache.tierControl().spillQueued(id), "nor spills it: the block is in transit");
                assertEquals(0, cache.tierControl().evictHost(1), "nor is it evicted");
                assertEquals(0, disk.maintenance().evict(1), "nothing reached the disk");
                matched[0] = cache.openSequence(SequenceOptions.defaults());
                assertEquals(16, matched[0].matchPrefix(tokens(0, 32)), "the block is found on the device");
            };
            boolean demoted = cache.tierControl().demoteBlock(id);
            assertEquals(null, lower.afterDemote, "the hook ran");
            cache.tierControl().settleBelow();
            try (Sequence seq = matched[0]; Arena arena = Arena.ofConfined()) {
                assertEquals(id, seq.blockId(0));
                MemorySegment out = arena.allocate(bb);
                MemorySegment expected = arena.allocate(bb);
                seq.readBlock(0, out);
                assertEquals(-1, out.mismatch(blockImage(expected, Managers.LAYOUT, 7, 0)));
                assertTrue(demoted, "the demotion committed: its host copy was kept");
                assertEquals(1, host.usedBlocks(), "the block is on the host");
            }
            assertEquals(List.of(), cache.checkInvariants());
            assertEquals(List.of(), host.checkInvariants());
        }
    }
}

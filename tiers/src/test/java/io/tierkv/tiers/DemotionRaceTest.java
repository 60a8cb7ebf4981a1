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
 * A demotion copies a block down with the cache lock released; the host tier may spill that copy
 * to disk and the disk may evict the record before the cache takes its lock back, and the block
 * may be referenced meanwhile (a prefix match finds it, still on the device). The demotion must
 * not then free the device slot, which holds the only copy left.
 */
class DemotionRaceTest {

    @TempDir
    Path dir;

    @Test
    void aBlockReferencedWhileItsDemotedCopyIsSpilledAndEvictedKeepsItsDeviceCopy() {
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
                assertTrue(host.spill(id), "the host copy spills at once");
                assertEquals(1, disk.maintenance().evict(1), "and its unpinned record is evicted");
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
                seq.readBlock(0, out); // threw CorruptBlockException: the slot was freed with the only copy
                assertEquals(-1, out.mismatch(blockImage(expected, Managers.LAYOUT, 7, 0)));
                assertFalse(demoted, "the device slot holds the only copy: the demotion is refused");
            }
            assertEquals(List.of(), cache.checkInvariants());
            assertEquals(List.of(), host.checkInvariants());
        }
    }
}

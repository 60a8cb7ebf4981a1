package io.tierkv.tiers;

import static io.tierkv.core.testing.TestCaches.appendWritten;
import static io.tierkv.core.testing.TestCaches.tokens;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.core.cache.LowerTier;
import io.tierkv.core.cache.Sequence;
import io.tierkv.core.cache.SequenceOptions;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A spill the cache starts ({@code MoveBelow}) holds its source in the same hold of the lock that
 * puts the block in transit ({@code LowerTier.prepareSpill}), so when the lock is released for the
 * write the host's facts are whole: the block is MOVING, out of the host policy and of any mover's
 * queue. Before (a review found it), the host tier took the source only after taking the lock back
 * in its own call: in between, a queued block was neither queued nor in the policy (the host's
 * invariants failed), and a room victim was still in the policy, where a mover could queue it.
 */
class SpillWindowTest {

    @TempDir
    Path dir;

    @Test
    void aQueuedSpillIsMovingWhileTheLockIsReleased() {
        try (HostDiskStack stack = new HostDiskStack(dir.resolve("kv"), HookedLower::new)) {
            int id = stack.onHost(1, 0, null);
            List<Integer> queued = new ArrayList<>();
            assertEquals(1, stack.cache.tierControl().queueSpills(1, queued::add));
            assertEquals(List.of(id), queued);
            List<String> seen = new ArrayList<>();
            ((HookedLower) stack.lower).beforeSpill = () -> seen.addAll(stack.host.checkInvariants());
            assertTrue(stack.cache.tierControl().spillQueued(id), "spilled");
            assertEquals(List.of(), seen, "the host's invariants while the spill writes");
        }
    }

    @Test
    void aRoomVictimIsOutOfThePolicyWhileItSpills() {
        try (HostDiskStack stack = new HostDiskStack(dir.resolve("kv"), HookedLower::new)) {
            List<Sequence> keep = new ArrayList<>();
            int victim = stack.onHost(1, 0, keep); // referenced: its id stays after it spills
            for (int i = 1; i < HostDiskStack.BLOCKS; i++) {
                stack.onHost(1 + i, 100 * i, null);
            }
            List<Integer> queued = new ArrayList<>();
            List<String> seen = new ArrayList<>();
            ((HookedLower) stack.lower).beforeSpill = () -> {
                seen.addAll(stack.host.checkInvariants());
                stack.cache.tierControl().queueSpills(HostDiskStack.BLOCKS, queued::add); // a mover, meanwhile
            };
            stack.onHost(9, 900, null); // the host is full: the least recent, the victim, spills for room
            assertEquals(List.of(), seen, "the host's invariants while the victim's spill writes");
            assertFalse(queued.contains(victim), "a mover cannot queue the block being spilled: " + queued);
            assertEquals(LowerTier.RESIDENT_DISK, stack.cache.tierControl().residence(victim), "it spilled");
            assertTrue(stack.cache.tierControl().loadBelow(victim), "and loads back");
            assertEquals(List.of(), stack.host.checkInvariants(), "with no queue mark left on it");
            for (int id : queued) {
                stack.cache.tierControl().spillQueued(id);
            }
            assertEquals(List.of(), stack.host.checkInvariants());
            keep.forEach(Sequence::close);
        }
    }

    /**
     * A twin block (sealed while another block of the same tokens held the index: never indexed)
     * whose last reference ends while it spills, then whose spill throws: the block is freed as
     * the move ends, with its host slot. Before (a review found it; a demotion had the same fault),
     * the move's exception left it in its host slot, referenced by nobody and found by no match,
     * until room making happened to evict it.
     */
    @Test
    void aTwinReleasedDuringASpillThatThrowsIsFreed() {
        try (HostDiskStack stack = new HostDiskStack(dir.resolve("kv"), HookedLower::new)) {
            int first = stack.cachedBlock(); // indexed under the hash of tokens 0..15
            Sequence holder = stack.cache.openSequence(SequenceOptions.defaults());
            appendWritten(holder, 7, tokens(0, 16)); // the same tokens, sealed while the first is indexed
            int twin = holder.blockId(0);
            assertNotEquals(first, twin, "a block of its own");
            assertTrue(stack.cache.tierControl().demoteBlock(twin), "on the host");
            List<Integer> queued = new ArrayList<>();
            assertEquals(1, stack.cache.tierControl().queueSpills(1, queued::add));
            assertEquals(List.of(twin), queued);
            ((HookedLower) stack.lower).beforeSpill = () -> {
                holder.close(); // its last reference ends while it is in transit
                throw new IllegalStateException("a disk store that broke its contract");
            };
            assertThrows(IllegalStateException.class, () -> stack.cache.tierControl().spillQueued(twin));
            assertEquals(LowerTier.RESIDENT_NOWHERE, stack.cache.tierControl().residence(twin),
                    "freed as the move ended"); // RESIDENT_HOST before
            assertEquals(List.of(), stack.cache.checkInvariants());
            assertEquals(List.of(), stack.host.checkInvariants());
        }
    }
}

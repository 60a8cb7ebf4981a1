package io.tierkv.tiers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.core.cache.LowerTier;
import io.tierkv.core.cache.Sequence;
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
}

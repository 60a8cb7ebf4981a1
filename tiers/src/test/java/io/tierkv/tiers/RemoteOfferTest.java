package io.tierkv.tiers;

import static io.tierkv.core.testing.TestCaches.appendWritten;
import static io.tierkv.core.testing.TestCaches.tokens;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.core.cache.LowerTier;
import io.tierkv.core.cache.Sequence;
import io.tierkv.core.cache.SequenceOptions;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A host victim's offer to the remote store where the host is the lowest local tier (no disk), as
 * the cache's move ({@code MoveBelow.offer}): the block's hash and bytes copied with the cache lock
 * released, the victim in transit meanwhile, and checked again before it is evicted.
 */
class RemoteOfferTest {

    @TempDir
    Path dir;

    @Test
    @SuppressWarnings("GuardedBy") // the host tier's facts read with its lock held, which Error Prone cannot resolve here
    void aHostVictimIsOfferedWithTheLockReleasedThenEvicted() {
        try (HostDiskStack stack = new HostDiskStack(dir, HookedLower::fetching, false)) {
            HookedLower lower = (HookedLower) stack.lower;
            int id = stack.cachedOnHost();
            long hi;
            long lo;
            byte[] bytes;
            stack.host.blocks.lock.lock();
            try {
                hi = stack.host.blocks.hashHi(id);
                lo = stack.host.blocks.hashLo(id);
                bytes = stack.host.blocks.slotView(stack.host.blocks.hostSlot(id)).toArray(ValueLayout.JAVA_BYTE);
            } finally {
                stack.host.blocks.lock.unlock();
            }
            List<Boolean> lockHeld = new ArrayList<>();
            List<long[]> hashes = new ArrayList<>();
            List<byte[]> offered = new ArrayList<>();
            lower.onOffer = (h, l, identity, block) -> {
                lockHeld.add(stack.host.blocks.lock.isHeldByCurrentThread());
                hashes.add(new long[] {h, l});
                offered.add(block.toArray(ValueLayout.JAVA_BYTE));
            };
            assertEquals(1, stack.cache.tierControl().evictHost(1), "the one host block evicted");
            assertEquals(List.of(false), lockHeld, "offered once, with the cache lock released");
            assertArrayEquals(new long[] {hi, lo}, hashes.get(0));
            assertArrayEquals(bytes, offered.get(0), "the block's own bytes");
            assertEquals(LowerTier.RESIDENT_NOWHERE, stack.cache.tierControl().residence(id));
            assertEquals(List.of(), stack.cache.checkInvariants());
        }
    }

    @Test
    void aVictimReferencedDuringItsOfferStaysOnTheHost() {
        try (HostDiskStack stack = new HostDiskStack(dir, HookedLower::fetching, false)) {
            HookedLower lower = (HookedLower) stack.lower;
            int id = stack.cachedOnHost();
            List<Sequence> probes = new ArrayList<>();
            lower.onOffer = (h, l, identity, block) -> { // the lock is released: a match may take the block now
                Sequence probe = stack.cache.openSequence(SequenceOptions.defaults());
                probes.add(probe);
                assertEquals(16, probe.matchPrefix(tokens(0, 32)), "the victim matched during its offer");
            };
            assertEquals(0, stack.cache.tierControl().evictHost(1), "referenced meanwhile: not evicted");
            assertEquals(1, probes.size());
            assertEquals(id, probes.get(0).blockId(0));
            assertEquals(LowerTier.RESIDENT_HOST, stack.cache.tierControl().residence(id), "still on the host");
            assertEquals(1, stack.cache.diagnostics().referenceCount(id));
            assertEquals(List.of(), stack.cache.checkInvariants());
            probes.get(0).close();
            lower.onOffer = null;
            assertEquals(1, stack.cache.tierControl().evictHost(1), "unreferenced again: evicted");
            assertEquals(LowerTier.RESIDENT_NOWHERE, stack.cache.tierControl().residence(id));
            assertEquals(List.of(), stack.cache.checkInvariants());
        }
    }

    @Test
    void anOfferThatThrowsLeavesTheVictimOnTheHost() {
        try (HostDiskStack stack = new HostDiskStack(dir, HookedLower::fetching, false)) {
            HookedLower lower = (HookedLower) stack.lower;
            int id = stack.cachedOnHost();
            lower.onOffer = (h, l, identity, block) -> {
                throw new IllegalStateException("a store that broke its contract");
            };
            assertThrows(IllegalStateException.class, () -> stack.cache.tierControl().evictHost(1));
            assertEquals(LowerTier.RESIDENT_HOST, stack.cache.tierControl().residence(id), "still on the host");
            assertEquals(List.of(), stack.cache.checkInvariants());
            assertEquals(List.of(), stack.host.checkInvariants());
            lower.onOffer = null;
            assertEquals(1, stack.cache.tierControl().evictHost(1), "back in the host policy: evicted next time");
        }
    }

    /**
     * A twin block (sealed while another block of the same tokens held the index: never indexed)
     * whose last reference ends while it is demoted, then whose write-through offer throws: the
     * block is freed as the move ends, with its device slot and its id. Before (a review found
     * it), the move's exception left it on the device, referenced by nobody and in no policy, for
     * good: nothing would ever free it.
     */
    @Test
    void aTwinReleasedDuringADemotionThatThrowsIsFreed() {
        try (HostDiskStack stack = new HostDiskStack(dir, HookedLower::fetching, false)) {
            HookedLower lower = (HookedLower) stack.lower;
            lower.writesThrough = true;
            int first = stack.cachedBlock(); // indexed under the hash of tokens 0..15
            Sequence holder = stack.cache.openSequence(SequenceOptions.defaults());
            appendWritten(holder, 7, tokens(0, 16)); // the same tokens, sealed while the first is indexed
            int twin = holder.blockId(0);
            assertNotEquals(first, twin, "a block of its own");
            assertEquals(2, stack.cache.diagnostics().deviceUsedBlocks());
            lower.afterDemote = holder::close; // its last reference ends while it is in transit
            lower.onOffer = (h, l, identity, block) -> {
                throw new IllegalStateException("a store that broke its contract");
            };
            assertThrows(IllegalStateException.class, () -> stack.cache.tierControl().demoteBlock(twin));
            assertEquals(0, stack.cache.diagnostics().referenceCount(twin));
            assertFalse(stack.cache.diagnostics().isOnDevice(twin), "freed as the move ended"); // kept for good before
            assertEquals(1, stack.cache.diagnostics().deviceUsedBlocks(), "the first block alone");
            assertEquals(List.of(), stack.cache.checkInvariants());
            assertEquals(List.of(), stack.host.checkInvariants());
        }
    }

    /**
     * A write-through offer of a demoted block that throws ends the demotion as a copy that threw
     * does: the block stays on the device, a candidate again, and the host slot its copy landed in
     * is free. Before, the slot stayed reserved for good (the commit never took it) and the block
     * stayed out of the device policy.
     */
    @Test
    @SuppressWarnings("GuardedBy") // the host tier's count read with its lock held, which Error Prone cannot resolve here
    void aWriteThroughOfferThatThrowsLeavesTheBlockOnTheDevice() {
        try (HostDiskStack stack = new HostDiskStack(dir, HookedLower::fetching, false)) {
            HookedLower lower = (HookedLower) stack.lower;
            lower.writesThrough = true; // read by each demotion
            int id = stack.cachedBlock();
            lower.onOffer = (h, l, identity, block) -> {
                throw new IllegalStateException("a store that broke its contract");
            };
            assertThrows(IllegalStateException.class, () -> stack.cache.tierControl().demoteBlock(id));
            assertTrue(stack.cache.diagnostics().isOnDevice(id), "still on the device");
            assertEquals(LowerTier.RESIDENT_NOWHERE, stack.cache.tierControl().residence(id), "and nowhere below");
            stack.host.blocks.lock.lock();
            try {
                assertEquals(0, stack.host.blocks.reservedHostSlots, "the landed copy's host slot is free"); // 1 before
            } finally {
                stack.host.blocks.lock.unlock();
            }
            assertEquals(List.of(), stack.cache.checkInvariants());
            assertEquals(List.of(), stack.host.checkInvariants());
            List<long[]> offered = new ArrayList<>();
            lower.onOffer = (h, l, identity, block) -> offered.add(new long[] {h, l});
            assertTrue(stack.cache.tierControl().demoteBlock(id), "a candidate still: demoted"); // refused before
            assertEquals(LowerTier.RESIDENT_HOST, stack.cache.tierControl().residence(id));
            assertEquals(1, offered.size(), "offered as it was demoted");
            assertEquals(List.of(), stack.cache.checkInvariants());
            assertEquals(List.of(), stack.host.checkInvariants());
        }
    }
}

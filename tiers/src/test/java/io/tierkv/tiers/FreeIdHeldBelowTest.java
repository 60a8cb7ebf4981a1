package io.tierkv.tiers;

import static io.tierkv.core.testing.TestCaches.appendWritten;
import static io.tierkv.core.testing.TestCaches.tokens;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.core.cache.Sequence;
import io.tierkv.core.cache.SequenceOptions;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Where a block is held below the top tier is the cache's record ({@code BlockOwner.hostSlot},
 * {@code belowBits}), which the host tier writes; the cache's own invariants therefore see, in
 * the same hold of the lock, a tier that leaves a fact behind for an id it was told to forget.
 * Before, those facts lived in the host tier's arrays, where the cache could not check them.
 */
class FreeIdHeldBelowTest {

    @TempDir
    Path dir;

    @Test
    @SuppressWarnings("GuardedBy") // the hook runs in the cache's forget, under the manager lock; the clear takes it
    void aForgottenIdThatKeepsABelowBitIsAViolation() {
        try (HostDiskStack stack = new HostDiskStack(dir.resolve("kv"), HookedLower::new)) {
            int id = stack.cachedOnHost();
            assertEquals(List.of(), stack.cache.checkInvariants(), "on the host, held there");
            int stale;
            try (Sequence s = stack.cache.openSequence(SequenceOptions.defaults())) {
                appendWritten(s, 3, tokens(100, 8)); // half a block: OPEN, freed when the sequence closes
                stale = s.blockId(0);
                ((HookedLower) stack.lower).afterForget = forgotten -> stack.host.blocks.mark(forgotten, HostBlocks.ON_DISK);
            }
            List<String> bad = stack.cache.checkInvariants();
            assertEquals(1, bad.size(), bad.toString());
            assertTrue(bad.get(0).startsWith("free block " + stale + " still held below"), bad.get(0));
            stack.host.blocks.lock.lock();
            try {
                stack.host.blocks.clear(stale); // as the tier should have: the check passes again
            } finally {
                stack.host.blocks.lock.unlock();
            }
            assertEquals(List.of(), stack.cache.checkInvariants());
            assertTrue(id != stale);
        }
    }

    /**
     * The pin an id holds on its disk record is the cache's record too ({@code BlockOwner.diskPin}),
     * so its invariants see a tier that forgets to release one for an id it was told to forget:
     * the pin outlives its id. Before, the pins lived in the host tier's own table.
     */
    @Test
    @SuppressWarnings("GuardedBy") // the hook runs in the cache's forget, under the manager lock; the release takes it
    void aForgottenIdThatKeepsADiskPinIsAViolation() {
        try (HostDiskStack stack = new HostDiskStack(dir.resolve("kv"), HookedLower::new)) {
            int stale;
            try (Sequence s = stack.cache.openSequence(SequenceOptions.defaults())) {
                appendWritten(s, 3, tokens(100, 8)); // half a block: OPEN, freed when the sequence closes
                stale = s.blockId(0);
                ((HookedLower) stack.lower).afterForget = forgotten -> {
                    stack.host.blocks.setDiskPin(forgotten, 7); // a pin left behind
                    stack.host.blocks.clear(forgotten); // its bit cleared, the record not
                };
            }
            List<String> bad = stack.cache.checkInvariants();
            assertEquals(1, bad.size(), bad.toString());
            assertTrue(bad.get(0).startsWith("disk pins recorded 1 != DISK_PINNED ids 0"), bad.get(0));
            stack.host.blocks.lock.lock();
            try {
                stack.host.blocks.takeDiskPin(stale); // as the tier should have: the check passes again
            } finally {
                stack.host.blocks.lock.unlock();
            }
            assertEquals(List.of(), stack.cache.checkInvariants());
        }
    }
}

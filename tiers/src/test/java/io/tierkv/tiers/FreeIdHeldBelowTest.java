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
     * The pins ids hold on disk records are the cache's own ({@code DiskCopies}): the host tier
     * writes below bits but must leave DISK_PINNED as it is, and the cache's invariants see, in the
     * same hold of the lock, a tier that clears it from a referenced block whose record is pinned:
     * the pin recorded for the id, and the disk store's pin, then have no bit behind them.
     */
    @Test
    @SuppressWarnings("GuardedBy") // the writes take the manager lock, which Error Prone cannot resolve here
    void aTierThatClearsAPinnedBitIsAViolation() {
        try (HostDiskStack stack = new HostDiskStack(dir.resolve("kv"), host -> host);
                java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined()) {
            HostDiskStack.Spilled b = stack.spillCachedBlock(arena);
            try (Sequence s = stack.cache.openSequence(SequenceOptions.defaults())) {
                assertEquals(16, s.matchPrefix(tokens(0, 32)), "matched: referenced, its record pinned");
                assertEquals(1, stack.disk.pinning().pins(b.hashHi(), b.hashLo()));
                assertEquals(List.of(), stack.cache.checkInvariants());
                stack.host.blocks.lock.lock();
                try {
                    stack.host.blocks.setState(b.id(), HostBlocks.ON_DISK); // DISK_PINNED dropped by the tier
                } finally {
                    stack.host.blocks.lock.unlock();
                }
                List<String> bad = stack.cache.checkInvariants();
                assertTrue(bad.size() >= 1, bad.toString());
                assertTrue(bad.get(0).startsWith("block " + b.id() + " below bits 2 but disk pin"), bad.get(0));
                stack.host.blocks.lock.lock();
                try {
                    stack.host.blocks.mark(b.id(), io.tierkv.core.cache.BlockOwner.DISK_PINNED); // as it was
                } finally {
                    stack.host.blocks.lock.unlock();
                }
                assertEquals(List.of(), stack.cache.checkInvariants());
            }
        }
    }
}

package io.tierkv.tiers;

import static io.tierkv.core.testing.TestCaches.appendWritten;
import static io.tierkv.core.testing.TestCaches.blockImage;
import static io.tierkv.core.testing.TestCaches.tokens;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.core.cache.BlockLease;
import io.tierkv.core.cache.LowerTier;
import io.tierkv.core.cache.PagedKvCache;
import io.tierkv.core.cache.Sequence;
import io.tierkv.core.cache.SequenceOptions;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A promotion copies a block up with the cache lock released. Once the copy has landed, the host
 * copy is a clean second copy, which the host tier may drop for room before the promotion takes
 * the lock back. In that window the block has no device slot yet and no copy below, and a prefix
 * match that finds it must wait for the promotion rather than call it a miss (found by a review's
 * stress test: a match missed a block that a match right after found on the device).
 */
class PromotionWindowMatchTest {

    @TempDir
    Path dir;

    @Test
    void aMatchDuringALeasesPromotionWaitsForItAndHits() throws Exception {
        try (HostDiskStack stack = new HostDiskStack(dir.resolve("kv"), HookedLower::new)) {
            int id = cachedOnHost(stack);
            try (Sequence holder = stack.cache.openSequence(SequenceOptions.defaults())) {
                assertEquals(16, holder.matchPrefix(tokens(0, 32)), "the block is found on the host");
                WindowMatch match = new WindowMatch(stack, id);
                try (BlockLease lease = holder.lease(0, 16)) { // promotes it; the hook runs in the window
                    assertNull(((HookedLower) stack.lower).afterPromote, "the hook ran");
                }
                match.assertHitAndIntact();
            }
        }
    }

    @Test
    void aMatchDuringAReadAheadWaitsForItAndHits() throws Exception {
        try (HostDiskStack stack = new HostDiskStack(dir.resolve("kv"), HookedLower::new)) {
            int id = cachedOnHost(stack);
            WindowMatch match = new WindowMatch(stack, id);
            assertTrue(stack.cache.tierControl().prefetch(id), "read ahead to the device");
            assertNull(((HookedLower) stack.lower).afterPromote, "the hook ran");
            match.assertHitAndIntact();
        }
    }

    /** Writes one block (tokens 0..15, pattern 7), unreferenced and indexed, and demotes it to the host. */
    private static int cachedOnHost(HostDiskStack stack) {
        int id;
        try (Sequence first = stack.cache.openSequence(SequenceOptions.defaults())) {
            appendWritten(first, 7, tokens(0, 16));
            id = first.blockId(0);
        }
        assertTrue(stack.cache.tierControl().demoteBlock(id), "demoted to the host");
        return id;
    }

    /**
     * A match of the block's tokens made in the promotion's window: the hook drops the host's
     * copy, clean now, and starts the match on its own thread (it may wait for the very promotion
     * the hook is part of), returning once the match has ended or waits.
     */
    private static final class WindowMatch {
        private final HostDiskStack stack;
        private final int id;
        /** Tokens matched, -1 until the match ends. */
        private final AtomicInteger matched = new AtomicInteger(-1);
        /** The block id the match took. */
        private final AtomicInteger matchedId = new AtomicInteger(-1);
        private final AtomicReference<Throwable> failure = new AtomicReference<>();
        private volatile Thread matcher;

        WindowMatch(HostDiskStack stack, int id) {
            this.stack = stack;
            this.id = id;
            ((HookedLower) stack.lower).afterPromote = this::inWindow;
        }

        private void inWindow() {
            assertEquals(1, stack.host.evict(1), "the clean host copy is dropped");
            assertEquals(LowerTier.RESIDENT_NOWHERE, stack.host.residence(id), "no copy below in the window");
            Thread t = Thread.ofPlatform().name("matcher").start(() -> {
                try (Sequence probe = stack.cache.openSequence(SequenceOptions.defaults())) {
                    int n = probe.matchPrefix(tokens(0, 32));
                    matchedId.set(n > 0 ? probe.blockId(0) : -1);
                    matched.set(n);
                } catch (Throwable e) {
                    failure.set(e);
                    matched.set(-2);
                }
            });
            matcher = t;
            while (matched.get() == -1 && t.getState() != Thread.State.TIMED_WAITING
                    && t.getState() != Thread.State.WAITING) {
                Thread.onSpinWait();
            }
        }

        /** Waits for the match and checks it took the block, now on the device with its bytes. */
        void assertHitAndIntact() throws Exception {
            matcher.join(10_000);
            assertNull(failure.get(), "the match threw");
            assertEquals(16, matched.get(), "the block is matched once its promotion has committed");
            assertEquals(id, matchedId.get(), "the block matched is the one promoted");
            PagedKvCache cache = stack.cache;
            try (Sequence reader = cache.openSequence(SequenceOptions.defaults()); Arena arena = Arena.ofConfined()) {
                assertEquals(16, reader.matchPrefix(tokens(0, 32)));
                MemorySegment out = arena.allocate(Managers.LAYOUT.bytesPerBlock());
                MemorySegment expected = arena.allocate(Managers.LAYOUT.bytesPerBlock());
                reader.readBlock(0, out);
                assertEquals(-1, out.mismatch(blockImage(expected, Managers.LAYOUT, 7, 0)));
            }
            assertEquals(List.of(), cache.checkInvariants());
            assertEquals(List.of(), stack.host.checkInvariants());
        }
    }
}

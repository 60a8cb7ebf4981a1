package io.tierkv.tiers;

import static io.tierkv.core.testing.TestCaches.appendWritten;
import static io.tierkv.core.testing.TestCaches.blockImage;
import static io.tierkv.core.testing.TestCaches.tokens;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.core.cache.BlockLease;
import io.tierkv.core.cache.CacheStats;
import io.tierkv.core.cache.LowerTier;
import io.tierkv.core.cache.PagedKvCache;
import io.tierkv.core.cache.Sequence;
import io.tierkv.core.cache.SequenceOptions;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A promotion copies a block up with the cache lock released. Its source below is held from the
 * plan to the commit ({@link LowerTier#preparePromote}, {@link LowerTier#completePromote}): in the
 * window after the copy landed, the host copy cannot be dropped for room. (Before the source was
 * held, the host tier dropped it as a clean copy there, and a match missed a block that a match
 * right after found on the device: a review's stress test.) A copy below can still go in that
 * window (a pinned disk record that another reader finds damaged: {@link HookedLower#goneBelow}
 * says so here); a prefix match that finds the block then must wait for the promotion rather than
 * call it a miss. The wait must end as the move ends, however it ends, and take nothing into a
 * sequence closed meanwhile.
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
                WindowMatch match = new WindowMatch(stack, id, m -> { });
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
            WindowMatch match = new WindowMatch(stack, id, m -> { });
            assertTrue(stack.cache.tierControl().prefetch(id), "read ahead to the device");
            assertNull(((HookedLower) stack.lower).afterPromote, "the hook ran");
            match.assertHitAndIntact();
        }
    }

    /** A runtime's cancellation closes the matching sequence from another thread while it waits. */
    @Test
    void aSequenceClosedWhileItsMatchWaitsTakesNothing() throws Exception {
        try (HostDiskStack stack = new HostDiskStack(dir.resolve("kv"), HookedLower::new)) {
            int id = cachedOnHost(stack);
            try (Sequence holder = stack.cache.openSequence(SequenceOptions.defaults())) {
                assertEquals(16, holder.matchPrefix(tokens(0, 32)));
                WindowMatch match = new WindowMatch(stack, id, m -> m.probe.get().close());
                try (BlockLease lease = holder.lease(0, 16)) {
                    assertNull(((HookedLower) stack.lower).afterPromote, "the hook ran");
                }
                match.join();
                assertEquals("sequence closed while its match waited for a block in transit",
                        match.failure.get().getMessage());
                assertEquals(1, stack.cache.diagnostics().referenceCount(id), "the holder's reference only");
                assertEquals(List.of(), stack.cache.checkInvariants());
            }
        }
    }

    @Test
    void anInterruptedWaitIsOneMissAndKeepsTheInterrupt() throws Exception {
        try (HostDiskStack stack = new HostDiskStack(dir.resolve("kv"), HookedLower::new)) {
            int id = cachedOnHost(stack);
            try (Sequence holder = stack.cache.openSequence(SequenceOptions.defaults())) {
                assertEquals(16, holder.matchPrefix(tokens(0, 32)));
                CacheStats before = stack.cache.stats();
                WindowMatch match = new WindowMatch(stack, id, m -> m.thread.interrupt());
                try (BlockLease lease = holder.lease(0, 16)) {
                    assertNull(((HookedLower) stack.lower).afterPromote, "the hook ran");
                }
                match.join();
                assertNull(match.failure.get(), "the match threw");
                assertEquals(0, match.matched.get(), "an interrupted wait is a miss");
                assertTrue(match.interruptedAfter, "the thread is still interrupted");
                CacheStats after = stack.cache.stats();
                assertEquals(0, after.prefixHitBlocks() - before.prefixHitBlocks(), "hits");
                assertEquals(1, after.prefixMissBlocks() - before.prefixMissBlocks(), "misses");
                assertEquals(List.of(), stack.cache.checkInvariants());
            }
        }
    }

    /**
     * A promotion that ends by an exception (a disk read error, a device gone) wakes the match at
     * once and frees the slot it took. The exception is thrown here after the host tier's copy,
     * the one point a test can reach; the block's copy below has gone by then, so it has no copy
     * left and the match misses.
     */
    @Test
    void aPromotionEndingByAnExceptionEndsTheWaitAndFreesItsSlot() throws Exception {
        try (HostDiskStack stack = new HostDiskStack(dir.resolve("kv"), HookedLower::new)) {
            int id = cachedOnHost(stack);
            try (Sequence holder = stack.cache.openSequence(SequenceOptions.defaults())) {
                assertEquals(16, holder.matchPrefix(tokens(0, 32)));
                WindowMatch match = new WindowMatch(stack, id, m -> {
                    throw new UncheckedIOException(new IOException("injected read error"));
                });
                long start = System.nanoTime();
                UncheckedIOException e = assertThrows(UncheckedIOException.class, () -> holder.lease(0, 16));
                assertEquals("injected read error", e.getCause().getMessage());
                match.join();
                long waitedMillis = (System.nanoTime() - start) / 1_000_000;
                assertTrue(waitedMillis < 1_000, "the match waited " + waitedMillis
                        + " ms for a promotion that had ended (the promotion timeout is 5,000 ms)");
                assertNull(match.failure.get(), "the match threw");
                assertEquals(0, match.matched.get(), "no copy is left: a miss");
                assertEquals(List.of(), stack.cache.checkInvariants());
            }
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
     * A match of the block's tokens made in the promotion's window: the hook finds the host's
     * copy held, says it went, starts the match on its own thread (it waits for the very promotion the
     * hook is part of), checks that it waits, then runs {@code inWindow}.
     */
    private static final class WindowMatch {
        private final HostDiskStack stack;
        private final int id;
        /** Tokens matched, -1 until the match ends, -2 if it threw. */
        final AtomicInteger matched = new AtomicInteger(-1);
        /** The block id the match took. */
        private final AtomicInteger matchedId = new AtomicInteger(-1);
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        /** The matching sequence, set before it matches. */
        final AtomicReference<Sequence> probe = new AtomicReference<>();
        volatile Thread thread;
        /** Whether the match was waiting when the hook looked. */
        private volatile boolean waited;
        /** Whether the matching thread was interrupted after the match. */
        volatile boolean interruptedAfter;

        WindowMatch(HostDiskStack stack, int id, Consumer<WindowMatch> inWindow) {
            this.stack = stack;
            this.id = id;
            HookedLower lower = (HookedLower) stack.lower;
            lower.afterPromote = () -> {
                assertEquals(0, stack.host.evict(1), "the host copy is the promotion's source, held: nothing to drop");
                assertEquals(LowerTier.RESIDENT_HOST, stack.host.residence(id), "the source below in the window");
                lower.goneBelow = id; // and then it goes
                assertEquals(LowerTier.RESIDENT_NOWHERE, stack.lower.residence(id), "no copy below in the window");
                thread = Thread.ofPlatform().name("matcher").start(this::match);
                long end = System.nanoTime() + 5_000_000_000L;
                while (matched.get() == -1 && thread.getState() != Thread.State.TIMED_WAITING
                        && System.nanoTime() < end) {
                    Thread.onSpinWait();
                }
                waited = matched.get() == -1 && thread.getState() == Thread.State.TIMED_WAITING;
                inWindow.accept(this);
            };
        }

        private void match() {
            try (Sequence s = stack.cache.openSequence(SequenceOptions.defaults())) {
                probe.set(s);
                int n = s.matchPrefix(tokens(0, 32));
                matchedId.set(n > 0 ? s.blockId(0) : -1);
                matched.set(n);
            } catch (Throwable e) {
                failure.set(e);
                matched.set(-2);
            }
            interruptedAfter = Thread.currentThread().isInterrupted();
        }

        /** Waits for the match to end and checks that it waited in the window. */
        void join() throws InterruptedException {
            thread.join(10_000);
            ((HookedLower) stack.lower).goneBelow = -1;
            assertTrue(waited, "the match waited for the promotion in its window");
        }

        /** Waits for the match and checks it took the block, now on the device with its bytes. */
        void assertHitAndIntact() throws Exception {
            join();
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

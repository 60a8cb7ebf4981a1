package io.tierkv.tiers;

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
 * A promotion copies a block up with the cache lock released; its source below is held from the
 * plan to the commit ({@link LowerTier#preparePromote}, {@link LowerTier#completePromote}). A
 * host copy so held cannot go in the window after the copy landed (before it was held, the host
 * tier dropped it there as a clean copy, and a match missed a block that a match right after found
 * on the device: a review's stress test). A disk record can: another reader may find it damaged
 * and quarantine it, which breaks the block's pin. In that window the block has no device slot
 * yet and no copy below, and a prefix match that finds it must wait for the promotion rather than
 * call it a miss. The wait must end as the move ends, however it ends, and take nothing into a
 * sequence closed meanwhile. Each test promotes a referenced block held only on disk and, in the
 * window, damages its record and reads it as another reader would.
 */
class PromotionWindowMatchTest {

    @TempDir
    Path dir;

    /** A host copy held as a promotion's source stays in the window: nothing drops it, and a match there hits. */
    @Test
    void aHostSourceIsHeldInTheWindowAndAMatchThereHits() throws Exception {
        try (HostDiskStack stack = new HostDiskStack(dir.resolve("kv"), HookedLower::new)) {
            int id = stack.cachedOnHost();
            try (Sequence holder = stack.cache.openSequence(SequenceOptions.defaults())) {
                assertEquals(16, holder.matchPrefix(tokens(0, 32)), "the block is found on the host");
                AtomicInteger inWindow = new AtomicInteger(-1);
                ((HookedLower) stack.lower).afterPromote = () -> {
                    assertEquals(0, stack.cache.tierControl().evictHost(1), "the held source is not dropped for room");
                    assertEquals(LowerTier.RESIDENT_HOST, stack.cache.tierControl().residence(id), "the source below in the window");
                    Thread t = Thread.ofPlatform().start(() -> {
                        try (Sequence s = stack.cache.openSequence(SequenceOptions.defaults())) {
                            inWindow.set(s.matchPrefix(tokens(0, 32)));
                        }
                    });
                    try {
                        t.join(5_000);
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                };
                try (BlockLease lease = holder.lease(0, 16)) {
                    assertNull(((HookedLower) stack.lower).afterPromote, "the hook ran");
                }
                assertEquals(16, inWindow.get(), "a match in the window hits the held source at once");
                assertEquals(List.of(), stack.cache.checkInvariants());
                assertEquals(List.of(), stack.host.checkInvariants());
            }
        }
    }

    @Test
    void aMatchDuringALeasesPromotionWaitsForItAndHits() throws Exception {
        try (HostDiskStack stack = new HostDiskStack(dir.resolve("kv"), HookedLower::new); Arena arena = Arena.ofShared()) {
            HostDiskStack.Spilled b = stack.spillCachedBlock(arena);
            try (Sequence holder = heldOnDisk(stack, b)) {
                WindowMatch match = new WindowMatch(stack, b, arena, m -> { });
                try (BlockLease lease = holder.lease(0, 16)) { // promotes it; the hook runs in the window
                    assertNull(((HookedLower) stack.lower).afterPromote, "the hook ran");
                }
                match.assertHitAndIntact();
            }
        }
    }

    @Test
    void aMatchDuringAReadAheadWaitsForItAndHits() throws Exception {
        try (HostDiskStack stack = new HostDiskStack(dir.resolve("kv"), HookedLower::new); Arena arena = Arena.ofShared()) {
            HostDiskStack.Spilled b = stack.spillCachedBlock(arena);
            try (Sequence holder = heldOnDisk(stack, b)) {
                WindowMatch match = new WindowMatch(stack, b, arena, m -> { });
                assertTrue(stack.cache.tierControl().prefetch(b.id()), "read ahead to the device");
                assertNull(((HookedLower) stack.lower).afterPromote, "the hook ran");
                match.assertHitAndIntact();
            }
        }
    }

    /** A runtime's cancellation closes the matching sequence from another thread while it waits. */
    @Test
    void aSequenceClosedWhileItsMatchWaitsTakesNothing() throws Exception {
        try (HostDiskStack stack = new HostDiskStack(dir.resolve("kv"), HookedLower::new); Arena arena = Arena.ofShared()) {
            HostDiskStack.Spilled b = stack.spillCachedBlock(arena);
            try (Sequence holder = heldOnDisk(stack, b)) {
                WindowMatch match = new WindowMatch(stack, b, arena, m -> m.probe.get().close());
                try (BlockLease lease = holder.lease(0, 16)) {
                    assertNull(((HookedLower) stack.lower).afterPromote, "the hook ran");
                }
                match.join();
                assertEquals("sequence closed while its match waited for a block in transit",
                        match.failure.get().getMessage());
                assertEquals(1, stack.cache.diagnostics().referenceCount(b.id()), "the holder's reference only");
                assertEquals(List.of(), stack.cache.checkInvariants());
            }
        }
    }

    @Test
    void anInterruptedWaitIsOneMissAndKeepsTheInterrupt() throws Exception {
        try (HostDiskStack stack = new HostDiskStack(dir.resolve("kv"), HookedLower::new); Arena arena = Arena.ofShared()) {
            HostDiskStack.Spilled b = stack.spillCachedBlock(arena);
            try (Sequence holder = heldOnDisk(stack, b)) {
                CacheStats before = stack.cache.stats();
                WindowMatch match = new WindowMatch(stack, b, arena, m -> m.thread.interrupt());
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
     * once and frees the slot it took. The exception is thrown here after the copy, the one point
     * a test can reach; the block's record was found damaged by then, so it has no copy left and
     * the match misses.
     */
    @Test
    void aPromotionEndingByAnExceptionEndsTheWaitAndFreesItsSlot() throws Exception {
        try (HostDiskStack stack = new HostDiskStack(dir.resolve("kv"), HookedLower::new); Arena arena = Arena.ofShared()) {
            HostDiskStack.Spilled b = stack.spillCachedBlock(arena);
            try (Sequence holder = heldOnDisk(stack, b)) {
                WindowMatch match = new WindowMatch(stack, b, arena, m -> {
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

    /** A sequence holding the spilled block, found on disk by a match: referenced, its record pinned. */
    private static Sequence heldOnDisk(HostDiskStack stack, HostDiskStack.Spilled b) {
        Sequence holder = stack.cache.openSequence(SequenceOptions.defaults());
        assertEquals(16, holder.matchPrefix(tokens(0, 32)), "the block is found on disk");
        assertEquals(b.id(), holder.blockId(0));
        assertEquals(LowerTier.RESIDENT_DISK, stack.cache.tierControl().residence(b.id()), "held on disk only");
        return holder;
    }

    /**
     * A match of the block's tokens made in the promotion's window: the hook damages the block's
     * record and reads it as another reader would (the record is quarantined, the block's pin
     * broken), starts the match on its own thread (it waits for the very promotion the hook is
     * part of), checks that it waits, then runs {@code inWindow}.
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

        WindowMatch(HostDiskStack stack, HostDiskStack.Spilled b, Arena arena, Consumer<WindowMatch> inWindow) {
            this.stack = stack;
            this.id = b.id();
            MemorySegment read = arena.allocate(Managers.LAYOUT.bytesPerBlock());
            ((HookedLower) stack.lower).afterPromote = () -> {
                try {
                    RecordDamage.damage(stack.dir, RecordDamage.FIRST_PAYLOAD);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
                assertTrue(stack.disk.load(b.hashHi(), b.hashLo(), b.identity(), read) < 0,
                        "another reader finds the record damaged");
                assertEquals(LowerTier.RESIDENT_NOWHERE, stack.cache.tierControl().residence(id), "no copy below in the window");
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

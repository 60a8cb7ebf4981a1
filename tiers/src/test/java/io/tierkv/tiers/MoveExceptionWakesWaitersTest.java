package io.tierkv.tiers;

import static io.tierkv.core.testing.TestCaches.appendWritten;
import static io.tierkv.core.testing.TestCaches.blockImage;
import static io.tierkv.core.testing.TestCaches.tokens;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.core.cache.BlockLease;
import io.tierkv.core.cache.Sequence;
import io.tierkv.core.cache.SequenceOptions;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A lease of a block that a move holds waits for the move to end (the cache's change signal). A
 * move that ends by an exception (a disk read error, a device gone) must wake it too, not leave it
 * asleep for the promotion timeout (5 s). The exception is thrown here after the copy, the one
 * point a test can reach; the block keeps the copy it had, so the lease then succeeds.
 */
class MoveExceptionWakesWaitersTest {

    private static final long PROMPT_MILLIS = 1_000;

    @TempDir
    Path dir;

    @Test
    void aDemotionEndingByAnExceptionWakesALeaseWaitingForIt() throws Exception {
        try (HostDiskStack stack = new HostDiskStack(dir.resolve("kv"), HookedLower::new)) {
            try (Sequence holder = stack.cache.openSequence(SequenceOptions.defaults())) {
                appendWritten(holder, 7, tokens(0, 16));
                appendWritten(holder, 7, 16); // the block is sealed and no longer the tail
                int id = holder.blockId(0);
                WaitingLease waiting = new WaitingLease(holder);
                ((HookedLower) stack.lower).afterDemote = waiting::startThenFail;
                UncheckedIOException e = assertThrows(UncheckedIOException.class,
                        () -> stack.cache.tierControl().demoteBlock(id));
                assertEquals("injected", e.getCause().getMessage());
                waiting.assertPromptAndIntact();
                assertEquals(List.of(), stack.cache.checkInvariants());
            }
        }
    }

    @Test
    void aLoadEndingByAnExceptionWakesALeaseWaitingForIt() throws Exception {
        try (HostDiskStack stack = new HostDiskStack(dir.resolve("kv"), HookedLower::new); Arena arena = Arena.ofConfined()) {
            HostDiskStack.Spilled spilled = stack.spillCachedBlock(arena);
            try (Sequence holder = stack.cache.openSequence(SequenceOptions.defaults())) {
                assertEquals(16, holder.matchPrefix(tokens(0, 32)), "the block is found on disk");
                assertEquals(spilled.id(), holder.blockId(0));
                WaitingLease waiting = new WaitingLease(holder);
                ((HookedLower) stack.lower).afterLoad = waiting::startThenFail;
                UncheckedIOException e = assertThrows(UncheckedIOException.class,
                        () -> stack.cache.tierControl().loadBelow(spilled.id()));
                assertEquals("injected", e.getCause().getMessage());
                waiting.assertPromptAndIntact();
                assertEquals(List.of(), stack.cache.checkInvariants());
            }
        }
    }

    /**
     * A promotion whose plan throws (a lower tier that breaks its contract: the host tier's plan
     * ends landed late copies, whose events it asks, and must not throw) ends its transit and gives
     * its slot back, so the next lease promotes the block at once. Before, the plan ran outside the move's {@code finally}: the block stayed
     * in transit for good, and the next lease waited out the promotion timeout.
     */
    @Test
    void aPromotionWhosePlanThrowsEndsItsTransit() throws Exception {
        try (HostDiskStack stack = new HostDiskStack(dir.resolve("kv"), HookedLower::new); Arena arena = Arena.ofConfined()) {
            int id = stack.cachedOnHost();
            try (Sequence holder = stack.cache.openSequence(SequenceOptions.defaults())) {
                assertEquals(16, holder.matchPrefix(tokens(0, 32)), "the block is found on the host");
                ((HookedLower) stack.lower).beforePrepare = () -> {
                    throw new UncheckedIOException(new IOException("injected"));
                };
                UncheckedIOException e = assertThrows(UncheckedIOException.class, () -> holder.lease(0, 16));
                assertEquals("injected", e.getCause().getMessage());
                long start = System.nanoTime();
                try (BlockLease lease = holder.lease(0, 16)) {
                    MemorySegment expected = blockImage(arena.allocate(Managers.LAYOUT.bytesPerBlock()), Managers.LAYOUT, 7, 0);
                    assertEquals(-1, lease.block(0).mismatch(expected), "the block's bytes");
                }
                long tookMillis = (System.nanoTime() - start) / 1_000_000;
                assertTrue(tookMillis < PROMPT_MILLIS, "the next lease took " + tookMillis + " ms");
                assertEquals(List.of(), stack.cache.checkInvariants());
                assertEquals(List.of(), stack.host.checkInvariants());
            }
        }
    }

    /** A lease of the holder's first block, taken on another thread while a move holds the block. */
    private static final class WaitingLease {
        private final Sequence holder;
        private final AtomicReference<Throwable> failure = new AtomicReference<>();
        private final AtomicReference<MemorySegment> bytes = new AtomicReference<>();
        private volatile Thread thread;
        private volatile boolean waited;
        private volatile long startNanos;
        private volatile long tookMillis = -1;

        WaitingLease(Sequence holder) {
            this.holder = holder;
        }

        /** Runs in the move: starts the lease, checks that it waits, then fails the move. */
        void startThenFail() {
            startNanos = System.nanoTime();
            thread = Thread.ofPlatform().name("leaser").start(this::lease);
            long end = System.nanoTime() + 5_000_000_000L;
            while (tookMillis < 0 && thread.getState() != Thread.State.TIMED_WAITING && System.nanoTime() < end) {
                Thread.onSpinWait();
            }
            waited = tookMillis < 0 && thread.getState() == Thread.State.TIMED_WAITING;
            throw new UncheckedIOException(new IOException("injected"));
        }

        private void lease() {
            try (BlockLease lease = holder.lease(0, 16)) {
                MemorySegment copy = Arena.ofAuto().allocate(Managers.LAYOUT.bytesPerBlock());
                copy.copyFrom(lease.block(0));
                bytes.set(copy);
            } catch (Throwable e) {
                failure.set(e);
            }
            tookMillis = (System.nanoTime() - startNanos) / 1_000_000;
        }

        void assertPromptAndIntact() throws InterruptedException {
            thread.join(10_000);
            assertTrue(waited, "the lease waited for the move");
            assertNull(failure.get(), "the lease failed");
            assertTrue(tookMillis < PROMPT_MILLIS, "the lease waited " + tookMillis
                    + " ms for a move that had ended by an exception (the promotion timeout is 5,000 ms)");
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment expected = blockImage(arena.allocate(Managers.LAYOUT.bytesPerBlock()), Managers.LAYOUT, 7, 0);
                assertEquals(-1, bytes.get().mismatch(expected), "the block's bytes");
            }
        }
    }
}

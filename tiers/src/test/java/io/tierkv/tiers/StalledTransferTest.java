package io.tierkv.tiers;

import static io.tierkv.core.testing.TestCaches.appendWritten;
import static io.tierkv.core.testing.TestCaches.firstMismatch;
import static io.tierkv.core.testing.TestCaches.tokens;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.core.cache.PagedKvCache;
import io.tierkv.core.cache.Sequence;
import io.tierkv.core.cache.SequenceOptions;
import io.tierkv.core.error.CapacityExhaustedException;
import io.tierkv.core.error.TransferTimeoutException;
import io.tierkv.core.testing.CacheInvariants;
import io.tierkv.natives.EmulatedDevice;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Transfers that do not complete: the emulated device's copy engine is stalled on purpose. */
class StalledTransferTest {

    @RegisterExtension
    final CacheInvariants invariants = new CacheInvariants();

    @Test
    void case01_noLeakAfterAbortDuringAnInFlightPromotion() throws Exception {
        long bb = Managers.LAYOUT.bytesPerBlock();
        EmulatedDevice device = invariants.track(new EmulatedDevice(8 * bb + (1 << 20)), List::of);
        KvBlockManager kv = KvBlockManager.builder(Managers.LAYOUT).device(device, 8 * bb).host(8 * bb)
                .recentDeviceBlocks(0).movers(0).admissionTimeoutNanos(2_000_000)
                .promotionTimeoutNanos(300_000_000).build();
        invariants.track(kv, kv::checkInvariants);
        PagedKvCache cache = kv.cache();
        Sequence a = kv.openSequence(SequenceOptions.defaults());
        appendWritten(a, 1, tokens(0, 64));
        int[] ids = new int[4];
        for (int i = 0; i < 4; i++) {
            ids[i] = a.blockId(i);
            assertTrue(cache.tierControl().demoteBlock(ids[i]));
        }
        assertEquals(0, cache.diagnostics().deviceUsedBlocks(), "A's 4 blocks are on the host");

        device.stallCopies(); // the promotions' completions will not arrive
        ConcurrentLinkedQueue<Throwable> outcomes = new ConcurrentLinkedQueue<>();
        List<Thread> readers = new ArrayList<>();
        for (int id : ids) {
            readers.add(Thread.ofPlatform().start(() -> {
                try {
                    cache.acquireLease(id);
                    outcomes.add(new AssertionError("lease granted while the copy was stalled"));
                } catch (Throwable t) {
                    outcomes.add(t);
                }
            }));
        }
        while (cache.diagnostics().deviceUsedBlocks() < 4) {
            Thread.onSpinWait();
        }
        a.close(); // abort A while its promotions are in flight

        Sequence c = kv.openSequence(SequenceOptions.defaults());
        int appended = 0;
        try {
            for (int t = 0; t < 8 * 16; t++) {
                c.appendToken(9000 + t);
                appended++;
            }
        } catch (CapacityExhaustedException expected) {
            // back-pressure: the 4 destination slots are not handed to C
        }
        assertEquals(4 * 16, appended, "C got exactly the 4 slots nobody was copying into");
        assertEquals(List.of(), kv.checkInvariants(), "no two blocks share a slot while copies hang");

        for (Thread r : readers) {
            r.join(10_000);
        }
        assertEquals(4, outcomes.size());
        for (Throwable t : outcomes) {
            assertInstanceOf(TransferTimeoutException.class, t);
        }
        for (int id : ids) {
            assertEquals(0, cache.diagnostics().referenceCount(id), "A owns nothing");
        }
        c.close();

        device.resumeCopies(); // the late completions arrive now
        long deadline = System.nanoTime() + 5_000_000_000L;
        assertEquals(4, cache.diagnostics().deviceUsedBlocks(), "C's unsealed blocks were freed; 4 slots wait for late copies");
        while (cache.diagnostics().availableBlocks() < 8 && System.nanoTime() < deadline) {
            kv.runMoverCycle(); // hands back slots whose late copies have landed
        }
        assertEquals(4, kv.stats().cache().failedPromotions());
        assertEquals(8, cache.diagnostics().availableBlocks(), "device free count returns to 8");
        for (int i = 0; i < 3; i++) {
            kv.runMoverCycle(); // late signals handled once: no exception, no double free, counts unchanged
        }
        assertEquals(8, cache.diagnostics().availableBlocks());
        assertEquals(0, kv.stats().moverErrors());
        try (Sequence again = kv.openSequence(SequenceOptions.defaults())) {
            assertEquals(64, again.matchPrefix(tokens(0, 64)), "A's blocks are still cached below");
            assertEquals(-1, firstMismatch(again, 1, 0, 64));
        }
    }

    @Test
    void aBlockFreedWhileItsPromotionIsLateLeavesItsReusedIdAlone() {
        long bb = Managers.LAYOUT.bytesPerBlock();
        EmulatedDevice device = invariants.track(new EmulatedDevice(8 * bb + (1 << 20)), List::of);
        KvBlockManager kv = KvBlockManager.builder(Managers.LAYOUT).device(device, 8 * bb).host(8 * bb)
                .recentDeviceBlocks(0).movers(0).admissionTimeoutNanos(2_000_000)
                .promotionTimeoutNanos(50_000_000).build();
        invariants.track(kv, kv::checkInvariants);
        PagedKvCache cache = kv.cache();
        try (Sequence x = kv.openSequence(SequenceOptions.defaults())) {
            appendWritten(x, 1, tokens(0, 16)); // X holds the hash in the index, cached on the device
        }
        Sequence a = kv.openSequence(SequenceOptions.defaults());
        appendWritten(a, 1, tokens(0, 16)); // the same block again: A keeps its own id, unindexed
        int id = a.blockId(0);
        long[] hash = cache.diagnostics().blockHash(id);
        assertTrue(cache.diagnostics().indexedBlock(hash[0], hash[1]) != id, "A's block is its own, unindexed");
        assertTrue(cache.tierControl().demoteBlock(id));
        Sequence b;
        device.stallCopies();
        try {
            assertThrows(TransferTimeoutException.class, () -> cache.acquireLease(id), "the promotion is late");
            a.close(); // A's block, referenced by A alone and unindexed, is freed while its copy is still late
            assertEquals(1, kv.stats().cache().liveBlocks(), "only X is left");
            b = kv.openSequence(SequenceOptions.defaults());
            appendWritten(b, 2, tokens(500, 16));
            assertEquals(id, b.blockId(0), "the freed id is handed to B's block, on the device");
        } finally {
            device.resumeCopies(); // A's late copy lands now
        }
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (cache.diagnostics().availableBlocks() < 8 && System.nanoTime() < deadline) {
            kv.runMoverCycle(); // hands back the device slot of the late copy
        }
        assertEquals(8, cache.diagnostics().availableBlocks(), "the late copy's device slot came back");
        assertEquals(0, kv.stats().moverErrors(), "the late copy did not touch B's block");
        assertEquals(0, kv.stats().hostUsedBlocks(), "A's host slot was freed with its late copy");
        assertTrue(cache.tierControl().demoteBlock(id), "B's block goes to the host");
        assertEquals(1, kv.stats().hostUsedBlocks());
        assertEquals(-1, firstMismatch(b, 2, 0, 16), "B reads its own bytes");
        b.close();
    }

    /**
     * A manager closed while a promotion's copy is late waits for the copy, then ends the
     * promotion's read of its host copy, as a late copy that lands before close does (a lease
     * still waiting for that read then sees it end). Before, close dropped the late copy and left
     * the host copy marked as read.
     */
    @Test
    void closeEndsTheHostReadOfALatePromotion() throws Exception {
        EmulatedDevice device = stallableDevice();
        KvBlockManager kv = lateOnTheHost(device, 50_000_000);
        int id = LATE_BLOCK;
        HostTier host = Managers.hostOf(kv);
        Thread resume = resumeAfter(device, 300); // close is waiting for the late copy by then
        kv.close();
        resume.join();
        host.blocks.lock.lock();
        try {
            assertFalse(host.blocks.is(id, HostBlocks.MOVING), "the host copy is read no more");
        } finally {
            host.blocks.lock.unlock();
        }
    }

    /**
     * A lease that waits for a late promotion's read of its block's host copy while the manager
     * closes ends with "closed" and starts no copy (found by a review: once close had ended the
     * late move, the waiting lease took the source and copied into a device tier being freed;
     * a lease was granted after close, or failed inside the torn-down device tier).
     */
    @Test
    void aLeaseWaitingAtCloseStartsNoCopy() throws Exception {
        EmulatedDevice device = stallableDevice();
        KvBlockManager kv = lateOnTheHost(device, 3_000_000_000L); // the second lease must not time out first
        PagedKvCache cache = kv.cache();
        java.util.concurrent.atomic.AtomicReference<Object> got = new java.util.concurrent.atomic.AtomicReference<>();
        Thread lease = Thread.ofPlatform().start(() -> {
            try {
                got.set(cache.acquireLease(LATE_BLOCK));
            } catch (Throwable t) {
                got.set(t);
            }
        });
        long end = System.nanoTime() + 5_000_000_000L;
        while (!stackOf(lease).contains("Promote.prepare") && System.nanoTime() < end) {
            Thread.sleep(1);
        }
        assertTrue(stackOf(lease).contains("Promote.prepare"), "the lease waits for the late copy's read");
        Thread resume = resumeAfter(device, 300); // close is waiting for the late copy by then
        kv.close();
        resume.join();
        lease.join(10_000);
        assertInstanceOf(IllegalStateException.class, got.get(), "the waiting lease, once the manager closed");
        assertEquals("cache is closed", ((Throwable) got.get()).getMessage());
    }

    /** The id of the one block {@link #lateOnTheHost} writes: the first id a fresh manager hands out. */
    private static final int LATE_BLOCK = 0;

    private EmulatedDevice stallableDevice() {
        long bb = Managers.LAYOUT.bytesPerBlock();
        return invariants.track(new EmulatedDevice(8 * bb + (1 << 20)), List::of);
    }

    /**
     * A manager whose one block ({@link #LATE_BLOCK}) is cached on the host and whose promotion
     * timed out with its copy stalled: the copy is late, and the host copy is read until it lands.
     */
    private static KvBlockManager lateOnTheHost(EmulatedDevice device, long promotionTimeoutNanos) {
        long bb = Managers.LAYOUT.bytesPerBlock();
        KvBlockManager kv = KvBlockManager.builder(Managers.LAYOUT).device(device, 8 * bb).host(8 * bb)
                .recentDeviceBlocks(0).movers(0).promotionTimeoutNanos(promotionTimeoutNanos).build();
        PagedKvCache cache = kv.cache();
        try (Sequence s = kv.openSequence(SequenceOptions.defaults())) {
            appendWritten(s, 1, tokens(0, 16));
            assertEquals(LATE_BLOCK, s.blockId(0));
        }
        assertTrue(cache.tierControl().demoteBlock(LATE_BLOCK));
        device.stallCopies();
        assertThrows(TransferTimeoutException.class, () -> cache.acquireLease(LATE_BLOCK), "the promotion is late");
        return kv;
    }

    /** {@return a thread that resumes the device's copies after {@code millis}} */
    private static Thread resumeAfter(EmulatedDevice device, long millis) {
        return Thread.ofPlatform().start(() -> {
            try {
                Thread.sleep(millis);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            device.resumeCopies();
        });
    }

    private static String stackOf(Thread t) {
        StringBuilder sb = new StringBuilder();
        for (StackTraceElement e : t.getStackTrace()) {
            sb.append(e).append('\n');
        }
        return sb.toString();
    }
}

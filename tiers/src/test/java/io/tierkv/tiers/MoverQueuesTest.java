package io.tierkv.tiers;

import static io.tierkv.core.testing.TestCaches.appendWritten;
import static io.tierkv.core.testing.TestCaches.firstMismatch;
import static io.tierkv.core.testing.TestCaches.tokens;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.core.cache.PagedKvCache;
import io.tierkv.core.cache.Sequence;
import io.tierkv.core.cache.SequenceOptions;
import io.tierkv.core.testing.CacheInvariants;
import io.tierkv.natives.EmulatedDevice;
import io.tierkv.tiers.disk.DiskOptions;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** The mover's bounded queue per path: rejections counted, every path drained, shutdown cancels and leaks nothing. */
class MoverQueuesTest {

    @RegisterExtension
    final CacheInvariants invariants = new CacheInvariants();

    @TempDir
    Path dir;

    private DiskOptions disk() {
        return DiskOptions.at(dir.resolve("kv")).withSegmentBytes(64 << 10).withBudgetBytes(1 << 20);
    }

    private static TierStats.QueueStats queue(KvBlockManager kv, MovePath path) {
        return kv.stats().queues().get(path);
    }

    /** Nothing queued is lost: every accepted entry was moved, skipped, cancelled or still waits. */
    private static void assertAccounted(TierStats.QueueStats q, MovePath path) {
        assertEquals(q.queued(), q.moved() + q.skipped() + q.cancelled() + q.depth(), path + " " + q);
    }

    @Test
    void aQueueIsABoundedRingThatCountsWhatHappensToItsEntries() {
        MoveQueue q = new MoveQueue(2);
        assertTrue(q.offer(7));
        assertTrue(q.offer(8));
        assertFalse(q.offer(9), "full");
        assertEquals(new TierStats.QueueStats(2, 2, 2, 1, 0, 0, 0), q.stats());
        assertEquals(7, q.poll());
        q.done(true);
        assertTrue(q.offer(10), "the ring wraps");
        assertEquals(8, q.poll());
        q.done(false);
        q.cancel();
        assertEquals(-1, q.poll());
        assertEquals(new TierStats.QueueStats(2, 0, 3, 1, 1, 1, 1), q.stats());
    }

    @Test
    void aFullQueueRejectsReadAheadAndCountsItAndAChangedBlockIsSkipped() {
        KvBlockManager kv = Managers.build(invariants, KvBlockManager.builder(Managers.LAYOUT).moveQueueCapacity(2),
                4, 16, null);
        Sequence s = kv.openSequence(SequenceOptions.defaults());
        appendWritten(s, 1, tokens(0, 16 * 8)); // blocks 0..3 demoted to the host, 4..7 on the device
        for (int i = 0; i < 4; i++) {
            assertFalse(kv.cache().diagnostics().isOnDevice(s.blockId(i)));
        }
        kv.stream(s, 0, 6).close(); // asks read-ahead of blocks 0..5: 0..3 are below
        assertEquals(new TierStats.QueueStats(2, 2, 2, 2, 0, 0, 0), queue(kv, MovePath.HOST_TO_DEVICE));
        kv.cache().acquireLease(s.blockId(0)); // block 0 comes up on its own before the mover runs
        kv.cache().releaseLease(s.blockId(0));
        kv.runMoverCycle();
        TierStats.QueueStats q = queue(kv, MovePath.HOST_TO_DEVICE);
        assertEquals(1, q.moved(), "block 1 promoted by the mover");
        assertEquals(1, q.skipped(), "block 0 was already up: skipped, not moved twice");
        assertEquals(0, q.depth());
        assertEquals(-1, firstMismatch(s, 1, 0, 16 * 8));
        s.close();
    }

    @Test
    void aQueuedDemotionWhoseBlockChangedIsSkippedNeverMovedTwiceNorLost() {
        KvBlockManager kv = Managers.build(invariants, 4, 8, null);
        PagedKvCache cache = kv.cache();
        Sequence s = kv.openSequence(SequenceOptions.defaults());
        appendWritten(s, 5, tokens(0, 32));
        int[] queued = new int[2];
        int[] n = {0};
        assertEquals(2, cache.tierControl().queueCandidates(5, id -> {
            queued[n[0]++] = id;
            return true;
        }));
        assertEquals(2, cache.diagnostics().availableBlocks(), "queued blocks are no longer candidates: 2 free slots only");
        assertFalse(cache.tierControl().demoteBlock(queued[0]), "the allocation path cannot take a queued block");
        cache.acquireLease(queued[0]);
        assertFalse(cache.tierControl().demoteQueued(queued[0]), "leased since it was queued: skipped");
        assertTrue(cache.diagnostics().isOnDevice(queued[0]));
        assertTrue(cache.tierControl().demoteQueued(queued[1]));
        assertFalse(cache.tierControl().demoteQueued(queued[1]), "a second entry for the same block moves nothing");
        cache.releaseLease(queued[0]);
        assertTrue(cache.tierControl().demoteBlock(queued[0]), "a candidate again once released: not lost to the queue");
        assertEquals(-1, firstMismatch(s, 5, 0, 32));
        s.close();
    }

    @Test
    void everyPathsQueueIsDrainedAndEveryByteSurvives() {
        KvBlockManager kv = Managers.build(invariants, 4, 4, disk());
        Sequence s = kv.openSequence(SequenceOptions.defaults());
        appendWritten(s, 2, tokens(0, 16 * 8)); // device 4, host 4 (inline demotions)
        kv.runMoverCycle(); // device full: EMERGENCY queues every candidate down; the host spills above its mark
        assertEquals(0, kv.cache().diagnostics().deviceUsedBlocks());
        assertEquals(4, queue(kv, MovePath.DEVICE_TO_HOST).moved());
        assertTrue(queue(kv, MovePath.HOST_TO_DISK).moved() >= 1, "spilled under the host's PRESSURE mark");
        assertTrue(kv.stats().hostUsedBlocks() <= 3);
        kv.stream(s, 0, 8).close(); // read-ahead of all 8: some only on disk, some on the host
        int fromDisk = (int) queue(kv, MovePath.DISK_TO_HOST).queued();
        assertTrue(fromDisk >= 1 && queue(kv, MovePath.HOST_TO_DEVICE).queued() >= 1, kv.stats().queues().toString());
        kv.runMoverCycle();
        TierStats st = kv.stats();
        for (MovePath p : MovePath.values()) {
            TierStats.QueueStats q = st.queues().get(p);
            assertEquals(0, q.depth(), p + " drained");
            assertEquals(0, q.rejected(), p.toString());
            assertTrue(q.moved() >= 1, p + " moved " + q);
            assertAccounted(q, p);
        }
        assertEquals(fromDisk, st.queues().get(MovePath.DISK_TO_HOST).moved());
        assertEquals(fromDisk, st.diskToHost().blocks());
        assertEquals(fromDisk * Managers.LAYOUT.bytesPerBlock(), st.diskToHost().bytes());
        assertEquals(-1, firstMismatch(s, 2, 0, 16 * 8));
        s.close();
    }

    @Test
    void shutdownCancelsWhatIsStillQueuedAndFreesEverythingOnce() {
        long bb = Managers.LAYOUT.bytesPerBlock();
        EmulatedDevice device = invariants.track(new EmulatedDevice(4 * bb + (1 << 20)), List::of);
        KvBlockManager kv = KvBlockManager.builder(Managers.LAYOUT).device(device, 4 * bb).host(4 * bb)
                .disk(disk()).recentDeviceBlocks(0).movers(0).build();
        Sequence s = kv.openSequence(SequenceOptions.defaults());
        appendWritten(s, 4, tokens(0, 16 * 12)); // 4 on the device, 4 on the host, 4 spilled to disk
        kv.stream(s, 0, 12).close(); // 8 read-aheads wait: nobody drains them before close
        TierStats before = kv.stats();
        long waiting = before.queues().get(MovePath.HOST_TO_DEVICE).depth()
                + before.queues().get(MovePath.DISK_TO_HOST).depth();
        assertEquals(8, waiting, before.queues().toString());
        kv.close();
        TierStats after = kv.stats();
        for (MovePath p : MovePath.values()) {
            TierStats.QueueStats q = after.queues().get(p);
            assertEquals(q.queued(), q.cancelled(), p + " " + q);
            assertEquals(0, q.depth());
        }
        assertEquals(0, device.usedBytes(), "device memory freed exactly once");
    }

    @Test
    void shutdownWithQueuedMovesLeaksNothing() {
        long bb = Managers.LAYOUT.bytesPerBlock();
        EmulatedDevice device = invariants.track(new EmulatedDevice(4 * bb + (1 << 20)), List::of);
        KvBlockManager kv = KvBlockManager.builder(Managers.LAYOUT).device(device, 4 * bb).host(4 * bb)
                .disk(disk()).recentDeviceBlocks(0).movers(1).admissionTimeoutNanos(50_000_000).build();
        Sequence s = kv.openSequence(SequenceOptions.defaults());
        appendWritten(s, 3, tokens(0, 16 * 12));
        for (int round = 0; round < 20; round++) {
            kv.stream(s, 0, 12).close(); // read-ahead on every path below while the mover runs
        }
        assertEquals(List.of(), kv.checkInvariants());
        kv.close();
        TierStats st = kv.stats();
        long queued = 0;
        for (MovePath p : MovePath.values()) {
            TierStats.QueueStats q = st.queues().get(p);
            assertEquals(0, q.depth(), p + " finished or cancelled");
            assertAccounted(q, p);
            queued += q.queued();
        }
        assertTrue(queued > 0, "moves were queued");
        assertEquals(0, device.usedBytes(), "device memory freed exactly once");
        kv.close();
        assertEquals(0, device.usedBytes());
    }
}

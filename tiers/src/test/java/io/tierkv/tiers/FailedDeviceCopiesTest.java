package io.tierkv.tiers;

import static io.tierkv.core.testing.TestCaches.blockImage;
import static io.tierkv.core.testing.TestCaches.tokens;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.core.cache.Sequence;
import io.tierkv.core.cache.SequenceOptions;
import io.tierkv.core.error.TransferTimeoutException;
import io.tierkv.natives.EmulatedDevice;
import io.tierkv.natives.GpuRuntime;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;

/**
 * A device copy that throws before it is issued (a device gone, a driver error) leaves the move's
 * source as it was and takes nothing for good.
 * <ul>
 * <li>A promotion from the host: the host copy is the block's again, back in the host policy, and
 * the next lease promotes it. Before the source was released in the cache's commit ({@link
 * io.tierkv.core.cache.LowerTier#completePromote}), the host tier released it only after a copy
 * that returned, so an exception left the host slot marked as read for good: out of the host
 * policy, and the next promotion of the block waited for it forever.</li>
 * <li>A demotion: the host slot it reserved is free again, and the block stays on the device, a
 * candidate to leave it as before. Before, each such failure kept a host slot for good, until no
 * demotion found one; and, until 2026-12-05, it left the block out of the device policy until its
 * state next changed (for a block nobody references, maybe never).</li>
 * </ul>
 */
class FailedDeviceCopiesTest {

    private static final long BB = Managers.LAYOUT.bytesPerBlock();
    /** Host blocks of every manager here. */
    private static final int HOST_BLOCKS = 4;

    @Test
    void aPromotionWhoseCopyThrowsLeavesItsHostSourceAsItWas() throws Exception {
        FailingCopiesRuntime runtime = new FailingCopiesRuntime(device());
        try (KvBlockManager kv = manager(runtime, 5_000_000_000L);
             Arena arena = Arena.ofShared(); // read by the timed block's thread too
             Sequence s = kv.openSequence(SequenceOptions.defaults())) {
            MemorySegment image = blockImage(arena.allocate(BB), Managers.LAYOUT, 5, 0);
            int id = onTheHost(kv, s, image);

            runtime.failHostToDevice = true;
            UncheckedIOException e = assertThrows(UncheckedIOException.class, () -> kv.acquireLease(id));
            assertEquals("injected", e.getCause().getMessage());
            runtime.failHostToDevice = false;
            assertEquals(List.of(), kv.checkInvariants(), "invariants after the failed promotion");
            assertEquals(1, kv.stats().hostUsedBlocks(), "the host copy stays");

            assertTimeoutPreemptively(Duration.ofSeconds(10), () -> assertLeasedIntact(kv, id, image),
                    "the next lease promotes the block"); // waited forever before
            assertEquals(List.of(), kv.checkInvariants(), "invariants after the next lease");
        }
    }

    @Test
    void demotionsWhoseCopiesThrowKeepNoHostSlot() {
        FailingCopiesRuntime runtime = new FailingCopiesRuntime(device());
        try (KvBlockManager kv = manager(runtime, 5_000_000_000L);
             Arena arena = Arena.ofConfined();
             Sequence s = kv.openSequence(SequenceOptions.defaults())) {
            MemorySegment image = blockImage(arena.allocate(BB), Managers.LAYOUT, 5, 0);
            int id = onTheDevice(s, image);
            runtime.failDeviceToHost = true;
            for (int i = 0; i <= HOST_BLOCKS; i++) {
                UncheckedIOException e = assertThrows(UncheckedIOException.class, () -> kv.demoteBlock(id));
                assertEquals("injected", e.getCause().getMessage()); // still a candidate: the next try copies again
            }
            runtime.failDeviceToHost = false;
            assertEquals(0, kv.stats().hostUsedBlocks(), "host slots in use after the failed demotions");
            assertTrue(kv.demoteBlock(id), "a demotion finds a host slot");
            assertLeasedIntact(kv, id, image);
            assertEquals(List.of(), kv.checkInvariants());
        }
    }

    /**
     * A demotion whose copy throws leaves an unreferenced cached block where it was: on the device
     * and a candidate to leave it. Before, the block stayed out of the device policy until its
     * state next changed, which for a block nobody references may be never: it kept its device
     * slot for good, and no room making could pick it again.
     */
    @Test
    void aCachedBlockWhoseDemotionThrowsStaysACandidate() {
        FailingCopiesRuntime runtime = new FailingCopiesRuntime(device());
        try (KvBlockManager kv = manager(runtime, 5_000_000_000L);
             Arena arena = Arena.ofConfined()) {
            MemorySegment image = blockImage(arena.allocate(BB), Managers.LAYOUT, 5, 0);
            int id;
            try (Sequence s = kv.openSequence(SequenceOptions.defaults())) {
                id = onTheDevice(s, image);
            } // closed: the block is cached, referenced by nobody
            runtime.failDeviceToHost = true;
            assertThrows(UncheckedIOException.class, () -> kv.demoteBlock(id));
            runtime.failDeviceToHost = false;
            assertEquals(List.of(), kv.checkInvariants());
            assertEquals(0, kv.stats().hostUsedBlocks(), "no host slot kept");
            assertTrue(kv.demoteBlock(id), "a candidate still: demoted now"); // refused (not a candidate) before
            assertEquals(1, kv.stats().hostUsedBlocks());
            assertLeasedIntact(kv, id, image);
            assertEquals(List.of(), kv.checkInvariants());
        }
    }

    /**
     * A mover cycle whose demotion throws leaves the rest of its batch queued; the next cycle
     * demotes them whatever its pressure mode, and the queue counts the failed entry. Before (a
     * review found it), only a cycle that queued demotions drained the queue, so once the device
     * was relaxed the rest stayed queued, out of the device policy, for good; and the failed entry
     * was counted nowhere.
     */
    @Test
    void aMoverCycleWhoseDemotionThrowsLeavesNothingQueuedForGood() {
        FailingCopiesRuntime runtime = new FailingCopiesRuntime(device());
        try (KvBlockManager kv = manager(runtime, 5_000_000_000L);
             Arena arena = Arena.ofConfined();
             Sequence s = kv.openSequence(SequenceOptions.defaults())) {
            int b = Managers.LAYOUT.blockSizeTokens();
            for (int i = 0; i < 2; i++) { // two sealed blocks: the candidates
                s.appendBlock(tokens(i * b, b), 0, blockImage(arena.allocate(BB), Managers.LAYOUT, 5 + i, 0));
            }
            List<Sequence> tails = new java.util.ArrayList<>();
            for (int i = 0; i < 2; i++) { // two open tail blocks: the device full, so the mover queues both candidates
                Sequence tail = kv.openSequence(SequenceOptions.defaults());
                tail.appendToken(1_000 + i);
                tails.add(tail);
            }
            runtime.failDeviceToHost = true;
            assertEquals(0, kv.runMoverCycle(), "the first demotion threw: the cycle failed");
            runtime.failDeviceToHost = false;
            assertEquals(1, kv.stats().moverErrors());
            TierStats.QueueStats q = kv.stats().queues().get(MovePath.DEVICE_TO_HOST);
            assertEquals(2, q.queued());
            assertEquals(1, q.skipped(), "the failed entry counted"); // 0 before
            assertEquals(1, q.depth(), "the other waits");
            tails.forEach(Sequence::close); // their open blocks freed: the device half used, relaxed
            kv.runMoverCycle();
            q = kv.stats().queues().get(MovePath.DEVICE_TO_HOST);
            assertEquals(0, q.depth(), "drained by the next cycle"); // 1 before, for good
            assertEquals(1, q.moved(), "and demoted");
            assertEquals(q.queued(), q.moved() + q.skipped() + q.cancelled() + q.depth(), q.toString());
            assertEquals(List.of(), kv.checkInvariants());
            for (int i = 0; i < 2; i++) { // each on the host now, or a candidate to go there
                int id = s.blockId(i);
                assertTrue(!kv.cache().diagnostics().isOnDevice(id) || kv.demoteBlock(id), "block " + i);
            }
        }
    }

    /**
     * A demotion whose copy's event reports a failure ({@link io.tierkv.natives.GpuException} from
     * {@code isComplete}, as a device's asynchronous error would) throws, once, and frees its host
     * slot: a failure is final, so no write of the copy lands later. Before (a review found it),
     * the slot stayed reserved for good: after as many failures as there are host slots no
     * demotion found one. A second review found the first mend (the slot parked as a late copy's)
     * reported each failure twice: thrown, then again when the parked copy was looked at.
     */
    @Test
    void demotionsWhoseEventsFailKeepNoHostSlot() throws Throwable {
        EmulatedDevice device = device();
        FailingCopiesRuntime runtime = new FailingCopiesRuntime(device);
        try (KvBlockManager kv = manager(runtime, 5_000_000_000L);
             Arena arena = Arena.ofConfined();
             Sequence s = kv.openSequence(SequenceOptions.defaults())) {
            MemorySegment image = blockImage(arena.allocate(BB), Managers.LAYOUT, 5, 0);
            int id = onTheDevice(s, image);
            List<String> reported = faultsReportedBy(() -> {
                device.stallCopies(); // each demotion's copy is pending, so its event is asked
                runtime.failEvents = true; // and reports that the copy failed
                try {
                    for (int i = 0; i <= HOST_BLOCKS; i++) {
                        assertThrows(io.tierkv.natives.GpuException.class, () -> kv.demoteBlock(id));
                    }
                    kv.runMoverCycle(); // nothing late to look at again
                } finally {
                    runtime.failEvents = false;
                    device.resumeCopies(); // the stalled copies land (the same block's bytes)
                }
            });
            assertEquals(List.of(), reported, "each failure was reported once, thrown to its caller");
            assertEquals(0, kv.stats().hostUsedBlocks(), "host slots in use after the failed demotions");
            assertTrue(kv.demoteBlock(id), "a demotion finds a host slot");
            assertLeasedIntact(kv, id, image);
            assertEquals(List.of(), kv.checkInvariants());
        }
    }

    /**
     * Demotions whose copies miss their deadline park their host slots until the copies land; once
     * they have, the next demotion finds a slot among them. Before, the cache asked the host for
     * ended late copies only while a late promotion's top-tier slot waited too, so with none the
     * parked host slots stayed taken for good and every later demotion was refused.
     */
    @Test
    void lateDemotionsGiveTheirHostSlotsBackOnceTheirCopiesLand() {
        EmulatedDevice device = device();
        FailingCopiesRuntime runtime = new FailingCopiesRuntime(device);
        try (KvBlockManager kv = manager(runtime, 20_000_000);
             Arena arena = Arena.ofShared(); // read by the timed block's thread too
             Sequence s = kv.openSequence(SequenceOptions.defaults())) {
            MemorySegment image = blockImage(arena.allocate(BB), Managers.LAYOUT, 5, 0);
            int id = onTheDevice(s, image);
            device.stallCopies();
            try {
                for (int i = 0; i < HOST_BLOCKS; i++) {
                    assertFalse(kv.demoteBlock(id), "the copy is late: the block stays on the device");
                    touch(kv, id);
                }
                assertEquals(HOST_BLOCKS, kv.stats().hostUsedBlocks(), "every host slot parked");
            } finally {
                device.resumeCopies(); // the late copies land (the same block's bytes)
            }
            assertTimeoutPreemptively(Duration.ofSeconds(10), () -> {
                while (!kv.demoteBlock(id)) { // until the landed copies' slots are found again
                    touch(kv, id);
                    Thread.sleep(1);
                }
            }, "a demotion finds a host slot once the late copies landed");
            assertLeasedIntact(kv, id, image);
            assertEquals(List.of(), kv.checkInvariants());
        }
    }

    /**
     * A timed-out promotion's late copy whose event then reports a failure ({@link
     * io.tierkv.natives.GpuException} from {@code isComplete}) has ended: its device slot goes back
     * and its host source is released, and the next lease promotes the block. Before, the late copy
     * was taken out of its queue to be looked at and the exception dropped it: the lease threw, the
     * device slot was never handed back, and the host slot stayed marked as read for good.
     */
    @Test
    void aLateCopyWhoseEventReportsAFailureEnds() throws Exception {
        EmulatedDevice device = device();
        FailingCopiesRuntime runtime = new FailingCopiesRuntime(device);
        try (KvBlockManager kv = manager(runtime, 50_000_000);
             Arena arena = Arena.ofShared(); // read by the timed block's thread too
             Sequence s = kv.openSequence(SequenceOptions.defaults())) {
            MemorySegment image = blockImage(arena.allocate(BB), Managers.LAYOUT, 5, 0);
            int id = lateOnTheHost(kv, s, image, device);
            runtime.failEvents = true; // the late copy's event now reports that it failed
            device.resumeCopies(); // or close would wait for the late copy for good
            assertTimeoutPreemptively(Duration.ofSeconds(10), () -> {
                MemorySegment leased = kv.acquireLease(id); // threw GpuException before; then waited forever
                try {
                    runtime.failEvents = false;
                    assertEquals(-1, leased.mismatch(image), "the block's own bytes");
                } finally {
                    kv.releaseLease(id);
                }
            }, "the next lease promotes the block");
            assertEquals(List.of(), kv.checkInvariants());
        }
    }

    /** A manager closed with a late copy whose event reports a failure closes, and frees its memory. */
    @Test
    void aManagerClosedWithAFailedLateCopyCloses() {
        EmulatedDevice device = device();
        FailingCopiesRuntime runtime = new FailingCopiesRuntime(device);
        KvBlockManager kv = manager(runtime, 50_000_000);
        try (Arena arena = Arena.ofConfined()) {
            try (Sequence s = kv.openSequence(SequenceOptions.defaults())) {
                lateOnTheHost(kv, s, blockImage(arena.allocate(BB), Managers.LAYOUT, 5, 0), device);
            } finally {
                runtime.failEvents = true;
                device.resumeCopies(); // or close would wait for the late copy for good
            }
            kv.close(); // threw GpuException before, its memory left open
        }
        assertEquals(0, device.openResources(), "device resources left open");
    }

    /**
     * A lease of a block whose host copy a late promotion still reads (its copy stalled) waits at
     * most the promotion timeout, then fails with {@link TransferTimeoutException}; once the copy
     * lands the block promotes. Before, the wait had no deadline: a copy that never landed held
     * the lease for good.
     */
    @Test
    void aLeaseWaitingForALateCopyOfItsBlockTimesOut() throws Exception {
        EmulatedDevice device = device();
        try (KvBlockManager kv = manager(device, 50_000_000);
             Arena arena = Arena.ofShared(); // read by the timed block's thread too
             Sequence s = kv.openSequence(SequenceOptions.defaults())) {
            MemorySegment image = blockImage(arena.allocate(BB), Managers.LAYOUT, 5, 0);
            int id = lateOnTheHost(kv, s, image, device);
            try {
                assertTimeoutPreemptively(Duration.ofSeconds(10), () -> {
                    TransferTimeoutException e = assertThrows(TransferTimeoutException.class, () -> kv.acquireLease(id));
                    assertTrue(e.getMessage().contains("another move reads its copy below"), e.getMessage());
                }, "a lease waiting for the late copy's read of its source"); // waited forever before
                assertEquals(2, kv.stats().cache().failedPromotions(), "the late copy, and the wait that timed out");
            } finally {
                device.resumeCopies(); // or close would wait for the late copy for good
            }
            assertLeasedIntact(kv, id, image);
            assertEquals(List.of(), kv.checkInvariants());
        }
    }

    /**
     * A failed late copy is reported once ({@code io.tierkv.TierFault}) though two parties look
     * at it: a lease that waits for the copy's read of its block's host copy finds it ended, and
     * the cache then takes back its device slot. Before, each reported it.
     */
    @Test
    void aFailedLateCopyIsReportedOnce() throws Throwable {
        EmulatedDevice device = device();
        FailingCopiesRuntime runtime = new FailingCopiesRuntime(device);
        try (KvBlockManager kv = manager(runtime, 1_000_000_000L);
             Arena arena = Arena.ofShared(); // read by the timed block's thread too
             Sequence s = kv.openSequence(SequenceOptions.defaults())) {
            MemorySegment image = blockImage(arena.allocate(BB), Managers.LAYOUT, 5, 0);
            List<String> reported = faultsReportedBy(() -> {
                int id = lateOnTheHost(kv, s, image, device);
                Thread waiting;
                try {
                    waiting = Thread.ofPlatform().start(() -> {
                        kv.acquireLease(id); // a failure here shows as a second failed promotion below
                        kv.releaseLease(id);
                    });
                    Thread.sleep(200); // the lease waits for the late copy's read of the host copy
                    runtime.failEvents = true; // the late copy's event now reports that it failed
                } finally {
                    device.resumeCopies(); // or close would wait for the late copy for good
                }
                waiting.join(10_000);
                assertFalse(waiting.isAlive(), "the waiting lease ended");
                runtime.failEvents = false;
                assertEquals(1, kv.stats().cache().failedPromotions(), "the late copy; the waiting lease promoted");
                assertLeasedIntact(kv, id, image);
                assertEquals(List.of(), kv.checkInvariants());
            });
            List<String> late = reported.stream().filter(w -> w.startsWith("late copy failed")).toList();
            assertEquals(1, late.size(), "reports of the failed late copy: " + reported);
        }
    }

    /** Runs {@code body} and returns what each {@code io.tierkv.TierFault} it caused reported, in order. */
    private static List<String> faultsReportedBy(org.junit.jupiter.api.function.Executable body) throws Throwable {
        Path file = Files.createTempFile("tierkv-faults", ".jfr");
        try (Recording faults = new Recording()) {
            faults.enable("io.tierkv.TierFault");
            faults.start();
            body.execute();
            faults.stop();
            faults.dump(file);
            return RecordingFile.readAllEvents(file).stream()
                    .filter(e -> e.getEventType().getName().equals("io.tierkv.TierFault"))
                    .map(e -> e.getString("what")).toList();
        } finally {
            Files.deleteIfExists(file);
        }
    }

    private static EmulatedDevice device() {
        return new EmulatedDevice(16 * BB + (1 << 20));
    }

    /** A manager of 4 device and {@value #HOST_BLOCKS} host blocks, no movers, no recent blocks kept on the device. */
    private static KvBlockManager manager(GpuRuntime runtime, long promotionTimeoutNanos) {
        return KvBlockManager.builder(Managers.LAYOUT).device(runtime, 4 * BB).host(HOST_BLOCKS * BB)
                .recentDeviceBlocks(0).movers(0).promotionTimeoutNanos(promotionTimeoutNanos).build();
    }

    /** Appends one block of {@code image}'s bytes (tokens 0..B-1) to {@code s} and returns its id. */
    private static int onTheDevice(Sequence s, MemorySegment image) {
        s.appendBlock(tokens(0, Managers.LAYOUT.blockSizeTokens()), 0, image);
        return s.blockId(0);
    }

    /** {@link #onTheDevice}, then demoted. */
    private static int onTheHost(KvBlockManager kv, Sequence s, MemorySegment image) {
        int id = onTheDevice(s, image);
        assertTrue(kv.demoteBlock(id), "demoted to the host");
        return id;
    }

    /**
     * Leases and releases a block: as after a refused demotion, a block out of the device policy is
     * a candidate again once its state next changes.
     */
    private static void touch(KvBlockManager kv, int id) {
        kv.acquireLease(id);
        kv.releaseLease(id);
    }

    /**
     * {@link #onTheHost}, then stalls the device's copies and leases the block: the lease times out
     * and the promotion's copy is late. The caller resumes the copies in a {@code finally} (or
     * close would wait for the late copy for good); they are resumed here if the lease did not
     * time out.
     */
    private static int lateOnTheHost(KvBlockManager kv, Sequence s, MemorySegment image, EmulatedDevice device) {
        int id = onTheHost(kv, s, image);
        device.stallCopies();
        try {
            assertThrows(TransferTimeoutException.class, () -> kv.acquireLease(id), "the copy is late");
        } catch (AssertionError e) {
            device.resumeCopies();
            throw e;
        }
        return id;
    }

    /** Leases the block, checks its bytes are {@code image}'s, and releases it. */
    private static void assertLeasedIntact(KvBlockManager kv, int id, MemorySegment image) {
        MemorySegment leased = kv.acquireLease(id);
        try {
            assertEquals(-1, leased.mismatch(image), "the block's own bytes");
        } finally {
            kv.releaseLease(id);
        }
    }
}

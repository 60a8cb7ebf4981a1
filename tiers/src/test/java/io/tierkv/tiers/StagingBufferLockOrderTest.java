package io.tierkv.tiers;

import static io.tierkv.core.testing.TestCaches.blockImage;
import static io.tierkv.core.testing.TestCaches.tokens;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.tierkv.core.KvLayout;
import io.tierkv.core.cache.Sequence;
import io.tierkv.core.cache.SequenceOptions;
import io.tierkv.core.error.CorruptBlockException;
import io.tierkv.natives.EmulatedDevice;
import io.tierkv.tiers.disk.Compression;
import io.tierkv.tiers.disk.DiskOptions;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Staging buffers and the manager lock are never waited for in opposite orders (found by a
 * review of the one-lock change, then in the corruption soak, which hung at its first damaged
 * record). A promotion from disk held the staging buffer and, when its read missed, took the
 * manager lock to settle the miss; a prefix match held the manager lock and, with the host full,
 * waited for a staging buffer to adopt a record through. With one buffer (the default transfer
 * budget) each waited for the other for good. Now the promotion gives its buffer back before it
 * settles the miss, and the match does not wait for a buffer: with none free it adopts the record
 * by its header and identity, as without {@code readOnAdopt}, and the read that follows verifies
 * the payload. Each half is asserted on its own: the match ends while the buffer is taken, and the
 * buffer is free while the promotion waits for the manager lock.
 */
class StagingBufferLockOrderTest {

    private static final int B = 16;

    @TempDir
    Path dir;

    @Test
    void aDiskPromotionThatMissesAndAMatchThatAdoptsWithTheHostFullBothEnd() throws Exception {
        KvLayout layout = Managers.LAYOUT;
        long bb = layout.bytesPerBlock();
        try (Arena arena = Arena.ofShared()) {
            MemorySegment image = blockImage(arena.allocate(bb), layout, 77, 0);
            KvBlockManager kv = KvBlockManager.builder(layout).device(new EmulatedDevice(4 * bb + (1 << 20)), 4 * bb)
                    .host(2 * bb).recentDeviceBlocks(0).movers(0).admissionTimeoutNanos(2_000_000)
                    .disk(DiskOptions.at(dir.resolve("kv")).withSegmentBytes(64 << 10).withBudgetBytes(1 << 20)
                            .withCompression(Compression.NONE))
                    .build();
            HostTier host = Managers.hostOf(kv);
            assertEquals(1, host.stagingBuffers(), "the default transfer budget: one staging buffer");

            // X: referenced and on disk only (its record pinned), the first record written
            Sequence sx = kv.openSequence(SequenceOptions.defaults());
            sx.appendBlock(tokens(1000, B), 0, image);
            int x = sx.blockId(0);
            assertTrue(kv.demoteBlock(x));
            assertEquals(1, kv.evictHost(1));
            // Y: on disk only, found by hash alone
            try (Sequence sy = kv.openSequence(SequenceOptions.defaults())) {
                sy.appendBlock(tokens(2000, B), 0, image);
                assertTrue(kv.demoteBlock(sy.blockId(0)));
                assertEquals(1, kv.evictHost(1));
            }
            kv.runMoverCycle();
            assertEquals(2, kv.stats().disk().blockCount());
            // the host full, so a match adopts through a staging buffer
            Sequence z1 = kv.openSequence(SequenceOptions.defaults());
            z1.appendBlock(tokens(3000, B), 0, image);
            assertTrue(kv.demoteBlock(z1.blockId(0)));
            Sequence z2 = kv.openSequence(SequenceOptions.defaults());
            z2.appendBlock(tokens(4000, B), 0, image);
            assertTrue(kv.demoteBlock(z2.blockId(0)));
            assertEquals(2, kv.stats().hostUsedBlocks());
            RecordDamage.damage(dir.resolve("kv"), RecordDamage.FIRST_PAYLOAD); // X's promotion misses

            int gate = host.staging.acquire(); // the one buffer, until both are lined up
            AtomicReference<Throwable> promoted = new AtomicReference<>();
            Thread p = Thread.ofPlatform().daemon().name("promote-x").start(() -> {
                try {
                    kv.acquireLease(x);
                    promoted.set(new AssertionError("a damaged record was promoted"));
                } catch (Throwable t) {
                    promoted.set(t);
                }
            });
            awaitIn(p, "StagingPool.acquire");
            AtomicReference<Object> matched = new AtomicReference<>();
            Thread m = Thread.ofPlatform().daemon().name("match-y").start(() -> {
                try (Sequence s = kv.openSequence(SequenceOptions.defaults())) {
                    matched.set(s.matchPrefix(tokens(2000, B), B));
                } catch (Throwable t) {
                    matched.set(t);
                }
            });
            m.join(5_000);
            assertFalse(m.isAlive(), "the match waits for a staging buffer under the manager lock:\n" + stack(m));
            ReentrantLock managerLock = host.blocks.lock;
            managerLock.lock(); // the promotion's miss, settled under the lock, must wait for it
            try {
                host.staging.release(gate);
                long end = System.nanoTime() + 5_000_000_000L;
                while (!managerLock.hasQueuedThread(p) && System.nanoTime() < end) {
                    Thread.sleep(1);
                }
                assertTrue(managerLock.hasQueuedThread(p), "the promotion waits for the manager lock:\n" + stack(p));
                int free = host.staging.tryAcquire();
                assertTrue(free >= 0, "the promotion gave its buffer back before it waited for the manager lock");
                host.staging.release(free);
            } finally {
                managerLock.unlock();
            }
            p.join(5_000);
            if (p.isAlive()) {
                fail("stuck:\npromote-x:\n" + stack(p)); // kv left open: close would hang
            }
            assertEquals(B, matched.get(), "the match adopted Y by its header while no buffer was free");
            assertInstanceOf(CorruptBlockException.class, promoted.get(), "X's record is damaged: a counted loss");
            try (Sequence s = kv.openSequence(SequenceOptions.defaults())) {
                assertEquals(B, s.matchPrefix(tokens(2000, B), B));
                MemorySegment out = arena.allocate(bb);
                s.readBlock(0, out);
                assertEquals(-1, out.mismatch(image), "Y's bytes, verified as they are read");
            }
            assertEquals(List.of(), kv.checkInvariants());
            sx.close();
            z1.close();
            z2.close();
            kv.close();
        }
    }

    private static void awaitIn(Thread t, String frame) throws InterruptedException {
        long end = System.nanoTime() + 5_000_000_000L;
        while (System.nanoTime() < end) {
            if (stack(t).contains(frame) && t.getState() == Thread.State.WAITING) {
                return;
            }
            Thread.sleep(5);
        }
        fail(t.getName() + " never reached " + frame + ":\n" + stack(t));
    }

    private static String stack(Thread t) {
        StringBuilder sb = new StringBuilder();
        for (StackTraceElement e : t.getStackTrace()) {
            sb.append("  at ").append(e).append('\n');
        }
        return sb.toString();
    }
}

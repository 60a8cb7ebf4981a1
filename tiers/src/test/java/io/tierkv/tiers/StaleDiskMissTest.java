package io.tierkv.tiers;

import static io.tierkv.core.testing.TestCaches.blockImage;
import static io.tierkv.core.testing.TestCaches.tokens;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.core.cache.PagedKvCache;
import io.tierkv.core.cache.Sequence;
import io.tierkv.core.cache.SequenceOptions;
import io.tierkv.tiers.disk.store.DiskTier;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.reflect.Field;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A read-ahead load (disk to host) reads a cached block's record with the manager lock released. If
 * the record was evicted, the read misses; meanwhile another id of the same identity may spill a
 * new record under the key and a prefix match may pin it for this block and reference it. The
 * miss, settled after the lock is taken back, must not then drop the copy the match relies on
 * (the soak found this once in about 45 runs: a referenced block lost with no damaged record).
 */
class StaleDiskMissTest {

    @TempDir
    Path dir;

    @Test
    void aLoadThatMissedDoesNotDropARecordWrittenAndPinnedWhileItRead() throws Exception {
        int bb = Managers.LAYOUT.bytesPerBlock();
        try (HostDiskStack stack = new HostDiskStack(dir.resolve("kv"), host -> host);
                Arena arena = Arena.ofConfined()) {
            HostTier host = stack.host;
            DiskTier disk = stack.disk;
            PagedKvCache cache = stack.cache;
            // A cached block (indexed, referenced by nobody) held only by an unpinned disk record.
            HostDiskStack.Spilled spilled = stack.spillCachedBlock(arena);
            int id = spilled.id();
            MemorySegment identity = spilled.identity();
            long hi = spilled.hashHi();
            long lo = spilled.hashLo();
            assertEquals(1, disk.maintenance().evict(1), "its unpinned record is evicted (the notice not drained)");

            ReentrantLock diskLock = diskLock(disk);
            boolean[] loaded = {true};
            Throwable[] failed = new Throwable[1];
            Thread mover = new Thread(() -> {
                try {
                    loaded[0] = cache.tierControl().loadBelow(id);
                } catch (Throwable t) {
                    failed[0] = t;
                }
            }, "read-ahead");
            Sequence matched;
            diskLock.lock();
            try {
                mover.start();
                awaitQueued(diskLock, mover); // the load is about to read the record
                host.blocks.lock.lock();
            } finally {
                diskLock.unlock(); // its read misses; it then waits for the manager lock
            }
            try {
                awaitQueued(host.blocks.lock, mover);
                // Meanwhile: another id of the same identity spills a record under the key, and a
                // prefix match pins it for this block and references it.
                assertTrue(disk.put(hi, lo, identity, blockImage(arena.allocate(bb), Managers.LAYOUT, 7, 0)));
                matched = cache.openSequence(SequenceOptions.defaults());
                assertEquals(16, matched.matchPrefix(tokens(0, 32)), "the block is found on disk");
            } finally {
                host.blocks.lock.unlock();
            }
            mover.join(TimeUnit.SECONDS.toMillis(30));
            assertFalse(mover.isAlive());
            assertEquals(null, failed[0], "the load threw");
            assertFalse(loaded[0], "the load missed");

            try (Sequence seq = matched) {
                assertEquals(id, seq.blockId(0));
                MemorySegment out = arena.allocate(bb);
                seq.readBlock(0, out); // threw CorruptBlockException: the miss dropped the new record's pin
                assertEquals(-1, out.mismatch(blockImage(arena.allocate(bb), Managers.LAYOUT, 7, 0)));
                assertEquals(0, cache.stats().lostBlocks());
            }
            assertEquals(List.of(), cache.checkInvariants());
            assertEquals(List.of(), host.checkInvariants());
        }
    }

    /** The disk tier's lock, to hold a read at its start (the tier offers no hook there). */
    private static ReentrantLock diskLock(DiskTier disk) throws ReflectiveOperationException {
        Field f = DiskTier.class.getDeclaredField("lock");
        f.setAccessible(true);
        return (ReentrantLock) f.get(disk);
    }

    private static void awaitQueued(ReentrantLock lock, Thread t) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!lock.hasQueuedThread(t)) {
            assertTrue(System.nanoTime() < deadline, t.getName() + " never waited for " + lock);
            assertTrue(t.isAlive(), t.getName() + " ended before waiting for " + lock);
            Thread.sleep(1);
        }
    }
}

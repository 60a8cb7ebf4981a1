package io.tierkv.tiers;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.tierkv.core.pool.SlabMemory;
import io.tierkv.core.pool.SlotAllocator;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Staging buffers for transfers that do not land in a tier slot (disk to device, disk lookups):
 * {@code transferBytes / bytesPerBlock} buffers of one block each. Their bytes are what the
 * transfer budget counts. Thread-safe: a transfer takes
 * a buffer, waiting while all are in use, and gives it back.
 *
 * <p>Lock order: a thread holding a buffer never takes the manager lock (a promotion from disk
 * gives its buffer back before it settles a miss), and a thread holding the manager lock never
 * waits for a buffer ({@link #tryAcquire}); otherwise the two could wait for each other for good.
 */
final class StagingPool implements AutoCloseable {

    private final SlabMemory blocks;
    @GuardedBy("lock") private final SlotAllocator free;
    private final ReentrantLock lock = new ReentrantLock();
    @GuardedBy("lock") private final Condition released = lock.newCondition();

    StagingPool(int buffers, int blockBytes) {
        this.blocks = new SlabMemory(buffers, blockBytes);
        this.free = new SlotAllocator(buffers);
    }

    /** @return a buffer index, waiting until one is free */
    int acquire() {
        lock.lock();
        try {
            int i;
            while ((i = free.allocate()) < 0) {
                released.awaitUninterruptibly();
            }
            return i;
        } finally {
            lock.unlock();
        }
    }

    /** @return a buffer index, or -1 at once if all are in use: for a caller holding the manager lock */
    int tryAcquire() {
        lock.lock();
        try {
            return free.allocate();
        } finally {
            lock.unlock();
        }
    }

    void release(int i) {
        lock.lock();
        try {
            free.free(i);
            released.signal();
        } finally {
            lock.unlock();
        }
    }

    MemorySegment block(int i) {
        return blocks.slot(i);
    }

    /** @return buffers in the pool */
    int capacity() {
        return blocks.capacity(); // as many slab slots as buffers, fixed at construction: no lock
    }

    @Override
    public void close() {
        blocks.close();
    }
}

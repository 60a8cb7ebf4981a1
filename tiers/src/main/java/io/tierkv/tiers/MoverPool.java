package io.tierkv.tiers;

import io.tierkv.core.cache.LowerTier;
import io.tierkv.core.cache.PagedKvCache;
import io.tierkv.core.cache.TierControl;
import io.tierkv.core.pressure.PressureMonitor;
import io.tierkv.core.pressure.PressureWatermarks;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

/**
 * A manager's movers: one bounded queue per {@link MovePath}, the mover threads that drain them,
 * and an inline mover for {@link KvBlockManager#runMoverCycle()}. Thread-safe.
 */
final class MoverPool {

    /** The cache's tier-facing calls: where a block's copy is, for a read-ahead's path. */
    private final TierControl control;
    private final MoveQueue[] queues = new MoveQueue[MovePath.values().length];
    private final List<Mover> movers = new ArrayList<>();
    private final List<Thread> threads = new ArrayList<>();
    /** Runs {@link #runCycle()}: a mover's state is its final fields, so callers may share it. */
    private final Mover inline;

    /**
     * Creates the queues and starts {@code threads} mover threads.
     *
     * @param threads       mover threads, {@code >= 0}
     * @param queueCapacity entries per queue
     */
    MoverPool(PagedKvCache cache, HostTier host, PressureMonitor monitor, PressureWatermarks watermarks,
            TierCounters counters, Consumer<Throwable> errorHandler, int threads, int queueCapacity) {
        this.control = cache.tierControl();
        for (MovePath p : MovePath.values()) {
            queues[p.ordinal()] = new MoveQueue(queueCapacity);
        }
        inline = new Mover(cache, host, monitor, watermarks, counters, errorHandler, queues);
        for (int i = 0; i < threads; i++) {
            Mover m = new Mover(cache, host, monitor, watermarks, counters, errorHandler, queues);
            this.threads.add(Thread.ofPlatform().daemon().name("tierkv-mover-" + i).start(m));
            movers.add(m);
        }
    }

    /** {@return whether mover threads run} */
    boolean hasThreads() {
        return !movers.isEmpty();
    }

    /**
     * Queues a read-ahead promotion on its path (DISK_TO_HOST for a block held only on disk, else
     * HOST_TO_DEVICE) and wakes a mover; without mover threads the next {@link #runCycle()} drains
     * it. A full queue rejects the request (counted); the lease that needs the block still
     * promotes it. May be called under the manager lock: takes it again (reentrant) and the queue's.
     */
    void requestPromotion(int blockId) {
        MovePath path = control.residence(blockId) == LowerTier.RESIDENT_DISK ? MovePath.DISK_TO_HOST
                : MovePath.HOST_TO_DEVICE;
        queues[path.ordinal()].offer(blockId);
        if (!movers.isEmpty()) {
            movers.get(blockId % movers.size()).wake();
        }
    }

    /** {@return units of work of one mover cycle on the calling thread; see {@link KvBlockManager#runMoverCycle()}} */
    int runCycle() {
        return inline.cycle();
    }

    /** {@return each queue's counters} */
    Map<MovePath, TierStats.QueueStats> queueStats() {
        Map<MovePath, TierStats.QueueStats> m = new EnumMap<>(MovePath.class);
        for (MovePath p : MovePath.values()) {
            m.put(p, queues[p.ordinal()].stats());
        }
        return m;
    }

    /** Stops the movers (a move in flight finishes; no interrupt, which would close a file channel mid-write) and cancels what is queued. */
    void stop() {
        movers.forEach(Mover::stop);
        for (Thread t : threads) {
            LockSupport.unpark(t);
            try {
                t.join(10_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        for (MoveQueue q : queues) {
            q.cancel();
        }
    }
}

package io.tierkv.tiers;

import io.tierkv.core.cache.PagedKvCache;
import io.tierkv.core.pressure.PressureMode;
import io.tierkv.core.pressure.PressureMonitor;
import io.tierkv.core.pressure.PressureWatermarks;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

/**
 * The background mover, a duty cycle (after Agrona's {@code Agent}): each {@link #doWork()} reads
 * device utilisation, updates the pressure mode, demotes what the mode asks for, runs queued
 * read-ahead promotions, hands back slots of late copies and forwards disk evictions to the cache;
 * it returns how much it did, and the loop idles with back-off when it did nothing.
 *
 * <p>Mode actions (DESIGN.md): RELAXED demotes nothing; NORMAL trickles one policy victim per
 * cycle; PRESSURE demotes by policy order until utilisation is under the PRESSURE mark; CRITICAL
 * and EMERGENCY demote every candidate (EMERGENCY's admission control is the bounded wait in the
 * cache's allocation path). Read-ahead requests wait in a bounded queue; a full queue rejects
 * and counts. Every error goes to the handler and a counter; the loop goes on. {@link #stop()}
 * ends it (the manager does not interrupt a mover: an interrupt closes a file channel mid-write).
 */
final class Mover implements Runnable {

    private final PagedKvCache cache;
    private final HostTier host;
    private final PressureMonitor monitor;
    private final PressureWatermarks marks;
    private final TierCounters counters;
    private final Consumer<Throwable> errorHandler;
    private final ArrayBlockingQueue<Integer> prefetch;
    private volatile boolean running = true;
    private volatile Thread runner;

    Mover(PagedKvCache cache, HostTier host, PressureMonitor monitor, PressureWatermarks marks, TierCounters counters,
            Consumer<Throwable> errorHandler, int prefetchQueueCapacity) {
        this.cache = cache;
        this.host = host;
        this.monitor = monitor;
        this.marks = marks;
        this.counters = counters;
        this.errorHandler = errorHandler;
        this.prefetch = new ArrayBlockingQueue<>(prefetchQueueCapacity);
    }

    /**
     * Queues a read-ahead promotion.
     *
     * @param blockId the block to bring to the device
     * @return false if the queue was full (counted)
     */
    boolean requestPromotion(int blockId) {
        boolean ok = prefetch.offer(blockId);
        if (!ok) {
            counters.prefetchRejected.increment();
        }
        Thread t = runner;
        if (t != null) {
            LockSupport.unpark(t); // start the read-ahead now rather than after the idle back-off
        }
        return ok;
    }

    /**
     * One cycle.
     *
     * @return units of work done (blocks moved, records forwarded, slots reclaimed)
     */
    int doWork() {
        int work = host.drainDiskEvictions();
        work += cache.reclaimLateSlotsNow();
        for (Integer id; (id = prefetch.poll()) != null; ) {
            if (cache.prefetch(id)) {
                work++;
            }
        }
        int capacity = cache.deviceCapacityBlocks();
        int used = cache.deviceUsedBlocks();
        PressureMode before = monitor.mode();
        PressureMode mode = monitor.update((double) used / capacity, System.nanoTime());
        if (mode != before) {
            TierEvents.Mode e = new TierEvents.Mode();
            if (e.isEnabled()) {
                e.from = before.name();
                e.to = mode.name();
                e.utilisation = (double) used / capacity;
                e.commit();
            }
        }
        work += switch (mode) {
            case RELAXED -> 0;
            case NORMAL -> cache.demoteCandidates(1);
            case PRESSURE -> cache.demoteCandidates(Math.max(1, used - (int) Math.floor(marks.pressure() * capacity)));
            case CRITICAL, EMERGENCY -> cache.demoteCandidates(Integer.MAX_VALUE);
        };
        return work;
    }

    @Override
    public void run() {
        runner = Thread.currentThread();
        long idleNanos = 0;
        while (running && !Thread.currentThread().isInterrupted()) {
            int work;
            try {
                work = doWork();
            } catch (Throwable t) {
                counters.moverErrors.increment();
                TierEvents.fault("mover: " + t);
                errorHandler.accept(t);
                work = 0;
            }
            if (work > 0) {
                idleNanos = 0;
            } else {
                idleNanos = Math.min(Math.max(50_000, idleNanos * 2), 5_000_000);
                LockSupport.parkNanos(idleNanos);
            }
        }
    }

    void stop() {
        running = false;
    }
}

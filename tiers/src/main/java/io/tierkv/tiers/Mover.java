package io.tierkv.tiers;

import io.tierkv.core.cache.PagedKvCache;
import io.tierkv.core.pressure.PressureMode;
import io.tierkv.core.pressure.PressureMonitor;
import io.tierkv.core.pressure.PressureWatermarks;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import java.util.function.IntPredicate;

/**
 * The background mover, a duty cycle (after Agrona's {@code Agent}): each {@link #doWork()} has the
 * cache settle what the tiers below let go of, hands back slots of late copies, and drains one
 * bounded queue per {@link MovePath}; it returns how many blocks it moved or slots it reclaimed,
 * and the loop idles with back-off when it did nothing. Settling is bookkeeping, not a move, and
 * does not count: a workload that leaves an entry to settle between every two cycles (a prefix
 * match adopting a disk record, then closing) would otherwise keep the mover from ever backing off,
 * waking it every 50 us to take the cache lock from the threads serving requests.
 *
 * <h2>Queues</h2>
 * Read-ahead requests (from {@code BlockStream} and promotion on match) wait in DISK_TO_HOST (a
 * block held only on disk: loaded into a host slot, then queued HOST_TO_DEVICE) or HOST_TO_DEVICE.
 * Each cycle the mover reads device utilisation, updates the pressure mode and queues the
 * demotions the mode asks for in DEVICE_TO_HOST (the blocks leave the device policy while queued,
 * so the allocation path does not pick them too); it queues spills in HOST_TO_DISK while host
 * utilisation is at or above the PRESSURE mark, so demotions find free host slots. Both are queued
 * in batches of {@link #BATCH}, each drained before the next is queued. A full queue rejects the offer and counts it per path; an entry whose block changed
 * state after it was queued (freed, its id reused, leased, moved by someone else) is skipped and
 * counted, so nothing moves twice and nothing is lost. A move that throws ends the cycle (its
 * entry counted skipped); the entries after it are drained at the start of the next cycle, in
 * every mode, so none stays out of its policy. Shutdown cancels what is still queued:
 * entries hold no slot or buffer, so nothing needs freeing for them.
 *
 * <p>Mode actions (DESIGN.md): RELAXED demotes nothing; NORMAL trickles one policy victim per
 * cycle; PRESSURE demotes by policy order until utilisation is under the PRESSURE mark; CRITICAL
 * and EMERGENCY demote every candidate. EMERGENCY's admission control is the bounded wait in the
 * cache's allocation path, which also demotes (and the host tier spills) inline: a new block
 * cannot wait for a queue that may itself be waiting for the room the block is being refused. Every
 * error goes to the handler and a counter; the loop goes on. {@link #stop()} ends it (the manager
 * does not interrupt a mover: an interrupt closes a file channel mid-write).
 */
final class Mover implements Runnable {

    /**
     * Most demotions (and spills) queued per cycle. Queued blocks are out of the device policy,
     * so the allocation path cannot take them as victims; a small batch keeps most candidates
     * available to it. The loop runs the next cycle at once while there is work.
     */
    static final int BATCH = 8;

    private final PagedKvCache cache;
    private final HostTier host;
    private final PressureMonitor monitor;
    private final PressureWatermarks marks;
    private final Consumer<Throwable> errorHandler;
    private final TierCounters counters;
    private final MoveQueue toHost;
    private final MoveQueue toDevice;
    private final MoveQueue toDisk;
    private final MoveQueue fromDisk;
    private final IntPredicate loadToHost;
    private final IntPredicate promote;
    private final IntPredicate demote;
    private final IntPredicate spill;
    private final IntPredicate queueDemotion;
    private final IntPredicate queueSpill;
    private volatile boolean running = true;
    private volatile Thread runner;

    /**
     * @param queues one per {@link MovePath}, indexed by ordinal, shared by every mover of a manager
     */
    Mover(PagedKvCache cache, HostTier host, PressureMonitor monitor, PressureWatermarks marks, TierCounters counters,
            Consumer<Throwable> errorHandler, MoveQueue[] queues) {
        this.cache = cache;
        this.host = host;
        this.monitor = monitor;
        this.marks = marks;
        this.counters = counters;
        this.errorHandler = errorHandler;
        this.toHost = queues[MovePath.DEVICE_TO_HOST.ordinal()];
        this.toDevice = queues[MovePath.HOST_TO_DEVICE.ordinal()];
        this.toDisk = queues[MovePath.HOST_TO_DISK.ordinal()];
        this.fromDisk = queues[MovePath.DISK_TO_HOST.ordinal()];
        this.loadToHost = id -> {
            boolean loaded = cache.tierControl().loadBelow(id);
            if (loaded) {
                toDevice.offer(id); // on up: the read-ahead wants it on the device
            }
            return loaded;
        };
        this.promote = cache.tierControl()::prefetch;
        this.demote = cache.tierControl()::demoteQueued;
        this.spill = cache.tierControl()::spillQueued;
        this.queueDemotion = toHost::offer;
        this.queueSpill = toDisk::offer;
    }

    /** Starts the next cycle now rather than after the idle back-off (new read-ahead work). */
    void wake() {
        Thread t = runner;
        if (t != null) {
            LockSupport.unpark(t);
        }
    }

    /**
     * One cycle.
     *
     * @return units of work done (blocks moved, slots reclaimed); what the cache settled does not count
     */
    int doWork() {
        cache.tierControl().settleBelow(); // bookkeeping: never cuts the idle back-off short
        int work = cache.tierControl().reclaimLateSlotsNow();
        work += drain(fromDisk, loadToHost);
        work += drain(toDevice, promote);
        // What a cycle whose move threw left queued (out of the policies), whatever the mode is now.
        work += drain(toHost, demote);
        work += drain(toDisk, spill);
        int capacity = cache.diagnostics().deviceCapacityBlocks();
        int used = cache.diagnostics().deviceUsedBlocks();
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
        int demotions = switch (mode) {
            case RELAXED -> 0;
            case NORMAL -> 1;
            case PRESSURE -> Math.max(1, used - (int) Math.floor(marks.pressure() * capacity));
            case CRITICAL, EMERGENCY -> Integer.MAX_VALUE;
        };
        for (int left = demotions, n; left > 0; left -= n) {
            n = cache.tierControl().queueCandidates(Math.min(BATCH, left), queueDemotion);
            work += drain(toHost, demote);
            if (n == 0) {
                break;
            }
        }
        int hostExcess = host.usedBlocks() - (int) Math.floor(marks.pressure() * host.capacityBlocks());
        for (int left = hostExcess, n; left > 0; left -= n) {
            n = cache.tierControl().queueSpills(Math.min(BATCH, left), queueSpill);
            work += drain(toDisk, spill);
            cache.tierControl().settleBelow(); // the spilled ids are kept by hash now: retired before the next match
            if (n == 0) {
                break;
            }
        }
        return work;
    }

    /**
     * Drains one queue, counting each entry moved or skipped; an entry whose move throws is counted
     * skipped, and the entries after it wait for the next cycle's drain.
     */
    private static int drain(MoveQueue queue, IntPredicate move) {
        int moved = 0;
        for (int id; (id = queue.poll()) >= 0; ) {
            boolean ok = false;
            try {
                ok = move.test(id);
            } finally {
                queue.done(ok);
            }
            if (ok) {
                moved++;
            }
        }
        return moved;
    }

    /**
     * One cycle whose error, if any, is counted in {@code moverErrors}, recorded as a fault event
     * and passed to the error handler instead of thrown; a handler that throws is logged (its
     * exception carrying the cycle's as suppressed), never thrown, so a mover thread goes on.
     *
     * @return units of work done, as {@link #doWork()}; 0 if the cycle failed
     */
    int cycle() {
        try {
            return doWork();
        } catch (Throwable t) {
            counters.moverErrors.increment();
            TierEvents.fault("mover: " + t);
            try {
                errorHandler.accept(t);
            } catch (Throwable handlerError) { // a handler that throws must not end the mover's loop
                handlerError.addSuppressed(t);
                System.getLogger(Mover.class.getName()).log(System.Logger.Level.WARNING,
                        "the mover's error handler threw", handlerError);
            }
            return 0;
        }
    }

    @Override
    public void run() {
        runner = Thread.currentThread();
        long idleNanos = 0;
        while (running && !Thread.currentThread().isInterrupted()) {
            int work = cycle();
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

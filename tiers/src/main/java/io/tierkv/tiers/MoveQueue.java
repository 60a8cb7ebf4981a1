package io.tierkv.tiers;

import com.google.errorprone.annotations.concurrent.GuardedBy;

/**
 * One bounded queue of block ids for one {@link MovePath}, with its counts: offers accepted and
 * rejected (queue full), entries moved, skipped (the block changed state after it was queued) and
 * cancelled (dropped at shutdown). A ring of ints: offering and polling allocate nothing.
 * Thread-safe (one monitor per queue); producers are sequences' threads and the movers, consumers
 * the movers.
 */
final class MoveQueue {

    @GuardedBy("this") private final int[] ring;
    @GuardedBy("this") private int head;
    @GuardedBy("this") private int size;
    @GuardedBy("this") private long queued;
    @GuardedBy("this") private long rejected;
    @GuardedBy("this") private long moved;
    @GuardedBy("this") private long skipped;
    @GuardedBy("this") private long cancelled;

    /**
     * Creates an empty queue.
     *
     * @param capacity most entries waiting, >= 1
     */
    MoveQueue(int capacity) {
        this.ring = new int[capacity];
    }

    /** @return false, counted as a rejection, if the queue is full */
    synchronized boolean offer(int blockId) {
        if (size == ring.length) {
            rejected++;
            return false;
        }
        ring[(head + size) % ring.length] = blockId;
        size++;
        queued++;
        return true;
    }

    /** @return the oldest entry, or -1 if empty */
    synchronized int poll() {
        if (size == 0) {
            return -1;
        }
        int id = ring[head];
        head = (head + 1) % ring.length;
        size--;
        return id;
    }

    /** Counts a polled entry: moved, or skipped because its block changed state meanwhile. */
    synchronized void done(boolean wasMoved) {
        if (wasMoved) {
            moved++;
        } else {
            skipped++;
        }
    }

    /** Drops every waiting entry (shutdown), counted as cancelled. */
    synchronized void cancel() {
        cancelled += size;
        size = 0;
        head = 0;
    }

    /** @return a snapshot of the counts */
    synchronized TierStats.QueueStats stats() {
        return new TierStats.QueueStats(ring.length, size, queued, rejected, moved, skipped, cancelled);
    }
}

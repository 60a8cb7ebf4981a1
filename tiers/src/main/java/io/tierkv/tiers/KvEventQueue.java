package io.tierkv.tiers;

import io.tierkv.core.event.KvEventSink;
import io.tierkv.core.event.KvMedium;
import io.tierkv.tiers.events.KvEventBatch;
import io.tierkv.tiers.events.KvEventListener;
import io.tierkv.tiers.events.KvEventStats;
import io.tierkv.tiers.events.KvEventView;
import java.lang.foreign.MemorySegment;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

/**
 * The manager's KV event queue: the {@link KvEventSink} every tier reports to, and the one thread
 * that hands those reports to the {@link KvEventListener} in batches.
 *
 * <p>Data path: a report writes the event (the block's token ids copied out of its identity) into
 * a {@link KvEventRing}, allocating nothing and taking no lock; a full ring drops it and counts
 * the drop. Nothing on the data path waits for the listener.
 *
 * <p>Event thread: every {@link #FLUSH_INTERVAL_NANOS}, or at once when a report makes the ring
 * half full (so a burst that fills half the ring within one interval is drained without waiting
 * out the rest of it; a wake-up that a race makes the reports miss only waits for the interval),
 * reads what the ring holds (up to
 * {@link #MAX_BATCH_EVENTS} per batch), folds duplicate copies (the host tier may hold two block
 * ids with one hash: only the first copy's store and the last copy's removal are delivered, so a
 * consumer keeping a set per medium stays exact), numbers the batch ({@link KvEventBatch} explains
 * the gaps) and calls {@link KvEventListener#onEvents} with a view of the kept events read in
 * place; the ring's slots are freed when the call returns. {@link #close()} stops the reports,
 * delivers what is queued plus a final {@code AllBlocksCleared} and ends the thread.
 *
 * <p>Thread-safe: the sink methods may be called from any thread; the fold table, the view and the
 * sequence belong to the event thread. Whatever a listener throws (an {@code Error} too) is
 * counted and the next batch delivered; an interrupt the listener leaves on the thread is cleared:
 * only {@link #close()} ends the thread and sends {@code AllBlocksCleared}.
 */
final class KvEventQueue implements KvEventSink, AutoCloseable {

    /** Most events in one batch. */
    static final int MAX_BATCH_EVENTS = 1024;
    /**
     * How long the event thread sleeps between drains: events reported meanwhile go out as one
     * batch (vLLM sends one batch per engine step), so a busy manager costs one encode and one
     * send per interval rather than per event.
     */
    static final long FLUSH_INTERVAL_NANOS = 5_000_000L;
    private static final long CLOSE_TIMEOUT_MILLIS = 10_000;

    private final KvEventRing ring;
    private final KvEventListener listener;
    private final int blockSizeTokens;
    private final LongAdder dropped = new LongAdder();
    private final AtomicLong batches = new AtomicLong();
    private final AtomicLong delivered = new AtomicLong();
    private final AtomicLong listenerErrors = new AtomicLong();
    private volatile boolean accepting = true;
    private volatile boolean stopping;
    private final Thread thread;
    /**
     * Host copies reported per hash; event thread only. Only the host tier can hold two copies of
     * one hash (two block ids); the device index, the disk index and the remote store hold one.
     */
    private final HashCounts hostCopies = new HashCounts();
    /** The batch being delivered; event thread only. */
    private final BatchView view = new BatchView();
    /** Event thread only. */
    private long nextSequence;
    /** Drops already accounted for in a sequence gap; event thread only. */
    private long droppedSeen;

    /**
     * Creates the queue and starts its thread.
     *
     * @param listener        receives the batches
     * @param capacity        most events waiting, >= 1
     * @param blockSizeTokens B, sent as each BlockStored's {@code block_size}
     */
    KvEventQueue(KvEventListener listener, int capacity, int blockSizeTokens) {
        this.listener = listener;
        this.ring = new KvEventRing(capacity, blockSizeTokens);
        this.blockSizeTokens = blockSizeTokens;
        this.thread = Thread.ofPlatform().daemon().name("tierkv-kv-events").unstarted(this::run);
        thread.start();
    }

    @Override
    public void blockStored(KvMedium medium, long hashHi, long hashLo, MemorySegment identity) {
        if (accepting) {
            added(ring.stored(medium, hashHi, hashLo, identity));
        }
    }

    @Override
    public void blockRemoved(KvMedium medium, long hashHi, long hashLo) {
        if (accepting) {
            added(ring.removed(medium, hashHi, hashLo));
        }
    }

    /** Counts a refused event; wakes the event thread early when the ring has just become half full. */
    private void added(int outcome) {
        if (outcome == KvEventRing.REFUSED) {
            dropped.increment();
        } else if (outcome == KvEventRing.ADDED_HALF_FULL) {
            LockSupport.unpark(thread);
        }
    }

    /** {@return a snapshot of the counters; thread-safe} */
    KvEventStats stats() {
        return new KvEventStats(ring.capacity(), ring.depth(), ring.accepted(), dropped.sum(), batches.get(),
                delivered.get(), listenerErrors.get());
    }

    private void run() {
        for (;;) {
            boolean last = stopping; // read before the drain: nothing is accepted once it is set
            while (drain() > 0) {
                // each pass delivers one batch
            }
            if (last) {
                hostCopies.clear();
                view.clear();
                view.addCleared();
                deliver();
                return;
            }
            LockSupport.parkNanos(FLUSH_INTERVAL_NANOS);
            // An interrupt a listener left (the idiom after catching InterruptedException) is cleared,
            // or every park would return at once; it stops nothing: only close() does.
            Thread.interrupted();
        }
    }

    /**
     * Reads up to {@link #MAX_BATCH_EVENTS} ready events, folds duplicate host copies, delivers
     * what is kept and frees the slots. Event thread.
     *
     * @return the events read
     */
    private int drain() {
        long from = ring.head();
        int n = ring.ready(from, MAX_BATCH_EVENTS);
        view.clear();
        for (long t = from; t < from + n; t++) {
            if (kept(t)) {
                view.add(t);
            }
        }
        if (view.size() > 0) {
            deliver();
        }
        ring.release(from + n);
        return n;
    }

    /** {@return whether ring position t survives the fold of host copies} */
    private boolean kept(long t) {
        if (ring.medium(t) != KvMedium.CPU) {
            return true;
        }
        long hi = ring.hashHi(t);
        long lo = ring.hashLo(t);
        if (ring.type(t) == KvEventView.Type.BLOCK_STORED) {
            return hostCopies.increment(hi, lo) == 1;
        }
        // The last copy's removal passes, as does one whose store was dropped (count 0); earlier copies' do not.
        return hostCopies.decrement(hi, lo) == 0;
    }

    /** Numbers the view's batch and hands it to the listener. Event thread. */
    private void deliver() {
        long gap = dropped.sum() - droppedSeen;
        droppedSeen += gap;
        long sequence = nextSequence + gap;
        nextSequence = sequence + 1;
        Instant now = Instant.now();
        double ts = now.getEpochSecond() + now.getNano() / 1e9;
        try {
            listener.onEvents(sequence, ts, gap, view);
        } catch (Throwable e) { // an Error too (an assertion, a missing class): it must not end the event thread
            listenerErrors.incrementAndGet();
            System.getLogger("io.tierkv.tiers.KvEventQueue").log(System.Logger.Level.WARNING,
                    "KV event listener failed on batch " + sequence, e);
        }
        batches.incrementAndGet();
        delivered.addAndGet(view.size());
    }

    /**
     * Stops taking reports, delivers what is queued and a final {@code AllBlocksCleared}, and waits
     * for the event thread to end (at most 10 s); idempotent.
     */
    @Override
    public void close() {
        accepting = false;
        stopping = true;
        LockSupport.unpark(thread);
        try {
            thread.join(CLOSE_TIMEOUT_MILLIS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * The batch being delivered: ring positions read in place, or the final
     * {@code AllBlocksCleared} (position -1). Event thread only.
     */
    private final class BatchView implements KvEventView {

        private static final long CLEARED = -1;
        private final long[] positions = new long[MAX_BATCH_EVENTS];
        private int size;

        void clear() {
            size = 0;
        }

        void add(long t) {
            positions[size++] = t;
        }

        void addCleared() {
            positions[size++] = CLEARED;
        }

        private long at(int i) {
            if (i < 0 || i >= size) {
                throw new IndexOutOfBoundsException("event " + i + " (the batch has " + size + ")");
            }
            return positions[i];
        }

        @Override
        public int size() {
            return size;
        }

        @Override
        public Type type(int i) {
            long t = at(i);
            return t == CLEARED ? Type.ALL_BLOCKS_CLEARED : ring.type(t);
        }

        @Override
        public KvMedium medium(int i) {
            long t = at(i);
            return t == CLEARED ? null : ring.medium(t);
        }

        @Override
        public long hashHi(int i) {
            long t = at(i);
            return t == CLEARED ? 0 : ring.hashHi(t);
        }

        @Override
        public long hashLo(int i) {
            long t = at(i);
            return t == CLEARED ? 0 : ring.hashLo(t);
        }

        @Override
        public boolean hasParent(int i) {
            return parentHashHi(i) != 0 || parentHashLo(i) != 0;
        }

        @Override
        public long parentHashHi(int i) {
            long t = at(i);
            return t == CLEARED ? 0 : ring.parentHi(t);
        }

        @Override
        public long parentHashLo(int i) {
            long t = at(i);
            return t == CLEARED ? 0 : ring.parentLo(t);
        }

        @Override
        public int tokenCount(int i) {
            long t = at(i);
            return t == CLEARED ? 0 : ring.tokenCount(t);
        }

        @Override
        public int tokenId(int i, int j) {
            long t = at(i);
            if (t == CLEARED) {
                throw new IndexOutOfBoundsException("token " + j + " of event " + i + " (it has no tokens)");
            }
            return ring.token(t, j);
        }

        @Override
        public int copyTokenIds(int i, int[] dst, int offset) {
            long t = at(i);
            return t == CLEARED ? 0 : ring.copyTokens(t, dst, offset);
        }

        @Override
        public int blockSizeTokens(int i) {
            return type(i) == Type.BLOCK_STORED ? blockSizeTokens : 0;
        }
    }
}

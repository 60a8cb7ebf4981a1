package io.tierkv.tiers;

import io.tierkv.core.event.KvBlockHash;
import io.tierkv.core.event.KvEventSink;
import io.tierkv.core.event.KvMedium;
import io.tierkv.core.prefix.BlockIdentity;
import io.tierkv.tiers.events.KvEvent;
import io.tierkv.tiers.events.KvEventBatch;
import io.tierkv.tiers.events.KvEventListener;
import io.tierkv.tiers.events.KvEventStats;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

/**
 * The manager's KV event queue: the {@link KvEventSink} every tier reports to, and the one thread
 * that turns those reports into {@link KvEventBatch}es for the {@link KvEventListener}.
 *
 * <p>Data path: a report builds one small event (the block's token ids copied out of its identity)
 * and offers it to a bounded {@link ArrayBlockingQueue}; a full queue drops it and counts the drop.
 * Nothing on the data path waits for the listener.
 *
 * <p>Event thread: every {@link #FLUSH_INTERVAL_NANOS} takes what is queued (up to
 * {@link #MAX_BATCH_EVENTS} per batch), folds
 * duplicate copies (the host tier may hold two block ids with one hash: only the first copy's
 * store and the last copy's removal are delivered, so a consumer keeping a set per medium stays
 * exact), numbers the batch ({@link KvEventBatch} explains the gaps) and calls the listener.
 * {@link #close()} stops the reports, delivers what is queued plus a final {@code AllBlocksCleared}
 * and ends the thread.
 *
 * <p>Thread-safe: the sink methods may be called from any thread; the fold table and the sequence
 * belong to the event thread.
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
    private static final ValueLayout.OfLong LONG_LE = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final ArrayBlockingQueue<KvEvent> queue;
    private final KvEventListener listener;
    private final int blockSizeTokens;
    private final LongAdder queued = new LongAdder();
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
    private final Map<KvBlockHash, Integer> hostCopies = new HashMap<>();
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
        this.queue = new ArrayBlockingQueue<>(capacity);
        this.blockSizeTokens = blockSizeTokens;
        this.thread = Thread.ofPlatform().daemon().name("tierkv-kv-events").unstarted(this::run);
        thread.start();
    }

    @Override
    public void blockStored(KvMedium medium, long hashHi, long hashLo, MemorySegment identity) {
        if (!accepting) {
            return;
        }
        long parentHi = identity.get(LONG_LE, BlockIdentity.PARENT_HI);
        long parentLo = identity.get(LONG_LE, BlockIdentity.PARENT_LO);
        KvBlockHash parent = parentHi == 0 && parentLo == 0 ? null : new KvBlockHash(parentHi, parentLo);
        int[] tokens = new int[(int) ((identity.byteSize() - BlockIdentity.KEY_BYTES) / Integer.BYTES)];
        MemorySegment.copy(identity, ValueLayout.JAVA_INT_UNALIGNED, BlockIdentity.KEY_BYTES, tokens, 0, tokens.length);
        offer(new KvEvent.BlockStored(new KvBlockHash(hashHi, hashLo), parent, tokens, blockSizeTokens, medium));
    }

    @Override
    public void blockRemoved(KvMedium medium, long hashHi, long hashLo) {
        if (accepting) {
            offer(new KvEvent.BlockRemoved(new KvBlockHash(hashHi, hashLo), medium));
        }
    }

    private void offer(KvEvent e) {
        if (queue.offer(e)) {
            queued.increment();
        } else {
            dropped.increment();
        }
    }

    /** {@return a snapshot of the counters; thread-safe} */
    KvEventStats stats() {
        int depth = queue.size();
        return new KvEventStats(queue.remainingCapacity() + depth, depth, queued.sum(), dropped.sum(), batches.get(),
                delivered.get(), listenerErrors.get());
    }

    private void run() {
        List<KvEvent> raw = new ArrayList<>();
        for (;;) {
            boolean last = stopping; // read before the drain: nothing is accepted once it is set
            while (queue.drainTo(raw, MAX_BATCH_EVENTS) > 0) {
                deliver(raw);
                raw.clear();
            }
            if (last) {
                raw.add(new KvEvent.AllBlocksCleared());
                deliver(raw);
                return;
            }
            LockSupport.parkNanos(FLUSH_INTERVAL_NANOS);
            if (Thread.interrupted()) {
                stopping = true;
            }
        }
    }

    /** Folds duplicate copies, numbers the batch and hands it to the listener. Event thread. */
    private void deliver(List<KvEvent> raw) {
        List<KvEvent> out = new ArrayList<>(raw.size());
        for (KvEvent e : raw) {
            switch (e) {
                case KvEvent.BlockStored s -> {
                    if (s.medium() != KvMedium.CPU || hostCopies.merge(s.hash(), 1, Integer::sum) == 1) {
                        out.add(s);
                    }
                }
                case KvEvent.BlockRemoved r when r.medium() != KvMedium.CPU -> out.add(r);
                case KvEvent.BlockRemoved r -> {
                    Map<KvBlockHash, Integer> m = hostCopies;
                    Integer n = m.get(r.hash());
                    if (n == null || n == 1) {
                        m.remove(r.hash());
                        out.add(r); // n == null: its store was dropped; pass the removal on
                    } else {
                        m.put(r.hash(), n - 1);
                    }
                }
                case KvEvent.AllBlocksCleared c -> {
                    hostCopies.clear();
                    out.add(c);
                }
            }
        }
        if (out.isEmpty()) {
            return;
        }
        long gap = dropped.sum() - droppedSeen;
        droppedSeen += gap;
        long sequence = nextSequence + gap;
        nextSequence = sequence + 1;
        Instant now = Instant.now();
        double ts = now.getEpochSecond() + now.getNano() / 1e9;
        try {
            listener.onBatch(new KvEventBatch(sequence, ts, out, gap));
        } catch (RuntimeException e) {
            listenerErrors.incrementAndGet();
            System.getLogger("io.tierkv.tiers.KvEventQueue").log(System.Logger.Level.WARNING,
                    "KV event listener failed on batch " + sequence, e);
        }
        batches.incrementAndGet();
        delivered.addAndGet(out.size());
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
}

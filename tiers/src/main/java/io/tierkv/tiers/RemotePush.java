package io.tierkv.tiers;

import io.tierkv.core.spi.BlockStore;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/**
 * Blocks on their way to the remote store: a bounded outbox of off-heap block buffers that the
 * lower tiers fill as blocks leave them ({@link #offer}, which never blocks: with no free buffer
 * the block is not sent, and counted) and one daemon thread drains in pipelined batches
 * ({@link BlockStore#putAll}). The store is write-once, so a block sent twice is stored once.
 *
 * <p>Memory: {@code buffers x (bytesPerBlock + identity bytes)}, allocated when the manager is
 * built. Thread-safe: {@link #offer} from any thread; the queues hand each buffer to one owner at
 * a time.
 */
final class RemotePush implements AutoCloseable {

    /** Most blocks one {@code putAll} sends. */
    static final int BATCH_BLOCKS = 64;
    /** Longest {@link #close} waits for the outbox to drain. */
    private static final long CLOSE_WAIT_NANOS = TimeUnit.SECONDS.toNanos(5);

    private final BlockStore store;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment[] payloads;
    private final MemorySegment[] identities;
    private final long[] hashHi;
    private final long[] hashLo;
    /** Buffer indices, boxed once: the queues then allocate nothing per block. */
    private final Integer[] boxed;
    private final ArrayBlockingQueue<Integer> free;
    private final ArrayBlockingQueue<Integer> ready;
    private final Thread thread;
    private volatile boolean stopping;
    /** Told of each block the store accepted ({@link io.tierkv.core.event.KvMedium#REMOTE}). */
    volatile io.tierkv.core.event.KvEventSink events = io.tierkv.core.event.KvEventSink.NONE;
    /** Whether the push thread is in a {@code putAll}; push thread only. */
    private boolean putting;
    /**
     * Values the store reported gone during this thread's {@code putAll} (its LRU trimmed them),
     * held back until the batch's stores are reported: a value of the very batch may be among them,
     * and its removal must follow its store. Push thread only.
     */
    private long[] heldBackHi = new long[BATCH_BLOCKS];
    private long[] heldBackLo = new long[BATCH_BLOCKS];
    private int heldBack;
    final LongAdder offered = new LongAdder();
    final LongAdder dropped = new LongAdder();

    /**
     * Allocates the outbox and starts its thread.
     *
     * @param store         the remote store
     * @param buffers       outbox buffers, >= 1
     * @param payloadBytes  bytes per block
     * @param identityBytes bytes of a block's identity
     */
    RemotePush(BlockStore store, int buffers, long payloadBytes, long identityBytes) {
        this.store = store;
        this.payloads = new MemorySegment[buffers];
        this.identities = new MemorySegment[buffers];
        this.hashHi = new long[buffers];
        this.hashLo = new long[buffers];
        this.boxed = new Integer[buffers];
        this.free = new ArrayBlockingQueue<>(buffers);
        this.ready = new ArrayBlockingQueue<>(buffers);
        MemorySegment all = arena.allocate(buffers * payloadBytes, 64);
        MemorySegment ids = arena.allocate(buffers * identityBytes, 8);
        for (int i = 0; i < buffers; i++) {
            payloads[i] = all.asSlice(i * payloadBytes, payloadBytes);
            identities[i] = ids.asSlice(i * identityBytes, identityBytes);
            boxed[i] = i;
            free.add(boxed[i]);
        }
        this.thread = Thread.ofPlatform().daemon().name("tierkv-remote-push").unstarted(this::run);
        thread.start();
    }

    /**
     * Queues a copy of a block for the store, without blocking; the segments are read during the
     * call only.
     *
     * @param hi       block hash, high word
     * @param lo       block hash, low word
     * @param identity its identity, of the outbox's identity bytes
     * @param payload  its bytes, of the outbox's bytes per block
     * @return true if queued; false if every buffer is taken (counted in {@link #dropped})
     */
    boolean offer(long hi, long lo, MemorySegment identity, MemorySegment payload) {
        offered.increment();
        Integer i = stopping ? null : free.poll();
        if (i == null) {
            dropped.increment();
            return false;
        }
        MemorySegment.copy(payload, 0, payloads[i], 0, payloads[i].byteSize());
        MemorySegment.copy(identity, 0, identities[i], 0, identities[i].byteSize());
        hashHi[i] = hi;
        hashLo[i] = lo;
        ready.add(i); // never full: it holds at most the buffers not in free
        return true;
    }

    /**
     * Reports a value the store no longer holds ({@link BlockStore#setRemovalListener}, on the
     * thread of the call that saw it go): at once, or, during this outbox's own {@code putAll},
     * after that batch's stores.
     *
     * @param hi block hash, high word
     * @param lo block hash, low word
     */
    void removed(long hi, long lo) {
        if (Thread.currentThread() != thread || !putting) {
            events.blockRemoved(io.tierkv.core.event.KvMedium.REMOTE, hi, lo);
            return;
        }
        if (heldBack == heldBackHi.length) {
            heldBackHi = java.util.Arrays.copyOf(heldBackHi, 2 * heldBack);
            heldBackLo = java.util.Arrays.copyOf(heldBackLo, 2 * heldBack);
        }
        heldBackHi[heldBack] = hi;
        heldBackLo[heldBack++] = lo;
    }

    /** {@return blocks queued and not yet answered by the store} */
    int pending() {
        return payloads.length - free.size();
    }

    private void run() {
        int[] batch = new int[BATCH_BLOCKS];
        long[] hi = new long[BATCH_BLOCKS];
        long[] lo = new long[BATCH_BLOCKS];
        MemorySegment[] ids = new MemorySegment[BATCH_BLOCKS];
        MemorySegment[] srcs = new MemorySegment[BATCH_BLOCKS];
        boolean[] stored = new boolean[BATCH_BLOCKS];
        while (true) {
            Integer first;
            try {
                first = ready.poll(10, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                return;
            }
            if (first == null) {
                if (stopping) {
                    return;
                }
                continue;
            }
            int n = 0;
            for (Integer i = first; i != null && n < BATCH_BLOCKS; i = n < BATCH_BLOCKS ? ready.poll() : null) {
                batch[n] = i;
                hi[n] = hashHi[i];
                lo[n] = hashLo[i];
                ids[n] = identities[i];
                srcs[n++] = payloads[i];
            }
            io.tierkv.core.event.KvEventSink sink = events;
            try {
                putting = true;
                store.putAll(hi, lo, ids, srcs, n, stored); // drops and faults are the store's counted misses
                putting = false;
                for (int k = 0; k < n && sink.enabled(); k++) {
                    if (stored[k]) {
                        sink.blockStored(io.tierkv.core.event.KvMedium.REMOTE, hi[k], lo[k], ids[k]);
                    }
                }
            } catch (RuntimeException e) {
                TierEvents.fault("remote push of " + n + " blocks failed: " + e);
            } finally {
                putting = false;
                for (int k = 0; k < heldBack; k++) { // after the batch's stores
                    sink.blockRemoved(io.tierkv.core.event.KvMedium.REMOTE, heldBackHi[k], heldBackLo[k]);
                }
                heldBack = 0;
                for (int k = 0; k < n; k++) {
                    free.add(boxed[batch[k]]);
                }
            }
        }
    }

    /** Stops taking blocks, sends what is queued (waiting at most 5 s), stops the thread and frees the outbox. */
    @Override
    public void close() {
        stopping = true;
        try {
            thread.join(TimeUnit.NANOSECONDS.toMillis(CLOSE_WAIT_NANOS));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (thread.isAlive()) {
            thread.interrupt(); // a store call past its timeout: the outbox stays allocated for it
            return;
        }
        arena.close();
    }
}

package io.tierkv.tiers;

import io.tierkv.core.KvLayout;
import io.tierkv.core.cache.PagedKvCache;
import io.tierkv.core.cache.Sequence;
import java.lang.foreign.MemorySegment;

/**
 * Streams one layer of a sequence's blocks in order for blockwise attention over more context
 * than fits on the device: {@link #next()} leases the next block (promoting it if it is below) and
 * releases the previous one, while read-ahead promotions for the following blocks run on the
 * mover. The blocks streamed are the {@code blockCount()} blocks the sequence held when the
 * stream was made ({@link KvBlockManager#stream}); blocks appended later are not streamed. Not
 * thread-safe; close it to release the last lease (a second close does nothing).
 */
public final class BlockStream implements AutoCloseable {

    private final KvBlockManager manager;
    private final PagedKvCache cache;
    private final Sequence sequence;
    private final int layer;
    private final int readAhead;
    private final int blocks;
    private int nextIndex;
    private int leased = -1;
    private MemorySegment current;
    private boolean closed;

    BlockStream(KvBlockManager manager, Sequence sequence, int layer, int readAhead) {
        this.manager = manager;
        this.cache = manager.cache();
        this.sequence = sequence;
        this.layer = layer;
        this.readAhead = readAhead;
        this.blocks = sequence.blockCount();
        for (int i = 0; i < Math.min(readAhead, blocks); i++) {
            readAhead(sequence.blockId(i));
        }
    }

    /** {@return whether another block follows: false once the fixed block count is reached or after close} */
    public boolean hasNext() {
        return !closed && nextIndex < blocks;
    }

    /**
     * Leases the next block and releases the previous one; the segments of the previous block
     * ({@link #keys()}, {@link #values()}) are then no longer valid.
     *
     * @return the block index now current, in {@code [0, blocks)} where {@code blocks} is the
     *         sequence's block count when the stream was made
     * @throws IllegalStateException            if the stream or its sequence is closed
     * @throws java.util.NoSuchElementException if no block is left
     */
    public int next() {
        if (closed) {
            throw new IllegalStateException("stream is closed");
        }
        if (sequence.isClosed()) {
            throw new IllegalStateException("sequence is closed");
        }
        if (!hasNext()) {
            throw new java.util.NoSuchElementException("no block after index " + (nextIndex - 1));
        }
        int id = sequence.blockId(nextIndex);
        int previous = leased;
        leased = -1; // the call below releases it first (ids valid, lease held), whatever it throws after
        current = null;
        current = previous >= 0 ? cache.swapLease(previous, id) : cache.acquireLease(id);
        leased = id;
        if (sequence.isClosed()) { // closed by another thread after the id was read: it may name another sequence's block
            close();
            throw new IllegalStateException("sequence is closed");
        }
        long ahead = (long) nextIndex + readAhead; // a read-ahead of up to Integer.MAX_VALUE blocks
        if (readAhead > 0 && ahead < blocks) {
            readAhead(sequence.blockId((int) ahead));
        }
        return nextIndex++;
    }

    private void readAhead(int blockId) {
        if (!cache.diagnostics().isOnDevice(blockId)) { // only blocks below need the mover
            manager.requestPromotion(blockId);
        }
    }

    /**
     * The whole current block: every layer's keys and values in the layout's order
     * ({@code [layer][K|V][token][head][dim]}, {@link KvLayout#offsetOf}; this stream's layer starts
     * at {@code layerOffset(layer, K)} and {@code layerOffset(layer, V)}). Unlike {@link #keys()} and
     * {@link #values()}, which make a view per call, it returns the one segment {@link #next()} got
     * with its lease, so a reader that passes offsets allocates nothing per call. A view of the leased top-tier slot, valid
     * only until the next {@link #next()} or {@link #close()}.
     *
     * @return the current block's {@code bytesPerBlock} bytes
     * @throws IllegalStateException before the first {@link #next()} or after close
     */
    public MemorySegment block() {
        if (closed) {
            throw new IllegalStateException("stream is closed");
        }
        if (current == null) {
            throw new IllegalStateException("call next() first");
        }
        return current;
    }

    /**
     * The current block's keys for this stream's layer: {@code layerBlockBytes} bytes, B x H x D
     * elements of the layout's dtype in the order {@code [token][head][dim]}. The segment is a view
     * of the leased top-tier slot, not a copy: it is valid only until the next {@link #next()} or
     * {@link #close()}, after which the slot may hold another block and its bytes may change.
     *
     * @return the keys of the current block
     * @throws IllegalStateException before the first {@link #next()} or after close
     */
    public MemorySegment keys() {
        return half(KvLayout.K);
    }

    /**
     * The current block's values for this stream's layer, shaped and valid as {@link #keys()}.
     *
     * @return the values of the current block
     * @throws IllegalStateException before the first {@link #next()} or after close
     */
    public MemorySegment values() {
        return half(KvLayout.V);
    }

    private MemorySegment half(int kv) {
        if (closed) {
            throw new IllegalStateException("stream is closed");
        }
        if (current == null) {
            throw new IllegalStateException("call next() first");
        }
        KvLayout l = cache.layout();
        return current.asSlice(l.layerOffset(layer, kv), l.layerBlockBytes());
    }

    private void releaseCurrent() {
        if (leased >= 0) {
            cache.releaseLease(leased);
            leased = -1;
            current = null;
        }
    }

    /** Releases the current block's lease; idempotent. Later {@link #next()} calls throw. */
    @Override
    public void close() {
        closed = true;
        releaseCurrent();
    }
}

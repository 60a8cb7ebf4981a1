package io.tierkv.tiers;

import io.tierkv.core.KvLayout;
import io.tierkv.core.cache.PagedKvCache;
import io.tierkv.core.cache.Sequence;
import java.lang.foreign.MemorySegment;

/**
 * Streams one layer of a sequence's blocks in order for blockwise attention over more context
 * than fits on the device: {@link #next()} leases the next block (promoting it if it is below) and
 * releases the previous one, while read-ahead promotions for the following blocks run on the
 * mover. Not thread-safe; close it to release the last lease.
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

    /** {@return whether another block follows} */
    public boolean hasNext() {
        return nextIndex < blocks;
    }

    /**
     * Leases the next block and releases the previous one.
     *
     * @return the block index now current
     * @throws java.util.NoSuchElementException if no block is left
     */
    public int next() {
        if (!hasNext()) {
            throw new java.util.NoSuchElementException("no block after index " + (nextIndex - 1));
        }
        releaseCurrent();
        int id = sequence.blockId(nextIndex);
        current = cache.acquireLease(id);
        leased = id;
        int ahead = nextIndex + readAhead;
        if (readAhead > 0 && ahead < blocks) {
            readAhead(sequence.blockId(ahead));
        }
        return nextIndex++;
    }

    private void readAhead(int blockId) {
        if (!cache.isOnDevice(blockId)) { // only blocks below need the mover
            manager.requestPromotion(blockId);
        }
    }

    /** {@return the current block's keys for this stream's layer: B x H x D elements} */
    public MemorySegment keys() {
        return half(KvLayout.K);
    }

    /** {@return the current block's values for this stream's layer} */
    public MemorySegment values() {
        return half(KvLayout.V);
    }

    private MemorySegment half(int kv) {
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

    @Override
    public void close() {
        releaseCurrent();
    }
}

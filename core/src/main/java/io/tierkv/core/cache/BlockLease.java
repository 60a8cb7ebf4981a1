package io.tierkv.core.cache;

import java.lang.foreign.MemorySegment;

/**
 * Device-resident, pinned blocks of one sequence for attention. While the lease is open none of
 * its blocks is evicted, moved or reused; their bytes are read through {@link #block(int)} with the
 * offsets of {@link io.tierkv.core.KvLayout}. Not thread-safe; close exactly once (a second close
 * does nothing).
 */
public final class BlockLease implements AutoCloseable {

    private final PagedKvCache cache;
    private final int firstBlockIndex;
    private final int[] blockIds;
    private final MemorySegment[] segments;
    private boolean closed;

    BlockLease(PagedKvCache cache, int firstBlockIndex, int[] blockIds, MemorySegment[] segments) {
        this.cache = cache;
        this.firstBlockIndex = firstBlockIndex;
        this.blockIds = blockIds;
        this.segments = segments;
    }

    /** {@return number of leased blocks} */
    public int blockCount() {
        return blockIds.length;
    }

    /** {@return the sequence block index of the first leased block} */
    public int firstBlockIndex() {
        return firstBlockIndex;
    }

    /**
     * Returns the block id of a leased block.
     *
     * @param i leased block number in [0, blockCount)
     * @return the block's id
     * @throws IndexOutOfBoundsException if i is out of range
     * @throws IllegalStateException     after close (the id may belong to another sequence by then)
     */
    public int blockId(int i) {
        check(i);
        return blockIds[i];
    }

    /**
     * The bytes of a leased block: {@code bytesPerBlock} bytes in the layout's order
     * {@code [layer][K|V][token][head][dim]} (offsets from {@link io.tierkv.core.KvLayout#offsetOf}).
     * The segment is the block's top-tier slot itself, not a copy: it is valid only until this
     * lease closes. After that the slot may hold another block and its bytes may change at any
     * time; the segment must not be read or kept.
     *
     * @param i leased block number in [0, blockCount)
     * @return the block's top-tier slot, bytesPerBlock long
     * @throws IndexOutOfBoundsException if i is out of range
     * @throws IllegalStateException     after close
     */
    public MemorySegment block(int i) {
        check(i);
        return segments[i];
    }

    private void check(int i) {
        if (closed) {
            throw new IllegalStateException("lease is closed");
        }
        if (i < 0 || i >= blockIds.length) {
            throw new IndexOutOfBoundsException("i: " + i + " (expected 0 <= i < blockCount " + blockIds.length + ")");
        }
    }

    /** Releases every block of the lease; idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        cache.releaseLeases(blockIds);
    }
}

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
     * Returns the block id at a logical block index.
     *
     * @param i leased block number in [0, blockCount)
     * @return the block's id
     */
    public int blockId(int i) {
        return blockIds[i];
    }

    /**
     * The bytes of a leased block, laid out as {@link io.tierkv.core.KvLayout} describes.
     *
     * @param i leased block number in [0, blockCount)
     * @return the block's top-tier slot, bytesPerBlock long
     * @throws IllegalStateException after close
     */
    public MemorySegment block(int i) {
        if (closed) {
            throw new IllegalStateException("lease is closed");
        }
        return segments[i];
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

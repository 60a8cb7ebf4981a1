package io.tierkv.core.cache;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Which (layer, offset) positions of each OPEN block have been written, off the heap: per block
 * id one count word and B x L bits (bit {@code offset * L + layer}), in 64-bit words. A block seals
 * when its count reaches B x L. Not thread-safe: a block's row is written by the one thread that
 * writes its sequence, or under the cache lock.
 */
final class WrittenPositions {

    private final MemorySegment rows;
    private final int writesPerBlock;
    private final int layers;
    private final long rowBytes;

    /**
     * Allocates the rows.
     *
     * @param arena       owns the memory
     * @param blocks      block ids
     * @param blockTokens B
     * @param layers      L
     */
    WrittenPositions(Arena arena, int blocks, int blockTokens, int layers) {
        this.writesPerBlock = blockTokens * layers;
        this.layers = layers;
        this.rowBytes = rowBytes(blockTokens, layers);
        this.rows = arena.allocate(blocks * rowBytes, 64);
    }

    /** {@return bytes per block id: one count word and B x L bits, rounded up to 64-bit words} */
    static long rowBytes(int blockTokens, int layers) {
        return (1 + (((long) blockTokens * layers + 63) >>> 6)) * Long.BYTES;
    }

    /** Marks nothing of block {@code id} written. */
    void clear(int id) {
        rows.asSlice(id * rowBytes, rowBytes).fill((byte) 0);
    }

    /** Marks (layer, offset) of a block written; returns true when the block just became complete. */
    boolean mark(int id, int layer, int offset) {
        int bit = offset * layers + layer;
        long base = id * rowBytes;
        long addr = base + (1 + (bit >>> 6)) * (long) Long.BYTES;
        long word = rows.get(ValueLayout.JAVA_LONG, addr);
        long mask = 1L << bit;
        if ((word & mask) != 0) {
            return false;
        }
        rows.set(ValueLayout.JAVA_LONG, addr, word | mask);
        long count = rows.get(ValueLayout.JAVA_LONG, base) + 1;
        rows.set(ValueLayout.JAVA_LONG, base, count);
        return count == writesPerBlock;
    }

    /** Marks every (layer, offset) of a block written (a whole-block append). */
    void markAll(int id) {
        long base = id * rowBytes;
        rows.set(ValueLayout.JAVA_LONG, base, writesPerBlock);
        for (int w = 0, left = writesPerBlock; left > 0; w++, left -= 64) {
            rows.set(ValueLayout.JAVA_LONG, base + (1L + w) * Long.BYTES, left >= 64 ? -1L : (1L << left) - 1);
        }
    }

    /** {@return whether every position of every layer of a block has been written} */
    boolean isComplete(int id) {
        return rows.get(ValueLayout.JAVA_LONG, id * rowBytes) == writesPerBlock;
    }

    /** Copies block {@code from}'s row to block {@code to} (copy-on-write). */
    void copy(int from, int to) {
        MemorySegment.copy(rows, from * rowBytes, rows, to * rowBytes, rowBytes);
    }
}

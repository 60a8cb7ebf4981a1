package io.tierkv.core.pool;

import java.lang.foreign.MemorySegment;

/**
 * Slices of long-lived segments (the device tier's slots) made on first use and kept for reuse in
 * a direct-mapped table of at most {@link #MAX_KEPT} entries, keyed by the slice's index: a slice
 * is handed out again while no other index of its entry has replaced it. A tier of at most that
 * many slots thus keeps a slice per slot, as before; a larger one keeps 4,096, so a reader that
 * cycles over slots of different entries (distinct modulo 4,096) allocates nothing, and one over
 * slots that share an entry makes a 40-byte view per miss. A slice kept for every slot cost 44 B
 * of heap per slot for as long as the memory lived (issue 19 part 2); a slice made per call and
 * returned (a lease's) is not removed by the JIT's escape analysis.
 *
 * <p>The segments sliced must be native (a heap segment's address is its offset in its array, so
 * two arrays' slices would look alike), outlive this object and not overlap, and an index must
 * always name the same slice. Thread-safe without locks: entries are written racily, which is benign,
 * since a slice is immutable (final fields, safely published) and a reader that finds another
 * index's slice makes its own.
 */
public final class KeptSlices {

    /** Most slices kept (a power of two): 4,096 x 44 B = 176 KiB at most. */
    public static final int MAX_KEPT = 4096;

    private final MemorySegment[] kept;
    /** Whether indices share entries (more indices than entries): only then is a kept slice checked. */
    private final boolean shared;

    /**
     * Creates an empty table for indices {@code [0, indices)}.
     *
     * @param indices how many indices will be sliced, {@code >= 1}: the table holds as many
     *                entries, rounded up to a power of two, up to {@link #MAX_KEPT}
     * @throws IllegalArgumentException if indices is below 1
     */
    public KeptSlices(int indices) {
        if (indices < 1) {
            throw new IllegalArgumentException("indices: " + indices + " (expected >= 1)");
        }
        int n = Math.min(MAX_KEPT, indices);
        this.kept = new MemorySegment[n == 1 ? 1 : Integer.highestOneBit(n - 1) << 1];
        this.shared = indices > kept.length;
    }

    /**
     * Returns {@code base.asSlice(offset, bytes)}, the kept one if index {@code index}'s entry
     * holds it. Where every index has an entry of its own (at most {@link #MAX_KEPT} indices) a
     * kept slice is returned unread, so a caller must pass the same {@code base}, {@code offset}
     * and {@code bytes} for an index every time; where indices share entries, a kept slice is
     * checked by its address and length (a read of the slice object).
     *
     * @param index  the slice's index (its slot or id), {@code 0 <= index < indices}
     * @param base   the segment sliced
     * @param offset the slice's first byte in {@code base}
     * @param bytes  the slice's length
     * @return the slice
     * @throws IndexOutOfBoundsException if the range is outside {@code base}
     * @throws IllegalArgumentException  if {@code base} is not native
     */
    public MemorySegment slice(int index, MemorySegment base, long offset, long bytes) {
        if (!base.isNative()) {
            throw new IllegalArgumentException(
                    "base: a heap segment (expected a native one: kept slices are told apart by address)");
        }
        int entry = index & (kept.length - 1);
        MemorySegment v = kept[entry];
        if (v == null || shared && (v.address() != base.address() + offset || v.byteSize() != bytes)) {
            v = base.asSlice(offset, bytes);
            kept[entry] = v;
        }
        return v;
    }
}

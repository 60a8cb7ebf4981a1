package io.tierkv.bench.model;

import io.tierkv.core.DType;
import io.tierkv.core.KvLayout;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Objects;

/**
 * An off-heap paged KV store: a block table maps block index {@code position / B} to a block of
 * {@link KvLayout#bytesPerBlock()} bytes in the TierKV layout {@code [layer][K|V][token][head][dim]}
 * (float32), allocated from a caller's {@link Arena} when a position first opens it. A read hands
 * out one run per block, straight from the block's memory. It exercises the paged code path of
 * the forward pass without the tier manager.
 *
 * <p>{@link #fork(int)} starts a second sequence that shares the parent's full blocks below the fork
 * point (they become immutable in both: a write into one throws) and copies the partial last block;
 * so parallel sequences after a shared prompt hold its K/V once.
 *
 * <p>Thread-safety: one thread at a time per store, with happens-before between threads. After a
 * fork, parent and child may run on different threads at once (shared blocks are only read),
 * provided the arena allows access and allocation from those threads (for example
 * {@link Arena#ofShared()} or {@link Arena#ofAuto()}). Memory lives as long as the arena: closing
 * it invalidates every store that allocated from it.
 */
public final class PagedKvStore implements KvStore {

    private final KvLayout layout;
    private final int capacity;
    private final Arena arena;
    private final int kvDim;
    private final MemorySegment[] blocks;
    /** Blocks shared with a fork (or its parent): immutable from the fork on. */
    private final boolean[] shared;

    /**
     * Creates an empty store; no block is allocated yet.
     *
     * @param layout   block layout; its dtype must be {@link DType#F32}
     * @param capacity positions, at least 1
     * @param arena    where blocks are allocated (64-byte aligned); owned by the caller
     * @throws IllegalArgumentException when the dtype is not F32 or the capacity is below 1
     * @throws NullPointerException     when the layout or arena is null
     */
    public PagedKvStore(KvLayout layout, int capacity, Arena arena) {
        this.layout = Objects.requireNonNull(layout, "layout");
        this.arena = Objects.requireNonNull(arena, "arena");
        if (layout.dtype() != DType.F32) {
            throw new IllegalArgumentException("layout.dtype: " + layout.dtype() + " (expected F32)");
        }
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity: " + capacity + " (expected >= 1)");
        }
        this.capacity = capacity;
        this.kvDim = layout.kvHeads() * layout.headDim();
        int blockCount = (capacity + layout.blockSizeTokens() - 1) / layout.blockSizeTokens();
        this.blocks = new MemorySegment[blockCount];
        this.shared = new boolean[blockCount];
    }

    /**
     * Returns the block layout.
     *
     * @return the block layout
     */
    public KvLayout layout() {
        return layout;
    }

    @Override
    public int layers() {
        return layout.layers();
    }

    @Override
    public int kvDim() {
        return kvDim;
    }

    @Override
    public int capacity() {
        return capacity;
    }

    /**
     * {@inheritDoc} The first write into a block allocates it from the arena; other writes
     * allocate nothing.
     *
     * @throws IllegalStateException when the position lies in a block shared through a fork
     */
    @Override
    public void write(int layer, int position, float[] k, float[] v) {
        Objects.checkIndex(layer, layout.layers());
        Objects.checkIndex(position, capacity);
        int b = position / layout.blockSizeTokens();
        if (shared[b]) {
            throw new IllegalStateException("position " + position + ": block " + b
                    + " is shared with a fork and immutable");
        }
        MemorySegment block = blocks[b];
        if (block == null) {
            block = arena.allocate(layout.bytesPerBlock(), 64);
            blocks[b] = block;
        }
        int t = position % layout.blockSizeTokens();
        MemorySegment.copy(k, 0, block, ValueLayout.JAVA_FLOAT, layout.offsetOf(layer, KvLayout.K, t), kvDim);
        MemorySegment.copy(v, 0, block, ValueLayout.JAVA_FLOAT, layout.offsetOf(layer, KvLayout.V, t), kvDim);
    }

    /**
     * {@inheritDoc} Here: one run per block, {@code B} tokens except possibly the last.
     *
     * @throws IllegalStateException when a block in range was never written
     */
    @Override
    public void read(int layer, int length, KvBlockVisitor visitor) {
        if (length < 1 || length > capacity) {
            throw new IndexOutOfBoundsException("length: " + length + " (expected 1 <= length <= " + capacity + ")");
        }
        long keysOffset = layout.layerOffset(layer, KvLayout.K);
        long valuesOffset = layout.layerOffset(layer, KvLayout.V);
        int blockSize = layout.blockSizeTokens();
        for (int b = 0, first = 0; first < length; b++, first += blockSize) {
            MemorySegment block = blocks[b];
            if (block == null) {
                throw new IllegalStateException("block " + b + " (positions " + first + "..) was never written");
            }
            visitor.visit(first, Math.min(blockSize, length - first), block, keysOffset, block, valuesOffset);
        }
    }

    /**
     * Starts a new sequence whose positions [0, length) hold this store's K and V: full blocks are
     * shared (and become immutable in both stores), the partly covered last block is copied for
     * positions below {@code length} in every layer. The child has the same layout, capacity and
     * arena; both then continue independently from position {@code length}. Call it with no write
     * to this store in progress.
     *
     * @param length positions to take over, in [0, {@link #capacity()}]; each was written
     * @return the new store
     * @throws IndexOutOfBoundsException when {@code length} is out of range
     * @throws IllegalStateException     when a block below {@code length} was never written
     */
    public PagedKvStore fork(int length) {
        if (length < 0 || length > capacity) {
            throw new IndexOutOfBoundsException("length: " + length + " (expected 0 <= length <= " + capacity + ")");
        }
        int blockSize = layout.blockSizeTokens();
        PagedKvStore child = new PagedKvStore(layout, capacity, arena);
        int full = length / blockSize;
        int tail = length % blockSize;
        for (int b = 0; b < full + (tail > 0 ? 1 : 0); b++) {
            if (blocks[b] == null) {
                throw new IllegalStateException("block " + b + " (positions " + b * blockSize + "..) was never written");
            }
        }
        for (int b = 0; b < full; b++) {
            shared[b] = true;
            child.shared[b] = true;
            child.blocks[b] = blocks[b];
        }
        if (tail > 0) {
            MemorySegment source = blocks[full];
            MemorySegment copy = arena.allocate(layout.bytesPerBlock(), 64);
            long bytes = (long) tail * layout.tokenVectorBytes();
            for (int l = 0; l < layout.layers(); l++) {
                for (int kv = KvLayout.K; kv <= KvLayout.V; kv++) {
                    long offset = layout.layerOffset(l, kv);
                    MemorySegment.copy(source, offset, copy, offset, bytes);
                }
            }
            child.blocks[full] = copy;
        }
        return child;
    }
}

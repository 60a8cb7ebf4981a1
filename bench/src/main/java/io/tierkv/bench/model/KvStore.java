package io.tierkv.bench.model;

/**
 * The KV cache of one sequence, as the forward pass sees it: it writes each position's K and V
 * vectors once per layer, and attention reads them back in runs of consecutive positions, so a
 * paged store hands out one block at a time without copying.
 *
 * <p>Vectors are {@link #kvDim()} float32 values, KV head-major ({@code [head][dim]}), K after
 * RoPE. Thread-safety: one sequence is written and read by one thread at a time (DESIGN.md,
 * "Concurrency"); implementations say what more they allow.
 */
public interface KvStore {

    /**
     * Returns the number of transformer layers L.
     *
     * @return L, at least 1
     */
    int layers();

    /**
     * Returns the floats per K (or V) vector: KV heads x head size.
     *
     * @return kvDim, at least 1
     */
    int kvDim();

    /**
     * Returns the number of positions this store can hold; valid positions are [0, capacity).
     *
     * @return the capacity in positions, at least 1
     */
    int capacity();

    /**
     * Stores the K and V vectors of one position in one layer, copying {@code kvDim()} floats from
     * each array. A position is written before attention reads it, in increasing position order.
     *
     * @param layer    layer in [0, {@link #layers()})
     * @param position position in [0, {@link #capacity()})
     * @param k        key vector, at least {@code kvDim()} floats (the first {@code kvDim()} are used)
     * @param v        value vector, same size
     * @throws IndexOutOfBoundsException when the layer or position is out of range, or an array is
     *                                   shorter than {@code kvDim()}
     * @throws IllegalStateException     when the store cannot accept the position (for example a
     *                                   shared, immutable block)
     */
    void write(int layer, int position, float[] k, float[] v);

    /**
     * Hands the K and V of positions [0, length) of one layer to {@code visitor}, in increasing
     * position order, as runs of consecutive positions that cover the range exactly once.
     * Attention calls this twice per layer and token: once for the scores (K), once for the
     * weighted sum (V). Allocates nothing on the Java heap in the stores of this package.
     *
     * @param layer   layer in [0, {@link #layers()})
     * @param length  positions to read, in [1, {@link #capacity()}]; each was written for this layer
     * @param visitor receives the runs
     * @throws IndexOutOfBoundsException when the layer or length is out of range
     * @throws IllegalStateException     when the store detects that a position in range was never
     *                                   written
     */
    void read(int layer, int length, KvBlockVisitor visitor);
}

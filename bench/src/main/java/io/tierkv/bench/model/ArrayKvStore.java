package io.tierkv.bench.model;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Objects;

/**
 * The reference KV store: per layer one contiguous Java {@code float[capacity * kvDim]} for K and
 * one for V, as llama2.c {@code run.c} keeps {@code key_cache} and {@code value_cache}. A read is
 * a single run over heap segments that wrap the arrays (created once, at construction). Positions
 * never written read as zeros.
 *
 * <p>Not thread-safe: one thread at a time, with happens-before between threads (DESIGN.md,
 * "Concurrency": one sequence is written by one thread at a time).
 */
public final class ArrayKvStore implements KvStore {

    private final int layers;
    private final int kvDim;
    private final int capacity;
    private final MemorySegment[] keys;
    private final MemorySegment[] values;

    /**
     * Creates an empty store, allocating {@code 2 * layers * capacity * kvDim} floats up front.
     *
     * @param layers   transformer layers, at least 1
     * @param kvDim    floats per K (or V) vector, at least 1
     * @param capacity positions, at least 1, with {@code capacity * kvDim} a valid Java array size
     * @throws IllegalArgumentException naming the argument when one is out of range
     */
    public ArrayKvStore(int layers, int kvDim, int capacity) {
        if (layers < 1 || kvDim < 1 || capacity < 1) {
            throw new IllegalArgumentException("layers, kvDim, capacity: " + layers + ", " + kvDim + ", " + capacity
                    + " (expected each >= 1)");
        }
        if ((long) capacity * kvDim > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("capacity: " + capacity + " (expected capacity * kvDim <= "
                    + (Integer.MAX_VALUE - 8) + ", kvDim=" + kvDim + ")");
        }
        this.layers = layers;
        this.kvDim = kvDim;
        this.capacity = capacity;
        this.keys = new MemorySegment[layers];
        this.values = new MemorySegment[layers];
        for (int l = 0; l < layers; l++) {
            keys[l] = MemorySegment.ofArray(new float[capacity * kvDim]);
            values[l] = MemorySegment.ofArray(new float[capacity * kvDim]);
        }
    }

    /**
     * Creates an empty store shaped for a model.
     *
     * @param config   the model's shape (layers, {@link LlamaConfig#kvDim()})
     * @param capacity positions, at least 1
     * @return the store
     * @throws IllegalArgumentException as {@link #ArrayKvStore(int, int, int)}
     */
    public static ArrayKvStore forModel(LlamaConfig config, int capacity) {
        return new ArrayKvStore(config.layers(), config.kvDim(), capacity);
    }

    @Override
    public int layers() {
        return layers;
    }

    @Override
    public int kvDim() {
        return kvDim;
    }

    @Override
    public int capacity() {
        return capacity;
    }

    @Override
    public void write(int layer, int position, float[] k, float[] v) {
        Objects.checkIndex(layer, layers);
        Objects.checkIndex(position, capacity);
        long offset = (long) position * kvDim * Float.BYTES;
        MemorySegment.copy(k, 0, keys[layer], ValueLayout.JAVA_FLOAT, offset, kvDim);
        MemorySegment.copy(v, 0, values[layer], ValueLayout.JAVA_FLOAT, offset, kvDim);
    }

    /** {@inheritDoc} Here: one run covering all {@code length} positions. */
    @Override
    public void read(int layer, int length, KvBlockVisitor visitor) {
        Objects.checkIndex(layer, layers);
        if (length < 1 || length > capacity) {
            throw new IndexOutOfBoundsException("length: " + length + " (expected 1 <= length <= " + capacity + ")");
        }
        visitor.visit(0, length, keys[layer], 0, values[layer], 0);
    }
}

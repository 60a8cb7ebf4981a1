package io.tierkv.bench.model;

import java.lang.foreign.MemorySegment;

/**
 * Receives one run of consecutive positions of one layer's keys and values from
 * {@link KvStore#read}: in a paged store one block, in a contiguous store possibly the whole
 * sequence at once.
 *
 * <p>Token {@code t} of the run (position {@code firstPosition + t}) has its K vector at byte
 * offset {@code keysOffset + t * kvDim * 4} of {@code keys} and its V vector at
 * {@code valuesOffset + t * kvDim * 4} of {@code values}: {@code kvDim} native-order float32,
 * KV head-major ({@code [head][dim]}), the per-token order of the TierKV block layout
 * {@code [layer][K|V][token][head][dim]}. Offsets are multiples of 4 and the segments are at
 * least 4-byte aligned, so {@link java.lang.foreign.ValueLayout#JAVA_FLOAT} reads them.
 *
 * <p>The segments are valid only during the call (a store may lease or unmap them afterwards):
 * an implementation must not keep them, and must not write to them.
 */
@FunctionalInterface
public interface KvBlockVisitor {

    /**
     * Reads one run of positions.
     *
     * @param firstPosition position of the run's first token
     * @param tokens        tokens in the run, at least 1
     * @param keys          memory holding the run's K vectors
     * @param keysOffset    byte offset of the first token's K vector in {@code keys}
     * @param values        memory holding the run's V vectors (often the same segment as
     *                      {@code keys})
     * @param valuesOffset  byte offset of the first token's V vector in {@code values}
     */
    void visit(int firstPosition, int tokens, MemorySegment keys, long keysOffset, MemorySegment values,
            long valuesOffset);
}

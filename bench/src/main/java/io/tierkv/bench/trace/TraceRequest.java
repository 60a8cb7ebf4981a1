package io.tierkv.bench.trace;

import java.util.Arrays;
import java.util.Objects;

/**
 * One request of a serving trace: when it arrived, how long its prompt and answer are, and the
 * identity of each block of its prompt.
 *
 * <p>{@code blockHashes[i]} names prompt block {@code i} (tokens {@code [i*B, (i+1)*B)} for the
 * trace's block size B; the last block may be partial) <em>and every block before it</em>: equal
 * ids at equal positions mean a reusable prefix (chained prefix hashes, as in the Mooncake traces).
 * The array is copied on construction and by {@link #blockHashes()}; use {@link #blockHash(int)}
 * and {@link #blockCount()} to read it without copying. Immutable and thread-safe.
 *
 * @param timestampMillis arrival time in milliseconds since the trace's first request
 * @param inputLength     prompt length in tokens, {@code >= 0}
 * @param outputLength    answer length in tokens, {@code >= 0}
 * @param blockHashes     prefix block ids of the prompt, in order; not null
 */
public record TraceRequest(long timestampMillis, int inputLength, int outputLength, long[] blockHashes) {

    /**
     * Validates and copies.
     *
     * @throws IllegalArgumentException if a length is negative (the message names it)
     * @throws NullPointerException if {@code blockHashes} is null
     */
    public TraceRequest {
        if (inputLength < 0) {
            throw new IllegalArgumentException("inputLength: " + inputLength + " (expected >= 0)");
        }
        if (outputLength < 0) {
            throw new IllegalArgumentException("outputLength: " + outputLength + " (expected >= 0)");
        }
        blockHashes = Objects.requireNonNull(blockHashes, "blockHashes").clone();
    }

    /**
     * A copy of the prompt's block ids.
     *
     * @return a new array of {@link #blockCount()} ids
     */
    @Override
    public long[] blockHashes() {
        return blockHashes.clone();
    }

    /**
     * The number of prompt blocks.
     *
     * @return the number of block ids
     */
    public int blockCount() {
        return blockHashes.length;
    }

    /**
     * One prompt block's id, without copying.
     *
     * @param index block index in {@code [0, blockCount())}
     * @return the id of block {@code index}
     * @throws ArrayIndexOutOfBoundsException if the index is out of range
     */
    public long blockHash(int index) {
        return blockHashes[index];
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof TraceRequest r
                && r.timestampMillis == timestampMillis
                && r.inputLength == inputLength
                && r.outputLength == outputLength
                && Arrays.equals(r.blockHashes, blockHashes);
    }

    @Override
    public int hashCode() {
        return Objects.hash(timestampMillis, inputLength, outputLength) * 31 + Arrays.hashCode(blockHashes);
    }

    @Override
    public String toString() {
        return "TraceRequest[timestampMillis=" + timestampMillis + ", inputLength=" + inputLength
                + ", outputLength=" + outputLength + ", blocks=" + blockHashes.length + "]";
    }
}

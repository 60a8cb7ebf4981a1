package io.tierkv.core.spi;

import io.tierkv.core.StoreStats;
import java.lang.foreign.MemorySegment;

/**
 * A tier store keyed by 128-bit block hash, holding each block's identity beside its bytes (see
 * {@link io.tierkv.core.prefix.BlockIdentity}): the SPI of the tiers below host and disk (the
 * remote store, module {@code remote}).
 *
 * <p>Contract, for every implementation:
 * <ul>
 *   <li>Write-once: a key that holds a value is never overwritten.</li>
 *   <li>Verified reads: a block is copied out only if the stored identity equals the identity
 *       the caller expects, byte for byte, and the stored bytes pass the store's checksum.
 *       Damaged, foreign or mismatched values and values of another identity are counted misses:
 *       a destination is never left holding another block's bytes as a hit.</li>
 *   <li>Bounded: every call returns within the store's own timeout; a store that cannot reach
 *       its backend answers misses and dropped writes (counted) instead of throwing.</li>
 *   <li>Leaf: a store never calls another tier or back into the manager.</li>
 * </ul>
 *
 * <p>Arrays are parallel and read from index 0; segments are read or written only during the
 * call. Implementations are thread-safe.
 */
public interface BlockStore extends AutoCloseable {

    /**
     * {@return the longest one call waits, nanoseconds; also the most one prefix match waits for
     * all its calls together (a caller passes a deadline it computed from this)}
     */
    long timeoutNanos();

    /**
     * Counts how many leading blocks of a chain the store holds, stopping at the first absent key,
     * waiting at most {@link #timeoutNanos()}.
     *
     * @param hashHi hash high words, in chain order
     * @param hashLo hash low words
     * @param count  how many keys, {@code 0 <= count <= min(hashHi.length, hashLo.length)}
     * @return leading keys present, in [0, count]
     * @throws IllegalArgumentException if {@code count} is out of range
     * @throws IllegalStateException    after {@link #close()}
     */
    default int lookup(long[] hashHi, long[] hashLo, int count) {
        return lookup(hashHi, hashLo, count, System.nanoTime() + timeoutNanos());
    }

    /**
     * Counts how many leading blocks of a chain the store holds, as {@link #lookup(long[], long[],
     * int)}, waiting at most until {@code deadlineNanos} and never longer than {@link
     * #timeoutNanos()}. A deadline already passed sends nothing: the call returns 0 and counts one
     * timeout.
     *
     * @param hashHi        hash high words, in chain order
     * @param hashLo        hash low words
     * @param count         how many keys, {@code 0 <= count <= min(hashHi.length, hashLo.length)}
     * @param deadlineNanos when to stop waiting, on {@link System#nanoTime()}'s clock
     * @return leading keys present, in [0, count]
     * @throws IllegalArgumentException if {@code count} is out of range
     * @throws IllegalStateException    after {@link #close()}
     */
    int lookup(long[] hashHi, long[] hashLo, int count, long deadlineNanos);

    /**
     * Stores blocks, each once (a key already present is left as it is).
     *
     * @param hashHi     hash high words
     * @param hashLo     hash low words
     * @param identities each block's identity
     * @param payloads   each block's bytes
     * @param count      how many blocks, at most every array's length
     * @param stored     if not null, receives per block whether this call stored it, from index 0
     *                   (at least {@code count} long)
     * @return blocks this call stored (present keys and dropped writes excluded)
     * @throws IllegalArgumentException if {@code count} is out of range or a segment too large
     * @throws IllegalStateException    after {@link #close()}
     */
    int putAll(long[] hashHi, long[] hashLo, MemorySegment[] identities, MemorySegment[] payloads, int count,
            boolean[] stored);

    /**
     * Sets who is told of values the store itself deletes that this client sees go: values its own
     * eviction index evicts and values found damaged, foreign or mismatched on a read. Values the
     * backend evicts or expires on its own (a server's {@code maxmemory} policy, a TTL) are not seen
     * by a client and are not reported. {@code null} for none.
     *
     * @param listener receives each such key, on the thread of the call that saw it go
     */
    void setRemovalListener(RemovalListener listener);

    /** Told of a key the store no longer holds ({@link #setRemovalListener}). Must not block. */
    @FunctionalInterface
    interface RemovalListener {
        /**
         * A value left the store.
         *
         * @param hashHi the block hash, high word
         * @param hashLo the block hash, low word
         */
        void removed(long hashHi, long hashLo);
    }

    /**
     * Reads the leading blocks of a chain, each verified against its expected identity, waiting
     * at most {@link #timeoutNanos()}.
     *
     * @param hashHi     hash high words, in chain order
     * @param hashLo     hash low words
     * @param identities the identities the caller expects
     * @param dsts       destinations, each of the layout's bytes per block; those at and after the
     *                   returned index may have been written and hold no block
     * @param count      how many blocks, at most every array's length
     * @return leading blocks read and verified, in [0, count]
     * @throws IllegalArgumentException if {@code count} is out of range
     * @throws IllegalStateException    after {@link #close()}
     */
    default int getAll(long[] hashHi, long[] hashLo, MemorySegment[] identities, MemorySegment[] dsts, int count) {
        return getAll(hashHi, hashLo, identities, dsts, count, System.nanoTime() + timeoutNanos());
    }

    /**
     * Reads the leading blocks of a chain, as {@link #getAll(long[], long[], MemorySegment[],
     * MemorySegment[], int)}, waiting at most until {@code deadlineNanos} and never longer than
     * {@link #timeoutNanos()}. A deadline already passed sends nothing: the call returns 0, and
     * counts one timeout and {@code count} misses.
     *
     * @param hashHi        hash high words, in chain order
     * @param hashLo        hash low words
     * @param identities    the identities the caller expects
     * @param dsts          destinations, each of the layout's bytes per block; those at and after
     *                      the returned index may have been written and hold no block
     * @param count         how many blocks, at most every array's length
     * @param deadlineNanos when to stop waiting, on {@link System#nanoTime()}'s clock
     * @return leading blocks read and verified, in [0, count]
     * @throws IllegalArgumentException if {@code count} is out of range
     * @throws IllegalStateException    after {@link #close()}
     */
    int getAll(long[] hashHi, long[] hashLo, MemorySegment[] identities, MemorySegment[] dsts, int count,
            long deadlineNanos);

    /** {@return a snapshot of the store's counters} */
    StoreStats storeStats();

    /** {@return where the store is, for messages and reports (for example its URL)} */
    String describe();

    /** Releases the store's connections and threads; idempotent. */
    @Override
    void close();
}

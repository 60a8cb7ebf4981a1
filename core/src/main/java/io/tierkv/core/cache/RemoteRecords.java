package io.tierkv.core.cache;

import java.lang.foreign.MemorySegment;

/**
 * A shared store below the lowest local tier (a Valkey/Redis server: DESIGN.md, "Remote tier") as
 * the cache's moves drive it ({@link LowerTier#remoteRecords}): values keyed by block hash, each
 * written with the block's identity and read back only for exactly that identity. The store keeps
 * no block state of this cache and decides nothing about a block: which blocks it is offered (a
 * host block evicted when no disk lies below, a disk record evicted, every demoted block with
 * write-through), what a prefix match looks up and fetches, and which fetched blocks a match
 * adopts, the cache decides ({@link FetchAhead}, {@link HostRoom}, {@link Demote}). It never calls
 * the cache or another tier.
 *
 * <p>A store that breaks its contract (throws) is the store's fault, counted and reported by it:
 * {@link #lookup} and {@link #fetch} answer 0 then, a miss, never a failed match.
 *
 * <p>Thread-safe. {@link #offer} never blocks and may be called with the cache lock held;
 * {@link #lookup} and {@link #fetch} wait on the network and are called with it released.
 */
public interface RemoteRecords {

    /**
     * Counts how many leading keys of a chain the store holds, at most as many as it would fetch
     * (it caps them, for example to a share of the host slots), waiting at most until the
     * match's deadline. Without the cache lock.
     *
     * @param hashHi     the chain's next hashes, high words, in order
     * @param hashLo     low words
     * @param count      how many, from index 0
     * @param startNanos when the match began ({@link System#nanoTime()}): one match's calls, all
     *                   together, wait at most the store's timeout from then, so a slow store costs
     *                   a match its timeout and no more
     * @return leading keys held and to fetch, in [0, count]
     */
    int lookup(long[] hashHi, long[] hashLo, int count, long startNanos);

    /**
     * Reads the leading values of a chain into the caller's memory (host slots the cache
     * reserved), each verified against the identity given before any byte of it stays there,
     * within the match's deadline. Without the cache lock.
     *
     * @param hashHi     the chain's hashes, high words, in order
     * @param hashLo     low words
     * @param identities the identity each block must have
     * @param dsts       per block, where its {@code KvLayout.bytesPerBlock()} bytes go
     * @param count      how many, from index 0, at most what {@link #lookup} returned
     * @param startNanos when the match began, as for {@link #lookup}
     * @return leading blocks read and verified, in [0, count]; the others' destinations may have
     *     been written and hold no block (the cache frees them unread)
     */
    int fetch(long[] hashHi, long[] hashLo, MemorySegment[] identities, MemorySegment[] dsts, int count,
            long startNanos);

    /**
     * Takes a copy of a block leaving the lowest local tier (or, with {@link #writesThrough}, just
     * demoted) to store, without blocking: the segments are read during the call only; the write
     * to the server happens later, on the store's own thread. A store that is full or closing
     * declines and counts it.
     *
     * @param hashHi   block hash, high 64 bits
     * @param hashLo   block hash, low 64 bits
     * @param identity the block's identity, {@code BlockIdentity.bytes(blockSizeTokens)} bytes
     * @param block    the block's bytes, {@code KvLayout.bytesPerBlock()}
     * @return whether the copy was taken
     */
    boolean offer(long hashHi, long hashLo, MemorySegment identity, MemorySegment block);

    /** {@return whether every block is offered as soon as it is demoted to the host tier, besides when it leaves} */
    boolean writesThrough();

    /**
     * Counts a block the cache adopted from a {@link #fetch} (for the store's statistics); the
     * store holds nothing for it.
     */
    void countAdopted();
}

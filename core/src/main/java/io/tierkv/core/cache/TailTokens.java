package io.tierkv.core.cache;

/**
 * The token ids a sequence appended within its OPEN tail block without the cache lock, kept in the
 * sequence's own memory until the lock is next taken for it, when they go into the block's
 * identity row ({@link #flush}): before a seal hashes the row, a fork shares it, a copy-on-write
 * copies it, or the next block is taken. An append that a close on another thread overtakes
 * (misuse: one thread at a time per sequence) so writes only here, never into a block id that the
 * close freed and another sequence took.
 *
 * <p>Not thread-safe: the sequence's own thread; {@link #flush} with the cache lock held.
 */
final class TailTokens {

    private final int[] ids;
    /** Offsets {@code [from, to)} of the tail block are kept here; none while {@code from < 0}. */
    private int from = -1;
    private int to;

    /** @param blockTokens B */
    TailTokens(int blockTokens) {
        this.ids = new int[blockTokens];
    }

    /** Keeps token {@code tokenId} at {@code offset}, the tail block's next offset. */
    void keep(int offset, int tokenId) {
        if (from < 0) {
            from = offset;
        }
        ids[offset] = tokenId;
        to = offset + 1;
    }

    /** {@return the token id kept at {@code offset} of the tail block, or {@code missing} if none is} */
    int token(int offset, int missing) {
        return from >= 0 && offset >= from && offset < to ? ids[offset] : missing;
    }

    /** Writes the kept ids into the tail block's identity row and keeps none. Cache lock held. */
    void flush(IdentityTable identities, BlockTable table) {
        if (from >= 0) {
            int id = table.id(table.count() - 1);
            for (int o = from; o < to; o++) {
                identities.setToken(id, o, ids[o]);
            }
            from = -1;
        }
    }
}

package io.tierkv.core.cache;

import io.tierkv.core.prefix.BlockHasher;
import io.tierkv.core.prefix.BlockIdentity;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Every block id's {@link BlockIdentity} (context fingerprint, parent hash, B token ids), off the
 * heap in one segment, one row of {@link #rowBytes} per id. The token ids are written as a
 * sequence appends them; the context and parent when the block seals (or when a match adopts a
 * record below). The row of a live id is its identity: the tiers below get a view of it with
 * every move.
 *
 * <p>Not thread-safe: used under the cache lock, except the writes of an unshared open block's
 * token ids by the one thread that writes its sequence (as for its bytes), and {@link #of}, which
 * any thread may call (the host tier reads the rows of the ids it holds, {@link LowerTier#attach}).
 */
final class IdentityTable {

    private final MemorySegment rows;
    private final long rowBytes;
    private final int blockTokens;

    /**
     * Allocates the table.
     *
     * @param arena       owns the memory
     * @param blocks      block ids
     * @param blockTokens B
     */
    IdentityTable(Arena arena, int blocks, int blockTokens) {
        this.blockTokens = blockTokens;
        this.rowBytes = rowBytes(blockTokens);
        this.rows = arena.allocate(blocks * rowBytes, 64);
    }

    /** {@return bytes per id: {@link BlockIdentity#bytes} of B token ids rounded up to 8} */
    static long rowBytes(int blockTokens) {
        return (BlockIdentity.bytes(blockTokens) + 7) & ~7L;
    }

    /**
     * {@return block {@code id}'s identity: a view, valid while the id lives} A new view per call,
     * used at once by the move that asks for it: a view kept for reuse ({@link
     * io.tierkv.core.pool.KeptSlices}) was a cache miss per move where the ids cycle over more
     * memory than the caches hold, 5 % of a 64 KiB promotion.
     */
    MemorySegment of(int id) {
        return rows.asSlice(id * rowBytes, BlockIdentity.bytes(blockTokens));
    }

    /**
     * {@return a copy of block {@code id}'s identity on the heap, for a write made with the lock
     * released (the cache may close meanwhile)} Backed by a {@code long[]}, so aligned reads of its
     * words work as on the record.
     */
    MemorySegment copyOf(int id) {
        MemorySegment words = MemorySegment.ofArray(new long[(int) (rowBytes >>> 3)]);
        return words.asSlice(0, BlockIdentity.bytes(blockTokens)).copyFrom(of(id));
    }

    /** Sets token {@code offset} of block {@code id}. */
    void setToken(int id, int offset, int tokenId) {
        rows.setAtIndex(ValueLayout.JAVA_INT, tokenIndex(id) + offset, tokenId);
    }

    /** {@return token {@code offset} of block {@code id}} */
    int token(int id, int offset) {
        return rows.getAtIndex(ValueLayout.JAVA_INT, tokenIndex(id) + offset);
    }

    /** Copies B token ids from {@code tokenIds[from..]} into block {@code id}. */
    void setTokens(int id, int[] tokenIds, int from) {
        MemorySegment.copy(tokenIds, from, rows, ValueLayout.JAVA_INT, tokenIndex(id) * Integer.BYTES, blockTokens);
    }

    /** Writes block {@code id}'s context and parent. */
    void setKey(int id, long contextHi, long contextLo, long parentHi, long parentLo) {
        BlockIdentity.writeKey(rows, id * rowBytes, contextHi, contextLo, parentHi, parentLo);
    }

    /** Copies block {@code from}'s row (tokens and key) to block {@code to}. */
    void copy(int from, int to) {
        MemorySegment.copy(rows, from * rowBytes, rows, to * rowBytes, rowBytes);
    }

    /** Hashes block {@code id}'s token ids in the chain of {@code seq} with {@code hasher}. */
    void hash(BlockHasher hasher, Sequence seq, int id) {
        hasher.hashBlock(seq.saltHi, seq.saltLo, seq.parentHi, seq.parentLo, seq.extraKeys, rows, tokenIndex(id),
                blockTokens);
    }

    /** Whether blocks {@code a} and {@code b} have the same identity. */
    boolean same(int a, int b) {
        return MemorySegment.mismatch(rows, a * rowBytes, a * rowBytes + rowBytes, rows, b * rowBytes,
                b * rowBytes + rowBytes) < 0;
    }

    /**
     * Whether block {@code id}'s identity is the one a sequence asks for with the B prompt tokens
     * at {@code from}: its context, its current parent and those token ids.
     */
    boolean matches(int id, Sequence seq, int[] promptTokens, int from) {
        if (!BlockIdentity.keyEquals(rows, id * rowBytes, seq.contextHi, seq.contextLo, seq.parentHi, seq.parentLo)) {
            return false;
        }
        long base = tokenIndex(id);
        for (int i = 0; i < blockTokens; i++) {
            if (rows.getAtIndex(ValueLayout.JAVA_INT, base + i) != promptTokens[from + i]) {
                return false;
            }
        }
        return true;
    }

    private long tokenIndex(int id) {
        return (id * rowBytes + BlockIdentity.KEY_BYTES) / Integer.BYTES;
    }
}

package io.tierkv.core.prefix;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * The one descriptor of a block's identity: what its block hash stands for, stored with the
 * block in every tier and compared on every hit and every deduplication, because a hash alone
 * never proves a block's identity (DESIGN.md, "block identity").
 *
 * <pre>
 *  0  long  context fingerprint, high 64 bits   (salt and extra keys, {@link BlockHasher#hashContext})
 *  8  long  context fingerprint, low 64 bits
 * 16  long  parent block hash, high 64 bits      (0, 0 for a sequence's first block)
 * 24  long  parent block hash, low 64 bits
 * 32  int   token ids, T of them ({@code T <= blockSizeTokens})
 * </pre>
 * The longs are little-endian; the token ids are native-order {@code int}s (little-endian on
 * every platform TierKV runs on), as runtimes hand them over. Two identities are the same block
 * exactly when their bytes are equal.
 *
 * <p>What this proves: equal context, equal parent hash and equal token ids. The parent enters by
 * its hash, so a chain is exactly as strong as the block hash: with the default SHA-256 a parent
 * hash stands for one parent; with MurmurHash3 (an opt-in for one trusted tenant) a crafted parent
 * that collides with another is caught only where the parents themselves are compared.
 *
 * <p>Stateless and thread-safe.
 */
public final class BlockIdentity {

    private BlockIdentity() {}

    /** Little-endian, unaligned {@code long}. */
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /** Offset of the context fingerprint's high word. */
    public static final long CONTEXT_HI = 0;
    /** Offset of the context fingerprint's low word. */
    public static final long CONTEXT_LO = 8;
    /** Offset of the parent hash's high word. */
    public static final long PARENT_HI = 16;
    /** Offset of the parent hash's low word. */
    public static final long PARENT_LO = 24;
    /** Bytes before the token ids: context and parent, 32. */
    public static final int KEY_BYTES = 32;

    /**
     * {@return the bytes of an identity with {@code tokenCount} token ids: {@code 32 + 4 x tokenCount}}
     *
     * @param tokenCount token ids, >= 0
     */
    public static long bytes(int tokenCount) {
        return KEY_BYTES + 4L * tokenCount;
    }

    /**
     * The token count of an identity of {@code identityBytes} bytes.
     *
     * @param identityBytes the identity's length
     * @return {@code (identityBytes - 32) / 4}, or -1 if the length is not {@code 32 + 4T}
     */
    public static int tokenCount(long identityBytes) {
        long t = identityBytes - KEY_BYTES;
        return t < 0 || t % 4 != 0 || t / 4 > Integer.MAX_VALUE ? -1 : (int) (t / 4);
    }

    /**
     * Writes the context and parent words of an identity at {@code offset}.
     *
     * @param dst       destination, at least {@code offset + 32} bytes
     * @param offset    where the identity starts
     * @param contextHi context fingerprint, high word
     * @param contextLo context fingerprint, low word
     * @param parentHi  parent hash, high word (0 for a first block)
     * @param parentLo  parent hash, low word
     */
    public static void writeKey(MemorySegment dst, long offset, long contextHi, long contextLo, long parentHi,
            long parentLo) {
        dst.set(LONG, offset + CONTEXT_HI, contextHi);
        dst.set(LONG, offset + CONTEXT_LO, contextLo);
        dst.set(LONG, offset + PARENT_HI, parentHi);
        dst.set(LONG, offset + PARENT_LO, parentLo);
    }

    /**
     * Whether an identity's context and parent words are the given ones.
     *
     * @param id        an identity, at least {@code offset + 32} bytes
     * @param offset    where it starts
     * @param contextHi expected context fingerprint, high word
     * @param contextLo expected context fingerprint, low word
     * @param parentHi  expected parent hash, high word
     * @param parentLo  expected parent hash, low word
     * @return whether all four words are equal
     */
    public static boolean keyEquals(MemorySegment id, long offset, long contextHi, long contextLo, long parentHi,
            long parentLo) {
        return id.get(LONG, offset + CONTEXT_HI) == contextHi && id.get(LONG, offset + CONTEXT_LO) == contextLo
                && id.get(LONG, offset + PARENT_HI) == parentHi && id.get(LONG, offset + PARENT_LO) == parentLo;
    }
}

package io.tierkv.remote;

import io.tierkv.core.prefix.BlockIdentity;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;

/**
 * Seeded test blocks: a real {@link BlockIdentity} (context, parent, token ids) and a payload whose
 * every byte is a function of the block's index, so any byte read back can be checked.
 */
final class TestBlocks {

    private final Arena arena;
    private final long seed;
    private final int payloadBytes;
    private final int tokens;

    /**
     * Blocks of one size.
     *
     * @param arena        where segments are allocated
     * @param seed         the seed (printed by failing tests)
     * @param payloadBytes payload size
     * @param tokens       token ids per identity
     */
    TestBlocks(Arena arena, long seed, int payloadBytes, int tokens) {
        this.arena = arena;
        this.seed = seed;
        this.payloadBytes = payloadBytes;
        this.tokens = tokens;
    }

    /** {@return the payload size} */
    int payloadBytes() {
        return payloadBytes;
    }

    long hi(int i) {
        return new SplittableRandom(seed * 31 + i).nextLong();
    }

    long lo(int i) {
        return new SplittableRandom(seed * 37 + i + 1_000_003).nextLong();
    }

    long[] his(int n) {
        long[] a = new long[n];
        for (int i = 0; i < n; i++) {
            a[i] = hi(i);
        }
        return a;
    }

    long[] los(int n) {
        long[] a = new long[n];
        for (int i = 0; i < n; i++) {
            a[i] = lo(i);
        }
        return a;
    }

    /** {@return block i's identity: parent = block i-1's hash} */
    MemorySegment identity(int i) {
        MemorySegment id = arena.allocate(BlockIdentity.bytes(tokens));
        BlockIdentity.writeKey(id, 0, seed, ~seed, i == 0 ? 0 : hi(i - 1), i == 0 ? 0 : lo(i - 1));
        for (int t = 0; t < tokens; t++) {
            id.setAtIndex(ValueLayout.JAVA_INT, 8 + t, i * 1000 + t);
        }
        return id;
    }

    /** {@return block i's payload} */
    MemorySegment payload(int i) {
        MemorySegment p = arena.allocate(payloadBytes, 64);
        SplittableRandom r = new SplittableRandom(seed ^ (0x9E3779B97F4A7C15L * (i + 1)));
        for (long off = 0; off + 8 <= payloadBytes; off += 8) {
            p.set(ValueLayout.JAVA_LONG_UNALIGNED, off, r.nextLong());
        }
        for (long off = payloadBytes & ~7L; off < payloadBytes; off++) {
            p.set(ValueLayout.JAVA_BYTE, off, (byte) r.nextInt());
        }
        return p;
    }

    /** {@return a destination of the payload size, filled with a marker byte} */
    MemorySegment dst() {
        return arena.allocate(Math.max(payloadBytes, 0), 64).fill((byte) 0x5A);
    }

    /** {@return whether {@code dst} holds exactly block i's payload} */
    boolean holds(MemorySegment dst, int i) {
        return dst.byteSize() == payloadBytes && dst.mismatch(payload(i)) == -1;
    }

    /** {@return whether {@code dst} was left untouched (every byte the marker)} */
    static boolean untouched(MemorySegment dst) {
        for (long off = 0; off < dst.byteSize(); off++) {
            if (dst.get(ValueLayout.JAVA_BYTE, off) != 0x5A) {
                return false;
            }
        }
        return true;
    }
}

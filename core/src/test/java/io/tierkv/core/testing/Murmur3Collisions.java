package io.tierkv.core.testing;

import io.tierkv.core.prefix.BlockHasher;
import io.tierkv.core.prefix.HashAlgorithm;
import java.lang.foreign.MemorySegment;
import java.math.BigInteger;

/**
 * Crafts blocks whose MurmurHash3_x64_128 block hash ({@link BlockHasher}, {@link
 * HashAlgorithm#MURMUR3_128}) equals another block's, as an attacker would: MurmurHash3's body
 * step is invertible, so for any state before a 16-byte step and any wanted state after it the one
 * input that gets there is computed in closed form (multiplications by odd constants are
 * invertible modulo 2^64, rotations and xors trivially). Four consecutive token ids that fill one
 * 16-byte step are set so that the attacker's state after it equals the victim's; every later word
 * is the victim's, so both hashes are equal while salt, parent, extra keys or the other token ids
 * differ.
 *
 * <p>The word order is the one {@link BlockHasher} documents: salt hi, salt lo, parent hi, parent
 * lo, extra keys, token count, token ids two per word.
 */
public final class Murmur3Collisions {

    private static final long C1 = 0x87c37b91114253d5L;
    private static final long C2 = 0x4cf5ad432745937fL;
    private static final long INV_C1 = inverse(C1);
    private static final long INV_C2 = inverse(C2);
    private static final long INV_5 = inverse(5);

    private Murmur3Collisions() {
    }

    /** One side of a block hash: salt hash, parent hash, extra keys and token ids. */
    public record BlockInput(long saltHi, long saltLo, long parentHi, long parentLo, long[] extraKeys, int[] tokens) {

        /** {@return the hash words, in {@link BlockHasher}'s order} */
        long[] words() {
            int n = tokens.length;
            long[] w = new long[5 + extraKeys.length + (n + 1) / 2];
            int i = 0;
            w[i++] = saltHi;
            w[i++] = saltLo;
            w[i++] = parentHi;
            w[i++] = parentLo;
            for (long k : extraKeys) {
                w[i++] = k;
            }
            w[i++] = n;
            for (int t = 0; t < n; t += 2) {
                long a = tokens[t] & 0xffffffffL;
                long b = t + 1 < n ? tokens[t + 1] & 0xffffffffL : 0;
                w[i++] = a | (b << 32);
            }
            return w;
        }

        /** {@return this block's hash with {@code hasher}: {hi, lo}} */
        public long[] hash(BlockHasher hasher) {
            hasher.hashBlock(saltHi, saltLo, parentHi, parentLo, extraKeys, MemorySegment.ofArray(tokens), 0,
                    tokens.length);
            return new long[] {hasher.hi(), hasher.lo()};
        }
    }

    /**
     * Returns the attacker's token ids, changed at four positions starting at {@code firstToken},
     * so that the attacker's block hashes like the victim's under MurmurHash3.
     *
     * @param victim     the block to collide with
     * @param attacker   the attacker's block: same number of extra keys and token ids; its token
     *                   ids from {@code firstToken + 4} on must be the victim's
     * @param firstToken the first of four token ids that fill one 16-byte step (its word index,
     *                   {@code 5 + extraKeys + firstToken / 2}, must be even)
     * @return the attacker's token ids with the four crafted ones
     * @throws IllegalArgumentException if the inputs do not line up as described
     */
    public static int[] collide(BlockInput victim, BlockInput attacker, int firstToken) {
        long[] v = victim.words();
        long[] a = attacker.words();
        int word = 5 + attacker.extraKeys().length + firstToken / 2;
        if (v.length != a.length || firstToken % 2 != 0 || word % 2 != 0 || word + 1 >= a.length
                || firstToken + 4 > attacker.tokens().length) {
            throw new IllegalArgumentException("firstToken " + firstToken + " does not fill one whole step");
        }
        long[] target = state(v, word + 2);
        long[] before = state(a, word);
        long h1 = before[0];
        long h2 = before[1];
        // invert h1 = (rotl(h1 ^ mix1(k1), 27) + h2) * 5 + 0x52dce729
        long t = (target[0] - 0x52dce729) * INV_5 - h2;
        long k1mixed = Long.rotateRight(t, 27) ^ h1;
        long k1 = Long.rotateRight(k1mixed * INV_C2, 31) * INV_C1;
        // invert h2 = (rotl(h2 ^ mix2(k2), 31) + h1') * 5 + 0x38495ab5, h1' the new h1
        long u = (target[1] - 0x38495ab5) * INV_5 - target[0];
        long k2mixed = Long.rotateRight(u, 31) ^ h2;
        long k2 = Long.rotateRight(k2mixed * INV_C1, 33) * INV_C2;
        int[] out = attacker.tokens().clone();
        out[firstToken] = (int) k1;
        out[firstToken + 1] = (int) (k1 >>> 32);
        out[firstToken + 2] = (int) k2;
        out[firstToken + 3] = (int) (k2 >>> 32);
        return out;
    }

    /** MurmurHash3_x64_128's (h1, h2) after the first {@code words} words (an even count). */
    private static long[] state(long[] w, int words) {
        long h1 = 0x9368e53c2f6af274L;
        long h2 = 0x586dcd208f7cd3fdL;
        for (int i = 0; i + 1 < words; i += 2) {
            long k1 = Long.rotateLeft(w[i] * C1, 31) * C2;
            h1 ^= k1;
            h1 = Long.rotateLeft(h1, 27) + h2;
            h1 = h1 * 5 + 0x52dce729;
            long k2 = Long.rotateLeft(w[i + 1] * C2, 33) * C1;
            h2 ^= k2;
            h2 = Long.rotateLeft(h2, 31) + h1;
            h2 = h2 * 5 + 0x38495ab5;
        }
        return new long[] {h1, h2};
    }

    private static long inverse(long odd) {
        return BigInteger.valueOf(odd).modInverse(BigInteger.ONE.shiftLeft(64)).longValue();
    }
}

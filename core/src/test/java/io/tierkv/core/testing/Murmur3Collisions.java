package io.tierkv.core.testing;

import io.tierkv.core.cache.SequenceOptions;
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
        long[] k = step(v, a, word);
        int[] out = attacker.tokens().clone();
        out[firstToken] = (int) k[0];
        out[firstToken + 1] = (int) (k[0] >>> 32);
        out[firstToken + 2] = (int) k[1];
        out[firstToken + 3] = (int) (k[1] >>> 32);
        return out;
    }

    /**
     * Returns the attacker's four extra keys, the last two crafted so that the attacker's block
     * hashes like the victim's under MurmurHash3 although every other input (salt, parent, token
     * ids) is the same: only the extra keys tell the blocks apart.
     *
     * @param victim   the block to collide with, with exactly four extra keys
     * @param attacker the attacker's block: four extra keys whose first two differ from the
     *                 victim's, everything else equal to the victim's
     * @return the attacker's extra keys
     */
    public static long[] collideExtraKeys(BlockInput victim, BlockInput attacker) {
        if (victim.extraKeys().length != 4 || attacker.extraKeys().length != 4) {
            throw new IllegalArgumentException("four extra keys fill the third and fourth 16-byte steps");
        }
        long[] k = step(victim.words(), attacker.words(), 6);
        long[] out = attacker.extraKeys().clone();
        out[2] = k[0];
        out[3] = k[1];
        return out;
    }

    /** The two words at {@code word} (even) that take the attacker's state to the victim's after them. */
    private static long[] step(long[] v, long[] a, int word) {
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
        return new long[] {k1, k2};
    }

    /** What differs between a victim's block and the attacker's block crafted to collide with it. */
    public enum Difference {
        /** Another tenant's salt. */
        SALT,
        /** Another parent: the collision is the second block of prompts whose first blocks differ. */
        PARENT,
        /** The same salt and parent; token ids differ. */
        TOKENS,
        /** Other extra keys (another model or adapter), and token ids too. */
        EXTRA_KEYS,
        /**
         * Only the extra keys: the same salt, parent and token ids, four extra keys of which two
         * are crafted (a collision that no comparison of token ids alone can see).
         */
        EXTRA_KEYS_ONLY
    }

    /**
     * A victim's prompt and an attacker's, each with its sequence options, whose block
     * {@code block} has the same MurmurHash3 block hash in both.
     *
     * @param victim         the victim's options
     * @param victimPrompt   the victim's token ids, {@code (block + 1) x B}
     * @param attacker       the attacker's options
     * @param attackerPrompt the attacker's token ids, as long
     * @param block          index of the colliding block (earlier blocks differ and do not collide)
     */
    public record Pair(SequenceOptions victim, int[] victimPrompt, SequenceOptions attacker, int[] attackerPrompt,
                       int block) {
    }

    /**
     * Crafts a victim and an attacker prompt whose last blocks collide under MurmurHash3.
     *
     * @param difference      what differs between the two colliding blocks
     * @param blockSizeTokens B, at least 8
     * @return the pair
     */
    public static Pair pair(Difference difference, int blockSizeTokens) {
        int b = blockSizeTokens;
        BlockHasher murmur = new BlockHasher(HashAlgorithm.MURMUR3_128);
        SequenceOptions victim = SequenceOptions.salt("victim");
        SequenceOptions attacker = switch (difference) {
            case SALT -> SequenceOptions.salt("attacker");
            case EXTRA_KEYS -> new SequenceOptions("victim", new long[] {2}, 0, Long.MAX_VALUE, null);
            default -> victim;
        };
        if (difference == Difference.EXTRA_KEYS) {
            victim = new SequenceOptions("victim", new long[] {1}, 0, Long.MAX_VALUE, null);
        }
        if (difference == Difference.EXTRA_KEYS_ONLY) {
            int[] t = new int[b];
            for (int i = 0; i < b; i++) {
                t[i] = 100 + i;
            }
            long[] vs = new long[2];
            murmur.hashSalt("victim", vs);
            BlockInput vb = new BlockInput(vs[0], vs[1], 0, 0, new long[] {11, 12, 13, 14}, t);
            long[] keys = collideExtraKeys(vb, new BlockInput(vs[0], vs[1], 0, 0, new long[] {21, 22, 0, 0}, t));
            return new Pair(new SequenceOptions("victim", vb.extraKeys(), 0, Long.MAX_VALUE, null), t,
                    new SequenceOptions("victim", keys, 0, Long.MAX_VALUE, null), t.clone(), 0);
        }
        int blocks = difference == Difference.PARENT ? 2 : 1;
        int[] v = new int[blocks * b];
        int[] a = new int[blocks * b];
        for (int i = 0; i < v.length; i++) {
            v[i] = 100 + i;
            a[i] = i < (blocks - 1) * b ? 7000 + i : v[i]; // PARENT: the first blocks differ
        }
        int first = (blocks - 1) * b;
        a[first] = 9000; // TOKENS: a token outside the crafted four differs too
        long[] vs = new long[2];
        long[] as = new long[2];
        murmur.hashSalt(victim.salt(), vs);
        murmur.hashSalt(attacker.salt(), as);
        long[] vp = {0, 0};
        long[] ap = {0, 0};
        if (blocks == 2) {
            vp = new BlockInput(vs[0], vs[1], 0, 0, victim.extraKeys(), java.util.Arrays.copyOf(v, b)).hash(murmur);
            ap = new BlockInput(as[0], as[1], 0, 0, attacker.extraKeys(), java.util.Arrays.copyOf(a, b)).hash(murmur);
        }
        int crafted = (5 + victim.extraKeys().length) % 2 == 0 ? 0 : 2; // four ids that fill one 16-byte step
        BlockInput vb = new BlockInput(vs[0], vs[1], vp[0], vp[1], victim.extraKeys(),
                java.util.Arrays.copyOfRange(v, first, first + b));
        BlockInput ab = new BlockInput(as[0], as[1], ap[0], ap[1], attacker.extraKeys(),
                java.util.Arrays.copyOfRange(a, first, first + b));
        int[] last = collide(vb, ab, crafted);
        System.arraycopy(last, 0, a, first, b);
        return new Pair(victim, v, attacker, a, blocks - 1);
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

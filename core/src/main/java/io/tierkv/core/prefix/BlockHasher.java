package io.tierkv.core.prefix;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * Chained 128-bit block hashes: {@code h(i) = H(salt, h(i-1), tokens of block i, extra keys)},
 * with {@code h(-1) = (0, 0)}. Equal hashes mean equal prefixes up to a collision, so a match
 * still compares the stored token ids (DESIGN.md, "block hash").
 *
 * <p>The input is fed as 64-bit words in this order: salt hi, salt lo, parent hi, parent lo, the
 * extra keys, the token count, then the token ids two per word (low word first, zero padded).
 * MURMUR3_128 follows MurmurHash3_x64_128 (Appleby, smhasher) over those words; SHA256_128 takes
 * the first 16 bytes of SHA-256 over the same words in little-endian order.
 *
 * <p>Results land in {@link #hi()} and {@link #lo()} so the hot path allocates nothing. Not
 * thread-safe: one instance per owner.
 */
public final class BlockHasher {

    private static final long C1 = 0x87c37b91114253d5L;
    private static final long C2 = 0x4cf5ad432745937fL;

    private final HashAlgorithm algorithm;
    private final MessageDigest sha;
    private final byte[] word = new byte[8];
    private long h1;
    private long h2;
    private long pending;
    private boolean hasPending;
    private long words;
    private long hi;
    private long lo;

    /**
     * Creates a hasher.
     *
     * @param algorithm the hash function
     */
    public BlockHasher(HashAlgorithm algorithm) {
        this.algorithm = algorithm;
        try {
            this.sha = algorithm == HashAlgorithm.SHA256_128 ? MessageDigest.getInstance("SHA-256") : null;
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required by every Java platform", e);
        }
    }

    /**
     * Hashes a cache salt string to 128 bits (the same function over its UTF-8 bytes).
     *
     * @param salt  the salt, for example a tenant id; empty for none
     * @param out   receives {hi, lo}
     */
    public void hashSalt(String salt, long[] out) {
        begin();
        byte[] b = salt.getBytes(StandardCharsets.UTF_8);
        feed(b.length);
        for (int i = 0; i < b.length; i += 8) {
            long w = 0;
            for (int j = 0; j < 8 && i + j < b.length; j++) {
                w |= (b[i + j] & 0xffL) << (8 * j);
            }
            feed(w);
        }
        finish();
        out[0] = hi;
        out[1] = lo;
    }

    /**
     * Computes one block's chained hash.
     *
     * @param saltHi    salt hash, high word
     * @param saltLo    salt hash, low word
     * @param parentHi  parent block's hash high word, 0 for the first block
     * @param parentLo  parent block's hash low word, 0 for the first block
     * @param extraKeys extra keys (model id, adapter id...), may be empty, never null
     * @param tokens    token ids as native-order ints
     * @param firstToken index of the first token id in {@code tokens}
     * @param count     number of token ids (B for a sealed block)
     */
    public void hashBlock(long saltHi, long saltLo, long parentHi, long parentLo, long[] extraKeys,
            MemorySegment tokens, long firstToken, int count) {
        begin();
        feed(saltHi);
        feed(saltLo);
        feed(parentHi);
        feed(parentLo);
        for (long k : extraKeys) {
            feed(k);
        }
        feed(count);
        int i = 0;
        for (; i + 1 < count; i += 2) {
            long a = tokens.getAtIndex(ValueLayout.JAVA_INT, firstToken + i) & 0xffffffffL;
            long b = tokens.getAtIndex(ValueLayout.JAVA_INT, firstToken + i + 1) & 0xffffffffL;
            feed(a | (b << 32));
        }
        if (i < count) {
            feed(tokens.getAtIndex(ValueLayout.JAVA_INT, firstToken + i) & 0xffffffffL);
        }
        finish();
    }

    /** {@return the high 64 bits of the last result} */
    public long hi() {
        return hi;
    }

    /** {@return the low 64 bits of the last result} */
    public long lo() {
        return lo;
    }

    private void begin() {
        h1 = 0x9368e53c2f6af274L;
        h2 = 0x586dcd208f7cd3fdL;
        hasPending = false;
        words = 0;
        if (sha != null) {
            sha.reset();
        }
    }

    private void feed(long w) {
        words++;
        if (sha != null) {
            for (int j = 0; j < 8; j++) {
                word[j] = (byte) (w >>> (8 * j));
            }
            sha.update(word);
            return;
        }
        if (!hasPending) {
            pending = w;
            hasPending = true;
            return;
        }
        hasPending = false;
        mix(pending, w);
    }

    private void mix(long k1, long k2) {
        k1 *= C1;
        k1 = Long.rotateLeft(k1, 31);
        k1 *= C2;
        h1 ^= k1;
        h1 = Long.rotateLeft(h1, 27);
        h1 += h2;
        h1 = h1 * 5 + 0x52dce729;
        k2 *= C2;
        k2 = Long.rotateLeft(k2, 33);
        k2 *= C1;
        h2 ^= k2;
        h2 = Long.rotateLeft(h2, 31);
        h2 += h1;
        h2 = h2 * 5 + 0x38495ab5;
    }

    private void finish() {
        if (sha != null) {
            byte[] d = sha.digest();
            hi = bytesToLong(d, 0);
            lo = bytesToLong(d, 8);
            return;
        }
        if (hasPending) {
            // MurmurHash3 tail: only k1 is mixed into h1.
            long k1 = pending * C1;
            k1 = Long.rotateLeft(k1, 31);
            k1 *= C2;
            h1 ^= k1;
        }
        long len = words * 8;
        h1 ^= len;
        h2 ^= len;
        h1 += h2;
        h2 += h1;
        h1 = fmix64(h1);
        h2 = fmix64(h2);
        h1 += h2;
        h2 += h1;
        hi = h1;
        lo = h2;
    }

    private static long bytesToLong(byte[] b, int off) {
        long v = 0;
        for (int i = 0; i < 8; i++) {
            v = (v << 8) | (b[off + i] & 0xffL);
        }
        return v;
    }

    private static long fmix64(long k) {
        k ^= k >>> 33;
        k *= 0xff51afd7ed558ccdL;
        k ^= k >>> 33;
        k *= 0xc4ceb9fe1a85ec53L;
        k ^= k >>> 33;
        return k;
    }
}

package io.tierkv.core.prefix;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Arrays;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Chained 128-bit block hashes: {@code h(i) = H(salt, h(i-1), tokens of block i, extra keys)},
 * with {@code h(-1) = (0, 0)}. Equal hashes mean equal prefixes up to a collision, so every hit
 * still compares the stored {@link BlockIdentity} (DESIGN.md, "block hash").
 *
 * <p>The input is fed as 64-bit words in this order: salt hi, salt lo, parent hi, parent lo, the
 * extra keys, the token count, then the token ids two per word (low word first, zero padded).
 * <ul>
 * <li>{@link HashAlgorithm#SHA256_128} (the default) takes the first 16 bytes (big-endian words)
 * of SHA-256 (FIPS 180-4) over those words in little-endian order; with a key, of HMAC-SHA256
 * (RFC 2104) under that key, so that without the key nobody can even compute which prompts
 * share a block.
 * <li>{@link HashAlgorithm#MURMUR3_128} follows MurmurHash3_x64_128 (Appleby, smhasher) over the
 * same words: fast, invertible per 16-byte step, for a single trusted tenant only; it takes no
 * key.
 * </ul>
 *
 * <p>Results land in {@link #hi()} and {@link #lo()}; the hot path allocates nothing. Not
 * thread-safe: one instance per owner.
 */
public final class BlockHasher {

    private static final long C1 = 0x87c37b91114253d5L;
    private static final long C2 = 0x4cf5ad432745937fL;
    private static final VarHandle LE_LONG = MethodHandles.byteArrayViewVarHandle(long[].class,
            ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle BE_LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

    /** Shortest key {@link #BlockHasher(HashAlgorithm, byte[])} takes: 16 bytes (128 bits). */
    public static final int MIN_KEY_BYTES = 16;

    private final HashAlgorithm algorithm;
    private final boolean keyed;
    private final MessageDigest sha;
    private final Mac mac;
    private final byte[] digest = new byte[32];
    private byte[] buffer = new byte[256];
    private int buffered;
    private long h1;
    private long h2;
    private long pending;
    private boolean hasPending;
    private long words;
    private long hi;
    private long lo;

    /**
     * Creates an unkeyed hasher.
     *
     * @param algorithm the hash function
     * @throws NullPointerException if algorithm is null
     */
    public BlockHasher(HashAlgorithm algorithm) {
        this(algorithm, new byte[0]);
    }

    /**
     * Creates a hasher, keyed if {@code key} is not empty.
     *
     * @param algorithm the hash function
     * @param key       secret key for {@link HashAlgorithm#SHA256_128} (HMAC-SHA256), at least
     *                  {@value #MIN_KEY_BYTES} bytes, or empty for none; copied
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException if the key is shorter than {@value #MIN_KEY_BYTES} bytes, or
     *                                  given with {@link HashAlgorithm#MURMUR3_128}
     */
    public BlockHasher(HashAlgorithm algorithm, byte[] key) {
        this.algorithm = java.util.Objects.requireNonNull(algorithm, "algorithm");
        checkKey(algorithm, key);
        this.keyed = key.length > 0;
        try {
            if (algorithm == HashAlgorithm.SHA256_128 && keyed) {
                this.mac = Mac.getInstance("HmacSHA256");
                mac.init(new SecretKeySpec(key, "HmacSHA256"));
                this.sha = null;
            } else {
                this.mac = null;
                this.sha = algorithm == HashAlgorithm.SHA256_128 ? MessageDigest.getInstance("SHA-256") : null;
            }
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("SHA-256 and HmacSHA256 are required by every Java platform", e);
        }
    }

    /**
     * Checks a key for an algorithm, as {@link #BlockHasher(HashAlgorithm, byte[])} does.
     *
     * @param algorithm the hash function
     * @param key       the key, empty for none
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException naming the field, value and bound
     */
    public static void checkKey(HashAlgorithm algorithm, byte[] key) {
        java.util.Objects.requireNonNull(key, "hashKey");
        if (key.length > 0 && algorithm == HashAlgorithm.MURMUR3_128) {
            throw new IllegalArgumentException("hashKey: " + key.length + " bytes (expected none with MURMUR3_128,"
                    + " which is not a keyed function; use SHA256_128)");
        }
        if (key.length > 0 && key.length < MIN_KEY_BYTES) {
            throw new IllegalArgumentException("hashKey: " + key.length + " bytes (expected >= " + MIN_KEY_BYTES
                    + ", or none)");
        }
    }

    /**
     * A 64-bit fingerprint of a key (the first 8 bytes of SHA-256 over a fixed label and the
     * key): lets a directory recognise the key it was written with without storing the key.
     *
     * @param key the key, empty for none
     * @return 0 for no key, else the fingerprint
     */
    public static long keyFingerprint(byte[] key) {
        if (key.length == 0) {
            return 0;
        }
        try {
            MessageDigest d = MessageDigest.getInstance("SHA-256");
            d.update("tierkv block hash key".getBytes(StandardCharsets.US_ASCII));
            byte[] out = d.digest(key);
            long f = (long) BE_LONG.get(out, 0);
            return f == 0 ? 1 : f;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("SHA-256 is required by every Java platform", e);
        }
    }

    /** {@return the hash function} */
    public HashAlgorithm algorithm() {
        return algorithm;
    }

    /** {@return whether this hasher is keyed} */
    public boolean keyed() {
        return keyed;
    }

    /**
     * Hashes a cache salt string to 128 bits (the same function over its UTF-8 bytes).
     *
     * @param salt  the salt, for example a tenant id; empty for none
     * @param out   receives {hi, lo}
     */
    public void hashSalt(String salt, long[] out) {
        begin();
        feedString(salt);
        finish();
        out[0] = hi;
        out[1] = lo;
    }

    /**
     * Hashes a block context, the salt and the extra keys together, to the 128-bit context
     * fingerprint of a {@link BlockIdentity}: the salt's UTF-8 length and bytes, then the number of
     * extra keys and the keys, as words. Computed once per sequence options, so a runtime's choice
     * of a fast block hash does not weaken it: callers use a {@link HashAlgorithm#SHA256_128}
     * hasher (keyed as the block hash is).
     *
     * @param salt      the salt, empty for none
     * @param extraKeys the extra keys, may be empty
     * @param out       receives {hi, lo}
     */
    public void hashContext(String salt, long[] extraKeys, long[] out) {
        begin();
        feedString(salt);
        feed(extraKeys.length);
        for (long k : extraKeys) {
            feed(k);
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
     * @param firstToken index of the first token id in {@code tokens}, in ints
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

    /** Feeds a string's UTF-8 length, then its bytes eight to a word (little-endian, zero padded). */
    private void feedString(String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        feed(b.length);
        for (int i = 0; i < b.length; i += 8) {
            long w = 0;
            for (int j = 0; j < 8 && i + j < b.length; j++) {
                w |= (b[i + j] & 0xffL) << (8 * j);
            }
            feed(w);
        }
    }

    private void begin() {
        h1 = 0x9368e53c2f6af274L;
        h2 = 0x586dcd208f7cd3fdL;
        hasPending = false;
        words = 0;
        buffered = 0;
    }

    private void feed(long w) {
        words++;
        if (algorithm == HashAlgorithm.SHA256_128) { // buffered: one digest call per block, not one per word
            if (buffered + 8 > buffer.length) {
                buffer = Arrays.copyOf(buffer, buffer.length * 2);
            }
            LE_LONG.set(buffer, buffered, w);
            buffered += 8;
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
        if (algorithm == HashAlgorithm.SHA256_128) {
            try {
                if (mac != null) {
                    mac.update(buffer, 0, buffered);
                    mac.doFinal(digest, 0);
                } else {
                    sha.update(buffer, 0, buffered);
                    sha.digest(digest, 0, digest.length);
                }
            } catch (GeneralSecurityException e) {
                throw new IllegalStateException("digest buffer of 32 bytes refused", e);
            }
            hi = (long) BE_LONG.get(digest, 0);
            lo = (long) BE_LONG.get(digest, 8);
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

    private static long fmix64(long k) {
        k ^= k >>> 33;
        k *= 0xff51afd7ed558ccdL;
        k ^= k >>> 33;
        k *= 0xc4ceb9fe1a85ec53L;
        k ^= k >>> 33;
        return k;
    }
}

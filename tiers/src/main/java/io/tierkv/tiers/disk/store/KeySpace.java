package io.tierkv.tiers.disk.store;

import io.tierkv.core.prefix.BlockHasher;
import io.tierkv.core.prefix.HashAlgorithm;
import java.security.SecureRandom;
import java.util.Objects;

/**
 * The block hash function a disk directory's records are keyed by: the algorithm and the
 * fingerprint of its secret key ({@link BlockHasher#keyFingerprint}, 0 for an unkeyed hash). A
 * persistent directory records it in its metadata file and refuses a tier opened with another,
 * since none of its keys would be found (or, worse, a MurmurHash3 manager would meet keys computed
 * by SHA-256 under the same names). A key the caller supplies is never written, only its
 * fingerprint; a key {@linkplain #generated generated for the directory} is kept in its
 * owner-only metadata file, so every restart over the directory finds its records without being
 * told the key.
 *
 * @param algorithm      the block hash function
 * @param keyFingerprint the key's fingerprint, 0 for none
 * @param storedKey      the key kept in the directory's metadata (a generated one), empty for none;
 *                       copied
 * @param generated      whether the key is (or, asked of {@link DiskTier#open}, is to be) generated
 *                       for the directory and kept in it
 */
public record KeySpace(HashAlgorithm algorithm, long keyFingerprint, byte[] storedKey, boolean generated) {

    /** Unkeyed SHA-256, the manager's default. */
    public static final KeySpace DEFAULT = new KeySpace(HashAlgorithm.SHA256_128, 0, new byte[0], false);

    /**
     * Validates and copies.
     *
     * @throws NullPointerException if algorithm or storedKey is null
     */
    public KeySpace {
        Objects.requireNonNull(algorithm, "algorithm");
        storedKey = storedKey.clone();
    }

    /**
     * The key space of a hash function and a key the caller keeps (never written to disk).
     *
     * @param algorithm the block hash function
     * @param key       its secret key, empty for none
     * @return the key space
     */
    public static KeySpace of(HashAlgorithm algorithm, byte[] key) {
        return new KeySpace(algorithm, BlockHasher.keyFingerprint(key), new byte[0], false);
    }

    /**
     * Asks {@link DiskTier#open} for the key generated for a persistent directory: the one its
     * metadata keeps, or, for a new directory (or a non-persistent tier), a fresh random one of
     * {@value DiskFormat#STORED_KEY_BYTES} bytes that the metadata then keeps. The key is
     * {@link #storedKey()} of {@link DiskTier#keySpace()} after the open.
     *
     * @param algorithm the block hash function; {@link HashAlgorithm#SHA256_128} (the only keyed one)
     * @return the request
     * @throws IllegalArgumentException for {@link HashAlgorithm#MURMUR3_128}, which takes no key
     */
    public static KeySpace generated(HashAlgorithm algorithm) {
        BlockHasher.checkKey(algorithm, new byte[BlockHasher.MIN_KEY_BYTES]);
        return new KeySpace(algorithm, 0, new byte[0], true);
    }

    /** {@return the key kept in the directory (a copy), empty for none} */
    @Override
    public byte[] storedKey() {
        return storedKey.clone();
    }

    /**
     * Whether a directory that records {@code stored} serves a tier that asks for this key space:
     * the same function and key fingerprint, or, for a {@linkplain #generated generated} request, a
     * directory that keeps a generated key.
     *
     * @param stored what the directory records
     * @return whether they match
     */
    boolean admits(KeySpace stored) {
        if (stored == null || stored.algorithm != algorithm) {
            return false;
        }
        return generated && storedKey.length == 0 ? stored.generated : stored.keyFingerprint == keyFingerprint;
    }

    /** {@return this request with a fresh random key generated for the directory, if it asks for one} */
    KeySpace withGeneratedKey() {
        if (!generated || storedKey.length > 0) {
            return this;
        }
        byte[] key = new byte[DiskFormat.STORED_KEY_BYTES];
        new SecureRandom().nextBytes(key);
        return new KeySpace(algorithm, BlockHasher.keyFingerprint(key), key, true);
    }

    /** {@return a description for messages, e.g. {@code SHA256_128 keyed (key fingerprint 0x1f2e...)}} */
    public String describe() {
        if (generated && keyFingerprint == 0) {
            return algorithm + " keyed with a key generated for its directory";
        }
        return algorithm + (keyFingerprint == 0 ? " unkeyed"
                : (generated ? " keyed with a key generated for its directory" : " keyed")
                        + " (key fingerprint 0x" + Long.toHexString(keyFingerprint) + ")");
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof KeySpace k && k.algorithm == algorithm && k.keyFingerprint == keyFingerprint
                && k.generated == generated && java.util.Arrays.equals(k.storedKey, storedKey);
    }

    @Override
    public int hashCode() {
        return Objects.hash(algorithm, keyFingerprint, generated, java.util.Arrays.hashCode(storedKey));
    }

    @Override
    public String toString() {
        return "KeySpace[" + describe() + "]"; // never the key itself
    }
}

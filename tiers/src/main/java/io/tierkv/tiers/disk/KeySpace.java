package io.tierkv.tiers.disk;

import io.tierkv.core.prefix.BlockHasher;
import io.tierkv.core.prefix.HashAlgorithm;
import java.util.Objects;

/**
 * The block hash function a disk directory's records are keyed by: the algorithm and the
 * fingerprint of its secret key ({@link BlockHasher#keyFingerprint}, 0 for an unkeyed hash; the
 * key itself is never written). A persistent directory records it in its metadata file and
 * refuses a tier opened with another, since none of its keys would be found (or, worse, a
 * MurmurHash3 manager would meet keys computed by SHA-256 under the same names).
 *
 * @param algorithm      the block hash function
 * @param keyFingerprint the key's fingerprint, 0 for none
 */
public record KeySpace(HashAlgorithm algorithm, long keyFingerprint) {

    /** Unkeyed SHA-256, the manager's default. */
    public static final KeySpace DEFAULT = new KeySpace(HashAlgorithm.SHA256_128, 0);

    /**
     * Validates.
     *
     * @throws NullPointerException if algorithm is null
     */
    public KeySpace {
        Objects.requireNonNull(algorithm, "algorithm");
    }

    /**
     * The key space of a hash function and key.
     *
     * @param algorithm the block hash function
     * @param key       its secret key, empty for none
     * @return the key space
     */
    public static KeySpace of(HashAlgorithm algorithm, byte[] key) {
        return new KeySpace(algorithm, BlockHasher.keyFingerprint(key));
    }

    /** {@return a description for messages, e.g. {@code SHA256_128 keyed (key fingerprint 0x1f2e...)}} */
    public String describe() {
        return algorithm + (keyFingerprint == 0 ? " unkeyed"
                : " keyed (key fingerprint 0x" + Long.toHexString(keyFingerprint) + ")");
    }
}

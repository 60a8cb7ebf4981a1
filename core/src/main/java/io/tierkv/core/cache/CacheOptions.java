package io.tierkv.core.cache;

import io.tierkv.core.KvLayout;
import io.tierkv.core.prefix.BlockHasher;
import io.tierkv.core.prefix.HashAlgorithm;

/**
 * Validated configuration of one {@link PagedKvCache}. An invalid instance cannot exist: the
 * canonical constructor rejects every bad field with its name, value and bound, and each
 * {@code withX} returns a validated copy.
 *
 * @param layout                 block layout
 * @param deviceBlocks           top-tier slots, at least 1
 * @param maxBlocks              block ids (top tier plus blocks held only below), at least deviceBlocks
 * @param policy                 eviction policy name, see {@code EvictionPolicies.names()}
 * @param hashAlgorithm          block hash function; {@link HashAlgorithm#SHA256_128} resists crafted
 *                               collisions, {@link HashAlgorithm#MURMUR3_128} is for one trusted tenant
 * @param recentDeviceBlocks     sealed blocks at the end of every open sequence kept on the top tier, >= 0
 * @param admissionTimeoutNanos  how long an allocation waits for space before failing, >= 0
 * @param promotionTimeoutNanos  how long a promotion waits for its device copy before it is cancelled, > 0
 * @param hashKey                secret key of a keyed {@code SHA256_128} block hash (HMAC-SHA256), at
 *                               least {@value BlockHasher#MIN_KEY_BYTES} bytes, or empty for none; copied
 */
public record CacheOptions(KvLayout layout, int deviceBlocks, int maxBlocks, String policy,
        HashAlgorithm hashAlgorithm, int recentDeviceBlocks, long admissionTimeoutNanos,
        long promotionTimeoutNanos, byte[] hashKey) {

    /** Default wait for space: 100 ms. */
    public static final long DEFAULT_ADMISSION_TIMEOUT_NANOS = 100_000_000L;
    /** Default promotion timeout: 5 s. */
    public static final long DEFAULT_PROMOTION_TIMEOUT_NANOS = 5_000_000_000L;

    /**
     * Validates.
     *
     * @throws IllegalArgumentException naming the field, value and bound
     */
    public CacheOptions {
        if (layout == null) {
            throw new IllegalArgumentException("layout: null (expected a KvLayout)");
        }
        if (deviceBlocks < 1) {
            throw new IllegalArgumentException("deviceBlocks: " + deviceBlocks + " (expected >= 1)");
        }
        if (maxBlocks < deviceBlocks) {
            throw new IllegalArgumentException("maxBlocks: " + maxBlocks + " (expected >= deviceBlocks "
                    + deviceBlocks + ")");
        }
        if (policy == null || policy.isBlank()) {
            throw new IllegalArgumentException("policy: '" + policy + "' (expected a policy name such as lru)");
        }
        if (hashAlgorithm == null) {
            throw new IllegalArgumentException("hashAlgorithm: null (expected MURMUR3_128 or SHA256_128)");
        }
        if (recentDeviceBlocks < 0) {
            throw new IllegalArgumentException("recentDeviceBlocks: " + recentDeviceBlocks + " (expected >= 0)");
        }
        if (admissionTimeoutNanos < 0) {
            throw new IllegalArgumentException("admissionTimeoutNanos: " + admissionTimeoutNanos + " (expected >= 0)");
        }
        if (promotionTimeoutNanos <= 0) {
            throw new IllegalArgumentException("promotionTimeoutNanos: " + promotionTimeoutNanos + " (expected > 0)");
        }
        BlockHasher.checkKey(hashAlgorithm, hashKey);
        hashKey = hashKey.clone();
    }

    /**
     * Validates, with an unkeyed block hash.
     *
     * @param layout                 block layout
     * @param deviceBlocks           top-tier slots, at least 1
     * @param maxBlocks              block ids, at least deviceBlocks
     * @param policy                 eviction policy name
     * @param hashAlgorithm          block hash function
     * @param recentDeviceBlocks     recent sealed blocks kept on the top tier, >= 0
     * @param admissionTimeoutNanos  wait for space, >= 0
     * @param promotionTimeoutNanos  promotion timeout, > 0
     * @throws IllegalArgumentException naming the field, value and bound
     */
    public CacheOptions(KvLayout layout, int deviceBlocks, int maxBlocks, String policy, HashAlgorithm hashAlgorithm,
            int recentDeviceBlocks, long admissionTimeoutNanos, long promotionTimeoutNanos) {
        this(layout, deviceBlocks, maxBlocks, policy, hashAlgorithm, recentDeviceBlocks, admissionTimeoutNanos,
                promotionTimeoutNanos, new byte[0]);
    }

    /** {@return a copy of the hash key (empty for none)} */
    @Override
    public byte[] hashKey() {
        return hashKey.clone();
    }

    /**
     * Defaults for a single-tier cache: LRU, SHA-256 block hashes (unkeyed), no recent-block protection beyond
     * reference counts, 100 ms admission wait.
     *
     * @param layout       block layout
     * @param deviceBlocks slots
     * @return the options
     * @throws IllegalArgumentException as the constructor
     */
    public static CacheOptions of(KvLayout layout, int deviceBlocks) {
        return new CacheOptions(layout, deviceBlocks, deviceBlocks, "lru", HashAlgorithm.SHA256_128, 0,
                DEFAULT_ADMISSION_TIMEOUT_NANOS, DEFAULT_PROMOTION_TIMEOUT_NANOS);
    }

    /**
     * Returns a validated copy with a new {@code maxBlocks}.
     *
     * @param value block ids in total
     * @return a validated copy
     */
    public CacheOptions withMaxBlocks(int value) {
        return new CacheOptions(layout, deviceBlocks, value, policy, hashAlgorithm, recentDeviceBlocks,
                admissionTimeoutNanos, promotionTimeoutNanos, hashKey);
    }

    /**
     * Returns a validated copy with a new {@code policy}.
     *
     * @param value policy name
     * @return a validated copy
     */
    public CacheOptions withPolicy(String value) {
        return new CacheOptions(layout, deviceBlocks, maxBlocks, value, hashAlgorithm, recentDeviceBlocks,
                admissionTimeoutNanos, promotionTimeoutNanos, hashKey);
    }

    /**
     * Returns a validated copy with a new {@code hashAlgorithm}.
     *
     * @param value hash function
     * @return a validated copy
     */
    public CacheOptions withHashAlgorithm(HashAlgorithm value) {
        return new CacheOptions(layout, deviceBlocks, maxBlocks, policy, value, recentDeviceBlocks,
                admissionTimeoutNanos, promotionTimeoutNanos, hashKey);
    }

    /**
     * Returns a validated copy with a new {@code hashKey}.
     *
     * @param value secret key of a keyed SHA-256 block hash, or empty for none
     * @return a validated copy
     */
    public CacheOptions withHashKey(byte[] value) {
        return new CacheOptions(layout, deviceBlocks, maxBlocks, policy, hashAlgorithm, recentDeviceBlocks,
                admissionTimeoutNanos, promotionTimeoutNanos, value);
    }

    /**
     * Returns a validated copy with a new {@code recentDeviceBlocks}.
     *
     * @param value recent sealed blocks protected per open sequence
     * @return a validated copy
     */
    public CacheOptions withRecentDeviceBlocks(int value) {
        return new CacheOptions(layout, deviceBlocks, maxBlocks, policy, hashAlgorithm, value,
                admissionTimeoutNanos, promotionTimeoutNanos, hashKey);
    }

    /**
     * Returns a validated copy with a new {@code admissionTimeoutNanos}.
     *
     * @param value admission wait in nanoseconds
     * @return a validated copy
     */
    public CacheOptions withAdmissionTimeoutNanos(long value) {
        return new CacheOptions(layout, deviceBlocks, maxBlocks, policy, hashAlgorithm, recentDeviceBlocks,
                value, promotionTimeoutNanos, hashKey);
    }

    /**
     * Returns a validated copy with a new {@code promotionTimeoutNanos}.
     *
     * @param value promotion timeout in nanoseconds
     * @return a validated copy
     */
    public CacheOptions withPromotionTimeoutNanos(long value) {
        return new CacheOptions(layout, deviceBlocks, maxBlocks, policy, hashAlgorithm, recentDeviceBlocks,
                admissionTimeoutNanos, value, hashKey);
    }
}

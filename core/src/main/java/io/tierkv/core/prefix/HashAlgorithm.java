package io.tierkv.core.prefix;

/** The function behind chained block hashes. */
public enum HashAlgorithm {
    /** MurmurHash3 x64 128-bit (Austin Appleby, public domain); fast, not collision-resistant. */
    MURMUR3_128,
    /** SHA-256 truncated to its first 128 bits (FIPS 180-4); for caches shared across tenants. */
    SHA256_128
}

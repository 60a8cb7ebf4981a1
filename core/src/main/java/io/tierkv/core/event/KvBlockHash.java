package io.tierkv.core.event;

/**
 * A 128-bit block hash as two words, as the cache keeps it ({@code BlockStates.hashHi/hashLo}).
 * vLLM-format consumers take 64-bit hashes: {@link #wireHash()} is the one sent.
 *
 * @param hi the high 64 bits (the first 8 bytes of the digest, big-endian)
 * @param lo the low 64 bits
 */
public record KvBlockHash(long hi, long lo) {

    /**
     * The 64-bit hash put on the wire: the high word, as a signed {@code int64}. The digest is
     * truncated to its first 8 bytes, so two blocks whose hashes share their high words collide on
     * the wire (about 2^-64 per pair); the manager itself always compares all 128 bits.
     *
     * @return {@link #hi()}
     */
    public long wireHash() {
        return hi;
    }
}

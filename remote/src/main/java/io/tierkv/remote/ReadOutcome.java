package io.tierkv.remote;

/**
 * What one verified read of a remote value found. Every outcome but {@link #HIT} is a counted
 * miss; {@link #DAMAGED}, {@link #FOREIGN} and {@link #MISMATCHED} values are also deleted, while a
 * {@link #COLLISION} is kept, because it is an intact block of another identity whose hash
 * collides with the reader's (its own reader may still want it).
 */
enum ReadOutcome {
    /** Intact, of this layout, this identity and the expected length: the payload was copied. */
    HIT,
    /** No value under the key (or the read was not made: breaker open, timeout, error). */
    ABSENT,
    /** Bad magic, version, lengths or CRC32C, or not a string at all (a list, a set...). Deleted. */
    DAMAGED,
    /** Intact but written for another layout fingerprint. Deleted. */
    FOREIGN,
    /** Intact, this layout, but a payload length other than the reader's block size. Deleted. */
    MISMATCHED,
    /** Intact, this layout, another identity under the same hash. Kept. */
    COLLISION
}

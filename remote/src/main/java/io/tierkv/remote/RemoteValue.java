package io.tierkv.remote;

/**
 * A command argument as {@link RemoteCodec} encodes it: a block value to store
 * ({@link BlockWrite}) or a block hash as 32 hex digits ({@link Member}, the owned LRU's
 * sorted-set members).
 */
sealed interface RemoteValue permits BlockWrite, RemoteValue.Member {

    /**
     * A block hash written as 32 lower-case hex digits, high word first.
     *
     * @param hi the hash's high 64 bits
     * @param lo the hash's low 64 bits
     */
    record Member(long hi, long lo) implements RemoteValue {}
}

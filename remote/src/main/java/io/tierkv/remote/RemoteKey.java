package io.tierkv.remote;

/**
 * A key as {@link RemoteCodec} encodes it: a block's value key, made from its 128-bit hash and the
 * store's prefix without building a {@code byte[]}, or a fixed name (the owned LRU's index keys).
 */
sealed interface RemoteKey permits RemoteKey.Block, RemoteKey.Named {

    /**
     * The value key of the block with this hash: {@code <prefix><hi as 16 hex><lo as 16 hex>}.
     *
     * @param hi the hash's high 64 bits
     * @param lo the hash's low 64 bits
     */
    record Block(long hi, long lo) implements RemoteKey {}

    /**
     * A key given by its bytes.
     *
     * @param name the key's bytes, not modified after construction
     */
    record Named(byte[] name) implements RemoteKey {}
}

package io.tierkv.tiers.disk;

/**
 * How the disk tier stores a block's bytes.
 *
 * <p>Whatever is chosen, a record whose compressed form would not save at least 1/32 of its raw
 * length is stored raw, so incompressible data never grows on disk.
 */
public enum Compression {
    /** Every block is stored raw: the payload is the block's bytes. */
    NONE,
    /**
     * Blocks are compressed with LZ4 (the block format of {@code at.yawk.lz4:lz4-java}, fast
     * compressor, safe decompressor), optionally after a byte shuffle ({@link DiskOptions#shuffle()}),
     * and stored raw when that does not pay.
     */
    LZ4
}

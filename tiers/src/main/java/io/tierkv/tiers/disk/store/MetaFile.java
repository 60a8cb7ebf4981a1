package io.tierkv.tiers.disk.store;

import io.tierkv.core.KvLayout;
import io.tierkv.core.prefix.HashAlgorithm;
import io.tierkv.core.prefix.BlockHasher;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.zip.CRC32C;

import static io.tierkv.tiers.disk.store.DiskFormat.*;

/** Writes, validates and reads the directory's metadata file {@code tierkv-disk.meta} ({@link DiskFormat} gives the bytes). Stateless and thread-safe. */
final class MetaFile {

    private MetaFile() {
    }

    /**
     * Writes the metadata file's bytes.
     *
     * @param meta   {@link DiskFormat#META_BYTES} bytes
     * @param crc    a checksum object
     * @param layout the layout to record
     * @param keySpace the block hash function the records are keyed by
     * @param ephemeral whether the tier writing it is not persistent ({@link DiskFormat#META_EPHEMERAL})
     */
    static void writeMeta(MemorySegment meta, CRC32C crc, KvLayout layout, KeySpace keySpace, boolean ephemeral) {
        meta.asSlice(0, META_BYTES).fill((byte) 0);
        meta.set(LONG, 0, META_MAGIC);
        meta.set(INT, 8, FORMAT_VERSION);
        meta.set(INT, META_FLAGS, ephemeral ? META_EPHEMERAL : 0);
        meta.set(LONG, META_FINGERPRINT, layout.fingerprint());
        meta.set(INT, META_LAYOUT, layout.layers());
        meta.set(INT, META_LAYOUT + 4, layout.kvHeads());
        meta.set(INT, META_LAYOUT + 8, layout.headDim());
        meta.set(INT, META_LAYOUT + 12, layout.dtype().ordinal());
        meta.set(INT, META_LAYOUT + 16, layout.blockSizeTokens());
        meta.set(INT, META_HASH_ALGORITHM, keySpace.algorithm().ordinal());
        meta.set(LONG, META_KEY_FINGERPRINT, keySpace.keyFingerprint());
        byte[] stored = keySpace.storedKey();
        meta.set(INT, META_STORED_KEY_LENGTH, stored.length);
        MemorySegment.copy(MemorySegment.ofArray(stored), 0, meta, META_STORED_KEY, stored.length);
        meta.set(INT, META_CRC, crc32c(crc, meta, 0, META_CRC));
    }

    /**
     * Validates a metadata file's bytes.
     *
     * @param meta  the file's bytes
     * @param crc   a checksum object
     * @return {@link DiskFormat#VALID}, or {@link DiskFormat#TRUNCATED}, {@link DiskFormat#NO_MAGIC}, {@link DiskFormat#BAD_HEADER_CRC},
     *     {@link DiskFormat#BAD_VERSION}
     */
    static int checkMeta(MemorySegment meta, CRC32C crc) {
        if (meta.byteSize() < META_BYTES) {
            return TRUNCATED;
        }
        if (meta.get(LONG, 0) != META_MAGIC) {
            return NO_MAGIC;
        }
        if (meta.get(INT, META_CRC) != crc32c(crc, meta, 0, META_CRC)) {
            return BAD_HEADER_CRC;
        }
        if (meta.get(INT, 8) != FORMAT_VERSION) {
            return BAD_VERSION;
        }
        return VALID;
    }

    /**
     * Whether metadata bytes say a tier that is not persistent wrote them.
     *
     * @param meta valid metadata bytes
     * @return whether {@link DiskFormat#META_EPHEMERAL} is set
     */
    static boolean metaEphemeral(MemorySegment meta) {
        return (meta.get(INT, META_FLAGS) & META_EPHEMERAL) != 0;
    }

    /**
     * Reads the fingerprint from metadata bytes.
     *
     * @param meta valid metadata bytes
     * @return the layout fingerprint they record
     */
    static long metaFingerprint(MemorySegment meta) {
        return meta.get(LONG, META_FINGERPRINT);
    }

    /**
     * Reads the key space from metadata bytes.
     *
     * @param meta valid metadata bytes
     * @return the block hash function, key fingerprint and any key kept there, or null for an unknown
     *     function or a kept key that does not match its fingerprint
     */
    static KeySpace metaKeySpace(MemorySegment meta) {
        int ordinal = meta.get(INT, META_HASH_ALGORITHM);
        int storedBytes = meta.get(INT, META_STORED_KEY_LENGTH);
        HashAlgorithm[] all = HashAlgorithm.values();
        if (ordinal < 0 || ordinal >= all.length || (storedBytes != 0 && storedBytes != STORED_KEY_BYTES)) {
            return null;
        }
        byte[] stored = meta.asSlice(META_STORED_KEY, storedBytes).toArray(ValueLayout.JAVA_BYTE);
        KeySpace k = new KeySpace(all[ordinal], meta.get(LONG, META_KEY_FINGERPRINT), stored, storedBytes > 0);
        return storedBytes > 0 && BlockHasher.keyFingerprint(stored) != k.keyFingerprint() ? null : k;
    }

    /**
     * The format version of metadata bytes that carry the magic, whatever their checksum says.
     *
     * @param meta metadata bytes, at least 12
     * @return the version field, or -1 without the magic
     */
    static int metaVersion(MemorySegment meta) {
        return meta.byteSize() >= 12 && meta.get(LONG, 0) == META_MAGIC ? meta.get(INT, 8) : -1;
    }

    /**
     * Describes the layout in metadata bytes, for messages.
     *
     * @param meta valid metadata bytes
     * @return for example {@code layers=2, kvHeads=2, headDim=64, dtype=F16, blockSizeTokens=16}
     */
    static String metaLayoutText(MemorySegment meta) {
        int dtype = meta.get(INT, META_LAYOUT + 12);
        io.tierkv.core.DType[] types = io.tierkv.core.DType.values();
        return "layers=" + meta.get(INT, META_LAYOUT) + ", kvHeads=" + meta.get(INT, META_LAYOUT + 4) + ", headDim="
                + meta.get(INT, META_LAYOUT + 8) + ", dtype="
                + (dtype >= 0 && dtype < types.length ? types[dtype].name() : "#" + dtype) + ", blockSizeTokens="
                + meta.get(INT, META_LAYOUT + 16);
    }
}

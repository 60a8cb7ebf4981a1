package io.tierkv.tiers.disk.store;

import io.tierkv.core.KvLayout;
import java.lang.foreign.MemorySegment;
import java.util.zip.CRC32C;

/**
 * What a valid record of one tier looks like: its layout fingerprint and the largest token count
 * and raw length the layout allows. Immutable and thread-safe.
 *
 * @param fingerprint the layout fingerprint ({@link KvLayout#fingerprint()})
 * @param maxTokens   the layout's {@code blockSizeTokens}
 * @param maxRaw      the layout's {@code bytesPerBlock}
 */
record RecordRules(long fingerprint, int maxTokens, int maxRaw) {

    /**
     * The rules of a layout.
     *
     * @param layout the block layout
     * @return its rules
     */
    static RecordRules of(KvLayout layout) {
        return new RecordRules(layout.fingerprint(), layout.blockSizeTokens(), layout.bytesPerBlock());
    }

    /**
     * Validates the header of a record the index holds ({@link RecordHeaders#checkRecordHeader}),
     * for reads and compaction: its nonce is the segment's, or one of its {@linkplain
     * SegmentTable#isAncestor ancestors} (a record an interrupted compaction had not moved, which
     * recovery indexed as it was: {@link UnmovedRecords}).
     *
     * @param map   the mapped segment
     * @param off   the record's offset, a multiple of 64
     * @param limit first byte past the readable data
     * @param crc   a checksum object
     * @param nonce the segment's nonce
     * @return {@link DiskFormat#VALID} or the first problem found
     */
    int check(MemorySegment map, long off, long limit, CRC32C crc, long nonce) {
        int status = RecordHeaders.checkRecordHeader(map, off, limit, crc, fingerprint, nonce, maxTokens, maxRaw);
        if (status == DiskFormat.STALE_NONCE) {
            long own = map.get(DiskFormat.LONG, off + DiskFormat.REC_NONCE);
            if (SegmentTable.isAncestor(own, nonce)) {
                return RecordHeaders.checkRecordHeader(map, off, limit, crc, fingerprint, own, maxTokens, maxRaw);
            }
        }
        return status;
    }

    /**
     * Validates the record header at file offset {@code off}, read from memory holding the file's
     * bytes from file offset {@code base} on ({@link RecordHeaders#checkRecordHeader(MemorySegment,
     * long, long, long, CRC32C, long, long, int, int)}).
     *
     * @param bytes memory holding the header at {@code off - base}
     * @param base  file offset of {@code bytes}' byte 0
     * @param off   the record's file offset, a multiple of 64
     * @param limit first file byte past the readable data
     * @param crc   a checksum object
     * @param nonce the segment's nonce
     * @return {@link DiskFormat#VALID} or the first problem found
     */
    int check(MemorySegment bytes, long base, long off, long limit, CRC32C crc, long nonce) {
        return RecordHeaders.checkRecordHeader(bytes, base, off, limit, crc, fingerprint, nonce, maxTokens, maxRaw);
    }

    /** Checks an identity's shape: {@code 32 + 4T} bytes, {@code T <= blockSizeTokens}; returns T. */
    int checkIdentity(MemorySegment identity) {
        java.util.Objects.requireNonNull(identity, "identity");
        int tokens = io.tierkv.core.prefix.BlockIdentity.tokenCount(identity.byteSize());
        if (tokens < 0 || tokens > maxTokens) {
            throw new IllegalArgumentException("identity: " + identity.byteSize() + " bytes (expected "
                    + io.tierkv.core.prefix.BlockIdentity.KEY_BYTES + " + 4 x T for T <= " + maxTokens + " token ids, at most "
                    + io.tierkv.core.prefix.BlockIdentity.bytes(maxTokens) + ")");
        }
        return tokens;
    }

    /**
     * Why the record at {@code off}, indexed under a key with a length, is not to be trusted by
     * its header: the header's own check ({@link #check}), then that it names that key and
     * length.
     *
     * @param map   the mapped segment
     * @param off   the record's offset
     * @param len   the record's length as indexed
     * @param crc   a checksum object
     * @param nonce the segment's nonce
     * @param hi    the key, high 64 bits
     * @param lo    the key, low 64 bits
     * @return null if the header is sound and names the key and length, else the reason
     */
    String headerProblem(MemorySegment map, long off, long len, CRC32C crc, long nonce, long hi, long lo) {
        int status = check(map, off, off + len, crc, nonce);
        if (status != DiskFormat.VALID) {
            return DiskFormat.reason(status);
        }
        return RecordHeaders.recordHashHi(map, off) != hi || RecordHeaders.recordHashLo(map, off) != lo
                || RecordHeaders.recordBytesAt(map, off) != len ? "header names another block or length" : null;
    }

    /**
     * The CRC32C of a record's identity and stored payload, the bytes its header's payload
     * checksum covers ({@link DiskFormat}); compare with {@link RecordHeaders#recordPayloadCrc}.
     * The header must be sound.
     *
     * @param map the mapped segment
     * @param off the record's offset
     * @param crc a checksum object (reset here)
     * @return the checksum of the record's bytes as they are now
     */
    static int payloadCrc(MemorySegment map, long off, CRC32C crc) {
        crc.reset();
        DiskFormat.update(crc, map, off + DiskFormat.RECORD_HEADER_BYTES,
                io.tierkv.core.prefix.BlockIdentity.bytes(RecordHeaders.recordTokenCount(map, off))
                        + RecordHeaders.recordStoredLength(map, off));
        return (int) crc.getValue();
    }
}

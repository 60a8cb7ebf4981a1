package io.tierkv.tiers.disk.store;

import io.tierkv.tiers.disk.DiskOptions;
import java.lang.foreign.MemorySegment;
import java.util.zip.CRC32C;

import static io.tierkv.tiers.disk.store.DiskFormat.*;

/** Reads, writes and validates a segment file's 64-byte header and its high-water mark ({@link DiskFormat} gives the bytes). Stateless and thread-safe. */
final class SegmentHeaders {

    private SegmentHeaders() {
    }

    /**
     * Writes a fresh segment header with its checksum and a high-water mark at the first record
     * (no last record).
     *
     * @param seg          the mapped segment
     * @param crc          a checksum object
     * @param fingerprint  the layout fingerprint
     * @param nonce        the segment's nonce
     * @param id           the segment id
     * @param segmentBytes the segment's size
     */
    static void writeSegmentHeader(MemorySegment seg, CRC32C crc, long fingerprint, long nonce, int id,
                                   long segmentBytes) {
        seg.asSlice(0, SEGMENT_HEADER_BYTES).fill((byte) 0);
        seg.set(INT, SEG_MAGIC, SEGMENT_MAGIC);
        seg.set(SHORT, SEG_VERSION, (short) FORMAT_VERSION);
        seg.set(SHORT, SEG_HEADER_BYTES, (short) SEGMENT_HEADER_BYTES);
        seg.set(LONG, SEG_FINGERPRINT, fingerprint);
        seg.set(LONG, SEG_NONCE, nonce);
        seg.set(INT, SEG_ID, id);
        seg.set(LONG, SEG_BYTES, segmentBytes);
        seg.set(INT, SEG_HEADER_CRC, crc32c(crc, seg, 0, SEG_HEADER_CRC));
        writeHighWaterMark(seg, crc, SEGMENT_HEADER_BYTES, 0);
    }

    /**
     * Replaces the nonce (in-place compaction) and re-seals the header checksum: the checksum the
     * header will have is written first, then the nonce, so a crash between the two stores leaves
     * the old nonce under the checksum of its {@linkplain SegmentTable#successor successor}, which
     * {@link #resealInterruptedNonce} recognises (before, such a header failed its checksum and
     * recovery dropped the whole segment: found by {@code CompactionCrashTest}).
     *
     * @param seg   the mapped segment
     * @param crc   a checksum object
     * @param nonce the new nonce
     */
    static void writeSegmentNonce(MemorySegment seg, CRC32C crc, long nonce) {
        seg.set(INT, SEG_HEADER_CRC, headerCrcWithNonce(seg, crc, nonce));
        seg.set(LONG, SEG_NONCE, nonce);
    }

    /**
     * Repairs the header a compaction left when a crash came between its two stores ({@link
     * #writeSegmentNonce}): if the checksum is that of the header with its nonce's successor, the
     * compaction had moved nothing yet, and the checksum is re-sealed for the nonce the header holds.
     *
     * @param seg a mapped segment whose header fails its checksum
     * @param crc a checksum object
     * @return whether it was such a header, now valid again
     */
    static boolean resealInterruptedNonce(MemorySegment seg, CRC32C crc) {
        long nonce = seg.get(LONG, SEG_NONCE);
        if (seg.get(INT, SEG_HEADER_CRC) != headerCrcWithNonce(seg, crc, SegmentTable.successor(nonce))) {
            return false;
        }
        seg.set(INT, SEG_HEADER_CRC, crc32c(crc, seg, 0, SEG_HEADER_CRC));
        return true;
    }

    /** {@return the checksum of the header's first {@code SEG_HEADER_CRC} bytes with another nonce in them} */
    private static int headerCrcWithNonce(MemorySegment seg, CRC32C crc, long nonce) {
        MemorySegment copy = MemorySegment.ofArray(new byte[(int) SEG_HEADER_CRC]);
        MemorySegment.copy(seg, 0, copy, 0, SEG_HEADER_CRC);
        copy.set(LONG, SEG_NONCE, nonce);
        return crc32c(crc, copy, 0, SEG_HEADER_CRC);
    }

    /**
     * Writes the high-water mark, the offset of the record that ends there, and their checksum.
     *
     * @param seg              the mapped segment
     * @param crc              a checksum object
     * @param hwm              the end of the last record
     * @param lastRecordOffset where that record starts; 0 when {@code hwm} is
     *                         {@value DiskFormat#SEGMENT_HEADER_BYTES} (no record)
     */
    static void writeHighWaterMark(MemorySegment seg, CRC32C crc, long hwm, long lastRecordOffset) {
        seg.set(LONG, SEG_HWM, hwm);
        seg.set(INT, SEG_LAST_RECORD, (int) lastRecordOffset);
        seg.set(INT, SEG_HWM_CRC, crc32c(crc, seg, SEG_HWM, SEG_HWM_CRC - SEG_HWM));
    }

    /**
     * Validates a segment header.
     *
     * @param seg         the mapped file (at least {@code fileBytes} long)
     * @param crc         a checksum object
     * @param fileBytes   the file's length
     * @param fingerprint the expected layout fingerprint
     * @return {@link DiskFormat#VALID} or the first problem found
     */
    static int checkSegmentHeader(MemorySegment seg, CRC32C crc, long fileBytes, long fingerprint) {
        if (fileBytes < SEGMENT_HEADER_BYTES) {
            return TRUNCATED;
        }
        if (seg.get(INT, SEG_MAGIC) != SEGMENT_MAGIC) {
            return NO_MAGIC;
        }
        if (seg.get(INT, SEG_HEADER_CRC) != crc32c(crc, seg, 0, SEG_HEADER_CRC)) {
            return BAD_HEADER_CRC;
        }
        if (seg.get(SHORT, SEG_VERSION) != FORMAT_VERSION || seg.get(SHORT, SEG_HEADER_BYTES) != SEGMENT_HEADER_BYTES
                || seg.get(INT, SEG_ID + 4) != 0) {
            return BAD_VERSION;
        }
        if (seg.get(LONG, SEG_FINGERPRINT) != fingerprint) {
            return BAD_FINGERPRINT;
        }
        long bytes = seg.get(LONG, SEG_BYTES);
        if (bytes < SEGMENT_HEADER_BYTES || bytes > DiskOptions.MAX_SEGMENT_BYTES) {
            return BAD_LENGTH;
        }
        return VALID;
    }

    /**
     * The segment's high-water mark if its checksum (which also covers the last record offset)
     * holds, else -1.
     *
     * @param seg a mapped segment whose header is valid
     * @param crc a checksum object
     * @return the mark, or -1 when damaged
     */
    static long readHighWaterMark(MemorySegment seg, CRC32C crc) {
        long hwm = seg.get(LONG, SEG_HWM);
        return seg.get(INT, SEG_HWM_CRC) == crc32c(crc, seg, SEG_HWM, SEG_HWM_CRC - SEG_HWM) ? hwm : -1;
    }

    /**
     * The offset of the record that ends at the high-water mark, as written with it; meaningful
     * only where {@link #readHighWaterMark} returned the mark.
     *
     * @param seg a mapped segment whose header is valid
     * @return the offset, 0 for none
     */
    static long lastRecordOffset(MemorySegment seg) {
        return seg.get(INT, SEG_LAST_RECORD);
    }
}

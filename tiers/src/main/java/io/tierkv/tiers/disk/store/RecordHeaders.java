package io.tierkv.tiers.disk.store;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.zip.CRC32C;

import static io.tierkv.tiers.disk.store.DiskFormat.*;

/** Writes, rewrites, validates and reads a record's 64-byte header ({@link DiskFormat} gives the bytes). Stateless and thread-safe. */
final class RecordHeaders {

    private RecordHeaders() {
    }

    /**
     * Writes a record header and its checksum.
     *
     * @param dst          where the header goes
     * @param off          its offset in {@code dst}
     * @param crc          a checksum object
     * @param codec        {@link DiskFormat#CODEC_RAW} or {@link DiskFormat#CODEC_LZ4}
     * @param shuffleWidth 0, 2 or 4
     * @param fingerprint  the layout fingerprint
     * @param hashHi       block hash, high 64 bits
     * @param hashLo       block hash, low 64 bits
     * @param nonce        the segment's nonce
     * @param tokenCount   token ids that follow
     * @param rawLength    the block's length
     * @param storedLength the payload's length
     * @param payloadCrc   CRC32C of the token ids followed by the payload
     * @param previousOffset where the segment's previous record starts (it ends at the record's
     *                     offset in its segment), 0 for the first record after the segment header
     */
    static void writeRecordHeader(MemorySegment dst, long off, CRC32C crc, int codec, int shuffleWidth,
                                  long fingerprint, long hashHi, long hashLo, long nonce, int tokenCount,
                                  int rawLength, int storedLength, int payloadCrc, long previousOffset) {
        dst.set(INT, off + REC_MAGIC, RECORD_MAGIC);
        dst.set(ValueLayout.JAVA_BYTE, off + REC_VERSION, (byte) FORMAT_VERSION);
        dst.set(ValueLayout.JAVA_BYTE, off + REC_CODEC, (byte) codec);
        dst.set(ValueLayout.JAVA_BYTE, off + REC_RESERVED_BYTE, (byte) 0);
        dst.set(ValueLayout.JAVA_BYTE, off + REC_SHUFFLE, (byte) shuffleWidth);
        dst.set(LONG, off + REC_FINGERPRINT, fingerprint);
        dst.set(LONG, off + REC_HASH_HI, hashHi);
        dst.set(LONG, off + REC_HASH_LO, hashLo);
        dst.set(LONG, off + REC_NONCE, nonce);
        dst.set(INT, off + REC_TOKENS, tokenCount);
        dst.set(INT, off + REC_RAW, rawLength);
        dst.set(INT, off + REC_STORED, storedLength);
        dst.set(INT, off + REC_PAYLOAD_CRC, payloadCrc);
        dst.set(INT, off + REC_PREVIOUS, (int) previousOffset);
        sealRecordHeader(dst, off, crc);
    }

    /**
     * Rewrites the nonce and previous record offset of a record that compaction moved, and its
     * header checksum.
     *
     * @param dst            the mapped segment
     * @param off            the record's (new) offset
     * @param crc            a checksum object
     * @param nonce          the segment's new nonce
     * @param previousOffset where the record moved just before it now starts, 0 if it is the first
     */
    static void rewriteRecordPlace(MemorySegment dst, long off, CRC32C crc, long nonce, long previousOffset) {
        dst.set(LONG, off + REC_NONCE, nonce);
        dst.set(INT, off + REC_PREVIOUS, (int) previousOffset);
        sealRecordHeader(dst, off, crc);
    }

    static void sealRecordHeader(MemorySegment dst, long off, CRC32C crc) {
        dst.set(INT, off + REC_HEADER_CRC, crc32c(crc, dst, off, REC_HEADER_CRC));
    }

    /**
     * Validates the record header at {@code off}: magic, checksum, version and codec, fingerprint,
     * lengths, nonce, previous record offset (0 at the first record offset, else a multiple of 64 in
     * {@code [64, off - 64]}; not judged for a stale header), and that the whole record lies below
     * {@code limit}.
     *
     * @param seg         the mapped segment
     * @param off         the record's offset, a multiple of 64
     * @param limit       first byte past the readable data (high-water mark or file length)
     * @param crc         a checksum object
     * @param fingerprint the expected layout fingerprint
     * @param nonce       the segment's nonce
     * @param maxTokens   the layout's {@code blockSizeTokens}
     * @param maxRaw      the layout's {@code bytesPerBlock}
     * @return {@link DiskFormat#VALID} or the first problem found
     */
    static int checkRecordHeader(MemorySegment seg, long off, long limit, CRC32C crc, long fingerprint, long nonce,
                                 int maxTokens, int maxRaw) {
        return checkRecordHeader(seg, 0, off, limit, crc, fingerprint, nonce, maxTokens, maxRaw);
    }

    /**
     * Validates the record header at file offset {@code off}, read from memory that holds the
     * file's bytes from file offset {@code base} on ({@code seg} offset {@code off - base}): the
     * verdict of {@link #checkRecordHeader(MemorySegment, long, long, CRC32C, long, long, int, int)}
     * on the whole file, which judges offsets (the first record, the previous record offset, the
     * end against {@code limit}) as file offsets.
     *
     * @param seg         memory holding at least the header's 64 bytes at {@code off - base}
     * @param base        file offset of {@code seg}'s byte 0, {@code <= off}
     * @param off         the record's file offset, a multiple of 64
     * @param limit       first file byte past the readable data (high-water mark or file length)
     * @param crc         a checksum object
     * @param fingerprint the expected layout fingerprint
     * @param nonce       the segment's nonce
     * @param maxTokens   the layout's {@code blockSizeTokens}
     * @param maxRaw      the layout's {@code bytesPerBlock}
     * @return {@link DiskFormat#VALID} or the first problem found
     */
    static int checkRecordHeader(MemorySegment seg, long base, long off, long limit, CRC32C crc, long fingerprint,
                                 long nonce, int maxTokens, int maxRaw) {
        if (off + RECORD_HEADER_BYTES > limit) {
            return TRUNCATED;
        }
        long at = off - base;
        if (seg.get(INT, at + REC_MAGIC) != RECORD_MAGIC) {
            return NO_MAGIC;
        }
        if (seg.get(INT, at + REC_HEADER_CRC) != crc32c(crc, seg, at, REC_HEADER_CRC)) {
            return BAD_HEADER_CRC;
        }
        int codec = seg.get(ValueLayout.JAVA_BYTE, at + REC_CODEC);
        int shuffle = seg.get(ValueLayout.JAVA_BYTE, at + REC_SHUFFLE);
        if (seg.get(ValueLayout.JAVA_BYTE, at + REC_VERSION) != FORMAT_VERSION
                || (codec != CODEC_RAW && codec != CODEC_LZ4)
                || seg.get(ValueLayout.JAVA_BYTE, at + REC_RESERVED_BYTE) != 0
                || (shuffle != 0 && shuffle != 2 && shuffle != 4)
                || (codec == CODEC_RAW && shuffle != 0)) {
            return BAD_VERSION;
        }
        if (seg.get(LONG, at + REC_FINGERPRINT) != fingerprint) {
            return BAD_FINGERPRINT;
        }
        int tokens = seg.get(INT, at + REC_TOKENS);
        int raw = seg.get(INT, at + REC_RAW);
        int stored = seg.get(INT, at + REC_STORED);
        if (tokens < 0 || tokens > maxTokens || raw < 0 || raw > maxRaw || stored < 0 || stored > raw
                || (codec == CODEC_RAW && stored != raw)) {
            return BAD_LENGTH;
        }
        if (seg.get(LONG, at + REC_NONCE) != nonce) {
            return STALE_NONCE;
        }
        int previous = seg.get(INT, at + REC_PREVIOUS);
        if (off == SEGMENT_HEADER_BYTES ? previous != 0
                : previous < SEGMENT_HEADER_BYTES || previous > off - RECORD_ALIGN_BYTES
                        || previous % RECORD_ALIGN_BYTES != 0) {
            return BAD_VERSION;
        }
        if (off + recordBytes(tokens, stored) > limit) {
            return TRUNCATED;
        }
        return VALID;
    }

    /**
     * Reads a field of a record header (validate the header first).
     *
     * @param seg the mapped segment
     * @param off the record's offset
     * @return the block hash, high 64 bits
     */
    static long recordHashHi(MemorySegment seg, long off) {
        return seg.get(LONG, off + REC_HASH_HI);
    }

    /**
     * Reads a field of a record header (validate the header first).
     *
     * @param seg the mapped segment
     * @param off the record's offset
     * @return the block hash, low 64 bits
     */
    static long recordHashLo(MemorySegment seg, long off) {
        return seg.get(LONG, off + REC_HASH_LO);
    }

    /**
     * Reads a field of a record header (validate the header first).
     *
     * @param seg the mapped segment
     * @param off the record's offset
     * @return the token count
     */
    static int recordTokenCount(MemorySegment seg, long off) {
        return seg.get(INT, off + REC_TOKENS);
    }

    /**
     * Reads a field of a record header (validate the header first).
     *
     * @param seg the mapped segment
     * @param off the record's offset
     * @return the raw length
     */
    static int recordRawLength(MemorySegment seg, long off) {
        return seg.get(INT, off + REC_RAW);
    }

    /**
     * Reads a field of a record header (validate the header first).
     *
     * @param seg the mapped segment
     * @param off the record's offset
     * @return the stored length
     */
    static int recordStoredLength(MemorySegment seg, long off) {
        return seg.get(INT, off + REC_STORED);
    }

    /**
     * Reads a field of a record header (validate the header first).
     *
     * @param seg the mapped segment
     * @param off the record's offset
     * @return the codec byte
     */
    static int recordCodec(MemorySegment seg, long off) {
        return seg.get(ValueLayout.JAVA_BYTE, off + REC_CODEC);
    }

    /**
     * Reads a field of a record header (validate the header first).
     *
     * @param seg the mapped segment
     * @param off the record's offset
     * @return the shuffle width
     */
    static int recordShuffleWidth(MemorySegment seg, long off) {
        return seg.get(ValueLayout.JAVA_BYTE, off + REC_SHUFFLE);
    }

    /**
     * Reads a field of a record header (validate the header first).
     *
     * @param seg the mapped segment
     * @param off the record's offset
     * @return the offset of the previous record in the segment, 0 for the first
     */
    static long recordPreviousOffset(MemorySegment seg, long off) {
        return seg.get(INT, off + REC_PREVIOUS);
    }

    /**
     * Reads a field of a record header (validate the header first).
     *
     * @param seg the mapped segment
     * @param off the record's offset
     * @return the payload checksum
     */
    static int recordPayloadCrc(MemorySegment seg, long off) {
        return seg.get(INT, off + REC_PAYLOAD_CRC);
    }

    /**
     * Length of a validated record (header + tokens + payload + padding).
     *
     * @param seg the mapped segment
     * @param off the record's offset
     * @return bytes
     */
    static long recordBytesAt(MemorySegment seg, long off) {
        return recordBytes(recordTokenCount(seg, off), recordStoredLength(seg, off));
    }
}

package io.tierkv.tiers.disk;

import io.tierkv.core.KvLayout;
import io.tierkv.core.prefix.BlockHasher;
import io.tierkv.core.prefix.BlockIdentity;
import io.tierkv.core.prefix.HashAlgorithm;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

/**
 * The one descriptor of every byte the disk tier writes: segment files, records, the deletion
 * journal and the directory's metadata file. All multi-byte fields are little-endian; every
 * offset below is in bytes. Checksums are CRC32C (Castagnoli, {@link CRC32C}, the polynomial of
 * iSCSI and ext4 metadata).
 *
 * <h2>Segment file {@code seg-NNNNNNNNNN.tkv}</h2>
 * Reserved whole with {@code posix_fallocate}, mapped whole; a 64-byte header, then records
 * back to back, each starting on a 64-byte boundary.
 * <pre>
 *  0  int   magic 'TKVS' ({@value #SEGMENT_MAGIC})
 *  4  short format version ({@value #FORMAT_VERSION})
 *  6  short header bytes ({@value #SEGMENT_HEADER_BYTES})
 *  8  long  layout fingerprint ({@link KvLayout#fingerprint()})
 * 16  long  nonce: random, replaced when the segment is compacted in place; a record belongs to
 *           the segment only if it carries the same nonce
 * 24  int   segment id (also in the file name)
 * 28  int   0
 * 32  long  segment bytes at creation
 * 40  int   CRC32C of bytes [0, 40)
 * 44  int   0
 * 48  long  high-water mark: end of the last record written (mutable, not in the header CRC)
 * 56  int   last record offset: where the record that ends at the mark starts, 0 if none (the
 *           mark is 64 then); written with the mark
 * 60  int   CRC32C of bytes [48, 60) (a torn or corrupt mark makes recovery scan the whole file)
 * </pre>
 *
 * <h2>Record (at a 64-byte aligned offset inside a segment)</h2>
 * <pre>
 *  0  int   magic 'TKVR' ({@value #RECORD_MAGIC})
 *  4  byte  format version ({@value #FORMAT_VERSION})
 *  5  byte  codec: 0 raw, 1 LZ4 block
 *  6  byte  0
 *  7  byte  shuffle width: 0 (none) or the element size in bytes whose bytes were grouped
 *           before LZ4 (2 for F16/BF16, 4 for F32)
 *  8  long  layout fingerprint
 * 16  long  block hash, high 64 bits
 * 24  long  block hash, low 64 bits
 * 32  long  the segment's nonce when the record was written
 * 40  int   token count T, in [0, blockSizeTokens]
 * 44  int   raw length: the block's bytes, in [0, bytesPerBlock]
 * 48  int   stored length S: bytes of payload on disk, at most the raw length
 * 52  int   CRC32C of the identity followed by the stored payload
 * 56  int   previous record offset: where the record written just before this one in the same
 *           segment starts (it ends where this one starts), 0 for the first record after the
 *           segment header; a multiple of 64 below 2^30 (segments are at most 1 GiB)
 * 60  int   CRC32C of bytes [0, 60)
 * 64        identity ({@link BlockIdentity}): context fingerprint (16 bytes), parent hash (16),
 *           then T little-endian token ids: {@code 32 + 4T} bytes
 * 96 + 4T   payload: S bytes (the raw block, or its LZ4 block-format compression)
 *           zero to 63 bytes of padding up to the next 64-byte boundary (not checksummed)
 * </pre>
 * Records thus form a chain: the header at {@code a + length} of a record at {@code a} names
 * {@code a}, and the mark's last record offset names the record that ends at the mark. Recovery
 * follows the chain reading headers only, and reads inside a record only where its successor does
 * not confirm its length ({@code Recovery}). Compaction rewrites the nonce and the previous
 * record offset of every record it moves.
 *
 * <p>The key (the hash) only finds a record; its identity decides whether it is the block asked
 * for. Every read, match and deduplicating put compares the stored identity with the caller's
 * (a difference is a counted collision and a miss, the record left for its own block).
 * A payload is stored compressed only when that saves at least 1/32 of the raw length, so the
 * bytes on disk for a record never exceed {@code rawLength + } {@link #recordOverheadBytes(int)}.
 *
 * <h2>Deletion journal {@code deletions.journal} (written through chronicle-bytes
 * {@code MappedBytes})</h2>
 * Fixed capacity, reserved with {@code posix_fallocate}; one entry per record deleted from a
 * segment that still exists (evicted, removed, quarantined), so recovery does not bring it back.
 * <pre>
 *  0  long  magic 'TKVJRNL1' ({@value #JOURNAL_MAGIC})
 *  8  int   format version
 * 12  int   entry bytes ({@value #JOURNAL_ENTRY_BYTES})
 * 16  long  layout fingerprint
 * 24  long  capacity in entries
 * 32  long  entries written (mutable; an entry is complete before this count covers it)
 * 40..63    0
 * 64 + 32i  entry i: long segment nonce, long record offset, long hash high, long hash low
 * </pre>
 * An entry applies only when the segment with that nonce exists and the record at that offset
 * carries that hash; any other entry (a compacted or deleted segment, a damaged entry) is ignored.
 * Losing an entry can only bring back a block that was evicted, whose bytes are still correct for
 * its hash: never a wrong byte.
 *
 * <h2>Metadata file {@code tierkv-disk.meta}</h2>
 * <pre>
 *  0  long  magic 'TKVMETA1' ({@value #META_MAGIC})
 *  8  int   format version
 * 12  int   0
 * 16  long  layout fingerprint
 * 24  int   layers, 28 int kvHeads, 32 int headDim, 36 int dtype ordinal, 40 int blockSizeTokens
 * 44  int   block hash function: {@link HashAlgorithm} ordinal
 * 48  long  fingerprint of the block hash's secret key ({@link BlockHasher#keyFingerprint}), 0 unkeyed
 * 56  int   bytes of the key kept here, K: 0, or {@value #STORED_KEY_BYTES} for a key generated for
 *           this directory ({@link KeySpace#generated}); a key the caller supplies is never written
 * 60  int   0
 * 64        the key kept here: K bytes, then zeros up to 96
 * 96..123   0
 * 124 int   CRC32C of bytes [0, 124)
 * </pre>
 * The file is created owner-only, like the directory.
 * Records are keyed by block hash, so a directory serves only managers that hash as it was
 * written: another function or key is refused at open ({@link KeySpace}).
 *
 * <p>This class is stateless and thread-safe; the {@code check*} validators return a status code
 * ({@link #VALID} or a reason, see {@link #reason(int)}) rather than throwing, because recovery
 * calls them at every 64-byte position of a damaged region.
 */
public final class DiskFormat {

    private DiskFormat() {}

    /** Little-endian, unaligned {@code int}. */
    static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    /** Little-endian, unaligned {@code long}. */
    static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    /** Little-endian, unaligned {@code short}. */
    static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /** Version of every structure described here. */
    public static final int FORMAT_VERSION = 2;
    /** Records start on multiples of this many bytes. */
    public static final int RECORD_ALIGN_BYTES = 64;

    /** Segment magic, the bytes {@code TKVS}. */
    public static final int SEGMENT_MAGIC = 0x53564B54;
    /** Bytes of a segment header; the first record starts here. */
    public static final int SEGMENT_HEADER_BYTES = 64;
    /** Offset of the segment header: magic. */
    static final long SEG_MAGIC = 0;
    /** Offset of the segment header: format version (short). */
    static final long SEG_VERSION = 4;
    /** Offset of the segment header: header bytes (short). */
    static final long SEG_HEADER_BYTES = 6;
    /** Offset of the segment header: layout fingerprint. */
    static final long SEG_FINGERPRINT = 8;
    /** Offset of the segment header: nonce. */
    static final long SEG_NONCE = 16;
    /** Offset of the segment header: segment id. */
    static final long SEG_ID = 24;
    /** Offset of the segment header: segment bytes at creation. */
    static final long SEG_BYTES = 32;
    /** Offset of the segment header: CRC32C of bytes [0, 40). */
    static final long SEG_HEADER_CRC = 40;
    /** Offset of the segment header: high-water mark. */
    static final long SEG_HWM = 48;
    /** Offset of the segment header: offset of the record that ends at the high-water mark. */
    static final long SEG_LAST_RECORD = 56;
    /** Offset of the segment header: CRC32C of the high-water mark and the last record offset. */
    static final long SEG_HWM_CRC = 60;

    /** Record magic, the bytes {@code TKVR}. */
    public static final int RECORD_MAGIC = 0x52564B54;
    /** Bytes of a record header; token ids follow. */
    public static final int RECORD_HEADER_BYTES = 64;
    /** Offset of the record header: magic. */
    static final long REC_MAGIC = 0;
    /** Offset of the record header: format version (byte). */
    static final long REC_VERSION = 4;
    /** Offset of the record header: codec (byte). */
    static final long REC_CODEC = 5;
    /** Offset of the record header: reserved byte, 0. */
    static final long REC_RESERVED_BYTE = 6;
    /** Offset of the record header: shuffle width (byte). */
    static final long REC_SHUFFLE = 7;
    /** Offset of the record header: layout fingerprint. */
    static final long REC_FINGERPRINT = 8;
    /** Offset of the record header: block hash, high 64 bits. */
    static final long REC_HASH_HI = 16;
    /** Offset of the record header: block hash, low 64 bits. */
    static final long REC_HASH_LO = 24;
    /** Offset of the record header: segment nonce at write time. */
    static final long REC_NONCE = 32;
    /** Offset of the record header: token count. */
    static final long REC_TOKENS = 40;
    /** Offset of the record header: raw length. */
    static final long REC_RAW = 44;
    /** Offset of the record header: stored length. */
    static final long REC_STORED = 48;
    /** Offset of the record header: CRC32C of token ids and payload. */
    static final long REC_PAYLOAD_CRC = 52;
    /** Offset of the record header: offset of the previous record in the segment (0 for the first). */
    static final long REC_PREVIOUS = 56;
    /** Offset of the record header: CRC32C of bytes [0, 60). */
    static final long REC_HEADER_CRC = 60;

    /** Codec byte: payload is the raw block. */
    public static final int CODEC_RAW = 0;
    /** Codec byte: payload is one LZ4 block-format frame of the (possibly shuffled) block. */
    public static final int CODEC_LZ4 = 1;

    /** Journal magic, the bytes {@code TKVJRNL1}. */
    public static final long JOURNAL_MAGIC = 0x314C4E524A564B54L;
    /** Bytes of the journal header. */
    public static final int JOURNAL_HEADER_BYTES = 64;
    /** Bytes of one journal entry. */
    public static final int JOURNAL_ENTRY_BYTES = 32;
    /** Offset of the journal header: magic. */
    static final long JRN_MAGIC = 0;
    /** Offset of the journal header: format version. */
    static final long JRN_VERSION = 8;
    /** Offset of the journal header: entry bytes. */
    static final long JRN_ENTRY_BYTES = 12;
    /** Offset of the journal header: layout fingerprint. */
    static final long JRN_FINGERPRINT = 16;
    /** Offset of the journal header: capacity in entries. */
    static final long JRN_CAPACITY = 24;
    /** Offset of the journal header: entries written. */
    static final long JRN_COUNT = 32;

    /** Metadata magic, the bytes {@code TKVMETA1}. */
    public static final long META_MAGIC = 0x314154454D564B54L;
    /** Bytes of the metadata file. */
    public static final int META_BYTES = 128;
    /** Bytes of a block hash key generated for a directory and kept in its metadata. */
    public static final int STORED_KEY_BYTES = 32;
    /** Offset of the metadata: layout fingerprint. */
    static final long META_FINGERPRINT = 16;
    /** Offset of the metadata: the five layout ints. */
    static final long META_LAYOUT = 24;
    /** Offset of the metadata: block hash function ordinal. */
    static final long META_HASH_ALGORITHM = 44;
    /** Offset of the metadata: key fingerprint. */
    static final long META_KEY_FINGERPRINT = 48;
    /** Offset of the metadata: bytes of the key kept in it. */
    static final long META_STORED_KEY_LENGTH = 56;
    /** Offset of the metadata: the key kept in it. */
    static final long META_STORED_KEY = 64;
    /** Offset of the metadata: CRC32C of bytes [0, 124). */
    static final long META_CRC = 124;

    /** File name of the directory lock. */
    public static final String LOCK_FILE = "tierkv-disk.lock";
    /** File name of the metadata file. */
    public static final String META_FILE = "tierkv-disk.meta";
    /** File name of the deletion journal. */
    public static final String JOURNAL_FILE = "deletions.journal";
    /** Suffix of a file being written before it is renamed into place. */
    public static final String TEMP_SUFFIX = ".tmp";

    /** Status: the structure is valid. */
    public static final int VALID = 0;
    /** Status: no magic where a header should start. */
    public static final int NO_MAGIC = 1;
    /** Status: the header checksum does not match. */
    public static final int BAD_HEADER_CRC = 2;
    /**
     * Status: an unknown format version, codec, non-zero reserved field, or a previous record
     * offset that cannot precede the record.
     */
    public static final int BAD_VERSION = 3;
    /** Status: written for another layout. */
    public static final int BAD_FINGERPRINT = 4;
    /** Status: a record from an earlier life of its segment (nonce differs): stale, not damaged. */
    public static final int STALE_NONCE = 5;
    /** Status: a length field is out of range. */
    public static final int BAD_LENGTH = 6;
    /** Status: the structure runs past the end of the file (torn or truncated). */
    public static final int TRUNCATED = 7;

    /**
     * Text for a status code.
     *
     * @param status a value returned by a {@code check*} method
     * @return a short description
     */
    public static String reason(int status) {
        return switch (status) {
            case VALID -> "valid";
            case NO_MAGIC -> "no magic";
            case BAD_HEADER_CRC -> "header checksum mismatch";
            case BAD_VERSION -> "unknown version, codec, reserved field or previous record offset";
            case BAD_FINGERPRINT -> "written for another layout";
            case STALE_NONCE -> "stale (segment compacted since)";
            case BAD_LENGTH -> "length out of range";
            case TRUNCATED -> "runs past the end of the file";
            default -> "status " + status;
        };
    }

    /**
     * Bytes a record takes on disk: header, identity, payload, padding to 64.
     *
     * @param tokenCount   token ids stored, {@code >= 0}
     * @param storedLength payload bytes stored, {@code >= 0}
     * @return the record's length, a multiple of {@value #RECORD_ALIGN_BYTES}
     */
    public static long recordBytes(int tokenCount, long storedLength) {
        return alignUp(RECORD_HEADER_BYTES + BlockIdentity.bytes(tokenCount) + storedLength, RECORD_ALIGN_BYTES);
    }

    /**
     * The most bytes a record adds on top of its raw payload: header, identity and padding.
     *
     * @param tokenCount token ids stored
     * @return {@code 64 + 32 + 4 x tokenCount + 63}
     */
    public static long recordOverheadBytes(int tokenCount) {
        return RECORD_HEADER_BYTES + BlockIdentity.bytes(tokenCount) + RECORD_ALIGN_BYTES - 1;
    }

    /**
     * Offset of a record's payload from the record's start.
     *
     * @param tokenCount token ids stored
     * @return {@code 64 + 32 + 4 x tokenCount}
     */
    static long payloadOffset(int tokenCount) {
        return RECORD_HEADER_BYTES + BlockIdentity.bytes(tokenCount);
    }

    /**
     * The largest record a layout can produce: a full block stored raw.
     *
     * @param layout the block layout
     * @return bytes
     */
    public static long maxRecordBytes(KvLayout layout) {
        return recordBytes(layout.blockSizeTokens(), layout.bytesPerBlock());
    }

    /**
     * Bytes of a journal file with room for {@code entries} entries, rounded up to 4096.
     *
     * @param entries capacity in entries
     * @return bytes
     */
    public static long journalBytes(long entries) {
        return alignUp(JOURNAL_HEADER_BYTES + entries * JOURNAL_ENTRY_BYTES, 4096);
    }

    /**
     * Checks that a segment can hold the largest record of a layout.
     *
     * @param segmentBytes the segment size
     * @param layout       the block layout
     * @throws IllegalArgumentException naming both sizes when it cannot
     */
    public static void checkSegmentFits(long segmentBytes, KvLayout layout) {
        long need = SEGMENT_HEADER_BYTES + maxRecordBytes(layout);
        if (segmentBytes < need) {
            throw new IllegalArgumentException("segmentBytes: " + segmentBytes + " (expected >= " + need
                    + ": a 64-byte segment header plus the largest record of " + layout + ")");
        }
    }

    /**
     * Rounds up.
     *
     * @param value     a non-negative value
     * @param alignment a positive alignment
     * @return the smallest multiple of {@code alignment} not below {@code value}
     */
    static long alignUp(long value, long alignment) {
        return (value + alignment - 1) / alignment * alignment;
    }

    /**
     * CRC32C of a region.
     *
     * @param crc    a checksum object to reset and use (not shared between threads)
     * @param memory the memory
     * @param offset first byte
     * @param length bytes
     * @return the checksum as an {@code int}
     */
    static int crc32c(CRC32C crc, MemorySegment memory, long offset, long length) {
        crc.reset();
        update(crc, memory, offset, length);
        return (int) crc.getValue();
    }

    /**
     * Adds a region to a running CRC32C.
     *
     * @param crc    the checksum in progress
     * @param memory the memory
     * @param offset first byte
     * @param length bytes, {@code >= 0}
     */
    static void update(CRC32C crc, MemorySegment memory, long offset, long length) {
        if (length > 0) {
            crc.update(memory.asSlice(offset, length).asByteBuffer());
        }
    }

    // ---------------------------------------------------------------- segment header

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
     * Replaces the nonce (in-place compaction) and re-seals the header checksum.
     *
     * @param seg   the mapped segment
     * @param crc   a checksum object
     * @param nonce the new nonce
     */
    static void writeSegmentNonce(MemorySegment seg, CRC32C crc, long nonce) {
        seg.set(LONG, SEG_NONCE, nonce);
        seg.set(INT, SEG_HEADER_CRC, crc32c(crc, seg, 0, SEG_HEADER_CRC));
    }

    /**
     * Writes the high-water mark, the offset of the record that ends there, and their checksum.
     *
     * @param seg              the mapped segment
     * @param crc              a checksum object
     * @param hwm              the end of the last record
     * @param lastRecordOffset where that record starts; 0 when {@code hwm} is
     *                         {@value #SEGMENT_HEADER_BYTES} (no record)
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
     * @return {@link #VALID} or the first problem found
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

    // ---------------------------------------------------------------- record header

    /**
     * Writes a record header and its checksum.
     *
     * @param dst          where the header goes
     * @param off          its offset in {@code dst}
     * @param crc          a checksum object
     * @param codec        {@link #CODEC_RAW} or {@link #CODEC_LZ4}
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

    private static void sealRecordHeader(MemorySegment dst, long off, CRC32C crc) {
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
     * @return {@link #VALID} or the first problem found
     */
    static int checkRecordHeader(MemorySegment seg, long off, long limit, CRC32C crc, long fingerprint, long nonce,
                                 int maxTokens, int maxRaw) {
        if (off + RECORD_HEADER_BYTES > limit) {
            return TRUNCATED;
        }
        if (seg.get(INT, off + REC_MAGIC) != RECORD_MAGIC) {
            return NO_MAGIC;
        }
        if (seg.get(INT, off + REC_HEADER_CRC) != crc32c(crc, seg, off, REC_HEADER_CRC)) {
            return BAD_HEADER_CRC;
        }
        int codec = seg.get(ValueLayout.JAVA_BYTE, off + REC_CODEC);
        int shuffle = seg.get(ValueLayout.JAVA_BYTE, off + REC_SHUFFLE);
        if (seg.get(ValueLayout.JAVA_BYTE, off + REC_VERSION) != FORMAT_VERSION
                || (codec != CODEC_RAW && codec != CODEC_LZ4)
                || seg.get(ValueLayout.JAVA_BYTE, off + REC_RESERVED_BYTE) != 0
                || (shuffle != 0 && shuffle != 2 && shuffle != 4)
                || (codec == CODEC_RAW && shuffle != 0)) {
            return BAD_VERSION;
        }
        if (seg.get(LONG, off + REC_FINGERPRINT) != fingerprint) {
            return BAD_FINGERPRINT;
        }
        int tokens = seg.get(INT, off + REC_TOKENS);
        int raw = seg.get(INT, off + REC_RAW);
        int stored = seg.get(INT, off + REC_STORED);
        if (tokens < 0 || tokens > maxTokens || raw < 0 || raw > maxRaw || stored < 0 || stored > raw
                || (codec == CODEC_RAW && stored != raw)) {
            return BAD_LENGTH;
        }
        if (seg.get(LONG, off + REC_NONCE) != nonce) {
            return STALE_NONCE;
        }
        int previous = seg.get(INT, off + REC_PREVIOUS);
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

    // ---------------------------------------------------------------- metadata file

    /**
     * Writes the metadata file's bytes.
     *
     * @param meta   {@link #META_BYTES} bytes
     * @param crc    a checksum object
     * @param layout the layout to record
     * @param keySpace the block hash function the records are keyed by
     */
    static void writeMeta(MemorySegment meta, CRC32C crc, KvLayout layout, KeySpace keySpace) {
        meta.asSlice(0, META_BYTES).fill((byte) 0);
        meta.set(LONG, 0, META_MAGIC);
        meta.set(INT, 8, FORMAT_VERSION);
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
     * @return {@link #VALID}, or {@link #TRUNCATED}, {@link #NO_MAGIC}, {@link #BAD_HEADER_CRC},
     *     {@link #BAD_VERSION}
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

    /**
     * Whether a file name is one of the tier's own (segments, journal, metadata, lock and their
     * temporary files); every other file in the directory is foreign and left alone.
     *
     * @param name a file name without directory
     * @return true for a TierKV disk-tier file
     */
    public static boolean isOwnFileName(String name) {
        String base = name.endsWith(TEMP_SUFFIX) ? name.substring(0, name.length() - TEMP_SUFFIX.length()) : name;
        return base.equals(LOCK_FILE) || base.equals(META_FILE) || base.equals(JOURNAL_FILE)
                || segmentIdOf(base) >= 0;
    }

    /**
     * File name of a segment.
     *
     * @param id the segment id, {@code >= 0}
     * @return {@code seg-} followed by ten digits and {@code .tkv}
     */
    public static String segmentFileName(int id) {
        return String.format("seg-%010d.tkv", id);
    }

    /**
     * Parses a segment file name.
     *
     * @param name a file name
     * @return the segment id, or -1 if the name is not a segment's
     */
    public static int segmentIdOf(String name) {
        if (name.length() != 18 || !name.startsWith("seg-") || !name.endsWith(".tkv")) {
            return -1;
        }
        long id = 0;
        for (int i = 4; i < 14; i++) {
            char c = name.charAt(i);
            if (c < '0' || c > '9') {
                return -1;
            }
            id = id * 10 + (c - '0');
        }
        return id > Integer.MAX_VALUE ? -1 : (int) id;
    }
}

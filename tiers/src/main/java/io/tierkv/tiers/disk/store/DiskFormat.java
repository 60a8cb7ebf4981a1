package io.tierkv.tiers.disk.store;

import io.tierkv.core.KvLayout;
import io.tierkv.core.prefix.BlockHasher;
import io.tierkv.core.prefix.BlockIdentity;
import io.tierkv.core.prefix.HashAlgorithm;
import io.tierkv.tiers.disk.DiskOptions;
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
 * 12  int   flags: {@value #META_EPHEMERAL} when the writing tier was not persistent (its files
 *           are its own to delete), else 0; a tier that is not persistent refuses a directory
 *           of tier files without that flag
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
    /** Offset of the metadata: flags. */
    static final long META_FLAGS = 12;
    /** {@link #META_FLAGS} bit: written by a tier that is not persistent. */
    static final int META_EPHEMERAL = 1;
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
     * Journal capacity of a persistent tier: twice the full records the budget holds, within
     * [1024, 2^20] entries.
     *
     * @param budgetBytes the tier's budget ({@link DiskOptions#budgetBytes()})
     * @param layout      the block layout
     * @return entries
     */
    public static long journalCapacity(long budgetBytes, KvLayout layout) {
        long records = budgetBytes / maxRecordBytes(layout);
        return Math.max(1024, Math.min(1L << 20, 2 * records));
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
        if (length <= 0) {
            return;
        }
        if (length <= SMALL_CRC_BYTES) {
            // A header or an identity: a copy into this thread's scratch array costs less than the
            // slice and the ByteBuffer view the long path makes per call (recovery checks one
            // header per record: that view was about 0.25 us of it, async-profiler, 2026-12-03).
            byte[] scratch = CRC_SCRATCH.get();
            MemorySegment.copy(memory, ValueLayout.JAVA_BYTE, offset, scratch, 0, (int) length);
            crc.update(scratch, 0, (int) length);
        } else {
            crc.update(memory.asSlice(offset, length).asByteBuffer());
        }
    }

    /** Regions up to this many bytes are checksummed through {@link #CRC_SCRATCH}. */
    private static final int SMALL_CRC_BYTES = 1024;
    /** Each thread's copy of a small region being checksummed. */
    private static final ThreadLocal<byte[]> CRC_SCRATCH = ThreadLocal.withInitial(() -> new byte[SMALL_CRC_BYTES]);

    // ---------------------------------------------------------------- segment header

    // ---------------------------------------------------------------- record header

    // ---------------------------------------------------------------- metadata file

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

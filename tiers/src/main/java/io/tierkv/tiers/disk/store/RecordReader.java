package io.tierkv.tiers.disk.store;

import io.tierkv.core.error.CorruptBlockException;
import io.tierkv.core.prefix.BlockIdentity;
import io.tierkv.natives.libc.Libc;
import io.tierkv.tiers.disk.DiskStats;
import java.lang.foreign.MemorySegment;
import java.util.zip.CRC32C;

/**
 * The load path: validates a record's header against the index, compares its stored identity with
 * the caller's, verifies the CRC32C of its identity and payload, and delivers the block; a record
 * that fails is a counted miss and quarantined.
 *
 * <p>Identity first: a record whose stored {@link BlockIdentity} differs from the one asked for
 * is verified whole (identity and payload checksum) before anything else is decided. If it is
 * sound it belongs to another block under the same hash: a counted collision and a miss, no byte
 * copied, the record kept for its own block. If it is damaged (the differing bytes are the
 * damage) it is quarantined as any corrupt record.
 *
 * <p>One pass over the payload: a raw payload is copied out of the mapping (after
 * {@code MADV_WILLNEED} where some of its pages are not in the page cache) into the caller's block a chunk of
 * {@link RecordWriter#COPY_CHUNK_BYTES} at a time and each chunk is checksummed in the
 * destination right after, while it is in the CPU's cache; on a mismatch the destination is
 * wiped (zeroed) before the miss is returned, so no byte of a damaged record survives the call.
 * An LZ4 payload is checksummed in the mapping first and only then decompressed into the
 * destination. {@link #match} compares the identity after the header check alone, for a caller
 * that verifies the payload when it reads it.
 *
 * <p>Not thread-safe: used under the disk tier's lock.
 */
final class RecordReader {

    /**
     * Whether {@link #read} advises {@code MADV_WILLNEED} on a record that spans more than a page
     * when some of its pages are not in the page cache ({@code mincore}, {@link
     * Libc#residentPages}). Segment mappings carry {@code MADV_RANDOM} (no read-ahead beyond what
     * is asked), which without this advice turns a cold load into one synchronous 4 KiB read per
     * page. Measured ({@code SpillLoadBenchmark.loadCold}, every page dropped before each load,
     * BENCHMARKS.md, 2026-11-30): 1 MiB raw records 28.0 ms per load when written records skipped
     * the advice, 1.88 ms with it (the fastest plain cold read, a positional channel read, 1.61
     * ms), 1.004 bytes read from the device per byte asked; positional channel reads of the
     * payload instead took 4.5 ms and read 3.5 bytes per byte asked (the kernel's read-ahead over
     * the 128 KiB chunks). Only where pages are missing, because on resident pages the advice is
     * pure cost (18 us per warm 1 MiB record, against 2-3 us for the {@code mincore} check).
     */
    static volatile boolean LOAD_WILLNEED = true;

    private static final System.Logger LOG = System.getLogger(DiskTier.class.getName());
    private static final long PAGE_BYTES = Libc.pageSizeBytes();

    private final RecordIndex index;
    private final SegmentTable segments;
    private final SpaceManager space;
    private final BlockCodec codec;
    private final RecordRules rules;
    private final CRC32C crc;
    private final DiskCounters counters;
    private final PageResidency residency;
    private final CorruptionLog log;

    /**
     * Creates the reader of a tier.
     *
     * @param rules    the layout's record rules
     * @param codec    the tier's codec (shared with the writer: both run under the tier's lock)
     * @param index    the record index
     * @param segments the segment table
     * @param space    the space manager (quarantine)
     * @param crc      the tier's checksum object
     * @param counters the tier's counters
     * @param residency the tier's page-cache check (shared with the writer: both run under the tier's lock)
     * @param log      the tier's log of damaged bytes
     */
    RecordReader(RecordRules rules, BlockCodec codec, RecordIndex index, SegmentTable segments, SpaceManager space,
                 CRC32C crc, DiskCounters counters, PageResidency residency, CorruptionLog log) {
        this.residency = residency;
        this.log = log;
        this.rules = rules;
        this.codec = codec;
        this.index = index;
        this.segments = segments;
        this.space = space;
        this.crc = crc;
        this.counters = counters;
    }

    /**
     * Loads a block; see {@link DiskTier#load}.
     *
     * @param hi       block hash, high 64 bits
     * @param lo       block hash, low 64 bits
     * @param identity the identity expected ({@link BlockIdentity})
     * @param blockOut receives the block
     * @return the block's length on a verified hit, -1 on a miss, {@link DiskTier#COLLISION} if a
     *     sound record of another identity holds the key
     * @throws IllegalArgumentException if {@code blockOut} is smaller than the record's block
     *     (nothing counted, nothing written)
     */
    int read(long hi, long lo, MemorySegment identity, MemorySegment blockOut) {
        int slot = index.find(hi, lo);
        if (slot == RecordIndex.NONE) {
            counters.gets++;
            counters.misses++;
            return -1;
        }
        Segment seg = segments.at(index.segment[slot]);
        long off = index.offset[slot];
        long len = index.length[slot];
        MemorySegment map = seg.map;
        injectionPoint(slot, true);
        if (LOAD_WILLNEED && len > PAGE_BYTES && !residency.allResident(map, off, len)) {
            // before the header is read: its page comes with the same request as the rest
            Libc.madvise(map.asSlice(off, len), Libc.MADV_WILLNEED);
        }
        if (!headerSound(slot, hi, lo)) {
            return -1;
        }
        int tokens = RecordHeaders.recordTokenCount(map, off);
        int raw = RecordHeaders.recordRawLength(map, off);
        int storedLength = RecordHeaders.recordStoredLength(map, off);
        if (blockOut.byteSize() < raw) {
            throw new IllegalArgumentException("blockOut: " + blockOut.byteSize() + " bytes (expected >= " + raw
                    + ", the stored block's length)");
        }
        if (!identityEquals(map, off, tokens, identity)) {
            return otherIdentity(slot, hi, lo, true);
        }
        counters.gets++;
        long identityOff = off + DiskFormat.RECORD_HEADER_BYTES;
        long payloadOff = off + DiskFormat.payloadOffset(tokens);
        int expected = RecordHeaders.recordPayloadCrc(map, off);
        int codecByte = RecordHeaders.recordCodec(map, off);
        crc.reset();
        DiskFormat.update(crc, map, identityOff, BlockIdentity.bytes(tokens));
        if (codecByte == DiskFormat.CODEC_RAW) {
            readRaw(map, payloadOff, blockOut, raw);
        } else {
            DiskFormat.update(crc, map, payloadOff, storedLength);
        }
        int actual = (int) crc.getValue();
        if (actual != expected) {
            if (codecByte == DiskFormat.CODEC_RAW) {
                blockOut.asSlice(0, raw).fill((byte) 0);
            }
            return corrupt(slot, seg, off, CorruptionLog.Kind.PAYLOAD, "payload checksum mismatch",
                    expected & 0xFFFFFFFFL, actual & 0xFFFFFFFFL);
        }
        if (codecByte != DiskFormat.CODEC_RAW && !codec.decode(map.asSlice(payloadOff, storedLength), codecByte,
                RecordHeaders.recordShuffleWidth(map, off), raw, blockOut)) {
            return corrupt(slot, seg, off, CorruptionLog.Kind.DECODE, "payload does not decode to " + raw + " bytes",
                    -1, -1);
        }
        counters.hits++;
        counters.bytesRead += storedLength;
        counters.rawBytesRead += raw;
        index.touch(slot);
        return raw;
    }

    /**
     * Compares a record's identity with the one expected without reading or verifying its
     * payload; see {@link DiskTier#match}. A bad header is a counted get, miss and corrupt miss,
     * and quarantined; a differing identity is classified as {@link #read} does; the payload's
     * checksum is otherwise left to the {@link #read} that delivers the bytes.
     *
     * @param hi       block hash, high 64 bits
     * @param lo       block hash, low 64 bits
     * @param identity the identity expected
     * @return the token count, {@link DiskTier#ABSENT}, {@link DiskTier#DAMAGED} or
     *     {@link DiskTier#COLLISION}
     */
    int match(long hi, long lo, MemorySegment identity) {
        int slot = index.find(hi, lo);
        if (slot == RecordIndex.NONE) {
            return DiskTier.ABSENT;
        }
        injectionPoint(slot, false);
        if (!headerSound(slot, hi, lo)) { // a failed match counts as the get it stands for: gets = hits + misses
            return DiskTier.DAMAGED;
        }
        MemorySegment map = segments.at(index.segment[slot]).map;
        long off = index.offset[slot];
        int tokens = RecordHeaders.recordTokenCount(map, off);
        if (!identityEquals(map, off, tokens, identity)) {
            return otherIdentity(slot, hi, lo, true) == DiskTier.COLLISION ? DiskTier.COLLISION : DiskTier.DAMAGED;
        }
        index.touch(slot);
        return tokens;
    }

    /**
     * Compares the identity of a record (header already validated) with the one expected; see
     * {@link DiskTier#putPinned}. A differing
     * identity is classified as {@link #read} does (a sound record is a counted collision, a
     * damaged one quarantined); a sound match counts nothing. With {@code verifyPayload} a matching
     * record is also verified whole, for a caller about to drop its own copy of the block.
     *
     * @param hi            block hash, high 64 bits
     * @param lo            block hash, low 64 bits
     * @param identity      the identity expected
     * @param verifyPayload whether a match must also pass the payload checksum
     * @return {@link DiskTier#ABSENT} if no sound record holds the key now (absent, or damaged and
     *     quarantined), {@link DiskTier#COLLISION}, or 0 for a record of this identity
     */
    int compare(long hi, long lo, MemorySegment identity, boolean verifyPayload) {
        int slot = index.find(hi, lo);
        if (slot == RecordIndex.NONE) {
            return DiskTier.ABSENT;
        }
        injectionPoint(slot, verifyPayload);
        if (!headerSound(slot, hi, lo)) {
            return DiskTier.ABSENT;
        }
        MemorySegment map = segments.at(index.segment[slot]).map;
        long off = index.offset[slot];
        if (!identityEquals(map, off, RecordHeaders.recordTokenCount(map, off), identity)) {
            return otherIdentity(slot, hi, lo, false) == DiskTier.COLLISION ? DiskTier.COLLISION : DiskTier.ABSENT;
        }
        return !verifyPayload || verify(hi, lo) ? 0 : DiskTier.ABSENT;
    }

    /** Whether a record's stored identity (header validated) equals {@code identity}, byte for byte. */
    private static boolean identityEquals(MemorySegment map, long off, int tokens, MemorySegment identity) {
        long n = BlockIdentity.bytes(tokens);
        long start = off + DiskFormat.RECORD_HEADER_BYTES;
        return identity.byteSize() == n && MemorySegment.mismatch(map, start, start + n, identity, 0, n) < 0;
    }

    /**
     * A record's identity differs from the one asked for: a sound record is another block's (a
     * counted collision, and for a read a get and a miss; kept), a damaged one is quarantined
     * (counted by {@link #verify}).
     *
     * @return {@link DiskTier#COLLISION} or -1 (damaged)
     */
    private int otherIdentity(int slot, long hi, long lo, boolean read) {
        if (!verify(hi, lo)) {
            return -1;
        }
        if (read) {
            counters.gets++;
            counters.misses++;
        }
        counters.collisions++;
        if (counters.collisions == 1) { // a hash collision is an attack or a broken hash: say so once, count the rest
            LOG.log(System.Logger.Level.WARNING, "disk tier: record {0}@{1} holds another block identity under the"
                    + " requested hash (a hash collision: served as a miss, counted in DiskStats.collisions;"
                    + " logged once)", segments.at(index.segment[slot]).file.getFileName(), index.offset[slot]);
        }
        return DiskTier.COLLISION;
    }

    /**
     * Verifies a record in place (header, hash, and the CRC32C of its token ids and payload)
     * without delivering it: for a put that would otherwise trust an existing record as the
     * only copy of a block. A record that fails counts a get and a corrupt miss and is
     * quarantined, as in {@link #read}; a sound one counts nothing.
     *
     * @param hi block hash, high 64 bits
     * @param lo block hash, low 64 bits
     * @return true if the record is on disk and sound
     */
    boolean verify(long hi, long lo) {
        int slot = index.find(hi, lo);
        if (slot == RecordIndex.NONE) {
            return false;
        }
        if (!headerSound(slot, hi, lo)) {
            return false;
        }
        Segment seg = segments.at(index.segment[slot]);
        long off = index.offset[slot];
        MemorySegment map = seg.map;
        int expected = RecordHeaders.recordPayloadCrc(map, off);
        int actual = RecordRules.payloadCrc(map, off, crc);
        if (actual != expected) {
            counters.gets++;
            corrupt(slot, seg, off, CorruptionLog.Kind.PAYLOAD, "payload checksum mismatch", expected & 0xFFFFFFFFL,
                    actual & 0xFFFFFFFFL);
            return false;
        }
        return true;
    }

    /**
     * Checks the header of the record in index slot {@code slot} (format, layout, lengths, header
     * checksum) and that it names the key asked for; a record that fails counts a get and a
     * corrupt miss and is quarantined.
     */
    private boolean headerSound(int slot, long hi, long lo) {
        Segment seg = segments.at(index.segment[slot]);
        long off = index.offset[slot];
        long len = index.length[slot];
        MemorySegment map = seg.map;
        String reason = rules.headerProblem(map, off, len, crc, seg.nonce, hi, lo);
        if (reason == null) {
            return true;
        }
        counters.gets++;
        corrupt(slot, seg, off, CorruptionLog.Kind.HEADER, reason, -1, -1);
        return false;
    }

    /**
     * The fault-injection hook's chance ({@link DiskFaultInjection}) at the bytes that the
     * verification about to run covers: header and identity, and with {@code payload} the stored
     * payload too (never the padding, which no checksum covers). Does nothing unless a test or a
     * soak installed an injector.
     */
    private void injectionPoint(int slot, boolean payload) {
        MemorySegment map = segments.at(index.segment[slot]).map;
        long off = index.offset[slot];
        int tokens = RecordHeaders.recordTokenCount(map, off);
        long covered = tokens < 0 || tokens > rules.maxTokens() ? DiskFormat.RECORD_HEADER_BYTES
                : DiskFormat.payloadOffset(tokens) + (payload ? RecordHeaders.recordStoredLength(map, off) : 0);
        if (covered < DiskFormat.RECORD_HEADER_BYTES || covered > index.length[slot]) {
            covered = DiskFormat.RECORD_HEADER_BYTES; // a header damaged already: its own check fails
        }
        DiskFaultInjection.beforeVerify(map, off, covered);
    }

    /** Copies a raw payload into {@code out} and adds it to {@link #crc}, a chunk at a time. */
    private void readRaw(MemorySegment map, long position, MemorySegment out, int length) {
        for (long done = 0; done < length; done += RecordWriter.COPY_CHUNK_BYTES) {
            long n = Math.min(RecordWriter.COPY_CHUNK_BYTES, length - done);
            MemorySegment chunk = out.asSlice(done, n);
            MemorySegment.copy(map, position + done, chunk, 0, n);
            crc.update(chunk.asByteBuffer());
        }
    }

    /**
     * Counts (the caller counted the get), reports (a JFR event each; a log line for the first of
     * its kind) and quarantines a record that failed verification.
     */
    private int corrupt(int slot, Segment seg, long off, CorruptionLog.Kind kind, String reason, long expected,
            long actual) {
        counters.misses++;
        counters.corruptMisses++;
        DiskFaultEvent.emit(seg.file.toString(), off, reason);
        String where = seg.file.getFileName() + "@" + off;
        log.found(kind, where, new CorruptBlockException(where, reason, expected, actual).getMessage()
                + " (record quarantined, served as a miss)");
        space.drop(slot, SpaceManager.Cause.QUARANTINE);
        return -1;
    }
}

package io.tierkv.tiers.disk.store;

import io.tierkv.core.event.KvMedium;

import io.tierkv.core.error.DiskFullException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * The spill path: encodes a block ({@link BlockCodec}), finds room ({@link SpaceManager}),
 * writes the payload and then the header with its token ids at the segment's high-water mark
 * (the header names the segment's previous record, the one that ends there), advances the mark
 * and the last record offset together (checksummed fields of the segment header) and indexes the
 * record as most recently used.
 *
 * <p>One pass over the payload: it is checksummed and written a chunk of
 * {@link #COPY_CHUNK_BYTES} at a time, each chunk written while the checksum pass left it in the
 * CPU's cache. Where the record goes below the segment's written mark (a recycled segment) and
 * every page of it is in the page cache ({@code mincore}), its bytes are copied into the mapping
 * when {@link #SPILL_PATH} is {@link SpillPath#MAPPED}; otherwise positional channel writes fill
 * the pages without a fault per page (above the mark: fresh pages) and without reading them
 * from the device first (below it, pages the kernel dropped: a copy into the mapping read each
 * one, measured 28 ms per cold 1 MiB spill against 0.2 ms for a positional write). The header
 * goes last, so a torn write leaves no valid record.
 *
 * <p>Not thread-safe: owns scratch memory; used under the disk tier's lock.
 */
final class RecordWriter {

    /** How {@link #write} puts a record's bytes into its segment where both ways are possible. */
    enum SpillPath {
        /** Copy into the mapping ({@code MemorySegment.copy}) below the written mark. */
        MAPPED,
        /** Positional {@code FileChannel.write} always; the mapping sees the bytes. */
        CHANNEL
    }

    /**
     * Write path of {@link #write}, chosen by measurement: in {@code SpillLoadBenchmark} (steady
     * state, every segment recycled) the mapped copy spilled 256 KiB and 1 MiB blocks in 43 and
     * 200 us against 60 and 285 us through the channel; copying into a fresh mapping (above the
     * written mark, which this path never does) faults every page.
     */
    static volatile SpillPath SPILL_PATH = SpillPath.MAPPED;

    /**
     * Bytes checksummed and then copied per step of a spill or load: small enough to stay in a
     * core's L2 cache between the two passes.
     */
    static final long COPY_CHUNK_BYTES = 128 << 10;

    private final RecordIndex index;
    private final SpaceManager space;
    private final BlockCodec codec;
    private final RecordRules rules;
    private final CRC32C crc;
    private final DiskCounters counters;
    private final MemorySegment headerScratch;
    private final PageResidency residency;

    /**
     * Creates the writer of a tier.
     *
     * @param rules    the layout's record rules
     * @param codec    the tier's codec (shared with the reader: both run under the tier's lock)
     * @param index    the record index
     * @param space    the space manager
     * @param crc      the tier's checksum object
     * @param counters the tier's counters
     * @param arena    where the scratch memory lives (closed by the tier)
     * @param residency the tier's page-cache check
     */
    RecordWriter(RecordRules rules, BlockCodec codec, RecordIndex index, SpaceManager space, CRC32C crc,
                 DiskCounters counters, Arena arena, PageResidency residency) {
        this.residency = residency;
        this.index = index;
        this.space = space;
        this.rules = rules;
        this.crc = crc;
        this.counters = counters;
        this.codec = codec;
        this.headerScratch = arena.allocate(DiskFormat.payloadOffset(rules.maxTokens()), 64);
    }

    /**
     * Writes a record for a key that is not on disk.
     *
     * @param hi         block hash, high 64 bits
     * @param lo         block hash, low 64 bits
     * @param identity   the block's identity ({@link io.tierkv.core.prefix.BlockIdentity}),
     *                   {@code 32 + 4 x tokenCount} bytes
     * @param tokenCount token ids, at most the layout's {@code blockSizeTokens}
     * @param block      the block, at most the layout's {@code bytesPerBlock}
     * @throws DiskFullException if room needed a new segment that could not be reserved
     * @throws UncheckedIOException if writing failed (nothing was indexed)
     */
    void write(long hi, long lo, MemorySegment identity, int tokenCount, MemorySegment block) {
        int rawLength = (int) block.byteSize();
        codec.encode(block);
        MemorySegment stored = codec.stored;
        int storedLength = (int) stored.byteSize();
        long identityBytes = identity.byteSize();
        MemorySegment.copy(identity, 0, headerScratch, DiskFormat.RECORD_HEADER_BYTES, identityBytes);
        long recordLength = DiskFormat.recordBytes(tokenCount, storedLength);
        Segment seg;
        try {
            seg = space.allocate(recordLength, hi, lo);
        } catch (DiskFullException e) {
            counters.diskFullFailures++;
            throw e;
        }
        long off = seg.highWaterMark;
        long headLength = DiskFormat.RECORD_HEADER_BYTES + identityBytes;
        boolean mapped = mapped(seg, off, recordLength);
        crc.reset();
        DiskFormat.update(crc, headerScratch, DiskFormat.RECORD_HEADER_BYTES, identityBytes);
        writePayload(seg, stored, off + headLength, mapped);
        int payloadCrc = (int) crc.getValue();
        RecordHeaders.writeRecordHeader(headerScratch, 0, crc, codec.codec, codec.encodedShuffleWidth,
                rules.fingerprint(), hi, lo, seg.nonce, tokenCount, rawLength, storedLength, payloadCrc,
                seg.lastRecordOffset);
        if (mapped) {
            MemorySegment.copy(headerScratch, 0, seg.map, off, headLength);
        } else {
            writeFully(seg, headerScratch.asSlice(0, headLength).asByteBuffer(), off);
        }
        seg.highWaterMark = off + recordLength;
        seg.lastRecordOffset = off;
        seg.writtenBytes = Math.max(seg.writtenBytes, seg.highWaterMark);
        SegmentHeaders.writeHighWaterMark(seg.map, crc, seg.highWaterMark, off);
        index.insert(hi, lo, seg.slot, off, recordLength);
        if (index.events.enabled()) {
            index.events.blockStored(KvMedium.DISK, hi, lo, identity);
        }
        seg.liveBytes += recordLength;
        seg.liveRecords++;
        counters.liveBytes += recordLength;
        counters.puts++;
        counters.bytesWritten += storedLength;
        counters.rawBytesWritten += rawLength;
        counters.recordBytesWritten += recordLength;
    }

    /**
     * Whether a record goes into the mapping: {@link #SPILL_PATH} allows it, the range lies below
     * the written mark, and every page of it is in the page cache. Copying into a page that is not
     * faults it in, and the kernel reads it from the device first (a page per fault: the mapping
     * is {@code MADV_RANDOM}); a positional write of whole pages reads nothing.
     */
    private boolean mapped(Segment seg, long position, long length) {
        return SPILL_PATH == SpillPath.MAPPED && position + length <= seg.writtenBytes
                && residency.allResident(seg.map, position, length);
    }

    /**
     * Checksums (into {@link #crc}) and writes a payload, a chunk at a time. Chunks end at file
     * offsets that are multiples of {@link #COPY_CHUNK_BYTES}, so a positional write into pages the
     * page cache does not hold covers whole pages except at the payload's two ends (a write that
     * covers part of an uncached page reads it from the device first: with chunks cut from the
     * payload's start, one synchronous read per chunk).
     */
    private void writePayload(Segment seg, MemorySegment src, long position, boolean mapped) {
        long length = src.byteSize();
        for (long done = 0, n; done < length; done += n) {
            n = Math.min(COPY_CHUNK_BYTES - ((position + done) & (COPY_CHUNK_BYTES - 1)), length - done);
            ByteBuffer chunk = src.asSlice(done, n).asByteBuffer();
            crc.update(chunk);
            if (mapped) {
                MemorySegment.copy(src, done, seg.map, position + done, n);
            } else {
                writeFully(seg, chunk.rewind(), position + done);
            }
        }
    }

    /**
     * A positional write of the whole buffer. NIO closes a file channel for good when a thread
     * interrupted before or during one of its operations uses it (a runtime cancelling a request
     * interrupts the thread that drives it): the caller's interrupt is cleared for the write and
     * set again after, so the segment's channel stays open. An interrupt that arrives during the
     * write still closes it; later writes to the segment then fail, counted as failed spills.
     */
    private static void writeFully(Segment seg, ByteBuffer buf, long position) {
        boolean interrupted = Thread.interrupted();
        try {
            long pos = position;
            while (buf.hasRemaining()) {
                pos += seg.channel.write(buf, pos);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("write to " + seg.file + " at " + position + " failed", e);
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }
}

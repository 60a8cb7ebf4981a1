package io.tierkv.tiers.disk.store;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.function.IntConsumer;
import java.util.zip.CRC32C;

/**
 * Compaction in place: slides a segment's live records to its front under a new nonce, so its
 * dead bytes (evicted, removed or quarantined records) become room at its end again.
 *
 * <pre>
 * before  | hdr | A | dead | B | dead  | C |    free    |
 * after   | hdr | A | B | C |             free          |   (nonce replaced first)
 * </pre>
 *
 * <p>Crash safety: the new nonce, the old one's {@linkplain SegmentTable#successor successor}, is
 * written (with the header checksum) before the first record moves, and each moved record's header
 * is rewritten with it, and with the offset of the record moved before it as its predecessor,
 * after its bytes arrive; the mark and last record offset are written last. A crash part way
 * leaves moved records valid and unmoved ones under the old nonce below the old mark, which
 * recovery indexes as they are ({@link UnmovedRecords}: their nonce an ancestor of the header's,
 * their payload verified, the journal consulted, moved copies preferred); this compaction accepts
 * such records too and rewrites them. Only the record being copied at the crash can be lost
 * (counted). Records
 * move towards the front only, in offset order, so a record is never overwritten before it moved.
 * A live record whose header fails verification is quarantined instead of moved.
 *
 * <p>Not thread-safe: used under the disk tier's lock.
 */
final class Compactor {

    private final RecordIndex index;
    private final SegmentTable segments;
    private final RecordRules rules;
    private final CRC32C crc;
    private final DiskCounters counters;
    private final CorruptionLog log;

    /**
     * Creates the compactor of a tier.
     *
     * @param index    the record index
     * @param segments the segment table
     * @param rules    what a valid record looks like
     * @param crc      the tier's checksum object
     * @param counters the tier's counters
     * @param log      the tier's log of damaged bytes
     */
    Compactor(RecordIndex index, SegmentTable segments, RecordRules rules, CRC32C crc, DiskCounters counters,
              CorruptionLog log) {
        this.log = log;
        this.index = index;
        this.segments = segments;
        this.rules = rules;
        this.crc = crc;
        this.counters = counters;
    }

    /**
     * Bytes between a segment's header and its high-water mark that no live record holds.
     *
     * @param s a segment
     * @return dead bytes
     */
    static long deadBytes(Segment s) {
        return s.highWaterMark - DiskFormat.SEGMENT_HEADER_BYTES - s.liveBytes;
    }

    /**
     * Compacts a segment in place; an emptied segment that is not the active one is deleted.
     *
     * @param seg        a segment in the table
     * @param quarantine drops the record in the given index slot without journaling it (its
     *                   segment's nonce changes) and without deleting the segment
     * @return false if the segment ended up empty and was deleted
     */
    boolean compact(Segment seg, IntConsumer quarantine) {
        int n = seg.liveRecords;
        long[] order = new long[n];
        int k = 0;
        for (int slot = 0; slot < index.slotLimit() && k < n; slot++) {
            if (index.isLive(slot) && index.segment[slot] == seg.slot) {
                order[k++] = ((long) index.offset[slot] << 32) | slot;
            }
        }
        Arrays.sort(order, 0, k);
        long oldNonce = seg.nonce;
        long newNonce = segments.compactionNonce(oldNonce); // its successor: recovery can tell the unmoved records
        MemorySegment map = seg.map;
        SegmentHeaders.writeSegmentNonce(map, crc, newNonce);
        seg.nonce = newNonce;
        long cursor = DiskFormat.SEGMENT_HEADER_BYTES;
        long previous = 0;
        long moved = 0;
        for (int i = 0; i < k; i++) {
            int slot = (int) order[i];
            long off = order[i] >>> 32;
            long len = index.length[slot];
            int status = rules.check(map, off, off + len, crc, oldNonce);
            if (status != DiskFormat.VALID || RecordHeaders.recordHashHi(map, off) != index.hashHi[slot]
                    || RecordHeaders.recordHashLo(map, off) != index.hashLo[slot]) {
                DiskFaultEvent.emit(seg.file.toString(), off, "compaction found a damaged header");
                log.found(CorruptionLog.Kind.COMPACTION, seg.file + "@" + off, "quarantined");
                quarantine.accept(slot);
                continue;
            }
            if (off != cursor) {
                MemorySegment.copy(map, off, map, cursor, len);
                moved += len;
            }
            RecordHeaders.rewriteRecordPlace(map, cursor, crc, newNonce, previous);
            index.offset[slot] = (int) cursor;
            previous = cursor;
            cursor += len;
        }
        seg.highWaterMark = cursor;
        seg.lastRecordOffset = previous;
        SegmentHeaders.writeHighWaterMark(map, crc, cursor, previous);
        seg.sealed = false;
        seg.evictedBytes = 0;
        counters.compactions++;
        counters.compactedBytes += moved;
        if (seg.liveRecords == 0 && seg != segments.active()) {
            segments.delete(seg);
            return false;
        }
        return true;
    }
}

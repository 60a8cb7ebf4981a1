package io.tierkv.tiers.disk.store;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.zip.CRC32C;

/**
 * Recovery of a compaction in place that a crash interrupted ({@link Compactor}): the compaction
 * writes the segment's new nonce, the old one's {@linkplain SegmentTable#successor successor},
 * first, moves the live records to the front under it one by one, and writes the mark last, so
 * after a crash the records it had not moved still carry the old nonce, below the old (trusted)
 * mark. Recovery hands each stale record it finds below a trusted mark to {@link #judge}:
 *
 * <ul>
 *   <li>not of the previous nonce, or not a valid header under it: {@link #NOT_UNMOVED}, left to
 *       the scan (dropped, and counted there);</li>
 *   <li>identity or payload failing its checksum (the record being copied when the crash came):
 *       {@link #TORN}, for recovery to count and zero;</li>
 *   <li>deleted by the journal under the old nonce, or of a key already indexed (its moved copy,
 *       lower in the segment, came first in the scan): {@link #DEAD}, its header rewritten with
 *       the segment's nonce and journaled as deleted under it ({@link #rejournaled}), so no later
 *       recovery takes or counts it;</li>
 *   <li>else {@link #TAKEN}: its header rewritten with the segment's nonce (keeping its
 *       predecessor), for recovery to index.</li>
 * </ul>
 * Every verdict but the first rewrites or leaves the record so that a second recovery of the same
 * files finds the same index (found by a review that killed compactions at random points: up to
 * 1,272 of 1,300 live records were dropped, uncounted, before).
 *
 * <p>Not thread-safe: used by one {@link Recovery}.
 */
final class UnmovedRecords {

    /** Not a record of the segment's previous nonce: the scan goes on as for any stale record. */
    static final int NOT_UNMOVED = 0;
    /** Taken back: index it. */
    static final int TAKEN = 1;
    /** Intact but dead (deleted, or a duplicate of a moved copy): journaled again, not indexed. */
    static final int DEAD = 2;
    /** Its identity or payload fails its checksum: count it and zero its magic. */
    static final int TORN = 3;

    private final RecordRules rules;
    private final CRC32C crc;
    private final RecordIndex index;
    /** Of the record last judged (not {@link #NOT_UNMOVED}): its bytes on disk. */
    long length;
    /** Of the record last judged: its block hash. */
    long hashHi;
    long hashLo;
    /** Dead records rewritten with their segment's nonce: the journal entries recovery adds. */
    final List<Recovery.Deleted> rejournaled = new ArrayList<>();

    UnmovedRecords(RecordRules rules, CRC32C crc, RecordIndex index) {
        this.rules = rules;
        this.crc = crc;
        this.index = index;
    }

    /**
     * Judges the stale record at {@code pos}, below a trusted mark, and rewrites it as its verdict
     * says.
     *
     * @param seg     the segment being scanned (its nonce is the new one)
     * @param window  what the scan reads through; told of rewritten headers
     * @param pos     the record's file offset
     * @param limit   the trusted mark
     * @param deleted the journal's entries; a dead record's new entry is added
     * @return {@link #NOT_UNMOVED}, {@link #TAKEN}, {@link #DEAD} or {@link #TORN}
     */
    int judge(Segment seg, RecoveryWindow window, long pos, long limit, Set<Recovery.Deleted> deleted) {
        long at = window.at(pos, DiskFormat.RECORD_HEADER_BYTES);
        MemorySegment bytes = window.bytes();
        long previousNonce = bytes.get(DiskFormat.LONG, at + DiskFormat.REC_NONCE);
        if (SegmentTable.successor(previousNonce) != seg.nonce
                || rules.check(bytes, pos - at, pos, seg.capacity, crc, previousNonce) != DiskFormat.VALID) {
            return NOT_UNMOVED;
        }
        long len = RecordHeaders.recordBytesAt(bytes, at);
        if (pos + len > limit) {
            return NOT_UNMOVED;
        }
        length = len;
        hashHi = RecordHeaders.recordHashHi(bytes, at);
        hashLo = RecordHeaders.recordHashLo(bytes, at);
        long previous = RecordHeaders.recordPreviousOffset(bytes, at);
        if (RecordRules.payloadCrc(seg.map, pos, crc) != RecordHeaders.recordPayloadCrc(seg.map, pos)) {
            return TORN;
        }
        boolean taken = !deleted.contains(new Recovery.Deleted(previousNonce, pos, hashHi, hashLo))
                && index.find(hashHi, hashLo) == RecordIndex.NONE;
        RecordHeaders.rewriteRecordPlace(seg.map, pos, crc, seg.nonce, previous);
        window.rewrote(pos, seg.map, DiskFormat.RECORD_HEADER_BYTES);
        if (taken) {
            return TAKEN;
        }
        Recovery.Deleted d = new Recovery.Deleted(seg.nonce, pos, hashHi, hashLo);
        deleted.add(d);
        rejournaled.add(d);
        return DEAD;
    }
}

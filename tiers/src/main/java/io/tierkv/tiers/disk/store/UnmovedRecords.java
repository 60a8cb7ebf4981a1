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
 * mark. Recovery hands each stale record it finds below a trusted mark to {@link #judge}, which
 * writes nothing to the segment, so a crash during recovery changes no verdict of the next one:
 *
 * <ul>
 *   <li>not of an {@linkplain SegmentTable#isAncestor ancestor} nonce, or not a valid header
 *       under it, or running past the mark: {@link #NOT_UNMOVED}, left to the scan (dropped, and
 *       counted there);</li>
 *   <li>identity or payload failing its checksum (the copy a compaction was writing when the crash
 *       came, whose intact original may lie inside it): {@link #TORN}, counted, and the scan looks
 *       for headers inside it;</li>
 *   <li>deleted by the journal (under its own nonce, or under the segment's after a recovery
 *       indexed it), or of a key already indexed (its moved copy, lower in the segment, came first
 *       in the scan): {@link #DEAD}; a duplicate's death goes into the journal ({@link
 *       #rejournaled}), so that it stays dead once its moved copy is removed;</li>
 *   <li>else {@link #TAKEN}: indexed as it is. Reads and the next compaction accept a record of an
 *       ancestor nonce ({@link RecordRules#check(MemorySegment, long, long, CRC32C, long)}); the
 *       compaction rewrites it.</li>
 * </ul>
 * Found by reviews: before, a crash 0-20 ms into a compaction lost up to 1,272 of 1,300 live
 * records, uncounted; a first version that rewrote headers during recovery let a crash in that
 * recovery bring removed records back or lose a live one.
 *
 * <p>Not thread-safe: used by one {@link Recovery}.
 */
final class UnmovedRecords {

    /** Not a record an interrupted compaction left: the scan goes on as for any stale record. */
    static final int NOT_UNMOVED = 0;
    /** Taken back: index it. */
    static final int TAKEN = 1;
    /** Intact but dead (deleted, or a duplicate of a moved copy): not indexed. */
    static final int DEAD = 2;
    /** Its identity or payload fails its checksum: count it and look inside it. */
    static final int TORN = 3;

    private final RecordRules rules;
    private final CRC32C crc;
    private final RecordIndex index;
    /** Of the record last judged (not {@link #NOT_UNMOVED}): its bytes on disk. */
    long length;
    /** Of the record last judged: its block hash. */
    long hashHi;
    long hashLo;
    /** Duplicates found dead: the journal entries recovery adds, under their own nonces. */
    final List<Recovery.Deleted> rejournaled = new ArrayList<>();

    UnmovedRecords(RecordRules rules, CRC32C crc, RecordIndex index) {
        this.rules = rules;
        this.crc = crc;
        this.index = index;
    }

    /**
     * Judges the stale record at {@code pos}, below a trusted mark; writes nothing to the segment.
     *
     * @param seg     the segment being scanned
     * @param window  what the scan reads through
     * @param pos     the record's file offset
     * @param limit   the trusted mark
     * @param deleted the journal's entries
     * @return {@link #NOT_UNMOVED}, {@link #TAKEN}, {@link #DEAD} or {@link #TORN}
     */
    int judge(Segment seg, RecoveryWindow window, long pos, long limit, Set<Recovery.Deleted> deleted) {
        long at = window.at(pos, DiskFormat.RECORD_HEADER_BYTES);
        MemorySegment bytes = window.bytes();
        long own = bytes.get(DiskFormat.LONG, at + DiskFormat.REC_NONCE);
        if (!SegmentTable.isAncestor(own, seg.nonce)
                || rules.check(bytes, pos - at, pos, seg.capacity, crc, own) != DiskFormat.VALID) {
            return NOT_UNMOVED;
        }
        long len = RecordHeaders.recordBytesAt(bytes, at);
        if (pos + len > limit) {
            return NOT_UNMOVED;
        }
        length = len;
        hashHi = RecordHeaders.recordHashHi(bytes, at);
        hashLo = RecordHeaders.recordHashLo(bytes, at);
        if (RecordRules.payloadCrc(seg.map, pos, crc) != RecordHeaders.recordPayloadCrc(seg.map, pos)) {
            return TORN;
        }
        if (deleted.contains(new Recovery.Deleted(own, pos, hashHi, hashLo))
                || deleted.contains(new Recovery.Deleted(seg.nonce, pos, hashHi, hashLo))) {
            return DEAD;
        }
        if (index.find(hashHi, hashLo) != RecordIndex.NONE) {
            Recovery.Deleted d = new Recovery.Deleted(own, pos, hashHi, hashLo);
            deleted.add(d);
            rejournaled.add(d);
            return DEAD;
        }
        return TAKEN;
    }
}

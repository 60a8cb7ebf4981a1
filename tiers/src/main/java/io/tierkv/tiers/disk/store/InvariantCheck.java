package io.tierkv.tiers.disk.store;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The disk tier's structural check ({@link DiskTier#checkInvariants()}): the index and LRU list
 * agree; per segment, live counts equal a recount over the index, no two records overlap or
 * leave the segment, and the last record offset lies below the mark; no empty segment is kept other than the active one; the bytes the tier
 * counts equal the sizes of its files in the directory and stay within the budget.
 *
 * <p>Not thread-safe: called under the disk tier's lock. Reads the directory.
 */
final class InvariantCheck {

    private InvariantCheck() {}

    /**
     * Checks and throws on the first inconsistency.
     *
     * @param index       the record index
     * @param segments    the segment table
     * @param journal     the deletion journal, or null
     * @param liveBytes   the live bytes the tier counts
     * @param budgetBytes the budget
     * @param ownFiles    the tier's files in its directory now
     * @throws IllegalStateException describing the inconsistency
     * @throws UncheckedIOException if a file's size cannot be read
     */
    static void check(RecordIndex index, SegmentTable segments, DeletionJournal journal, long liveBytes,
                      long budgetBytes, List<Path> ownFiles) {
        String problem = index.check();
        if (problem != null) {
            throw new IllegalStateException("index: " + problem);
        }
        int slots = segments.slotCount();
        long[] bytes = new long[slots];
        int[] records = new int[slots];
        List<long[]> extents = new ArrayList<>();
        long live = 0;
        for (int slot = index.first(); slot != RecordIndex.NONE; slot = index.after(slot)) {
            int s = index.segment[slot];
            if (s < 0 || s >= slots || segments.at(s) == null) {
                throw new IllegalStateException("record slot " + slot + " points at missing segment " + s);
            }
            bytes[s] += index.length[slot];
            records[s]++;
            live += index.length[slot];
            extents.add(new long[] {s, index.offset[slot], index.length[slot]});
        }
        if (live != liveBytes) {
            throw new IllegalStateException("liveBytes " + liveBytes + " but records sum to " + live);
        }
        extents.sort((a, b) -> a[0] != b[0] ? Long.compare(a[0], b[0]) : Long.compare(a[1], b[1]));
        for (int i = 0; i < extents.size(); i++) {
            long[] e = extents.get(i);
            Segment seg = segments.at((int) e[0]);
            if (e[1] < DiskFormat.SEGMENT_HEADER_BYTES || e[1] + e[2] > seg.highWaterMark) {
                throw new IllegalStateException("record at " + e[1] + " (+" + e[2] + ") outside " + seg);
            }
            if (i > 0 && extents.get(i - 1)[0] == e[0] && extents.get(i - 1)[1] + extents.get(i - 1)[2] > e[1]) {
                throw new IllegalStateException("records overlap at " + e[1] + " in " + seg);
            }
        }
        long expectedUsed = DiskFormat.META_BYTES + (journal == null ? 0 : journal.fileBytes());
        int count = 0;
        for (int s = 0; s < slots; s++) {
            Segment seg = segments.at(s);
            if (seg == null) {
                continue;
            }
            count++;
            expectedUsed += seg.capacity;
            if (seg.liveBytes != bytes[s] || seg.liveRecords != records[s]) {
                throw new IllegalStateException(seg + " counts " + seg.liveRecords + " records / " + seg.liveBytes
                        + " B but the index holds " + records[s] + " / " + bytes[s]);
            }
            if (seg.highWaterMark > seg.capacity || seg.highWaterMark < DiskFormat.SEGMENT_HEADER_BYTES) {
                throw new IllegalStateException(seg + " high-water mark out of range");
            }
            if ((seg.lastRecordOffset == 0) != (seg.highWaterMark == DiskFormat.SEGMENT_HEADER_BYTES)
                    || seg.lastRecordOffset >= seg.highWaterMark) {
                throw new IllegalStateException(seg + " last record offset " + seg.lastRecordOffset
                        + " does not fit its high-water mark");
            }
            if (seg.liveRecords == 0 && seg != segments.active()) {
                throw new IllegalStateException(seg + " is empty but kept");
            }
        }
        if (count != segments.count()) {
            throw new IllegalStateException("segmentCount " + segments.count() + " but " + count + " in the table");
        }
        long usedBytes = segments.usedBytes;
        if (expectedUsed != usedBytes) {
            throw new IllegalStateException("usedBytes " + usedBytes + " but files account for " + expectedUsed);
        }
        long onDisk = 0;
        for (Path p : ownFiles) {
            try {
                onDisk += Files.size(p);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        if (onDisk != usedBytes) {
            throw new IllegalStateException("usedBytes " + usedBytes + " but the directory's tier files hold "
                    + onDisk + " B");
        }
        if (usedBytes > budgetBytes) {
            throw new IllegalStateException("usedBytes " + usedBytes + " over budget " + budgetBytes);
        }
    }
}

package io.tierkv.tiers.disk.store;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** What tests that damage a disk tier's files on purpose read of it: where records lie, its files. */
final class DiskProbe {

    private DiskProbe() {
    }

    /**
     * Where a record lies.
     *
     * @param hashHi    block hash, high 64 bits
     * @param hashLo    block hash, low 64 bits
     * @param file      its segment file
     * @param offset    its offset in the file
     * @param usedBytes header, token ids and payload (padding excluded)
     */
    record RecordLocation(long hashHi, long hashLo, Path file, long offset, long usedBytes) {}

    /** {@return every indexed record's file, offset and length without padding, least recent first} */
    static List<RecordLocation> recordLocations(DiskTier tier) {
        tier.lock.lock();
        try {
            tier.ensureOpen();
            List<RecordLocation> out = new ArrayList<>();
            for (int slot = tier.index.first(); slot != RecordIndex.NONE; slot = tier.index.after(slot)) {
                Segment seg = tier.segments.at(tier.index.segment[slot]);
                long off = tier.index.offset[slot];
                long used = DiskFormat.payloadOffset(RecordHeaders.recordTokenCount(seg.map, off))
                        + RecordHeaders.recordStoredLength(seg.map, off);
                out.add(new RecordLocation(tier.index.hashHi[slot], tier.index.hashLo[slot], seg.file, off, used));
            }
            return out;
        } finally {
            tier.lock.unlock();
        }
    }

    /** {@return the paths of the tier's segment files now} */
    static List<Path> segmentFiles(DiskTier tier) {
        tier.lock.lock();
        try {
            return tier.segments.files();
        } finally {
            tier.lock.unlock();
        }
    }
}

package io.tierkv.tiers.disk;

/**
 * An immutable snapshot of the disk tier's counters, taken under its lock (so the fields are
 * consistent with each other). Counters count since the tier was opened; byte counts are bytes.
 * The tier manager reports them in {@link io.tierkv.tiers.TierStats#disk()}.
 *
 * @param puts               records written by {@code put}
 * @param putsExisting       {@code put} calls for a key already on disk (no-ops)
 * @param admissionRejects   {@code put} calls the admission filter declined (first sightings)
 * @param gets               {@code get}/{@code load} calls, and {@code match} calls that found a
 *                           damaged record or another identity's: {@code hits + misses}
 * @param hits               gets that returned verified bytes
 * @param misses             gets that returned nothing, including {@code corruptMisses}
 * @param corruptMisses      gets whose record failed verification (header, checksum, decode);
 *                           each such record was quarantined (dropped from the index)
 * @param collisions         reads, matches and puts that found a sound record of another block
 *                           identity under their key (a hash collision: crafted, or a weak hash);
 *                           each read or match is also a miss, each put stored nothing; the record
 *                           is kept for its own block
 * @param evictions          records dropped to stay within the budget or by {@code evict}
 * @param removals           records dropped by {@code remove}
 * @param quarantined        records dropped because they failed verification, on a read (each
 *                           also a corrupt miss) or while compaction moved them
 * @param bytesWritten       stored payload bytes written by {@code put} (after compression)
 * @param rawBytesWritten    raw block bytes given to {@code put} that were written
 * @param recordBytesWritten bytes of whole records written by {@code put} (header, token ids,
 *                           payload, padding)
 * @param bytesRead          stored payload bytes read by hits
 * @param rawBytesRead       raw block bytes returned by hits
 * @param compressionRatio   {@code rawBytesWritten / bytesWritten}; 1.0 before any byte was
 *                           written; always finite (above 1 means compression saved space)
 * @param recoveredBlocks    records found intact and indexed by {@code open}
 * @param recoveryFaults     damaged or torn regions dropped by {@code open} (each run of bad
 *                           bytes between two valid records counts once, as do stale records
 *                           below a segment's trusted mark that no interrupted compaction of it
 *                           explains, and the record a compaction was copying when it crashed)
 * @param recoveryInsideScans records whose bytes past their header {@code open} read, looking
 *                           for a record header inside them, because the next record's header
 *                           (or the high-water mark) did not confirm their length: damage next
 *                           to them, or the last record of a segment whose mark was lost; 0 when
 *                           every segment's chain of records is intact, and {@code open} then
 *                           read one header per record
 * @param droppedSegments    segment files deleted by {@code open} because their header was
 *                           damaged
 * @param compactions        segments compacted in place
 * @param compactedBytes     record bytes moved by compaction
 * @param segmentsCreated    segment files created
 * @param segmentsDeleted    segment files deleted (emptied, or dropped at open)
 * @param diskFullFailures   puts that failed with {@link io.tierkv.core.error.DiskFullException}
 * @param pinRefusals        puts refused with {@link io.tierkv.core.error.CapacityExhaustedException}
 *                           because pinned records held the room eviction would have freed
 * @param usedBytes          bytes of every file the tier keeps on disk now
 * @param budgetBytes        the budget
 * @param liveBytes          bytes of the records indexed now
 * @param blockCount         records indexed now
 * @param pinnedBlocks       records pinned now (never evicted while pinned)
 * @param segmentCount       segment files now
 */
public record DiskStats(long puts, long putsExisting, long admissionRejects, long gets, long hits, long misses,
                        long corruptMisses, long collisions, long evictions, long removals, long quarantined, long bytesWritten,
                        long rawBytesWritten,
                        long recordBytesWritten, long bytesRead, long rawBytesRead, double compressionRatio,
                        long recoveredBlocks, long recoveryFaults, long recoveryInsideScans, long droppedSegments,
                        long compactions, long compactedBytes, long segmentsCreated, long segmentsDeleted, long diskFullFailures,
                        long pinRefusals, long usedBytes, long budgetBytes, long liveBytes, int blockCount,
                        int pinnedBlocks, int segmentCount) {

    /**
     * The compression ratio of a byte count pair, finite by construction.
     *
     * @param rawBytes    raw bytes
     * @param storedBytes stored bytes
     * @return {@code rawBytes / storedBytes}, or 1.0 when {@code storedBytes} is 0
     */
    public static double ratio(long rawBytes, long storedBytes) {
        return storedBytes == 0 ? 1.0 : (double) rawBytes / storedBytes;
    }
}

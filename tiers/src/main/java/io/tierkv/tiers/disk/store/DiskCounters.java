package io.tierkv.tiers.disk.store;

import io.tierkv.tiers.disk.DiskStats;

/**
 * The disk tier's counters: plain mutable fields, written only under the tier's lock by the
 * parts that do the counted work, and read together into a {@link DiskStats} snapshot. Byte
 * counts are bytes; every counter counts since {@link DiskTier#open}. Not thread-safe.
 */
final class DiskCounters {

    /** See {@link DiskStats#puts()}. */
    long puts;
    /** See {@link DiskStats#putsExisting()}. */
    long putsExisting;
    /** See {@link DiskStats#admissionRejects()}. */
    long admissionRejects;
    /** See {@link DiskStats#gets()}. */
    long gets;
    /** See {@link DiskStats#hits()}. */
    long hits;
    /** See {@link DiskStats#misses()}. */
    long misses;
    /** See {@link DiskStats#corruptMisses()}. */
    long corruptMisses;
    /** See {@link DiskStats#collisions()}. */
    long collisions;
    /** See {@link DiskStats#evictions()}. */
    long evictions;
    /** See {@link DiskStats#removals()}. */
    long removals;
    /** See {@link DiskStats#quarantined()}. */
    long quarantined;
    /** See {@link DiskStats#bytesWritten()}. */
    long bytesWritten;
    /** See {@link DiskStats#rawBytesWritten()}. */
    long rawBytesWritten;
    /** See {@link DiskStats#recordBytesWritten()}. */
    long recordBytesWritten;
    /** See {@link DiskStats#bytesRead()}. */
    long bytesRead;
    /** See {@link DiskStats#rawBytesRead()}. */
    long rawBytesRead;
    /** See {@link DiskStats#recoveredBlocks()}. */
    long recoveredBlocks;
    /** See {@link DiskStats#recoveryFaults()}. */
    long recoveryFaults;
    /** See {@link DiskStats#recoveryInsideScans()}. */
    long recoveryInsideScans;
    /** See {@link DiskStats#droppedSegments()}. */
    long droppedSegments;
    /** See {@link DiskStats#compactions()}. */
    long compactions;
    /** See {@link DiskStats#compactedBytes()}. */
    long compactedBytes;
    /** See {@link DiskStats#segmentsCreated()}. */
    long segmentsCreated;
    /** See {@link DiskStats#segmentsDeleted()}. */
    long segmentsDeleted;
    /** See {@link DiskStats#diskFullFailures()}. */
    long diskFullFailures;
    /** See {@link DiskStats#pinRefusals()}. */
    long pinRefusals;
    /** See {@link DiskStats#liveBytes()}: bytes of the records indexed now. */
    long liveBytes;

    /**
     * The counters with the tier's current sizes.
     *
     * @param usedBytes    bytes of the tier's files now (0 once closed)
     * @param budgetBytes  the budget
     * @param blockCount   records indexed now (0 once closed)
     * @param pinnedBlocks records pinned now (0 once closed)
     * @param segmentCount segment files now
     * @return an immutable snapshot
     */
    DiskStats snapshot(long usedBytes, long budgetBytes, int blockCount, int pinnedBlocks, int segmentCount) {
        return new DiskStats(puts, putsExisting, admissionRejects, gets, hits, misses, corruptMisses, collisions, evictions,
                removals, quarantined, bytesWritten, rawBytesWritten, recordBytesWritten, bytesRead, rawBytesRead,
                DiskStats.ratio(rawBytesWritten, bytesWritten), recoveredBlocks, recoveryFaults, recoveryInsideScans,
                droppedSegments, compactions, compactedBytes, segmentsCreated, segmentsDeleted, diskFullFailures,
                pinRefusals,
                usedBytes, budgetBytes, liveBytes, blockCount, pinnedBlocks, segmentCount);
    }
}

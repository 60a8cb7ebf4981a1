package io.tierkv.tiers.disk.store;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Path;

/**
 * One segment file, mapped whole into its own shared {@link Arena} (closed when the segment is
 * closed or deleted; never one arena per block). Plain mutable state owned by the disk tier and
 * touched only under its lock.
 */
final class Segment {

    /** Segment id, as in the file name. */
    final int id;
    /** The segment file. */
    final Path file;
    /** The shared arena that owns the mapping. */
    final Arena arena;
    /** Read-write channel of the file (positional writes of the spill path). */
    final FileChannel channel;
    /** The mapping: {@code capacity} bytes starting at the file's first byte. */
    final MemorySegment map;
    /** Mapped bytes: the file's length (shorter than the configured size if recovered truncated). */
    final long capacity;
    /** Index in the tier's segment table. */
    int slot = -1;
    /** The segment's current nonce. */
    long nonce;
    /** End of the last record written; the next record goes here. */
    long highWaterMark;
    /**
     * Where the record that ends at {@link #highWaterMark} starts, 0 when none does (the mark is
     * at the first record offset): the next record names it as its predecessor, and the segment
     * header keeps it with the mark.
     */
    long lastRecordOffset;
    /**
     * End of the bytes written into this file since it was created (records and headers, across
     * recycling and compaction): pages below it exist in the file (the page cache may or may not
     * hold them).
     */
    long writtenBytes;
    /** Bytes of records evicted for room since the segment was last compacted or recycled. */
    long evictedBytes;
    /** Bytes of live records. */
    long liveBytes;
    /** Live records. */
    int liveRecords;
    /** Bytes of live records that hold a pin (part of {@link #liveBytes}; eviction cannot free them). */
    long pinnedBytes;
    /** No more appends (it was full when a record did not fit). */
    boolean sealed;

    /**
     * Wraps an open, mapped segment file.
     *
     * @param id      the segment id
     * @param file    the file
     * @param arena   the arena owning {@code map}
     * @param channel the file's channel
     * @param map     the whole file, mapped
     * @param nonce   the nonce in its header
     */
    Segment(int id, Path file, Arena arena, FileChannel channel, MemorySegment map, long nonce) {
        this.id = id;
        this.file = file;
        this.arena = arena;
        this.channel = channel;
        this.map = map;
        this.capacity = map.byteSize();
        this.nonce = nonce;
    }

    /**
     * Bytes free after the high-water mark.
     *
     * @return bytes
     */
    long freeTailBytes() {
        return capacity - highWaterMark;
    }

    /**
     * Live fraction of the bytes available for records.
     *
     * @return a fraction in [0, 1]
     */
    double liveRatio() {
        return (double) liveBytes / (capacity - DiskFormat.SEGMENT_HEADER_BYTES);
    }

    /**
     * Fraction of the bytes available for records that compaction would keep or that eviction has
     * not yet reached: live bytes plus bytes evicted for room. Bytes freed by eviction lie next to
     * the records next in line for eviction, so compacting them away would move records only to
     * evict them soon after; a segment emptied by eviction is recycled instead.
     *
     * @return a fraction in [0, 1]
     */
    double keptRatio() {
        return (double) (liveBytes + evictedBytes) / (capacity - DiskFormat.SEGMENT_HEADER_BYTES);
    }

    /** Unmaps and closes the file; idempotent. */
    void close() {
        if (arena.scope().isAlive()) {
            arena.close();
        }
        try {
            channel.close();
        } catch (IOException ignored) {
            // closing a read-write channel of a mapped file reports nothing actionable
        }
    }

    @Override
    public String toString() {
        return file.getFileName() + "(id " + id + ", hwm " + highWaterMark + "/" + capacity + ", live "
                + liveRecords + " records " + liveBytes + " B)";
    }
}

package io.tierkv.tiers.disk;

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

    final int id;
    final Path file;
    final Arena arena;
    final FileChannel channel;
    /** The mapping: {@code capacity} bytes starting at the file's first byte. */
    final MemorySegment map;
    /** Mapped bytes: the file's length (shorter than the configured size if recovered truncated). */
    final long capacity;
    /** Index in the tier's segment table. */
    int slot = -1;
    long nonce;
    /** End of the last record written; the next record goes here. */
    long highWaterMark;
    long liveBytes;
    int liveRecords;
    /** No more appends (full, or recovered shorter than its header says). */
    boolean sealed;

    Segment(int id, Path file, Arena arena, FileChannel channel, MemorySegment map, long nonce) {
        this.id = id;
        this.file = file;
        this.arena = arena;
        this.channel = channel;
        this.map = map;
        this.capacity = map.byteSize();
        this.nonce = nonce;
    }

    long freeTailBytes() {
        return capacity - highWaterMark;
    }

    /** Live fraction of the bytes available for records. */
    double liveRatio() {
        return (double) liveBytes / (capacity - DiskFormat.SEGMENT_HEADER_BYTES);
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

package io.tierkv.tiers.disk.store;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The bytes of one segment file that {@link Recovery}'s walk reads, in one of two modes:
 * <ul>
 *   <li><b>Buffered</b> (records of at most {@link RecoveryReadAhead#DENSE_RECORD_BYTES}, where
 *       reading the bytes between headers costs less than a read per header): the file is read
 *       from byte 0 up to a limit (the high-water mark) with sequential positional reads,
 *       {@link #CHUNK_BYTES} at a time, into one reused off-heap buffer, and the walk parses the
 *       headers from that buffer. A forward walk makes this the sequential read of the files (the
 *       kernel reads ahead of it, so the device reads the next chunk while the walk parses this
 *       one), without a page fault, a {@code madvise} call or a page-table entry per page. An access
 *       outside the buffer (the next chunk, or a step back over damage) re-reads the buffer from
 *       the page that holds it.</li>
 *   <li><b>Mapped</b> (longer records; or read-ahead switched off): the walk reads the segment's
 *       mapping directly, helped by {@link RecoveryReadAhead}.</li>
 * </ul>
 * Byte diagram of the buffered mode:
 * <pre>
 *   file   0 ........ base ................. end ......... limit
 *   buffer            [0 ............. end - base)   (at most CHUNK_BYTES + one page)
 * </pre>
 * The walk names file offsets; {@link #at} makes the bytes asked for present and returns where
 * they lie in {@link #bytes()} ({@code offset - }{@link #base()}). Only the page cache and this
 * buffer see the reads: nothing is trusted for having been read here, every header is still
 * verified by the walk. Writes of the walk (zeroed magics) go to the mapping and, through
 * {@link #wrote}, to the buffer, so the walk reads what the file holds.
 *
 * <p>Not thread-safe: one per recovery, used by its thread; {@link #close()} frees the buffer.
 */
final class RecoveryWindow implements AutoCloseable {

    /**
     * Bytes per positional read in the buffered mode. Measured ({@code tierkv restart-bench}, 4 KiB
     * blocks, 1e4 and 1e5 records, jars alternated, BENCHMARKS.md "Cold restart: positional
     * reads"): 8 MiB (the sequential-read limit's chunk) left recovery at 1.70-3.11 of the limit,
     * 1 MiB at 0.84-2.25, 256 KiB at 0.95-1.69 (likely because a small buffer stays in the CPU's
     * cache between the copy out of the page cache and the walk over its headers), and it costs
     * little to allocate (zeroed) at every open.
     */
    static final long CHUNK_BYTES = 256L << 10;
    /** Alignment of the buffer's file offset, and of its first read: one page. */
    static final long PAGE_BYTES = 4096;
    /**
     * Whether small records are read with positional reads at all; tests switch it off to check
     * that the index and bytes recovery leaves do not depend on it (off, the walk reads the
     * mapping, as it does with {@link RecoveryReadAhead#ENABLED} off).
     */
    static volatile boolean ENABLED = true;
    /** Segment walks made through the buffer since the class was loaded ({@link #useFile} calls), for tests. */
    static final AtomicLong BUFFERED_WALKS = new AtomicLong();

    private final Arena arena;
    private final MemorySegment buffer;
    private final long chunkBytes;
    /** What the accessors read: {@link #buffer} or a mapping. */
    private MemorySegment bytes;
    /** File offset of {@code bytes}' byte 0. */
    private long base;
    /** First file offset past the bytes present. */
    private long end;
    /** Buffered: the file read, else null. */
    private FileChannel channel;
    private Path file;
    /** Buffered: first file offset not read. */
    private long readLimit;
    /** Positional reads made, for tests. */
    long reads;
    /** Bytes read by them, for tests. */
    long bytesRead;

    /**
     * A window with a buffer of {@code chunkBytes} plus one page.
     *
     * @param chunkBytes bytes per positional read, a positive multiple of {@link #PAGE_BYTES}
     * @throws IllegalArgumentException if {@code chunkBytes} is not such a multiple
     */
    RecoveryWindow(long chunkBytes) {
        if (chunkBytes <= 0 || chunkBytes % PAGE_BYTES != 0) {
            throw new IllegalArgumentException("chunkBytes: " + chunkBytes + " (expected a positive multiple of "
                    + PAGE_BYTES + ")");
        }
        this.chunkBytes = chunkBytes;
        this.arena = Arena.ofConfined();
        this.buffer = arena.allocate(chunkBytes + PAGE_BYTES, PAGE_BYTES);
    }

    /**
     * Walks read a mapping of the whole file from now on.
     *
     * @param map the segment's mapping
     */
    void useMapping(MemorySegment map) {
        bytes = map;
        base = 0;
        end = map.byteSize();
        channel = null;
        file = null;
    }

    /**
     * Walks read {@code file} through the buffer from now on, from its byte 0 and no further than
     * {@code readLimit} (the high-water mark); the first read happens at the first {@link #at}.
     * Counted in {@link #BUFFERED_WALKS}.
     *
     * @param channel   the open file
     * @param file      its path, for messages
     * @param readLimit first file offset not to read, at most the file's length
     */
    void useFile(FileChannel channel, Path file, long readLimit) {
        this.bytes = buffer;
        this.channel = channel;
        this.file = file;
        this.base = 0;
        this.end = 0;
        this.readLimit = readLimit;
        BUFFERED_WALKS.incrementAndGet();
    }

    /**
     * Makes file bytes {@code [offset, offset + length)} present and returns their offset in
     * {@link #bytes()}. The returned offset holds until the next call.
     *
     * @param offset file offset
     * @param length bytes, at most one page
     * @return {@code offset - base()}
     * @throws UncheckedIOException if they lie past the read limit or the read fails
     */
    long at(long offset, long length) {
        if (offset < base || offset + length > end) {
            load(offset, length);
        }
        return offset - base;
    }

    /**
     * What the accessors read: the buffer or the mapping.
     *
     * @return memory holding file offset {@link #base()} at its byte 0
     */
    MemorySegment bytes() {
        return bytes;
    }

    /**
     * File offset of {@link #bytes()}' byte 0.
     *
     * @return bytes
     */
    long base() {
        return base;
    }

    /**
     * The walk wrote an int at file offset {@code offset} through the mapping: the buffer gets
     * it too if it holds that offset.
     *
     * @param offset file offset
     * @param value  the int written
     */
    void wrote(long offset, int value) {
        if (channel != null && offset >= base && offset + Integer.BYTES <= end) {
            buffer.set(DiskFormat.INT, offset - base, value);
        }
    }

    /**
     * Refills the buffer to start at the page of {@code offset}, keeping what it holds from
     * there, reading as much as fits below the read limit.
     */
    private void load(long offset, long length) {
        if (channel == null || offset + length > readLimit || length > PAGE_BYTES) {
            throw new UncheckedIOException(new IOException("recovery read of " + length + " B at " + offset + " in "
                    + file + " past the readable " + readLimit + " B" + (channel == null ? " of the mapping" : "")));
        }
        long from = offset & -PAGE_BYTES;
        long kept = 0;
        if (from >= base && from < end) {
            kept = end - from;
            MemorySegment.copy(buffer, from - base, buffer, 0, kept);
        }
        long to = Math.min(readLimit, from + buffer.byteSize());
        long filled = from + kept;
        try {
            while (filled < to) {
                ByteBuffer into = buffer.asSlice(filled - from, to - filled).asByteBuffer();
                int got = channel.read(into, filled);
                reads++;
                if (got < 0) {
                    break;
                }
                filled += got;
                bytesRead += got;
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file + " at " + filled, e);
        }
        base = from;
        end = filled;
        if (offset + length > end) {
            throw new UncheckedIOException(new IOException(file + " ends at " + end + " B, recovery expected "
                    + readLimit + " B"));
        }
    }

    /** Frees the buffer. */
    @Override
    public void close() {
        arena.close();
    }
}

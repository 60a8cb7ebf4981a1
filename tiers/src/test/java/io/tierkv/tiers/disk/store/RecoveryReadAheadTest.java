package io.tierkv.tiers.disk.store;

import static io.tierkv.tiers.disk.store.DiskTestSupport.LAYOUT;
import static io.tierkv.tiers.disk.store.DiskTestSupport.RECORD;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.tierkv.natives.libc.Libc;
import io.tierkv.tiers.disk.Compression;
import io.tierkv.tiers.disk.DiskOptions;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Recovery's read-ahead ({@link RecoveryReadAhead}), judged by what enters the page cache of files
 * dropped from it first ({@code mincore}): small records are read whole ahead of the walk, large
 * ones only at their header pages, and turning it off changes no recovered record. (The speed it
 * buys is measured by {@code tierkv restart-bench}, not here.) Skipped where the file system keeps
 * pages that {@code POSIX_FADV_DONTNEED} asked it to drop (tmpfs).
 */
class RecoveryReadAheadTest {

    private static final long PAGE = Libc.pageSizeBytes();
    private static final long WAIT_NANOS = 10_000_000_000L;

    @TempDir
    Path dir;

    /**
     * A cold restart of small records (16 KiB blocks, dense) brings every page below the marks
     * (from the second record's header on) into the page cache, where the walk alone reads one page per record; both find the same
     * records.
     */
    @Test
    void smallRecordsAreReadWholeAndTheSameRecordsAreRecovered() throws IOException {
        int records = 400;
        DiskOptions o = DiskTestSupport.options(dir, 150, 64L << 20).withPersistent(true)
                .withCompression(Compression.NONE);
        try (Arena arena = Arena.ofConfined(); DiskTier tier = DiskTier.open(o, LAYOUT)) {
            for (int k = 0; k < records; k++) {
                assertTrue(DiskTestSupport.put(tier, arena, k), "put " + k);
            }
        }
        assertTrue(RECORD <= RecoveryReadAhead.DENSE_RECORD_BYTES && RECORD > 3 * PAGE, "records of " + RECORD
                + " B are dense and span pages that hold no header");
        List<Path> files = segmentFiles();
        long markedPages = 0; // from the second header's page to the mark: the walk advises from there
        for (Path f : files) {
            markedPages += (highWaterMark(f) + PAGE - 1) / PAGE - (DiskFormat.SEGMENT_HEADER_BYTES + RECORD) / PAGE;
        }
        assumeTrue(dropAll(files), "this file system keeps pages of closed files cached");
        long without;
        RecoveryReadAhead.ENABLED = false;
        try (DiskTier tier = DiskTier.open(o, LAYOUT)) {
            assertEquals(records, tier.blockCount());
            without = resident(files);
        } finally {
            RecoveryReadAhead.ENABLED = true;
        }
        assertTrue(without <= records + files.size(), "without read-ahead the walk reads one page per header: "
                + without + " pages for " + records + " records");
        assumeTrue(dropAll(files), "this file system keeps pages of closed files cached");
        try (Arena arena = Arena.ofConfined(); DiskTier tier = DiskTier.open(o, LAYOUT)) {
            assertEquals(records, tier.blockCount());
            long with = awaitResident(files, markedPages);
            assertTrue(with >= markedPages, "with read-ahead every page below the marks is read: " + with + " of "
                    + markedPages + " (" + without + " without)");
            for (int k = 0; k < records; k++) {
                assertTrue(DiskTestSupport.getAndVerify(tier, arena, k), "get " + k);
            }
        }
    }

    /**
     * Large records (sparse): the walk at a header of a record of length {@code L} has the header
     * pages at {@code +L, +2L, ...} read ahead, {@link RecoveryReadAhead#SPARSE_DEPTH} of them up
     * to the limit, and no page in between.
     */
    @Test
    void largeRecordsHaveOnlyTheirHeaderPagesReadAhead() throws IOException {
        long stride = 256L << 10 | 128; // a record of 256 KiB + 128 B: each header at another offset in its page
        int ahead = 20;
        long limit = DiskFormat.SEGMENT_HEADER_BYTES + (ahead + 1) * stride;
        Path f = dir.resolve("sparse.bin");
        writeRandom(f, limit + (1 << 20));
        assumeTrue(dropAll(List.of(f)), "this file system keeps pages of closed files cached");
        try (Arena arena = Arena.ofConfined(); FileChannel ch = FileChannel.open(f, StandardOpenOption.READ)) {
            MemorySegment map = ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size(), arena);
            SegmentTable.adviseRandom(map);
            long pos = DiskFormat.SEGMENT_HEADER_BYTES + stride;
            new RecoveryReadAhead(map, limit, RecoveryReadAhead.adviceBytesFor(dir)).before(pos, stride);
            long expected = ahead - 1; // headers at pos + stride .. the last one below the limit
            long deadline = System.nanoTime() + WAIT_NANOS;
            while (Libc.residentPages(map) < expected && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            for (long k = 1; k <= expected; k++) {
                long header = pos + k * stride;
                assertEquals(1, Libc.residentPages(map.asSlice(header & -PAGE, PAGE)), "header page " + k);
            }
            assertEquals(expected, Libc.residentPages(map), "pages read: the header pages ahead and nothing else");
        }
    }

    /** The bytes per advice call come from the device's limits, within their bounds, whole pages. */
    @Test
    void adviceCallsAreSizedWithinBounds() {
        long b = RecoveryReadAhead.adviceBytesFor(dir);
        assertTrue(b >= RecoveryReadAhead.MIN_ADVICE_BYTES && b <= RecoveryReadAhead.WINDOW_BYTES, b + " B");
        assertEquals(0, b % 4096, b + " B");
        assertEquals(RecoveryReadAhead.MIN_ADVICE_BYTES, RecoveryReadAhead.adviceBytesFor(dir.resolve("absent")),
                "a path whose device cannot be found gets the kernel's default read-ahead size");
    }

    private long awaitResident(List<Path> files, long pages) throws IOException {
        long deadline = System.nanoTime() + WAIT_NANOS;
        long r = resident(files);
        while (r < pages && System.nanoTime() < deadline) {
            Thread.onSpinWait();
            r = resident(files);
        }
        return r;
    }

    private List<Path> segmentFiles() throws IOException {
        List<Path> out = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir, "seg-*.tkv")) {
            ds.forEach(out::add);
        }
        return out;
    }

    /** Drops the files from the page cache; true if none of their pages is left there. */
    private static boolean dropAll(List<Path> files) throws IOException {
        for (Path f : files) {
            try (FileChannel ch = FileChannel.open(f, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                ch.force(true);
            }
            assertEquals(0, Libc.posixFadvise(f, 0, 0, Libc.POSIX_FADV_DONTNEED), "fadvise " + f);
        }
        return resident(files) == 0;
    }

    private static long resident(List<Path> files) throws IOException {
        long n = 0;
        for (Path f : files) {
            try (Arena a = Arena.ofConfined(); FileChannel ch = FileChannel.open(f, StandardOpenOption.READ)) {
                long r = Libc.residentPages(ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size(), a));
                assertTrue(r >= 0, "mincore failed: errno " + -r);
                n += r;
            }
        }
        return n;
    }

    private static long highWaterMark(Path f) throws IOException {
        try (FileChannel ch = FileChannel.open(f, StandardOpenOption.READ)) {
            ByteBuffer b = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
            ch.read(b, DiskFormat.SEG_HWM);
            return b.getLong(0);
        }
    }

    private static void writeRandom(Path f, long bytes) throws IOException {
        SplittableRandom r = new SplittableRandom(7);
        ByteBuffer b = ByteBuffer.allocate(1 << 20);
        try (FileChannel ch = FileChannel.open(f, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            for (long done = 0; done < bytes; done += b.capacity()) {
                b.clear();
                while (b.hasRemaining()) {
                    b.putLong(r.nextLong());
                }
                b.flip().limit((int) Math.min(b.capacity(), bytes - done));
                ch.write(b, done);
            }
        }
    }
}

package io.tierkv.natives;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.natives.libc.Libc;
import java.io.UncheckedIOException;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LibcTest {

    @TempDir
    Path dir;

    @Test
    void posixFallocateGrowsTheFileToTheReservedLength() throws IOException {
        Path file = Files.createFile(dir.resolve("segment"));
        assertEquals(0, Libc.posixFallocate(file, 0, 3 << 20));
        assertEquals(3L << 20, Files.size(file));
        assertEquals(0, Libc.posixFallocate(file, 5L << 20, 1 << 20));
        assertEquals(6L << 20, Files.size(file));
    }

    @Test
    void posixFallocateOnAMissingFileThrowsNoSuchFile() {
        Path missing = dir.resolve("missing");
        var e = assertThrows(UncheckedIOException.class, () -> Libc.posixFallocate(missing, 0, 4096));
        assertInstanceOf(NoSuchFileException.class, e.getCause());
        assertTrue(e.getMessage().contains("ENOENT"), e.getMessage());
    }

    @Test
    void posixFallocateRejectsANonPositiveLengthNamingTheField() throws IOException {
        Path file = Files.createFile(dir.resolve("f"));
        var e = assertThrows(IllegalArgumentException.class, () -> Libc.posixFallocate(file, 0, 0));
        assertEquals("lengthBytes: 0 (expected > 0)", e.getMessage());
    }

    @Test
    void posixFallocateOnADirectoryReportsAnErrorNumberOrAnOpenFailure() {
        // open(dir, O_RDWR) fails with EISDIR: the caller gets an exception, not a silent 0.
        assertThrows(UncheckedIOException.class, () -> Libc.posixFallocate(dir, 0, 4096));
    }

    @Test
    void posixFadviseAcceptsKnownAdviceAndRejectsUnknown() throws IOException {
        Path file = Files.write(dir.resolve("data"), new byte[8192]);
        assertEquals(0, Libc.posixFadvise(file, 0, 0, Libc.POSIX_FADV_WILLNEED));
        assertEquals(0, Libc.posixFadvise(file, 0, 4096, Libc.POSIX_FADV_DONTNEED));
        assertEquals(Libc.EINVAL, Libc.posixFadvise(file, 0, 0, 12345));
    }

    @Test
    void madviseAlignsAnUnalignedSliceOfAMapping() throws IOException {
        Path file = Files.write(dir.resolve("mapped"), new byte[4 * 65536]);
        try (Arena arena = Arena.ofConfined();
                FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            MemorySegment map = ch.map(FileChannel.MapMode.READ_ONLY, 0, Files.size(file), arena);
            MemorySegment slice = map.asSlice(1000, 70000); // starts and ends mid-page
            assertEquals(0, Libc.madvise(slice, Libc.MADV_WILLNEED));
            assertEquals(0, Libc.madvise(slice, Libc.MADV_RANDOM));
            assertEquals(Libc.EINVAL, Libc.madvise(slice, 9999));
        }
    }

    @Test
    void residentPagesCountsWhatThePageCacheHoldsOfAMapping() throws IOException {
        Path file = Files.write(dir.resolve("resident"), new byte[16 * 4096]);
        try (Arena arena = Arena.ofConfined();
                FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            MemorySegment map = ch.map(FileChannel.MapMode.READ_ONLY, 0, Files.size(file), arena);
            long pages = Files.size(file) / Libc.pageSizeBytes();
            assertEquals(pages, Libc.residentPages(map), "just written: every page is in the page cache");
            assertEquals(1, Libc.residentPages(map.asSlice(10, 20)), "a slice inside one page counts that page");
            ch.force(true);
            assertEquals(0, Libc.madvise(map, Libc.MADV_DONTNEED));
            assertEquals(0, Libc.posixFadvise(file, 0, 0, Libc.POSIX_FADV_DONTNEED));
            long after = Libc.residentPages(map); // fewer on a disk file system; all of them on tmpfs
            assertTrue(after >= 0 && after <= pages, "after DONTNEED: " + after + " of " + pages + " pages resident");
        }
    }

    @Test
    @SuppressWarnings("restricted")
    void mapAnonymousReturnsAlignedZeroMemoryThatNoPageBacksBeforeItsFirstWrite() {
        long bytes = 3 * 4096 + 100;
        long address = Libc.mapAnonymous(bytes, Libc.HUGE_PAGE_BYTES);
        assertTrue(address > 0, "mapAnonymous: " + address);
        assertEquals(0, address % Libc.HUGE_PAGE_BYTES, "aligned to 2 MiB");
        MemorySegment map = MemorySegment.ofAddress(address).reinterpret(bytes);
        assertEquals(0, Libc.residentPages(map), "nothing touched yet");
        assertEquals(0, map.get(java.lang.foreign.ValueLayout.JAVA_BYTE, bytes - 1));
        map.set(java.lang.foreign.ValueLayout.JAVA_BYTE, 0, (byte) 7);
        assertTrue(Libc.residentPages(map) >= 1, "a written page is resident");
        assertEquals(0, Libc.unmap(address, bytes));
    }

    @Test
    void mapAnonymousRejectsBadSizesNamingTheField() {
        var size = assertThrows(IllegalArgumentException.class, () -> Libc.mapAnonymous(0, 4096));
        assertTrue(size.getMessage().startsWith("bytes: 0"), size.getMessage());
        var align = assertThrows(IllegalArgumentException.class, () -> Libc.mapAnonymous(4096, 3000));
        assertTrue(align.getMessage().startsWith("alignBytes: 3000"), align.getMessage());
    }

    @Test
    void madviseRejectsHeapSegmentsAndClosedArenas() {
        var heap = assertThrows(IllegalArgumentException.class,
                () -> Libc.madvise(MemorySegment.ofArray(new byte[16]), Libc.MADV_NORMAL));
        assertTrue(heap.getMessage().startsWith("segment:"), heap.getMessage());
        MemorySegment closed;
        try (Arena arena = Arena.ofConfined()) {
            closed = arena.allocate(4096);
        }
        assertThrows(IllegalStateException.class, () -> Libc.madvise(closed, Libc.MADV_NORMAL));
    }

    @Test
    void mlockAndMunlockASmallPageAlignedSegment() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment s = arena.allocate(Libc.pageSizeBytes(), Libc.pageSizeBytes());
            int rc = Libc.mlock(s);
            // A 4 KiB lock fits every default RLIMIT_MEMLOCK (64 KiB or more) and root's CAP_IPC_LOCK.
            assertEquals(0, rc, () -> Libc.errnoName(rc));
            assertEquals(0, Libc.munlock(s));
        }
    }

    @Test
    void memlockLimitIsPositive() {
        long limit = Libc.memlockLimitBytes();
        assertTrue(limit > 0, "limit " + limit);
    }

    @Test
    void pageSizeIsAPowerOfTwo() {
        long page = Libc.pageSizeBytes();
        assertTrue(page >= 4096 && Long.bitCount(page) == 1, "page " + page);
    }

    @Test
    void errnoNameCarriesSymbolAndText() {
        assertEquals("ENOSPC (No space left on device)", Libc.errnoName(Libc.ENOSPC));
    }
}

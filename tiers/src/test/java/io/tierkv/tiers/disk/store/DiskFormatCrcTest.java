package io.tierkv.tiers.disk.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Random;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;

/**
 * {@code DiskFormat.crc32c} and {@code update} give the CRC32C of exactly the region asked, on both
 * of their paths (small regions through a scratch copy, large ones through a buffer view), for
 * native and heap segments, and refuse a region outside the segment on both.
 */
class DiskFormatCrcTest {

    private static int reference(byte[] bytes, int offset, int length) {
        CRC32C crc = new CRC32C();
        crc.update(bytes, offset, length);
        return (int) crc.getValue();
    }

    @Test
    void everyRegionLengthAndOffsetGivesTheChecksumOfItsBytes() {
        byte[] bytes = new byte[8192];
        new Random(7).nextBytes(bytes);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment nativeSeg = arena.allocate(bytes.length);
            MemorySegment.copy(bytes, 0, nativeSeg, ValueLayout.JAVA_BYTE, 0, bytes.length);
            MemorySegment heapSeg = MemorySegment.ofArray(bytes);
            CRC32C crc = new CRC32C();
            int[] lengths = {1, 7, 60, 64, 288, 1023, 1024, 1025, 4096, 5000};
            int[] offsets = {0, 1, 13, 2048, 3000};
            for (int length : lengths) {
                for (int offset : offsets) {
                    int expected = reference(bytes, offset, length);
                    assertEquals(expected, DiskFormat.crc32c(crc, nativeSeg, offset, length), length + " at " + offset);
                    assertEquals(expected, DiskFormat.crc32c(crc, heapSeg, offset, length), length + " at " + offset);
                }
            }
            // A running checksum over two regions, one small and one large, equals one pass over both.
            crc.reset();
            DiskFormat.update(crc, nativeSeg, 100, 64);
            DiskFormat.update(crc, nativeSeg, 164, 4000);
            assertEquals(reference(bytes, 100, 4064), (int) crc.getValue());
            assertEquals(0, DiskFormat.crc32c(crc, nativeSeg, 5, 0), "an empty region");
            assertThrows(IndexOutOfBoundsException.class, () -> DiskFormat.crc32c(crc, nativeSeg, 8190, 10));
            assertThrows(IndexOutOfBoundsException.class, () -> DiskFormat.crc32c(crc, nativeSeg, 8000, 2000));
        }
    }
}

package io.tierkv.tiers.disk.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link RecoveryWindow}: what {@link RecoveryWindow#at} makes present is the file's bytes at
 * every offset, walked forward (each byte read once) or jumping back; it refuses to read past its
 * limit; writes told to it are seen; its chunk size is validated.
 */
class RecoveryWindowTest {

    private static final long CHUNK = 16 << 10;

    @TempDir
    Path dir;

    /** A file of {@code bytes} random bytes (seed 11); returns them. */
    private byte[] randomFile(Path f, int bytes) throws IOException {
        byte[] b = new byte[bytes];
        new SplittableRandom(11).nextBytes(b);
        Files.write(f, b);
        return b;
    }

    private static long longAt(byte[] b, long offset) {
        return MemorySegment.ofArray(b).get(ValueLayout.JAVA_LONG_UNALIGNED, offset);
    }

    /**
     * A forward walk in 64-byte steps over a file many chunks long sees every header-sized piece
     * as the file holds it, and reads each byte exactly once.
     */
    @Test
    void aForwardWalkSeesTheFileAndReadsEachByteOnce() throws IOException {
        Path f = dir.resolve("walk.bin");
        int size = 300_000 + 40; // not a multiple of a page or of 64
        byte[] expected = randomFile(f, size);
        try (RecoveryWindow w = new RecoveryWindow(CHUNK);
             FileChannel ch = FileChannel.open(f, StandardOpenOption.READ)) {
            w.useFile(ch, f, size);
            for (long pos = 0; pos + 64 <= size; pos += 64) {
                long at = w.at(pos, 64);
                assertEquals(pos - w.base(), at, "offset in the buffer at " + pos);
                for (int k = 0; k < 64; k += 8) {
                    assertEquals(longAt(expected, pos + k), w.bytes().get(ValueLayout.JAVA_LONG_UNALIGNED, at + k),
                            "bytes at " + (pos + k));
                }
            }
            assertEquals(size, w.bytesRead, "a forward walk reads each byte of the file once");
            long chunks = (size + CHUNK - 1) / CHUNK;
            assertTrue(w.reads <= chunks + 1, w.reads + " reads for " + chunks + " chunks");
        }
    }

    /** Random jumps, backward ones included, see the file's bytes at each offset. */
    @Test
    void jumpsBackAndForthSeeTheFile() throws IOException {
        Path f = dir.resolve("jumps.bin");
        int size = 200_000;
        byte[] expected = randomFile(f, size);
        SplittableRandom r = new SplittableRandom(5);
        try (RecoveryWindow w = new RecoveryWindow(CHUNK);
             FileChannel ch = FileChannel.open(f, StandardOpenOption.READ)) {
            w.useFile(ch, f, size);
            for (int i = 0; i < 2_000; i++) {
                long pos = r.nextLong(size - 64 + 1);
                long at = w.at(pos, 64);
                assertEquals(longAt(expected, pos), w.bytes().get(ValueLayout.JAVA_LONG_UNALIGNED, at),
                        "bytes at " + pos + " (jump " + i + ")");
                assertEquals(longAt(expected, pos + 56), w.bytes().get(ValueLayout.JAVA_LONG_UNALIGNED, at + 56),
                        "bytes at " + (pos + 56) + " (jump " + i + ")");
            }
        }
    }

    /** Bytes past the read limit are refused even though the file holds them. */
    @Test
    void readsPastTheLimitAreRefused() throws IOException {
        Path f = dir.resolve("limit.bin");
        randomFile(f, 100_000);
        try (RecoveryWindow w = new RecoveryWindow(CHUNK);
             FileChannel ch = FileChannel.open(f, StandardOpenOption.READ)) {
            w.useFile(ch, f, 50_000);
            for (long pos = 0; pos + 64 <= 50_000; pos += 64) {
                w.at(pos, 64);
            }
            UncheckedIOException e = assertThrows(UncheckedIOException.class, () -> w.at(50_000 - 32, 64));
            assertTrue(e.getMessage().contains("50000"), e.getMessage());
            assertEquals(50_000, w.bytesRead, "read up to the limit and no further");
        }
    }

    /** An int the walk wrote through the mapping is seen in the buffer without a read. */
    @Test
    void writesToldToTheWindowAreSeen() throws IOException {
        Path f = dir.resolve("write.bin");
        int size = 64 << 10;
        randomFile(f, size);
        try (RecoveryWindow w = new RecoveryWindow(CHUNK);
             FileChannel ch = FileChannel.open(f, StandardOpenOption.READ)) {
            w.useFile(ch, f, size);
            long at = w.at(4096, 64);
            long reads = w.reads;
            w.wrote(4096 + DiskFormat.REC_MAGIC, 0);
            assertEquals(at, w.at(4096, 64));
            assertEquals(0, w.bytes().get(DiskFormat.INT, at + DiskFormat.REC_MAGIC));
            assertEquals(reads, w.reads, "no read");
        }
    }

    /** In the mapped mode the window is the mapping itself, at file offset 0. */
    @Test
    void theMappedModeReadsTheMapping() throws IOException {
        Path f = dir.resolve("mapped.bin");
        int size = 64 << 10;
        byte[] expected = randomFile(f, size);
        try (RecoveryWindow w = new RecoveryWindow(CHUNK); Arena arena = Arena.ofConfined();
             FileChannel ch = FileChannel.open(f, StandardOpenOption.READ)) {
            MemorySegment map = ch.map(FileChannel.MapMode.READ_ONLY, 0, size, arena);
            w.useMapping(map);
            assertEquals(40_000, w.at(40_000, 64));
            assertEquals(0, w.base());
            assertEquals(longAt(expected, 40_000), w.bytes().get(ValueLayout.JAVA_LONG_UNALIGNED, 40_000));
            assertEquals(0, w.reads, "no positional read");
        }
    }

    @Test
    void chunkSizeIsValidated() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new RecoveryWindow(1000));
        assertEquals("chunkBytes: 1000 (expected a positive multiple of 4096)", e.getMessage());
    }
}

package io.tierkv.tiers.disk.store;

import static io.tierkv.tiers.disk.store.DiskTestSupport.LAYOUT;
import static io.tierkv.tiers.disk.store.DiskTestSupport.getAndVerify;
import static io.tierkv.tiers.disk.store.DiskTestSupport.hi;
import static io.tierkv.tiers.disk.store.DiskTestSupport.lo;
import static io.tierkv.tiers.disk.store.DiskTestSupport.mixedBlock;
import static io.tierkv.tiers.disk.store.DiskTestSupport.put;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.tiers.disk.Compression;
import io.tierkv.tiers.disk.DiskOptions;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.function.Consumer;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Crash states around a compaction in place and a first open, built by hand so each is exact (a
 * review's attacks on the first version of {@link UnmovedRecords}, which rewrote headers during
 * recovery: a crash in that recovery brought removed records back and lost a live one, and a torn
 * copy made two recoveries disagree; and on the metadata refusal, which refused the leftovers of a
 * first open killed while writing its metadata). Recovery now writes nothing to a segment for
 * records an interrupted compaction left; each test checks what two recoveries in a row find.
 */
class InterruptedCompactionRecoveryTest {

    @TempDir
    Path tmp;

    private final Arena arena = Arena.ofShared();
    private final CRC32C crc = new CRC32C();

    @AfterEach
    void free() {
        arena.close();
    }

    private static DiskOptions opts(Path d, Compression c) {
        return DiskTestSupport.options(d, 8, 256L << 20).withPersistent(true).withCompression(c);
    }

    private static void withMap(Path file, Consumer<MemorySegment> f) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE);
             Arena a = Arena.ofConfined()) {
            MemorySegment map = ch.map(FileChannel.MapMode.READ_WRITE, 0, ch.size(), a);
            f.accept(map);
            map.force();
        }
    }

    private static void copyDir(Path from, Path to) throws IOException {
        Files.createDirectories(to);
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(from)) {
            for (Path p : ds) {
                Files.copy(p, to.resolve(p.getFileName()), StandardCopyOption.REPLACE_EXISTING);
            }
        }
    }

    /** Offsets of keys 0..n-1 (by lo) in the open tier's one segment. */
    private static long[] offsets(DiskTier t, int n) {
        long[] off = new long[n];
        java.util.Arrays.fill(off, -1);
        for (DiskProbe.RecordLocation l : DiskProbe.recordLocations(t)) {
            if (l.hashLo() < n) {
                off[(int) l.hashLo()] = l.offset();
            }
        }
        return off;
    }

    private TreeSet<Long> present(DiskTier t, int n, boolean mixed) {
        TreeSet<Long> s = new TreeSet<>();
        for (long k = 0; k < n; k++) {
            if (mixed ? getAndVerify(t, arena, k, mixedBlock(arena, k)) : getAndVerify(t, arena, k)) {
                s.add(k);
            }
        }
        return s;
    }

    /**
     * A kill during the recovery of an interrupted compaction (the segment files as that recovery
     * left them, the journal as it was before it) brings no removed record back: recovery writes
     * nothing to the segment before the journal.
     */
    @Test
    void aKillDuringTheRecoveryOfAnInterruptedCompactionBringsNoRemovedRecordBack() throws IOException {
        Path a = tmp.resolve("a");
        Path b = tmp.resolve("b");
        try (DiskTier t = DiskTier.open(opts(a, Compression.LZ4), LAYOUT)) {
            for (int k = 0; k < 6; k++) {
                assertTrue(put(t, arena, k), "put " + k);
            }
            assertTrue(t.remove(hi(2), lo(2)));
        }
        Path seg = a.resolve(DiskFormat.segmentFileName(0));
        withMap(seg, m -> SegmentHeaders.writeSegmentNonce(m, crc,
                SegmentTable.successor(m.get(DiskFormat.LONG, DiskFormat.SEG_NONCE)))); // compaction killed after its first write
        copyDir(a, b);
        try (DiskTier t = DiskTier.open(opts(a, Compression.LZ4), LAYOUT)) {
            assertEquals(List.of(0L, 1L, 3L, 4L, 5L), new ArrayList<>(present(t, 6, false)), "first recovery");
            // kill -9 of that recovery after it rewrote the headers, before DeletionJournal.create replaced the journal:
            Files.copy(seg, b.resolve(seg.getFileName()), StandardCopyOption.REPLACE_EXISTING);
        }
        try (DiskTier t = DiskTier.open(opts(b, Compression.LZ4), LAYOUT)) {
            assertEquals(List.of(0L, 1L, 3L, 4L, 5L), new ArrayList<>(present(t, 6, false)),
                    "recovery after a kill during the first recovery: " + t.stats());
        }
    }

    /**
     * The old copy of a moved record (a duplicate, dead) stays dead after the moved copy is
     * removed at a later run: the recovery journals its death under its own nonce.
     */
    @Test
    void aRecordRemovedAfterThatRecoveryStaysRemoved() throws IOException {
        Path a = tmp.resolve("a");
        Path b = tmp.resolve("b");
        long[] off;
        try (DiskTier t = DiskTier.open(opts(a, Compression.NONE), LAYOUT)) {
            for (int k = 0; k < 4; k++) {
                assertTrue(put(t, arena, k), "put " + k);
            }
            off = offsets(t, 4);
            assertTrue(t.remove(hi(0), lo(0)));
        }
        Path seg = a.resolve(DiskFormat.segmentFileName(0));
        long[] o = off;
        withMap(seg, m -> { // Compactor.compact up to the crash: new nonce, key 1 moved over removed key 0
            long n2 = SegmentTable.successor(m.get(DiskFormat.LONG, DiskFormat.SEG_NONCE));
            SegmentHeaders.writeSegmentNonce(m, crc, n2);
            long len = RecordHeaders.recordBytesAt(m, o[1]);
            assertEquals(DiskFormat.SEGMENT_HEADER_BYTES, o[0]);
            assertTrue(o[1] - o[0] >= len, "key 1's old header survives the move");
            MemorySegment.copy(m, o[1], m, DiskFormat.SEGMENT_HEADER_BYTES, len);
            RecordHeaders.rewriteRecordPlace(m, DiskFormat.SEGMENT_HEADER_BYTES, crc, n2, 0);
        });
        copyDir(a, b);
        try (DiskTier t = DiskTier.open(opts(a, Compression.NONE), LAYOUT)) {
            assertEquals(List.of(1L, 2L, 3L), new ArrayList<>(present(t, 4, false)), "first recovery");
            Files.copy(seg, b.resolve(seg.getFileName()), StandardCopyOption.REPLACE_EXISTING); // killed before the journal
        }
        try (DiskTier t = DiskTier.open(opts(b, Compression.NONE), LAYOUT)) {
            assertEquals(List.of(1L, 2L, 3L), new ArrayList<>(present(t, 4, false)), "second recovery " + t.stats());
            assertTrue(t.remove(hi(1), lo(1)));
            assertFalse(getAndVerify(t, arena, 1));
        }
        try (DiskTier t = DiskTier.open(opts(b, Compression.NONE), LAYOUT)) {
            assertEquals(List.of(2L, 3L), new ArrayList<>(present(t, 4, false)),
                    "key 1 was removed before this restart: " + t.stats());
        }
    }

    /**
     * A kill while a record is being copied leaves its header, under the old nonce, at the cursor
     * with its payload part copied, over the headers of removed records the copy had not reached.
     * Those stay removed at every recovery (their journal entries kept under the old nonce), and
     * two recoveries give the same index.
     */
    @Test
    void aTornCopyHidesNoRemovedRecordThatALaterRecoveryTakesBack() throws IOException {
        Path a = tmp.resolve("a");
        int[] keys = {1, 2, 4, 5}; // 1, 2, 5 compress (short records), 4 is stored raw (long)
        long[] off;
        try (DiskTier t = DiskTier.open(opts(a, Compression.LZ4), LAYOUT)) {
            for (int k : keys) {
                assertTrue(put(t, arena, k, mixedBlock(arena, k)), "put " + k);
            }
            off = offsets(t, 6);
            assertTrue(t.remove(hi(1), lo(1)));
            assertTrue(t.remove(hi(2), lo(2)));
        }
        Path seg = a.resolve(DiskFormat.segmentFileName(0));
        long[] o = off;
        withMap(seg, m -> { // Compactor.compact: new nonce, then key 4 copied towards offset 64, killed part way
            long n2 = SegmentTable.successor(m.get(DiskFormat.LONG, DiskFormat.SEG_NONCE));
            SegmentHeaders.writeSegmentNonce(m, crc, n2);
            long len4 = RecordHeaders.recordBytesAt(m, o[4]);
            assertEquals(DiskFormat.SEGMENT_HEADER_BYTES, o[1]);
            assertTrue(o[4] - o[1] < len4, "key 4's record is longer than keys 1 and 2 together: " + java.util.Arrays.toString(o)
                    + " len4 " + len4);
            long copied = o[2] - o[1]; // the copy (forward, as a memmove to a lower address) has not reached key 2 yet
            assertTrue(copied > DiskFormat.RECORD_HEADER_BYTES);
            MemorySegment.copy(m, o[4], m, DiskFormat.SEGMENT_HEADER_BYTES, copied);
        });
        TreeSet<Long> first;
        String firstStats;
        try (DiskTier t = DiskTier.open(opts(a, Compression.LZ4), LAYOUT)) {
            first = present(t, 6, true);
            firstStats = t.stats().toString();
            assertFalse(first.contains(1L) || first.contains(2L), "removed keys after the first recovery: " + first);
        }
        try (DiskTier t = DiskTier.open(opts(a, Compression.LZ4), LAYOUT)) {
            TreeSet<Long> second = present(t, 6, true);
            assertFalse(second.contains(2L), "removed key 2 is back at the second recovery: first " + first
                    + " (" + firstStats + "), second " + second + " (" + t.stats() + ")");
            assertEquals(first, second, "recovering the same files twice");
        }
    }

    /**
     * A first open killed while writing the metadata (TierDirectory.writeMeta: temp file written,
     * not renamed yet) leaves the lock file and tierkv-disk.meta.tmp, and nothing stored: the next
     * open is not refused.
     */
    @Test
    void aFirstOpenKilledWhileWritingItsMetadataIsNotRefused() throws IOException {
        Path ref = tmp.resolve("ref");
        try (DiskTier t = DiskTier.open(opts(ref, Compression.LZ4), LAYOUT)) {
            assertTrue(t.blockCount() == 0);
        }
        Path d = tmp.resolve("d");
        Files.createDirectories(d);
        Files.createFile(d.resolve(DiskFormat.LOCK_FILE));
        Files.copy(ref.resolve(DiskFormat.META_FILE), d.resolve(DiskFormat.META_FILE + DiskFormat.TEMP_SUFFIX));
        try (DiskTier t = DiskTier.open(opts(d, Compression.LZ4), LAYOUT)) {
            assertTrue(put(t, arena, 1));
        }
    }

    /** The same leftovers of a non-persistent tier killed in its first open do not refuse the next non-persistent open. */
    @Test
    void aNonPersistentTierKilledWhileWritingItsMetadataDoesNotRefuseTheNext() throws IOException {
        Path ref = tmp.resolve("ref");
        DiskOptions eph = DiskTestSupport.options(ref, 8, 256L << 20);
        try (DiskTier t = DiskTier.open(eph, LAYOUT)) {
            Files.copy(ref.resolve(DiskFormat.META_FILE), tmp.resolve("meta"));
        }
        Path d = tmp.resolve("d");
        Files.createDirectories(d);
        Files.createFile(d.resolve(DiskFormat.LOCK_FILE));
        Files.copy(tmp.resolve("meta"), d.resolve(DiskFormat.META_FILE + DiskFormat.TEMP_SUFFIX));
        try (DiskTier t = DiskTier.open(DiskTestSupport.options(d, 8, 256L << 20), LAYOUT)) {
            assertTrue(put(t, arena, 1));
        }
    }

    /**
     * The record being copied at the kill, moving by less than its own length, leaves a torn copy
     * at the cursor whose header is valid under the old nonce: recovery counts it and looks inside
     * it, where the record's intact original is, and takes that, the same way at every recovery.
     */
    @Test
    void aTornCopyLeavesItsIntactOriginalToBeTakenAtEveryRecovery() throws IOException {
        Path a = tmp.resolve("a");
        int[] keys = {1, 4, 8, 5}; // 1, 5 compress (short records), 4 and 8 are stored raw (long)
        long[] off;
        try (DiskTier t = DiskTier.open(opts(a, Compression.LZ4), LAYOUT)) {
            for (int k : keys) {
                assertTrue(put(t, arena, k, mixedBlock(arena, k)), "put " + k);
            }
            off = offsets(t, 9);
            assertTrue(t.remove(hi(1), lo(1)));
        }
        Path seg = a.resolve(DiskFormat.segmentFileName(0));
        long[] o = off;
        withMap(seg, m -> { // Compactor.compact: new nonce, key 4 moved over removed key 1, key 8 being copied at the kill
            long n2 = SegmentTable.successor(m.get(DiskFormat.LONG, DiskFormat.SEG_NONCE));
            SegmentHeaders.writeSegmentNonce(m, crc, n2);
            long len4 = RecordHeaders.recordBytesAt(m, o[4]);
            MemorySegment.copy(m, o[4], m, DiskFormat.SEGMENT_HEADER_BYTES, len4);
            RecordHeaders.rewriteRecordPlace(m, DiskFormat.SEGMENT_HEADER_BYTES, crc, n2, 0);
            long cursor = DiskFormat.SEGMENT_HEADER_BYTES + len4;
            long len8 = RecordHeaders.recordBytesAt(m, o[8]);
            assertTrue(o[8] - cursor < len8 && o[8] - cursor > 2 * DiskFormat.RECORD_HEADER_BYTES,
                    java.util.Arrays.toString(o));
            MemorySegment.copy(m, o[8], m, cursor, DiskFormat.RECORD_HEADER_BYTES * 2); // its first 128 bytes
        });
        TreeSet<Long> first;
        String firstStats;
        try (DiskTier t = DiskTier.open(opts(a, Compression.LZ4), LAYOUT)) {
            first = present(t, 9, true);
            firstStats = t.stats().toString();
        }
        try (DiskTier t = DiskTier.open(opts(a, Compression.LZ4), LAYOUT)) {
            TreeSet<Long> second = present(t, 9, true);
            assertEquals(first, second, "recovering the same files twice: first " + first + " (" + firstStats
                    + "), second " + second + " (" + t.stats() + ")");
        }
    }

    /** A persistent directory holding only the lock file opens. */
    @Test
    void aDirectoryHoldingOnlyTheLockFileOpens() throws IOException {
        Path d = tmp.resolve("d");
        Files.createDirectories(d);
        Files.createFile(d.resolve(DiskFormat.LOCK_FILE));
        try (DiskTier t = DiskTier.open(opts(d, Compression.LZ4), LAYOUT)) {
            assertTrue(put(t, arena, 1));
        }
    }
}

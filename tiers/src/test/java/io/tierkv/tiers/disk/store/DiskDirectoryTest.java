package io.tierkv.tiers.disk.store;

import static io.tierkv.tiers.disk.store.DiskTestSupport.LAYOUT;
import static io.tierkv.tiers.disk.store.DiskTestSupport.getAndVerify;
import static io.tierkv.tiers.disk.store.DiskTestSupport.options;
import static io.tierkv.tiers.disk.store.DiskTestSupport.put;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.core.DType;
import io.tierkv.core.KvLayout;
import io.tierkv.core.error.DirectoryRefusedException;
import io.tierkv.tiers.disk.DiskOptions;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a disk tier does with the directory it is given before it writes anything: a tier that is
 * not persistent deletes its directory's tier files, so it must refuse files that are someone's
 * stored records (a persistent tier's, of any layout or key, or files whose writer cannot be
 * told), and take only the leftovers of a tier like itself that was killed before its close. A
 * path under a regular file is a clear error.
 */
class DiskDirectoryTest {

    @TempDir
    Path dir;

    private final Arena arena = Arena.ofShared();

    @AfterEach
    void closeArena() {
        arena.close();
    }

    /** Every file in {@code d} by name, with its bytes. */
    static Map<String, byte[]> files(Path d) {
        Map<String, byte[]> m = new TreeMap<>();
        try (Stream<Path> s = Files.list(d)) {
            for (Path p : s.toList()) {
                m.put(p.getFileName().toString(), Files.readAllBytes(p));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return m;
    }

    static void assertSameFiles(Map<String, byte[]> expected, Path d) {
        Map<String, byte[]> now = files(d);
        assertEquals(expected.keySet(), now.keySet(), "file names");
        for (var e : expected.entrySet()) {
            assertArrayEquals(e.getValue(), now.get(e.getKey()), "bytes of " + e.getKey());
        }
    }

    private void writePersistent(DiskOptions o, KvLayout layout, int blocks) {
        try (DiskTier tier = DiskTier.open(o.withPersistent(true), layout)) {
            for (int k = 0; k < blocks; k++) {
                if (layout == LAYOUT) {
                    assertTrue(put(tier, arena, k));
                } else {
                    assertTrue(tier.put(k + 1, k + 1, arena.allocate(64), arena.allocate(layout.bytesPerBlock())));
                }
            }
        }
    }

    @Test
    void aPersistentTiersRecordsRefuseATierThatIsNotAndStayByteForByte() {
        DiskOptions o = options(dir, 2, 1 << 20);
        writePersistent(o, LAYOUT, 3);
        Map<String, byte[]> before = files(dir);
        var e = assertThrows(DirectoryRefusedException.class, () -> DiskTier.open(o, LAYOUT));
        assertTrue(e.getMessage().contains("persistent disk tier's records") && e.getMessage().contains(dir.toString()),
                e.getMessage());
        assertEquals(dir, e.directory());
        assertSameFiles(before, dir);
        try (DiskTier again = DiskTier.open(o.withPersistent(true), LAYOUT)) {
            for (int k = 0; k < 3; k++) {
                assertTrue(getAndVerify(again, arena, k), "block " + k + " still stored");
            }
        }
    }

    @Test
    void recordsOfAnotherLayoutOrFilesWithoutMetadataRefuseItToo() {
        DiskOptions o = options(dir, 2, 1 << 20);
        writePersistent(o, KvLayout.of(2, 2, 64, DType.BF16, 16), 2);
        Map<String, byte[]> before = files(dir);
        assertThrows(DirectoryRefusedException.class, () -> DiskTier.open(o, LAYOUT));
        assertSameFiles(before, dir);

        Path bare = dir.resolve("bare");
        writePersistent(options(bare, 2, 1 << 20), LAYOUT, 2);
        DiskFiles.deleteQuietly(bare.resolve(DiskFormat.META_FILE));
        Map<String, byte[]> bareBefore = files(bare);
        var e = assertThrows(DirectoryRefusedException.class, () -> DiskTier.open(options(bare, 2, 1 << 20), LAYOUT));
        assertTrue(e.getMessage().contains("without metadata"), e.getMessage());
        assertSameFiles(bareBefore, bare);
    }

    @Test
    void aRefusedDirectoryIsLeftWithoutTheLockFileTheRefusedOpenCreated() throws IOException {
        Path stored = dir.resolve("stored");
        writePersistent(options(stored, 2, 1 << 20), LAYOUT, 2);
        Path copy = dir.resolve("copy"); // the same records, as copied or restored, with no lock file
        Files.createDirectory(copy);
        for (String name : files(stored).keySet()) {
            if (!name.equals(DiskFormat.LOCK_FILE)) {
                Files.copy(stored.resolve(name), copy.resolve(name));
            }
        }
        Map<String, byte[]> before = files(copy);
        assertThrows(DirectoryRefusedException.class, () -> DiskTier.open(options(copy, 2, 1 << 20), LAYOUT));
        assertSameFiles(before, copy); // no lock file left behind: it was not there before

        assertTrue(Files.exists(stored.resolve(DiskFormat.LOCK_FILE)), "the persistent tier's own lock file");
        Map<String, byte[]> storedBefore = files(stored);
        assertThrows(DirectoryRefusedException.class, () -> DiskTier.open(options(stored, 2, 1 << 20), LAYOUT));
        assertSameFiles(storedBefore, stored); // a lock file that was there stays
    }

    @Test
    void theLeftoversOfAKilledTierThatWasNotPersistentAreItsOwnToDelete() throws IOException {
        Path killed = dir.resolve("killed");
        Files.createDirectory(killed);
        Path runningDir = dir.resolve("running");
        try (DiskTier running = DiskTier.open(options(runningDir, 2, 1 << 20), LAYOUT)) {
            for (int k = 0; k < 5; k++) {
                assertTrue(put(running, arena, k));
            }
            // A kill leaves the files as they are now: copy them (not the lock) while the tier runs.
            for (Path p : files(runningDir).keySet().stream().map(runningDir::resolve).toList()) {
                if (!p.getFileName().toString().equals(DiskFormat.LOCK_FILE)) {
                    Files.copy(p, killed.resolve(p.getFileName()));
                }
            }
        }
        assertTrue(DiskTestSupport.segmentFiles(killed) > 0);
        try (DiskTier next = DiskTier.open(options(killed, 2, 1 << 20), LAYOUT)) {
            assertEquals(0, next.blockCount());
            assertEquals(0, DiskTestSupport.segmentFiles(killed), "the killed tier's segments are deleted");
            assertTrue(put(next, arena, 9));
        }
    }

    @Test
    void aDirectoryUnderARegularFileIsAClearErrorNotARecursion() throws IOException {
        Path file = Files.writeString(dir.resolve("afile"), "mine");
        for (Path d : List.of(file.resolve("sub"), file.resolve("sub").resolve("deeper"), file)) {
            var e = assertThrows(IllegalArgumentException.class, () -> DiskTier.open(options(d, 2, 1 << 20), LAYOUT));
            assertTrue(e.getMessage().contains(file + " exists and is not a directory"), e.getMessage());
        }
        assertEquals("mine", Files.readString(file));
    }
}

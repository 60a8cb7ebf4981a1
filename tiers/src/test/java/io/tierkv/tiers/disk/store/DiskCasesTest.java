package io.tierkv.tiers.disk.store;

import static io.tierkv.tiers.disk.store.DiskTestSupport.LAYOUT;
import static io.tierkv.tiers.disk.store.DiskTestSupport.getAndVerify;
import static io.tierkv.tiers.disk.store.DiskTestSupport.hi;
import static io.tierkv.tiers.disk.store.DiskTestSupport.lo;
import static io.tierkv.tiers.disk.store.DiskTestSupport.ownFileBytes;
import static io.tierkv.tiers.disk.store.DiskTestSupport.put;
import static io.tierkv.tiers.disk.store.DiskTestSupport.segmentBytes;
import static io.tierkv.tiers.disk.store.DiskTestSupport.segmentFiles;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.tierkv.core.DType;
import io.tierkv.core.KvLayout;
import io.tierkv.core.error.DiskFullException;
import io.tierkv.core.prefix.BlockIdentity;
import io.tierkv.tiers.disk.Compression;
import io.tierkv.tiers.disk.DiskOptions;
import io.tierkv.tiers.disk.DiskStats;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The fault cases of {@code shared/cases} that concern the disk tier: 18, 22, 23 and 25. */
class DiskCasesTest {

    @TempDir
    Path tmp;

    private final Arena arena = Arena.ofShared();

    @AfterEach
    void freeMemory() {
        arena.close();
    }

    // ---------------------------------------------------------------------------- case 18

    /** D = 10 blocks: five segments of two records, plus journal and metadata. */
    private static DiskOptions case18Options(Path dir, boolean persistent) {
        long seg = segmentBytes(2);
        long overhead = DiskFormat.META_BYTES + DiskFormat.journalBytes(1024);
        DiskOptions o = DiskOptions.at(dir).withSegmentBytes(seg).withBudgetBytes(5 * seg + overhead)
                .withCompression(Compression.NONE).withPersistent(persistent).withLowSpaceWarnBytes(0);
        assertEquals(1024, DiskFormat.journalCapacity(o.budgetBytes(), LAYOUT), "the smallest journal");
        return o;
    }

    @Test
    void case18_diskUsageSurvivesRestart() {
        Path dir = tmp.resolve("d");
        DiskOptions o = case18Options(dir, true);
        try (DiskTier tier = DiskTier.open(o, LAYOUT)) {
            for (int k = 0; k < 8; k++) {
                assertTrue(put(tier, arena, k));
            }
            assertEquals(ownFileBytes(dir), tier.usedBytes());
        }
        assertReindexedAndBounded(dir, o);
    }

    @Test
    void case18_diskUsageSurvivesKill9() throws Exception {
        Path dir = tmp.resolve("d");
        DiskOptions o = case18Options(dir, true);
        spill8AndKill(dir, o);
        assertReindexedAndBounded(dir, o);
    }

    /** A child JVM spills keys 0..7 into a tier of these options (persistent or not) and is killed with SIGKILL. */
    private static void spill8AndKill(Path dir, DiskOptions o) throws Exception {
        try (DiskChild.Running child = DiskChild.start("spill", dir.toString(), Long.toString(o.segmentBytes()),
                Long.toString(o.budgetBytes()), "0", "8", "hang", o.persistent() ? "persistent" : "ephemeral")) {
            child.awaitLine("HANG");
            child.kill();
        }
    }

    /** After a restart: usage is the 8 blocks re-indexed; 5 more keep usage and files within D. */
    private void assertReindexedAndBounded(Path dir, DiskOptions o) {
        try (DiskTier tier = DiskTier.open(o, LAYOUT)) {
            assertEquals(8, tier.blockCount(), "blocks re-indexed after restart");
            assertEquals(8, tier.stats().recoveredBlocks());
            assertEquals(ownFileBytes(dir), tier.usedBytes(), "usage equals bytes on disk");
            assertEquals(4, segmentFiles(dir));
            TreeSet<Long> keys = new TreeSet<>();
            tier.maintenance().forEachKey((h, l) -> keys.add(l));
            assertEquals(new TreeSet<>(List.of(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L)), keys);
            for (int k = 0; k < 8; k++) {
                assertTrue(getAndVerify(tier, arena, k), "recovered key " + k);
            }
            List<Long> evicted = new ArrayList<>();
            tier.maintenance().setEvictionListener((h, l) -> evicted.add(l));
            for (int k = 8; k < 13; k++) {
                assertTrue(put(tier, arena, k));
                assertTrue(tier.blockCount() <= 10, "at most D blocks");
                assertTrue(segmentFiles(dir) <= 5, "at most D blocks' worth of segment files");
                assertTrue(tier.usedBytes() <= o.budgetBytes(), "usage within budget");
                assertEquals(ownFileBytes(dir), tier.usedBytes(), "usage equals bytes on disk");
                tier.checkInvariants();
            }
            assertEquals(13 - tier.blockCount(), evicted.size());
            assertTrue(evicted.size() >= 3, "10 blocks at most: " + evicted);
            for (int i = 0; i < evicted.size(); i++) {
                assertEquals(i, evicted.get(i), "least recently used first: " + evicted);
            }
            for (int k = evicted.size(); k < 13; k++) {
                assertTrue(getAndVerify(tier, arena, k), "key " + k);
            }
        }
    }

    @Test
    void case18_nonPersistentRestartAfterKill9StartsEmptyWithoutLeftovers() throws Exception {
        Path dir = tmp.resolve("d");
        DiskOptions o = case18Options(dir, false);
        spill8AndKill(dir, o);
        assertEquals(4, segmentFiles(dir));
        try (DiskTier tier = DiskTier.open(o, LAYOUT)) {
            assertEquals(0, tier.blockCount());
            assertEquals(0, segmentFiles(dir), "never 0 blocks with 8 files left");
            assertEquals(ownFileBytes(dir), tier.usedBytes());
        }
    }

    @Test
    void case18_aKilledPersistentTiersFilesRefuseATierThatIsNotPersistentAndAreReindexed() throws Exception {
        Path dir = tmp.resolve("d");
        DiskOptions o = case18Options(dir, true);
        spill8AndKill(dir, o);
        long bytes = ownFileBytes(dir);
        assertThrows(io.tierkv.core.error.DirectoryRefusedException.class,
                () -> DiskTier.open(o.withPersistent(false), LAYOUT));
        assertEquals(4, segmentFiles(dir), "nothing deleted by the refusal");
        assertEquals(bytes, ownFileBytes(dir));
        try (DiskTier tier = DiskTier.open(o, LAYOUT)) {
            assertEquals(8, tier.blockCount(), "usage is 8 (re-indexed)");
        }
    }

    // ---------------------------------------------------------------------------- case 22

    @Test
    void case22_crashConsistencyOfTheDiskIndex() throws Exception {
        long seed = 22_2026L;
        Path dir = tmp.resolve("d");
        long seg = segmentBytes(4);
        DiskOptions o = DiskOptions.at(dir).withSegmentBytes(seg).withBudgetBytes(64 * seg).withPersistent(true)
                .withLowSpaceWarnBytes(0);
        String[] base = {dir.toString(), Long.toString(seg), Long.toString(o.budgetBytes())};
        try (DiskChild.Running child = DiskChild.start(concat("spill", base, "0", "6", "close"))) {
            child.awaitLine("CLOSED");
            assertEquals(0, child.waitFor());
        }
        try (DiskTier tier = DiskTier.open(o, LAYOUT)) {
            assertEquals(6, tier.blockCount());
            for (int k = 0; k < 6; k++) {
                assertTrue(getAndVerify(tier, arena, k), "key " + k + " after close and reopen");
            }
        }
        try (DiskChild.Running child = DiskChild.start(concat("spill", base, "6", "10", "hang"))) {
            child.awaitLine("HANG");
            child.kill();
        }
        // where every record lies, learnt from an untouched copy
        Path intact = copyDir(dir, tmp.resolve("intact"));
        Map<Long, DiskProbe.RecordLocation> where = new HashMap<>();
        try (DiskTier tier = DiskTier.open(o.withDirectory(intact), LAYOUT)) {
            assertEquals(10, tier.blockCount(), "all 10 acknowledged spills survive kill -9");
            for (int k = 0; k < 10; k++) {
                assertTrue(getAndVerify(tier, arena, k), "key " + k + " after kill -9");
            }
            for (DiskProbe.RecordLocation r : DiskProbe.recordLocations(tier)) {
                where.put(r.hashLo(), r);
            }
            tier.checkInvariants();
        }
        SplittableRandom random = new SplittableRandom(seed);
        List<Path> segments;
        try (Stream<Path> s = Files.list(dir)) {
            segments = s.filter(p -> DiskFormat.segmentIdOf(p.getFileName().toString()) >= 0).sorted().toList();
        }
        for (int trial = 0; trial < 6; trial++) {
            Path copy = copyDir(dir, tmp.resolve("trial-" + trial));
            // the newest segment (the one being written at the kill) most of the time, any otherwise
            Path victim = trial < 4 ? segments.get(segments.size() - 1) : segments.get(random.nextInt(segments.size()));
            long size = Files.size(copy.resolve(victim.getFileName()));
            long cut = random.nextLong(size);
            try (FileChannel ch = FileChannel.open(copy.resolve(victim.getFileName()), StandardOpenOption.WRITE)) {
                ch.truncate(cut);
            }
            String what = "trial " + trial + ": " + victim.getFileName() + " truncated at " + cut + " (seed " + seed + ")";
            try (DiskTier tier = DiskTier.open(o.withDirectory(copy), LAYOUT)) {
                List<Long> reported = new ArrayList<>();
                tier.maintenance().forEachKey((h, l) -> reported.add(l));
                for (long k : reported) {
                    assertTrue(k >= 0 && k < 10, what + ": unknown key " + k);
                    assertTrue(getAndVerify(tier, arena, k), what + ": reported key " + k + " must read back exact");
                }
                for (long k = 0; k < 10; k++) {
                    DiskProbe.RecordLocation r = where.get(k);
                    boolean inVictim = r.file().getFileName().equals(victim.getFileName());
                    boolean survives = !inVictim || (cut >= DiskFormat.SEGMENT_HEADER_BYTES
                            && r.offset() + r.usedBytes() <= cut);
                    assertEquals(survives, tier.contains(hi(k), lo(k)), what + ": key " + k);
                }
                assertEquals(0, tier.stats().corruptMisses(), what);
                assertEquals(ownFileBytes(copy), tier.usedBytes(), what + ": budget counter equals what survived");
                assertEquals(reported.size(), tier.blockCount());
                tier.checkInvariants();
            }
        }
    }

    private static String[] concat(String first, String[] middle, String... rest) {
        List<String> all = new ArrayList<>();
        all.add(first);
        all.addAll(List.of(middle));
        all.addAll(List.of(rest));
        return all.toArray(String[]::new);
    }

    private static Path copyDir(Path from, Path to) throws IOException {
        Files.createDirectories(to);
        try (Stream<Path> s = Files.list(from)) {
            for (Path p : s.toList()) {
                Files.copy(p, to.resolve(p.getFileName()));
            }
        }
        return to;
    }

    // ---------------------------------------------------------------------------- case 23

    /**
     * Mounts an 8 MiB tmpfs, or aborts the test saying why the machine refused; under CI
     * ({@code CI=true}, which {@code .ci/run} sets) a refusal fails the test instead, so CI cannot
     * go green without running the disk-full case.
     */
    private static Path mountSmallFileSystem(Path at) throws Exception {
        Files.createDirectories(at);
        Process p = new ProcessBuilder("mount", "-t", "tmpfs", "-o", "size=8m,mode=0700", "tmpfs", at.toString())
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes()).trim();
        int rc = p.waitFor();
        if (rc != 0) {
            String why = "cannot mount an 8 MiB tmpfs at " + at + " (mount exited " + rc + ": " + out
                    + "); the disk-full case needs root and permission to mount";
            if ("true".equalsIgnoreCase(System.getenv("CI"))) {
                fail(why + " (CI=true requires it)");
            }
            Assumptions.abort(why);
        }
        return at;
    }

    private static void unmount(Path at) throws Exception {
        Process p = new ProcessBuilder("umount", "-l", at.toString()).redirectErrorStream(true).start();
        p.getInputStream().readAllBytes();
        p.waitFor();
    }

    @Test
    void case23_fullDiskWhileSegmentsGrowIsAFailedSpillNeverASigbus() throws Exception {
        Path mnt = mountSmallFileSystem(tmp.resolve("small-fs"));
        try {
            Path dir = mnt.resolve("tier");
            long seg = segmentBytes(60); // about 1 MiB
            try (DiskChild.Running child = DiskChild.start("fill", dir.toString(), Long.toString(seg),
                    Long.toString(64L << 20))) {
                String full = child.awaitLine("FULL");
                int storedAtFull = Integer.parseInt(full.split(" ")[2]);
                assertTrue(storedAtFull > 300, "filled the 8 MiB file system before failing: " + full);
                assertTrue(full.contains("disk full"), full);
                assertEquals(storedAtFull, Integer.parseInt(child.awaitLine("VERIFIED").split(" ")[1]),
                        "data stays readable after the failed spill");
                child.awaitLine("EVICTED");
                assertEquals("RESUMED 8", child.awaitLine("RESUMED"), "spilling resumes once space is freed");
                child.awaitLine("CLOSED");
                assertEquals(0, child.waitFor(), "the child exits normally: no SIGBUS");
            }
            try (DiskTier tier = DiskTier.open(DiskOptions.at(dir).withSegmentBytes(seg).withBudgetBytes(64L << 20)
                    .withPersistent(true).withLowSpaceWarnBytes(0), LAYOUT)) {
                assertTrue(tier.blockCount() > 0);
                assertEquals(ownFileBytes(dir), tier.usedBytes());
                tier.checkInvariants();
            }
        } finally {
            unmount(mnt);
        }
    }

    @Test
    void case23_fallocateRefusalLeavesNoPartialSegmentAndSpillingResumes() throws Exception {
        Path mnt = mountSmallFileSystem(tmp.resolve("small-fs"));
        SegmentTable.CHECK_USABLE_SPACE = false; // go straight to posix_fallocate, as a racing writer would
        try {
            Path dir = mnt.resolve("tier");
            long seg = segmentBytes(60);
            DiskOptions o = DiskOptions.at(dir).withSegmentBytes(seg).withBudgetBytes(64L << 20)
                    .withLowSpaceWarnBytes(1 << 20);
            try (DiskTier tier = DiskTier.open(o, LAYOUT)) {
                int k = 0;
                DiskFullException full = null;
                while (full == null) {
                    try {
                        put(tier, arena, k++);
                    } catch (DiskFullException e) {
                        full = e;
                    }
                }
                assertTrue(full.getMessage().contains(".tkv"), full.getMessage());
                assertEquals(1, tier.stats().diskFullFailures());
                assertFalse(tier.contains(hi(k - 1), lo(k - 1)), "nothing stored by the failed spill");
                assertEquals(ownFileBytes(dir), tier.usedBytes(), "no half-made segment left behind");
                tier.checkInvariants();
                assertTrue(tier.maintenance().evict(tier.blockCount() / 2) > 0);
                assertTrue(put(tier, arena, k));
                assertTrue(getAndVerify(tier, arena, k));
                tier.checkInvariants();
            }
        } finally {
            SegmentTable.CHECK_USABLE_SPACE = true;
            unmount(mnt);
        }
    }

    // ---------------------------------------------------------------------------- case 25

    @Test
    void case25_incompressibleDataUnderLz4() {
        KvLayout layout = KvLayout.of(2, 4, 64, DType.F16, 32); // 128 KiB blocks
        int slot = layout.bytesPerBlock();
        DiskOptions o = DiskOptions.at(tmp.resolve("d")).withSegmentBytes(1 << 20).withBudgetBytes(8 << 20)
                .withCompression(Compression.LZ4).withShuffle(true).withLowSpaceWarnBytes(0);
        SplittableRandom r = new SplittableRandom(25);
        MemorySegment random64 = arena.allocate(64 << 10);
        for (long i = 0; i < random64.byteSize(); i += 8) {
            random64.set(ValueLayout.JAVA_LONG_UNALIGNED, i, r.nextLong());
        }
        MemorySegment zeros64 = arena.allocate(64 << 10);
        MemorySegment oneByte = arena.allocate(1);
        oneByte.set(ValueLayout.JAVA_BYTE, 0, (byte) 0x5A);
        MemorySegment empty = arena.allocate(0);
        MemorySegment fullSlot = arena.allocate(slot);
        DiskTestSupport.fillNormalF16(fullSlot, r);
        MemorySegment[] blocks = {random64, zeros64, oneByte, empty, fullSlot};
        String[] names = {"64 KiB random", "64 KiB zeros", "1 byte", "0 bytes", "exactly bytesPerBlock"};
        MemorySegment tokens = arena.allocate(BlockIdentity.bytes(layout.blockSizeTokens()));
        try (DiskTier tier = DiskTier.open(o, layout)) {
            for (int i = 0; i < blocks.length; i++) {
                long raw = blocks[i].byteSize();
                assertTrue(tier.put(100 + i, i, tokens, blocks[i]), names[i]);
                long stored = tier.maintenance().storedPayloadBytes(100 + i, i);
                assertTrue(stored <= raw, names[i] + ": stored " + stored + " > raw " + raw);
                assertTrue(tier.maintenance().recordBytes(100 + i, i) <= raw + DiskFormat.recordOverheadBytes(layout.blockSizeTokens()),
                        names[i] + ": record at most raw size + header");
                assertTrue(Double.isFinite(tier.stats().compressionRatio()), names[i]);
            }
            assertEquals(64 << 10, tier.maintenance().storedPayloadBytes(100, 0), "random data is stored raw");
            assertTrue(tier.maintenance().storedPayloadBytes(101, 1) < 1024, "zeros compress");
            assertEquals(slot, tier.maintenance().storedPayloadBytes(104, 4), "F16 normal data is stored raw");
            for (int i = 0; i < blocks.length; i++) {
                MemorySegment out = arena.allocate(slot + 1);
                out.fill((byte) 0x77);
                assertEquals(blocks[i].byteSize(), tier.load(100 + i, i, tokens, out), names[i]);
                assertEquals(-1L, blocks[i].mismatch(out.asSlice(0, blocks[i].byteSize())), names[i] + " round trip");
                assertEquals((byte) 0x77, out.get(ValueLayout.JAVA_BYTE, blocks[i].byteSize()),
                        names[i] + ": nothing written past the block");
            }
            DiskStats s = tier.stats();
            assertTrue(Double.isFinite(s.compressionRatio()) && s.compressionRatio() > 1.0, s.toString());
            tier.checkInvariants();
        }
        try (DiskTier tier = DiskTier.open(o.withDirectory(tmp.resolve("e")), layout)) {
            tier.put(1, 1, tokens, empty);
            tier.put(2, 2, tokens, oneByte);
            assertEquals(1.0, tier.stats().compressionRatio(), "finite with nothing compressible written");
            assertNotEquals(-1, tier.load(1, 1, tokens, arena.allocate(1)));
        }
    }

    @Test
    void case25_blocksLargerThanTheSlotAreRejectedNamingTheBound() {
        try (DiskTier tier = DiskTier.open(DiskTestSupport.options(tmp.resolve("d"), 2, 1 << 20), LAYOUT)) {
            MemorySegment big = arena.allocate(LAYOUT.bytesPerBlock() + 1);
            var e = assertThrows(IllegalArgumentException.class,
                    () -> tier.put(1, 1, DiskTestSupport.identity(arena, 1), big));
            assertTrue(e.getMessage().contains("bytesPerBlock " + LAYOUT.bytesPerBlock()), e.getMessage());
        }
    }
}

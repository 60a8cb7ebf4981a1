package io.tierkv.tiers.disk.store;

import static io.tierkv.tiers.disk.store.DiskTestSupport.LAYOUT;
import static io.tierkv.tiers.disk.store.DiskTestSupport.getAndVerify;
import static io.tierkv.tiers.disk.store.DiskTestSupport.hi;
import static io.tierkv.tiers.disk.store.DiskTestSupport.lo;
import static io.tierkv.tiers.disk.store.DiskTestSupport.options;
import static io.tierkv.tiers.disk.store.DiskTestSupport.ownFileBytes;
import static io.tierkv.tiers.disk.store.DiskTestSupport.put;
import static io.tierkv.tiers.disk.store.DiskTestSupport.segmentBytes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.core.DType;
import io.tierkv.core.KvLayout;
import io.tierkv.tiers.disk.Compression;
import io.tierkv.tiers.disk.DiskOptions;
import io.tierkv.tiers.disk.DiskStats;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class DiskTierTest {

    @TempDir
    Path dir;

    private final Arena arena = Arena.ofShared();
    private final List<DiskTier> open = new ArrayList<>();

    private DiskTier open(DiskOptions o) {
        DiskTier t = DiskTier.open(o, LAYOUT);
        open.add(t);
        return t;
    }

    @AfterEach
    void checkAndClose() {
        for (DiskTier t : open) {
            try {
                if (!t.toString().contains("closed")) {
                    t.checkInvariants();
                }
            } finally {
                t.close();
            }
        }
        arena.close();
    }

    enum Mode { RAW, LZ4, LZ4_SHUFFLE }

    @ParameterizedTest
    @EnumSource(Mode.class)
    void blocksComeBackByteExactInEveryCodec(Mode mode) {
        DiskOptions o = options(dir, 4, 1 << 20).withCompression(mode == Mode.RAW ? Compression.NONE : Compression.LZ4)
                .withShuffle(mode == Mode.LZ4_SHUFFLE);
        DiskTier tier = open(o);
        for (int k = 0; k < 20; k++) {
            assertTrue(put(tier, arena, k));
        }
        assertEquals(20, tier.blockCount());
        for (int k = 0; k < 20; k++) {
            assertTrue(getAndVerify(tier, arena, k), "key " + k);
        }
        assertFalse(getAndVerify(tier, arena, 999));
        DiskStats s = tier.stats();
        assertEquals(20, s.puts());
        assertEquals(21, s.gets());
        assertEquals(20, s.hits());
        assertEquals(1, s.misses());
        assertTrue(Double.isFinite(s.compressionRatio()));
        System.out.println(mode + ": " + s);
    }

    @ParameterizedTest
    @EnumSource(Mode.class)
    void blocksWhosePagesLeftThePageCacheLoadAndSpillByteExact(Mode mode) {
        DiskOptions o = options(dir, 4, 3 * segmentBytes(4) + 4096)
                .withCompression(mode == Mode.RAW ? Compression.NONE : Compression.LZ4)
                .withShuffle(mode == Mode.LZ4_SHUFFLE);
        DiskTier tier = open(o);
        for (int k = 0; k < 8; k++) {
            assertTrue(put(tier, arena, k));
        }
        assertTrue(tier.maintenance().dropCachedPages(hi(3), lo(3)));
        assertFalse(tier.maintenance().dropCachedPages(hi(999), lo(999)));
        assertTrue(getAndVerify(tier, arena, 3), "a record read back from the device alone");
        for (int k = 8; k < 48; k++) { // evictions empty segments, which are recycled: spills below the written mark
            if (k % 3 == 0) {
                tier.maintenance().dropCachedPages();
            }
            assertTrue(put(tier, arena, k));
        }
        tier.maintenance().dropCachedPages();
        int found = 0;
        for (int k = 0; k < 48; k++) {
            if (tier.contains(hi(k), lo(k))) {
                assertTrue(getAndVerify(tier, arena, k), "key " + k);
                found++;
            }
        }
        assertTrue(found >= 8, found + " keys on disk (expected at least two segments' worth)");
        assertEquals(0, tier.stats().corruptMisses());
    }

    @Test
    void usedBytesEqualsTheFilesOnDiskAndStaysWithinBudget() {
        long budget = 3 * segmentBytes(2) + 4096;
        DiskTier tier = open(options(dir, 2, budget).withCompression(Compression.NONE));
        List<Long> evicted = new ArrayList<>();
        tier.maintenance().setEvictionListener((h, l) -> evicted.add(l));
        for (int k = 0; k < 30; k++) {
            assertTrue(put(tier, arena, k));
            tier.checkInvariants();
            assertEquals(ownFileBytes(dir), tier.usedBytes());
            assertTrue(tier.usedBytes() <= budget);
        }
        assertEquals(30 - tier.blockCount(), evicted.size());
        for (long k : evicted) {
            assertFalse(tier.contains(hi(k), lo(k)));
        }
        // what remains is the most recent and reads back
        for (int k = 29; k > 29 - tier.blockCount(); k--) {
            assertTrue(getAndVerify(tier, arena, k), "key " + k);
        }
    }

    @Test
    void secondOpenOfTheSameDirectoryIsRefused() {
        open(options(dir, 2, 1 << 20));
        var e = assertThrows(IllegalStateException.class, () -> DiskTier.open(options(dir, 2, 1 << 20), LAYOUT));
        assertTrue(e.getMessage().contains("held by another manager"), e.getMessage());
    }

    @Test
    void nonPersistentCloseDeletesItsFilesAndLeavesForeignOnes() throws Exception {
        Path foreign = Files.writeString(dir.resolve("notes.txt"), "mine");
        DiskTier tier = open(options(dir, 2, 1 << 20));
        for (int k = 0; k < 5; k++) {
            put(tier, arena, k);
        }
        tier.close();
        assertEquals(0, ownFileBytes(dir));
        assertTrue(Files.exists(foreign));
        try (var ds = Files.list(dir)) {
            assertEquals(List.of(foreign), ds.toList());
        }
    }
    @Test
    void evictTakesExactlyWhatWasAskedLeastRecentFirst() {
        DiskTier tier = open(options(dir, 4, 1 << 20));
        List<Long> evicted = new ArrayList<>();
        tier.maintenance().setEvictionListener((h, l) -> evicted.add(l));
        for (int k = 0; k < 10; k++) {
            put(tier, arena, k);
        }
        getAndVerify(tier, arena, 0); // 0 becomes most recent
        long before = tier.stats().evictions();
        assertEquals(2, tier.maintenance().evict(2));
        assertEquals(List.of(1L, 2L), evicted);
        assertEquals(before + 2, tier.stats().evictions());
        assertEquals(0, tier.maintenance().evict(0));
        assertEquals(8, tier.maintenance().evict(100));
        assertEquals(List.of(1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L, 0L), evicted);
        assertEquals(0, tier.blockCount());
        assertEquals(0, tier.maintenance().evict(5));
        assertThrows(IllegalArgumentException.class, () -> tier.maintenance().evict(-1));
    }

    @Test
    void putOfAnExistingKeyIsANoOpAndRemoveIsNotReported() {
        DiskTier tier = open(options(dir, 4, 1 << 20));
        List<Long> evicted = new ArrayList<>();
        tier.maintenance().setEvictionListener((h, l) -> evicted.add(l));
        assertTrue(put(tier, arena, 1));
        long used = tier.usedBytes();
        assertTrue(tier.put(hi(1), lo(1), DiskTestSupport.identity(arena, 1), DiskTestSupport.block(arena, 2)),
                "the same identity is already stored");
        assertTrue(getAndVerify(tier, arena, 1), "the first content stays");
        assertEquals(1, tier.stats().putsExisting());
        assertEquals(used, tier.usedBytes());
        assertTrue(tier.remove(hi(1), lo(1)));
        assertFalse(tier.remove(hi(1), lo(1)));
        assertFalse(tier.contains(hi(1), lo(1)));
        assertEquals(List.of(), evicted);
        assertEquals(1, tier.stats().removals());
    }

    @Test
    void admissionFilterStoresABlockTheSecondTimeItIsOffered() {
        DiskTier tier = open(options(dir, 4, 1 << 20).withAdmitOnSecondSight(true));
        assertFalse(put(tier, arena, 7), "first sighting declined");
        assertFalse(tier.contains(hi(7), lo(7)));
        assertTrue(put(tier, arena, 7), "second sighting stored");
        assertTrue(getAndVerify(tier, arena, 7));
        assertTrue(put(tier, arena, 7), "already stored");
        int declined = 0;
        for (int k = 100; k < 300; k++) {
            declined += put(tier, arena, k) ? 0 : 1;
        }
        assertTrue(declined >= 195, "first sightings are declined (false positives are rare): " + declined);
        assertEquals(1 + declined, tier.stats().admissionRejects());
    }

    @Test
    void outputsSmallerThanTheRecordAreRejectedWithoutSideEffects() {
        DiskTier tier = open(options(dir, 4, 1 << 20));
        put(tier, arena, 3);
        var e = assertThrows(IllegalArgumentException.class,
                () -> tier.get(hi(3), lo(3), DiskTestSupport.identity(arena, 3), arena.allocate(LAYOUT.bytesPerBlock() - 1)));
        assertTrue(e.getMessage().contains("blockOut"), e.getMessage());
        assertThrows(IllegalArgumentException.class,
                () -> tier.get(hi(3), lo(3), arena.allocate(4), arena.allocate(LAYOUT.bytesPerBlock())));
        assertThrows(IllegalArgumentException.class,
                () -> tier.put(9, 9, arena.allocate(3), DiskTestSupport.block(arena, 9)));
        assertTrue(getAndVerify(tier, arena, 3));
        assertEquals(0, tier.stats().corruptMisses());
    }

    @Test
    void useAfterCloseIsAnIllegalStateAndCloseIsIdempotent() {
        DiskTier tier = open(options(dir, 4, 1 << 20));
        put(tier, arena, 1);
        tier.close();
        tier.close();
        assertThrows(IllegalStateException.class, () -> put(tier, arena, 2));
        assertThrows(IllegalStateException.class,
                () -> tier.get(1, 1, DiskTestSupport.identity(arena, 1), arena.allocate(LAYOUT.bytesPerBlock())));
        assertThrows(IllegalStateException.class, () -> tier.contains(1, 1));
        assertThrows(IllegalStateException.class, tier::usedBytes);
        assertEquals(1, tier.stats().puts());
    }

    @Test
    void aSymbolicLinkIsRefusedAsTheDirectory() throws Exception {
        Path real = Files.createDirectory(dir.resolve("real"));
        Path link = Files.createSymbolicLink(dir.resolve("link"), real);
        var e = assertThrows(IllegalArgumentException.class, () -> DiskTier.open(options(link, 2, 1 << 20), LAYOUT));
        assertTrue(e.getMessage().contains("symbolic link"), e.getMessage());
    }

    @Test
    void theDirectoryAndFilesAreOwnerOnly() throws Exception {
        Path d = dir.resolve("fresh");
        DiskTier tier = open(options(d, 2, 1 << 20).withPersistent(true));
        put(tier, arena, 1);
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(d)));
        for (Path p : DiskProbe.segmentFiles(tier)) {
            assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(p)));
        }
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(
                d.resolve(DiskFormat.JOURNAL_FILE))));
    }

    @Test
    void aDirectoryWrittenForAnotherLayoutIsRefusedOrWipedWhenAsked() {
        KvLayout other = KvLayout.of(2, 2, 64, DType.BF16, 16);
        DiskOptions o = options(dir, 2, 1 << 20).withPersistent(true);
        try (DiskTier tier = DiskTier.open(o, other)) {
            tier.put(1, 1, arena.allocate(64), arena.allocate(other.bytesPerBlock()));
        }
        var e = assertThrows(IllegalStateException.class, () -> DiskTier.open(o, LAYOUT));
        assertTrue(e.getMessage().contains("another layout") && e.getMessage().contains("BF16"), e.getMessage());
        assertEquals(1, DiskTestSupport.segmentFiles(dir), "nothing deleted when refusing");
        DiskTier wiped = open(o.withWipeOnLayoutMismatch(true));
        assertEquals(0, wiped.blockCount());
        assertEquals(0, DiskTestSupport.segmentFiles(dir));
        assertTrue(put(wiped, arena, 1));
    }

    @Test
    void removedAndEvictedBlocksStayGoneAfterRestart() {
        DiskOptions o = options(dir, 4, 1 << 20).withPersistent(true);
        try (DiskTier tier = DiskTier.open(o, LAYOUT)) {
            for (int k = 0; k < 20; k++) {
                put(tier, arena, k);
            }
            assertTrue(tier.remove(hi(5), lo(5)));
            assertTrue(tier.remove(hi(11), lo(11)));
            assertEquals(2, tier.maintenance().evict(2)); // keys 0 and 1
        }
        try (DiskTier tier = DiskTier.open(o, LAYOUT)) {
            assertEquals(16, tier.blockCount());
            for (int k = 0; k < 20; k++) {
                boolean gone = k == 0 || k == 1 || k == 5 || k == 11;
                assertEquals(!gone, tier.contains(hi(k), lo(k)), "key " + k);
                if (!gone) {
                    assertTrue(getAndVerify(tier, arena, k));
                }
            }
            tier.checkInvariants();
        }
    }

    @Test
    void segmentsEmptiedByEvictionAreRecycledAndTheirNewRecordsSurviveARestart() {
        long budget = 2 * segmentBytes(8) + DiskFormat.META_BYTES + DiskFormat.journalBytes(1024);
        DiskOptions o = options(dir, 8, budget).withPersistent(true);
        assertEquals(1024, DiskFormat.journalCapacity(o.budgetBytes(), LAYOUT));
        Set<Long> live = new HashSet<>();
        try (DiskTier tier = DiskTier.open(o, LAYOUT)) {
            tier.maintenance().setEvictionListener((h, l) -> live.remove(l));
            for (int k = 0; k < 40; k++) {
                assertTrue(put(tier, arena, k));
                live.add((long) k);
                tier.checkInvariants();
            }
            DiskStats s = tier.stats();
            assertEquals(2, s.segmentsCreated(), "emptied segments are reused, not reserved anew: " + s);
            assertEquals(0, s.segmentsDeleted(), s.toString());
            assertEquals(0, s.compactions(), "holes made by eviction are not compacted away: " + s);
            assertEquals(40 - tier.blockCount(), s.evictions());
            assertEquals(live.size(), tier.blockCount());
            assertTrue(live.contains(39L) && !live.contains(0L), live.toString());
            for (long k : live) {
                assertTrue(getAndVerify(tier, arena, k), "key " + k);
            }
        }
        try (DiskTier tier = DiskTier.open(o, LAYOUT)) {
            for (long k = 0; k < 40; k++) {
                assertEquals(live.contains(k), tier.contains(hi(k), lo(k)), "key " + k);
            }
            for (long k : live) {
                assertTrue(getAndVerify(tier, arena, k), "key " + k);
            }
            tier.checkInvariants();
        }
    }

    @Test
    void aJournalThatFillsUpIsCompactedAndDeletionsStillHoldAfterRestart() {
        KvLayout small = KvLayout.of(1, 1, 32, DType.F16, 16);
        DiskOptions o = DiskOptions.at(dir).withSegmentBytes(64 << 10).withBudgetBytes(1 << 20)
                .withCompression(Compression.NONE).withPersistent(true).withLowSpaceWarnBytes(0);
        assertEquals(1024, DiskFormat.journalCapacity(o.budgetBytes(), small));
        Set<Long> live = new HashSet<>();
        MemorySegment tokens = arena.allocate(64);
        MemorySegment block = arena.allocate(small.bytesPerBlock());
        try (DiskTier tier = DiskTier.open(o, small)) {
            tier.maintenance().setEvictionListener((h, l) -> live.remove(l));
            for (int round = 0; round < 11; round++) {
                for (long k = round * 300L; k < round * 300L + 300; k++) {
                    block.set(ValueLayout.JAVA_LONG, 0, k);
                    assertTrue(tier.put(k, k, tokens, block));
                    live.add(k);
                }
                for (long k = round * 300L; k < round * 300L + 300; k++) {
                    if (k % 3 != 2 && live.contains(k)) {
                        assertTrue(tier.remove(k, k));
                        live.remove(k);
                    }
                }
                tier.checkInvariants();
            }
            assertTrue(tier.stats().removals() > 1024, "more deletions than the journal holds");
            assertEquals(live.size(), tier.blockCount());
        }
        try (DiskTier tier = DiskTier.open(o, small)) {
            for (long k = 0; k < 3300; k++) {
                assertEquals(live.contains(k), tier.contains(k, k), "key " + k);
            }
            MemorySegment out = arena.allocate(small.bytesPerBlock());
            for (long k : live) {
                assertTrue(tier.get(k, k, tokens, out));
                assertEquals(k, out.get(ValueLayout.JAVA_LONG, 0));
            }
            tier.checkInvariants();
        }
    }

    @Test
    void compactionReclaimsDeadBytesInPlaceAndKeepsEveryLiveByte() {
        long budget = 4 * segmentBytes(8) + 4096;
        DiskTier tier = open(options(dir, 8, budget).withCompactBelowLiveRatio(0.6).withCompression(Compression.NONE));
        Set<Long> live = new HashSet<>();
        tier.maintenance().setEvictionListener((h, l) -> live.remove(l));
        for (int k = 0; k < 32; k++) {
            assertTrue(put(tier, arena, k));
            live.add((long) k);
        }
        for (int k = 0; k < 32; k += 2) {
            assertTrue(tier.remove(hi(k), lo(k)));
            live.remove((long) k);
        }
        for (int k = 100; k < 116; k++) {
            assertTrue(put(tier, arena, k));
            live.add((long) k);
            tier.checkInvariants();
        }
        DiskStats s = tier.stats();
        assertTrue(s.compactions() > 0, s.toString());
        assertEquals(0, s.evictions(), "half-dead segments were compacted, nothing evicted: " + s);
        assertEquals(32, live.size());
        for (long k : live) {
            assertTrue(getAndVerify(tier, arena, k), "key " + k);
        }
    }

    @Test
    void explicitCompactionDropsDeadBytesBelowTheRatio() {
        DiskTier tier = open(options(dir, 8, 1 << 20).withCompactBelowLiveRatio(0.5));
        for (int k = 0; k < 16; k++) {
            put(tier, arena, k);
        }
        for (int k = 0; k < 8; k++) {
            if (k != 3) {
                tier.remove(hi(k), lo(k));
            }
        }
        assertEquals(1, tier.maintenance().compact());
        assertEquals(0, tier.maintenance().compact(), "nothing left to compact");
        for (int k = 3; k < 16; k++) {
            assertEquals(k != 4 && k != 5 && k != 6 && k != 7, getAndVerify(tier, arena, k), "key " + k);
        }
    }

    @Test
    void aDirectoryHeldByAnotherProcessIsRefused() throws Exception {
        DiskOptions o = options(dir, 2, 1 << 20).withPersistent(true);
        try (DiskChild.Running child = DiskChild.start("spill", dir.toString(), Long.toString(o.segmentBytes()),
                Long.toString(o.budgetBytes()), "0", "1", "hang")) {
            child.awaitLine("HANG");
            var e = assertThrows(IllegalStateException.class, () -> DiskTier.open(o, LAYOUT));
            assertTrue(e.getMessage().contains("held by another manager"), e.getMessage());
            child.kill();
        }
        DiskTier tier = open(o);
        assertTrue(getAndVerify(tier, arena, 0), "the lock dies with its process");
    }

    @Test
    void concurrentSpillsLoadsAndRemovesServeOnlyExactBytes() throws Exception {
        long seed = 4242;
        KvLayout small = KvLayout.of(1, 1, 32, DType.F16, 16);
        DiskTier t = DiskTier.open(DiskOptions.at(dir).withSegmentBytes(16 << 10).withBudgetBytes(256 << 10)
                .withCompression(Compression.LZ4).withLowSpaceWarnBytes(0), small);
        open.add(t);
        AtomicLong hits = new AtomicLong();
        Set<Long> evicted = ConcurrentHashMap.newKeySet();
        t.maintenance().setEvictionListener((h, l) -> evicted.add(l));
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int w = 0; w < 4; w++) {
                long s = seed + w;
                done.add(pool.submit(() -> {
                    SplittableRandom r = new SplittableRandom(s);
                    try (Arena a = Arena.ofConfined()) {
                        MemorySegment tok = a.allocate(64);
                        MemorySegment b = a.allocate(small.bytesPerBlock());
                        MemorySegment out = a.allocate(small.bytesPerBlock());
                        for (int i = 0; i < 3000; i++) {
                            long k = r.nextInt(300);
                            int op = r.nextInt(10);
                            if (op < 4) {
                                for (long x = 0; x < b.byteSize(); x += 8) {
                                    b.set(ValueLayout.JAVA_LONG_UNALIGNED, x,
                                            (k * 0x9E3779B97F4A7C15L + x) * 0xBF58476D1CE4E5B9L);
                                }
                                t.put(k, k, tok, b);
                            } else if (op < 9) {
                                if (t.get(k, k, tok, out)) {
                                    for (long x = 0; x < out.byteSize(); x += 8) {
                                        assertEquals((k * 0x9E3779B97F4A7C15L + x) * 0xBF58476D1CE4E5B9L,
                                                out.get(ValueLayout.JAVA_LONG_UNALIGNED, x), "seed " + s + " key " + k);
                                    }
                                    hits.incrementAndGet();
                                }
                            } else {
                                t.remove(k, k);
                            }
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }
        assertTrue(hits.get() > 0);
        assertEquals(0, t.stats().corruptMisses());
        assertTrue(t.stats().evictions() > 0, "the budget forced evictions: " + t.stats());
        t.checkInvariants();
    }

    @Test
    void aMatchComparesTheIdentityWithoutAGetAndADamagedHeaderIsACountedGetMissAndQuarantine() throws Exception {
        DiskTier tier = open(options(dir, 4, 1 << 20));
        put(tier, arena, 1);
        put(tier, arena, 2);
        MemorySegment t = DiskTestSupport.identity(arena, 2);
        assertEquals(LAYOUT.blockSizeTokens(), tier.match(hi(1), lo(1), DiskTestSupport.identity(arena, 1)));
        assertEquals(DiskTier.ABSENT, tier.match(hi(999), lo(999), t), "absent");
        assertEquals(0, tier.stats().gets(), "a match is not a get");
        DiskProbe.RecordLocation where = DiskProbe.recordLocations(tier).stream().filter(r -> r.hashLo() == lo(2)).findFirst()
                .orElseThrow();
        try (var ch = java.nio.channels.FileChannel.open(where.file(), java.nio.file.StandardOpenOption.WRITE)) {
            ch.write(java.nio.ByteBuffer.wrap(new byte[] {0x55}), where.offset() + 20); // in the hash: header checksum fails
        }
        assertEquals(DiskTier.DAMAGED, tier.match(hi(2), lo(2), t));
        DiskStats s = tier.stats();
        assertEquals(1, s.corruptMisses());
        assertEquals(1, s.quarantined());
        assertFalse(tier.contains(hi(2), lo(2)), "quarantined");
        assertEquals(s.gets(), s.hits() + s.misses(), "gets = hits + misses: " + s);
    }

    @Test
    void aPinningPutOfAKeyWhoseRecordIsDamagedQuarantinesItAndWritesTheBlockAnew() throws Exception {
        DiskTier tier = open(options(dir, 4, 1 << 20));
        assertTrue(put(tier, arena, 1));
        DiskProbe.RecordLocation where = DiskProbe.recordLocations(tier).get(0);
        long payload = where.offset() + DiskFormat.payloadOffset(LAYOUT.blockSizeTokens());
        try (var ch = java.nio.channels.FileChannel.open(where.file(), java.nio.file.StandardOpenOption.WRITE)) {
            ch.write(java.nio.ByteBuffer.wrap(new byte[] {0x55, 0x55}), payload + 10);
        }
        assertTrue(put(tier, arena, 1), "an ordinary put trusts the record it finds");
        assertEquals(1, tier.stats().putsExisting());
        assertEquals(0, tier.stats().corruptMisses());
        // the record is about to become a referenced block's only copy: it is checked first
        long pin = tier.putPinned(hi(1), lo(1), DiskTestSupport.identity(arena, 1), DiskTestSupport.block(arena, 1));
        assertTrue(pin != DiskTier.NO_PIN);
        DiskStats s = tier.stats();
        assertEquals(1, s.corruptMisses(), s.toString());
        assertEquals(1, s.quarantined());
        assertEquals(2, s.puts(), "written anew");
        assertEquals(1, s.putsExisting());
        assertEquals(1, s.pinnedBlocks());
        assertEquals(s.gets(), s.hits() + s.misses(), "gets = hits + misses: " + s);
        assertTrue(getAndVerify(tier, arena, 1), "the new record serves the block's bytes");
        assertEquals(pin, tier.putPinned(hi(1), lo(1), DiskTestSupport.identity(arena, 1),
                DiskTestSupport.block(arena, 1)), "a sound record is kept");
        assertEquals(2, tier.stats().putsExisting());
        assertEquals(2, tier.stats().puts());
        assertEquals(1, tier.stats().corruptMisses());
        tier.pinning().unpin(hi(1), lo(1), pin);
        tier.pinning().unpin(hi(1), lo(1), pin);
    }

    @Test
    void aCorruptReadRaisesAJfrDiskFaultEvent() throws Exception {
        DiskTier tier = open(options(dir, 4, 1 << 20));
        put(tier, arena, 1);
        DiskProbe.RecordLocation where = DiskProbe.recordLocations(tier).get(0);
        try (var ch = java.nio.channels.FileChannel.open(where.file(), java.nio.file.StandardOpenOption.WRITE)) {
            ch.write(java.nio.ByteBuffer.wrap(new byte[] {0x55}), where.offset() + where.usedBytes() - 1);
        }
        Path jfr = dir.resolve("faults.jfr");
        try (Recording r = new Recording()) {
            r.enable("io.tierkv.DiskFault");
            r.start();
            assertFalse(getAndVerify(tier, arena, 1));
            r.stop();
            r.dump(jfr);
        }
        List<RecordedEvent> events = RecordingFile.readAllEvents(jfr);
        assertEquals(1, events.size(), events.toString());
        assertEquals(where.file().toString(), events.get(0).getString("file"));
        assertEquals(where.offset(), events.get(0).getLong("offset"));
        assertTrue(events.get(0).getString("reason").contains("checksum"), events.get(0).getString("reason"));
        Files.delete(jfr);
    }
}

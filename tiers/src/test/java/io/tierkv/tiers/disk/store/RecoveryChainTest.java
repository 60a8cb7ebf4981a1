package io.tierkv.tiers.disk.store;

import static io.tierkv.tiers.disk.store.DiskTestSupport.LAYOUT;
import static io.tierkv.tiers.disk.store.DiskTestSupport.compressibleBlock;
import static io.tierkv.tiers.disk.store.DiskTestSupport.getAndVerify;
import static io.tierkv.tiers.disk.store.DiskTestSupport.hi;
import static io.tierkv.tiers.disk.store.DiskTestSupport.lo;
import static io.tierkv.tiers.disk.store.DiskTestSupport.put;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.tierkv.core.DType;
import io.tierkv.core.KvLayout;
import io.tierkv.core.prefix.BlockIdentity;
import io.tierkv.natives.libc.Libc;
import io.tierkv.tiers.disk.Compression;
import io.tierkv.tiers.disk.DiskOptions;
import io.tierkv.tiers.disk.DiskStats;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Recovery follows the chain of records (each header names the record before it, the segment's
 * mark names the record that ends at it): on an intact chain it reads record headers only, never
 * the bytes inside a record ({@link DiskStats#recoveryInsideScans()} stays 0, and only one page
 * per record enters the page cache), and each kind of damage that {@link RecoveryIdempotenceTest}
 * does costs inside scans of the records next to it only, at the first recovery and the next.
 */
class RecoveryChainTest {

    /** 8 layers, 8 KV heads, head dim 64, F16, 16 tokens: 256 KiB blocks. */
    private static final KvLayout BIG = KvLayout.of(8, 8, 64, DType.F16, 16);
    private static final int BIG_PER_SEGMENT = 8;
    private static final int BIG_RECORDS = 20;
    /** Records in the damaged segment of the damage cases; the damage is around the middle one. */
    private static final int CHAIN = 12;

    @TempDir
    Path dir;

    private final Arena arena = Arena.ofShared();

    @AfterEach
    void free() {
        arena.close();
    }

    // ------------------------------------------------------------------------------ large records

    private DiskOptions bigOptions() {
        long segment = DiskFormat.alignUp(DiskFormat.SEGMENT_HEADER_BYTES
                + BIG_PER_SEGMENT * DiskFormat.maxRecordBytes(BIG), 4096);
        return DiskOptions.at(dir).withSegmentBytes(segment).withBudgetBytes(256L << 20).withLowSpaceWarnBytes(0)
                .withPersistent(true).withCompression(Compression.NONE);
    }

    private MemorySegment bigIdentity(long k) {
        MemorySegment t = arena.allocate(BlockIdentity.bytes(BIG.blockSizeTokens()), 8);
        BlockIdentity.writeKey(t, 0, k, 1, 0, 0);
        for (int i = 0; i < BIG.blockSizeTokens(); i++) {
            t.setAtIndex(ValueLayout.JAVA_INT, BlockIdentity.KEY_BYTES / 4 + i, (int) (k * 31 + i));
        }
        return t;
    }

    private MemorySegment bigBlock(long k) {
        MemorySegment b = arena.allocate(BIG.bytesPerBlock(), 64);
        DiskTestSupport.fillNormalF16(b, new SplittableRandom(k * 1_000_003L + 17));
        return b;
    }

    private void putBig(DiskTier tier, long from, long to) {
        for (long k = from; k < to; k++) {
            assertTrue(tier.put(hi(k), lo(k), bigIdentity(k), bigBlock(k)), "put " + k);
        }
    }

    private void verifyBig(DiskTier tier, long from, long to) {
        MemorySegment out = arena.allocate(BIG.bytesPerBlock(), 64);
        for (long k = from; k < to; k++) {
            assertTrue(tier.get(hi(k), lo(k), bigIdentity(k), out), "get " + k);
            DiskTestSupport.assertBlockEquals(bigBlock(k), out, "block of key " + k);
        }
    }

    @Test
    void anIntactChainOfLargeRecordsIsRecoveredWithoutReadingInsideAnyRecord() {
        assertEquals(256 << 10, BIG.bytesPerBlock());
        DiskOptions o = bigOptions();
        try (DiskTier tier = DiskTier.open(o, BIG)) {
            putBig(tier, 0, BIG_RECORDS);
            assertEquals(3, tier.stats().segmentCount(), "records span three segments, the last one partly full");
        }
        try (DiskTier tier = DiskTier.open(o, BIG)) {
            DiskStats s = tier.stats();
            assertEquals(BIG_RECORDS, s.recoveredBlocks(), s.toString());
            assertEquals(0, s.recoveryFaults(), s.toString());
            assertEquals(0, s.recoveryInsideScans(), "an intact chain is read from its headers alone: " + s);
            verifyBig(tier, 0, BIG_RECORDS);
            putBig(tier, BIG_RECORDS, BIG_RECORDS + 3); // appended after the recovered chain
            tier.checkInvariants();
        }
        try (DiskTier tier = DiskTier.open(o, BIG)) {
            DiskStats s = tier.stats();
            assertEquals(BIG_RECORDS + 3, s.recoveredBlocks(), s.toString());
            assertEquals(0, s.recoveryInsideScans(), "records appended after a recovery extend its chain: " + s);
            verifyBig(tier, 0, BIG_RECORDS + 3);
        }
    }

    /**
     * The physical side of the cheap path: with the segment files out of the page cache before a
     * restart, recovery brings in one page per record (its header's) and nothing else.
     */
    @Test
    void recoveringAnIntactChainReadsOneHeaderPagePerRecord() throws IOException {
        DiskOptions o = bigOptions();
        try (DiskTier tier = DiskTier.open(o, BIG)) {
            putBig(tier, 0, BIG_RECORDS);
        }
        List<Path> files = segmentFiles(dir);
        long cached = 0;
        for (Path f : files) {
            assertEquals(0, Libc.posixFadvise(f, 0, Files.size(f), Libc.POSIX_FADV_DONTNEED), "fadvise " + f);
            cached += residentPages(f);
        }
        assumeTrue(cached == 0, "this file system keeps " + cached + " pages of closed segment files cached");
        try (DiskTier tier = DiskTier.open(o, BIG)) {
            assertEquals(BIG_RECORDS, tier.stats().recoveredBlocks());
            long resident = 0;
            long pages = 0;
            for (Path f : files) {
                resident += residentPages(f);
                pages += Files.size(f) / Libc.pageSizeBytes();
            }
            assertTrue(resident <= BIG_RECORDS, "recovery brought " + resident + " of " + pages + " pages into the "
                    + "page cache, expected at most one per record (" + BIG_RECORDS + ")");
            System.out.printf("recovery of %d records of %d KiB read %d of %d pages%n", BIG_RECORDS,
                    BIG.bytesPerBlock() >> 10, resident, pages);
        }
    }

    private static long residentPages(Path file) throws IOException {
        try (Arena a = Arena.ofConfined(); FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            long r = Libc.residentPages(ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size(), a));
            assertTrue(r >= 0, "mincore failed: errno " + -r);
            return r;
        }
    }

    // ------------------------------------------------------------------------------ rewrites

    /**
     * Compaction slides live records to the front under a new nonce and rewrites each one's
     * predecessor; records appended afterwards extend that chain.
     */
    @Test
    void compactedSegmentsKeepAnIntactChain() {
        DiskOptions o = DiskTestSupport.options(dir, 8, 64L << 20).withPersistent(true)
                .withCompactBelowLiveRatio(0.6).withCompression(Compression.NONE);
        Set<Long> live = new HashSet<>();
        try (DiskTier tier = DiskTier.open(o, LAYOUT)) {
            for (long k = 0; k < 16; k++) {
                assertTrue(put(tier, arena, k));
                live.add(k);
            }
            for (long k = 1; k < 16; k += 2) {
                assertTrue(tier.remove(hi(k), lo(k)));
                live.remove(k);
            }
            assertEquals(2, tier.maintenance().compact(), "both half-empty segments compacted");
            for (long k = 100; k < 104; k++) { // appended after the moved records
                assertTrue(put(tier, arena, k));
                live.add(k);
            }
            tier.checkInvariants();
        }
        assertRecoveredFromHeadersAlone(o, live, "moved records chain as compaction wrote them");
    }

    /** A segment that eviction emptied is recycled (new nonce, empty): its new records chain from its header. */
    @Test
    void recycledSegmentsKeepAnIntactChain() {
        DiskOptions o = DiskTestSupport.options(dir, 4, 3 * DiskTestSupport.segmentBytes(4) + 4096)
                .withPersistent(true).withCompression(Compression.NONE);
        Set<Long> live = new HashSet<>();
        try (DiskTier tier = DiskTier.open(o, LAYOUT)) {
            tier.maintenance().setEvictionListener((h, l) -> live.remove(l));
            for (long k = 0; k < 30; k++) {
                assertTrue(put(tier, arena, k));
                live.add(k);
            }
            DiskStats s = tier.stats();
            assertTrue(s.evictions() > 0 && s.segmentsCreated() < 30 / 4, "segments were recycled: " + s);
            tier.checkInvariants();
        }
        assertRecoveredFromHeadersAlone(o, live, "records of recycled segments chain as written");
    }

    private void assertRecoveredFromHeadersAlone(DiskOptions o, Set<Long> live, String what) {
        try (DiskTier tier = DiskTier.open(o, LAYOUT)) {
            DiskStats s = tier.stats();
            assertEquals(live.size(), s.recoveredBlocks(), s.toString());
            assertEquals(0, s.recoveryFaults(), s.toString());
            assertEquals(0, s.recoveryInsideScans(), what + ": " + s);
            for (long k : live) {
                assertTrue(getAndVerify(tier, arena, k), "key " + k);
            }
            tier.checkInvariants();
        }
    }

    // ------------------------------------------------------------------------------ damage

    /** The damage kinds of {@link RecoveryIdempotenceTest}, each done around the middle record. */
    enum Damage {
        /** The middle header re-sealed with its raw length as its stored length (LZ4: inflated). */
        INFLATED_LENGTH(true),
        /** The middle header re-sealed with a length that ends exactly at the header two records on. */
        LENGTH_TO_A_LATER_HEADER(true),
        /** The middle header re-sealed with a shorter length: it ends inside its own payload. */
        SHORTENED_LENGTH(true),
        /**
         * The middle header re-sealed with another nonce: stale, its length kept. Below a trusted
         * mark that is what an interrupted compaction leaves: the record is dropped, and counted.
         */
        STALE_HEADER(true),
        /** The middle header re-sealed with another nonce and an inflated length (dropped, counted). */
        STALE_HEADER_INFLATED(true),
        /** One byte of the middle header flipped: its checksum fails. */
        FLIPPED_HEADER(true),
        /** One byte of the middle payload flipped: the chain is intact, the first read fails. */
        FLIPPED_PAYLOAD(false),
        /** Zeroes from the middle header to inside the next record: two headers gone. */
        ZEROED_RANGE(true),
        /** The file cut inside the middle record. */
        CUT(true),
        /** The high-water mark's checksum broken: the whole file is scanned. */
        LOST_MARK(true),
        /** The mark re-sealed to name another record as the one that ends at it. */
        MARK_NAMES_ANOTHER_RECORD(false);

        /** Whether the first recovery counts a fault (a stale header or a payload is no damage to it). */
        final boolean faulted;

        Damage(boolean faulted) {
            this.faulted = faulted;
        }
    }

    @ParameterizedTest
    @EnumSource(Damage.class)
    void eachDamageKindCostsInsideScansOfTheRecordsNextToItOnly(Damage damage) throws IOException {
        DiskOptions o = DiskTestSupport.options(dir, CHAIN, 64L << 20).withPersistent(true)
                .withCompression(Compression.LZ4);
        List<Long> offsets = new ArrayList<>();
        Path file;
        try (DiskTier tier = DiskTier.open(o, LAYOUT)) {
            for (long k = 1; k <= CHAIN; k++) {
                assertTrue(put(tier, arena, k, compressibleBlock(arena, k)), "put " + k);
            }
            List<DiskProbe.RecordLocation> at = new ArrayList<>(DiskProbe.recordLocations(tier));
            at.sort(Comparator.comparingLong(DiskProbe.RecordLocation::offset));
            assertEquals(1, at.stream().map(DiskProbe.RecordLocation::file).distinct().count(), "one segment");
            file = at.get(0).file();
            for (int i = 0; i < CHAIN; i++) {
                assertEquals(i + 1, at.get(i).hashLo(), "keys in offset order");
                offsets.add(at.get(i).offset());
            }
        }
        long mark = offsets.get(CHAIN - 1) + recordBytes(file, offsets.get(CHAIN - 1));
        Set<Long> lost = damage(damage, file, offsets, mark);

        Set<List<Object>> afterFirst = null;
        for (int recovery = 1; recovery <= 2; recovery++) {
            String why = damage + ", recovery " + recovery;
            try (DiskTier tier = DiskTier.open(o, LAYOUT)) {
                DiskStats s = tier.stats();
                long bound = damage == Damage.FLIPPED_PAYLOAD ? 0 : 2;
                assertTrue(s.recoveryInsideScans() <= bound, why + ": " + s.recoveryInsideScans()
                        + " inside scans of " + CHAIN + " records, expected at most " + bound + ": " + s);
                if (recovery == 1) {
                    assertEquals(damage.faulted, s.recoveryFaults() > 0, why + ": faults counted: " + s);
                } else {
                    assertEquals(afterFirst, places(tier), why + ": the index the first recovery left");
                }
                for (long k = 1; k <= CHAIN; k++) {
                    boolean hit = getAndVerify(tier, arena, k, compressibleBlock(arena, k));
                    assertEquals(!lost.contains(k), hit, why + ": key " + k + (lost.contains(k) ? " (damaged)" : ""));
                }
                tier.checkInvariants();
                afterFirst = places(tier); // reads quarantine what fails verification (journaled)
                if (recovery == 1) {
                    System.out.printf("%s: %d inside scans, %d faults, %d of %d records recovered%n", damage,
                            s.recoveryInsideScans(), s.recoveryFaults(), s.recoveredBlocks(), CHAIN);
                }
            }
        }
    }

    /** The tier's records as (key, offset) pairs. */
    private static Set<List<Object>> places(DiskTier tier) {
        Set<List<Object>> out = new HashSet<>();
        for (DiskProbe.RecordLocation l : DiskProbe.recordLocations(tier)) {
            out.add(List.of(l.hashLo(), l.file(), l.offset(), l.usedBytes()));
        }
        return out;
    }

    /** Does the damage to the middle record (key {@code CHAIN / 2}); returns the keys it damaged. */
    private static Set<Long> damage(Damage damage, Path file, List<Long> offsets, long mark) throws IOException {
        int i = CHAIN / 2 - 1;
        long key = i + 1;
        long off = offsets.get(i);
        DiskTestSupport.HeaderFields f = DiskTestSupport.headerFields(file, off);
        assertEquals(DiskFormat.CODEC_LZ4, f.codec(), "the middle record is stored LZ4");
        switch (damage) {
            case INFLATED_LENGTH -> DiskTestSupport.resealRecordHeader(file, off, f.rawLength(), f.rawLength(), null);
            case LENGTH_TO_A_LATER_HEADER -> {
                long stored = storedLengthFor(f.tokenCount(), offsets.get(i + 2) - off);
                assertTrue(stored > f.storedLength() && stored <= f.rawLength(), "a length to two records on: " + stored);
                DiskTestSupport.resealRecordHeader(file, off, f.rawLength(), (int) stored, null);
            }
            case SHORTENED_LENGTH -> {
                long stored = storedLengthFor(f.tokenCount(), recordBytes(file, off) / 2 & -64);
                assertTrue(stored >= 0 && stored < f.storedLength(), "a shorter length: " + stored);
                DiskTestSupport.resealRecordHeader(file, off, f.rawLength(), (int) stored, null);
            }
            case STALE_HEADER -> DiskTestSupport.resealRecordHeader(file, off, f.rawLength(), f.storedLength(), 0x57A1EL);
            case STALE_HEADER_INFLATED -> DiskTestSupport.resealRecordHeader(file, off, f.rawLength(), f.rawLength(),
                    0x57A1EL);
            case FLIPPED_HEADER -> xor(file, off + DiskFormat.REC_HASH_LO + 3, 0x20);
            case FLIPPED_PAYLOAD -> xor(file, off + DiskFormat.payloadOffset(f.tokenCount()) + 5, 0x20);
            case ZEROED_RANGE -> {
                try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
                    ch.write(ByteBuffer.allocate((int) (offsets.get(i + 1) + 128 - off)), off);
                }
                return Set.of(key, key + 1);
            }
            case CUT -> {
                try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
                    ch.truncate(off + DiskFormat.RECORD_HEADER_BYTES + 40);
                }
                Set<Long> gone = new HashSet<>();
                for (long k = key; k <= CHAIN; k++) {
                    gone.add(k);
                }
                return gone;
            }
            case LOST_MARK -> {
                xor(file, DiskFormat.SEG_HWM_CRC, 0x01);
                return Set.of();
            }
            case MARK_NAMES_ANOTHER_RECORD -> {
                try (Arena a = Arena.ofConfined();
                     FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                    MemorySegment map = ch.map(FileChannel.MapMode.READ_WRITE, 0, DiskFormat.SEGMENT_HEADER_BYTES, a);
                    assertEquals(mark, SegmentHeaders.readHighWaterMark(map, new CRC32C()));
                    assertEquals(offsets.get(CHAIN - 1), SegmentHeaders.lastRecordOffset(map));
                    SegmentHeaders.writeHighWaterMark(map, new CRC32C(), mark, offsets.get(CHAIN - 2));
                    map.force();
                }
                return Set.of();
            }
            default -> throw new IllegalArgumentException(damage.toString());
        }
        return Set.of(key);
    }

    /** The largest stored length whose record takes exactly {@code recordBytes}, or -1 if none does. */
    private static long storedLengthFor(int tokenCount, long recordBytes) {
        for (long s = recordBytes; s >= 0 && DiskFormat.recordBytes(tokenCount, s) >= recordBytes; s--) {
            if (DiskFormat.recordBytes(tokenCount, s) == recordBytes) {
                return s;
            }
        }
        return -1;
    }

    private static long recordBytes(Path file, long off) {
        DiskTestSupport.HeaderFields f = DiskTestSupport.headerFields(file, off);
        return DiskFormat.recordBytes(f.tokenCount(), f.storedLength());
    }

    private static void xor(Path file, long position, int xor) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer one = ByteBuffer.allocate(1);
            ch.read(one, position);
            one.put(0, (byte) (one.get(0) ^ xor));
            ch.write(one.rewind(), position);
        }
    }

    private static List<Path> segmentFiles(Path d) {
        List<Path> out = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(d, "seg-*.tkv")) {
            ds.forEach(out::add);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        out.sort(Comparator.naturalOrder());
        return out;
    }
}

package io.tierkv.tiers.disk.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.core.DType;
import io.tierkv.core.KvLayout;
import io.tierkv.core.prefix.BlockIdentity;
import io.tierkv.tiers.disk.Compression;
import io.tierkv.tiers.disk.DiskOptions;
import io.tierkv.tiers.disk.DiskStats;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Damaged bytes in segment files: zero wrong bytes served, every fault counted. Each test flips
 * (XOR with a non-zero byte) or truncates at seeded random places and prints the seed in every
 * failure message.
 */
class DiskCorruptionTest {

    /** 2 KiB blocks: 3000 records make 100 segments of 64 KiB. */
    private static final KvLayout SMALL = KvLayout.of(1, 1, 32, DType.F16, 16);
    private static final int KEYS = 3000;
    private static final int PLACES = 1000;

    @TempDir
    Path dir;

    private final Arena arena = Arena.ofShared();

    @AfterEach
    void free() {
        arena.close();
    }

    private DiskOptions options(boolean persistent) {
        return DiskOptions.at(dir).withSegmentBytes(64 << 10).withBudgetBytes(16 << 20)
                .withCompression(Compression.LZ4).withShuffle(true).withPersistent(persistent).withLowSpaceWarnBytes(0);
    }

    /** Even keys: F16 normal (stored raw); odd keys: runs of a few values (stored LZ4). */
    private MemorySegment block(long k) {
        MemorySegment b = arena.allocate(SMALL.bytesPerBlock(), 64);
        if (k % 2 == 0) {
            DiskTestSupport.fillNormalF16(b, new SplittableRandom(k));
        } else {
            for (long i = 0; i < b.byteSize(); i += 2) {
                b.set(ValueLayout.JAVA_SHORT_UNALIGNED, i, Float.floatToFloat16((float) ((i / 64 + k) % 5)));
            }
        }
        return b;
    }

    private MemorySegment identity(long k) {
        MemorySegment t = arena.allocate(BlockIdentity.bytes(SMALL.blockSizeTokens()), 8);
        BlockIdentity.writeKey(t, 0, k, 7, 0, 0);
        for (int i = 0; i < SMALL.blockSizeTokens(); i++) {
            t.setAtIndex(ValueLayout.JAVA_INT, BlockIdentity.KEY_BYTES / 4 + i, (int) (k * 7 + i));
        }
        return t;
    }

    private void fill(DiskTier tier) {
        for (int k = 0; k < KEYS; k++) {
            assertTrue(tier.put(k, k, identity(k), block(k)));
        }
    }

    /** Reads a key; on a hit every byte must be right. Returns whether it hit. */
    private boolean readExact(DiskTier tier, long k, String why) {
        MemorySegment b = arena.allocate(SMALL.bytesPerBlock(), 64);
        boolean hit = tier.get(k, k, identity(k), b);
        if (hit) {
            assertEquals(-1L, block(k).mismatch(b), why + ": wrong byte served for key " + k);
        } else {
            MemorySegment zeros = arena.allocate(b.byteSize(), 64);
            assertEquals(-1L, zeros.mismatch(b), why + ": a miss left bytes of key " + k + " in the block");
        }
        return hit;
    }

    private static void flip(Path file, long position, int xor) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer one = ByteBuffer.allocate(1);
            ch.read(one, position);
            one.flip();
            byte b = one.get(0);
            one.put(0, (byte) (b ^ xor));
            ch.write(one, position);
        }
    }

    @Test
    void flipsInLiveRecordsAreCountedMissesAndNeverServed() throws IOException {
        long seed = 0xC0_7707L;
        String why = "seed " + seed;
        try (DiskTier tier = DiskTier.open(options(false), SMALL)) {
            fill(tier);
            List<DiskProbe.RecordLocation> records = DiskProbe.recordLocations(tier);
            SplittableRandom r = new SplittableRandom(seed);
            Set<Long> damaged = new HashSet<>();
            Set<String> places = new HashSet<>();
            while (places.size() < PLACES) {
                DiskProbe.RecordLocation rec = records.get(r.nextInt(records.size()));
                long pos = rec.offset() + r.nextLong(rec.usedBytes());
                if (places.add(rec.file() + "@" + pos)) {
                    flip(rec.file(), pos, 1 + r.nextInt(255)); // the mapping sees it: same page cache
                    damaged.add(rec.hashLo());
                }
            }
            Set<Long> reported = new HashSet<>();
            tier.maintenance().setEvictionListener((h, l) -> reported.add(l));
            for (long k = 0; k < KEYS; k++) {
                boolean hit = readExact(tier, k, why);
                assertEquals(!damaged.contains(k), hit, why + ": key " + k);
            }
            DiskStats s = tier.stats();
            assertEquals(damaged.size(), s.corruptMisses(), why + ": every damaged record counted once");
            assertEquals(damaged.size(), s.quarantined(), why + ": and quarantined");
            assertEquals(damaged, reported, why + ": quarantined keys reported to the listener");
            assertEquals(KEYS - damaged.size(), tier.blockCount(), why);
            for (long k : damaged) {
                assertFalse(tier.contains(k, k), why + ": quarantined key " + k);
                assertFalse(readExact(tier, k, why), why);
            }
            assertEquals(damaged.size(), tier.stats().corruptMisses(), why + ": a quarantined key is a plain miss");
            tier.checkInvariants();
            System.out.printf("online: %d places damaged %d of %d records%n", PLACES, damaged.size(), KEYS);
        }
    }

    @Test
    void flipsAnywhereInClosedSegmentFilesAreDroppedOrCountedAtReadNeverServed() throws IOException {
        long seed = 0xF11_9E5L;
        String why = "seed " + seed;
        List<DiskProbe.RecordLocation> records;
        try (DiskTier tier = DiskTier.open(options(true), SMALL)) {
            fill(tier);
            records = DiskProbe.recordLocations(tier);
        }
        TreeMap<String, Long> sizes = new TreeMap<>();
        for (DiskProbe.RecordLocation rec : records) {
            sizes.put(rec.file().toString(), Files.size(rec.file()));
        }
        long total = sizes.values().stream().mapToLong(Long::longValue).sum();
        SplittableRandom r = new SplittableRandom(seed);
        Map<String, List<Long>> flips = new HashMap<>();
        Set<String> places = new HashSet<>();
        while (places.size() < PLACES) {
            long global = r.nextLong(total);
            String file = null;
            long pos = global;
            for (Map.Entry<String, Long> e : sizes.entrySet()) {
                if (pos < e.getValue()) {
                    file = e.getKey();
                    break;
                }
                pos -= e.getValue();
            }
            if (places.add(file + "@" + pos)) {
                flip(Path.of(file), pos, 1 + r.nextInt(255));
                flips.computeIfAbsent(file, f -> new ArrayList<>()).add(pos);
            }
        }
        // what the damage must do
        Set<String> droppedFiles = new HashSet<>();
        for (Map.Entry<String, List<Long>> e : flips.entrySet()) {
            if (e.getValue().stream().anyMatch(p -> p < DiskFormat.SEG_HEADER_CRC + 4)) {
                droppedFiles.add(e.getKey());
            }
        }
        Set<Long> payloadDamaged = new HashSet<>();
        Set<Long> headerDamaged = new HashSet<>();
        int headerRuns = 0;
        String lastFile = null;
        boolean lastHeaderDamaged = false;
        for (DiskProbe.RecordLocation rec : records.stream()
                .sorted((a, b) -> a.file().equals(b.file()) ? Long.compare(a.offset(), b.offset())
                        : a.file().compareTo(b.file())).toList()) {
            String file = rec.file().toString();
            if (!file.equals(lastFile)) {
                lastHeaderDamaged = false;
                lastFile = file;
            }
            if (droppedFiles.contains(file)) {
                continue;
            }
            List<Long> hits = flips.getOrDefault(file, List.of());
            boolean header = hits.stream().anyMatch(p -> p >= rec.offset()
                    && p < rec.offset() + DiskFormat.RECORD_HEADER_BYTES);
            boolean body = hits.stream().anyMatch(p -> p >= rec.offset() + DiskFormat.RECORD_HEADER_BYTES
                    && p < rec.offset() + rec.usedBytes());
            if (header) {
                headerDamaged.add(rec.hashLo());
                if (!lastHeaderDamaged) {
                    headerRuns++;
                }
            } else if (body) {
                payloadDamaged.add(rec.hashLo());
            }
            lastHeaderDamaged = header;
        }
        Map<Long, String> fileOf = new HashMap<>();
        for (DiskProbe.RecordLocation rec : records) {
            fileOf.put(rec.hashLo(), rec.file().toString());
        }
        try (DiskTier tier = DiskTier.open(options(true), SMALL)) {
            DiskStats opened = tier.stats();
            assertEquals(droppedFiles.size(), opened.droppedSegments(), why + ": segments with a damaged header");
            assertTrue(opened.recoveryFaults() >= headerRuns, why + ": each run of damaged record headers counted ("
                    + opened.recoveryFaults() + " < " + headerRuns + ")");
            for (long k = 0; k < KEYS; k++) {
                boolean lost = droppedFiles.contains(fileOf.get(k)) || headerDamaged.contains(k);
                boolean hit = readExact(tier, k, why);
                if (lost || payloadDamaged.contains(k)) {
                    assertFalse(hit, why + ": damaged key " + k + " served");
                } else {
                    assertTrue(hit, why + ": intact key " + k + " lost");
                }
            }
            assertEquals(payloadDamaged.size(), tier.stats().corruptMisses(),
                    why + ": every record with a damaged body counted at its first read");
            tier.checkInvariants();
            System.out.printf("offline: %d places: %d segments dropped, %d header runs (%d faults counted), "
                    + "%d bodies damaged%n", PLACES, droppedFiles.size(), headerRuns, opened.recoveryFaults(),
                    payloadDamaged.size());
        }
        // the quarantined records stay gone after another restart
        try (DiskTier tier = DiskTier.open(options(true), SMALL)) {
            for (long k : payloadDamaged) {
                assertFalse(tier.contains(k, k), why + ": quarantined key " + k + " came back");
            }
        }
    }

    @Test
    void truncatedSegmentFilesKeepTheirIntactPrefix() throws IOException {
        long seed = 0x7_2C47EL;
        String why = "seed " + seed;
        List<DiskProbe.RecordLocation> records;
        try (DiskTier tier = DiskTier.open(options(true), SMALL)) {
            fill(tier);
            records = DiskProbe.recordLocations(tier);
        }
        List<String> files = records.stream().map(rec -> rec.file().toString()).distinct().sorted().toList();
        SplittableRandom r = new SplittableRandom(seed);
        Map<String, Long> cuts = new HashMap<>();
        while (cuts.size() < files.size() / 3) {
            String f = files.get(r.nextInt(files.size()));
            if (!cuts.containsKey(f)) {
                long cut = r.nextLong(Files.size(Path.of(f)));
                cuts.put(f, cut);
                try (FileChannel ch = FileChannel.open(Path.of(f), StandardOpenOption.WRITE)) {
                    ch.truncate(cut);
                }
            }
        }
        try (DiskTier tier = DiskTier.open(options(true), SMALL)) {
            int cutBelowData = 0;
            for (DiskProbe.RecordLocation rec : records) {
                Long cut = cuts.get(rec.file().toString());
                boolean survives = cut == null || (cut >= DiskFormat.SEGMENT_HEADER_BYTES
                        && rec.offset() + rec.usedBytes() <= cut);
                assertEquals(survives, readExact(tier, rec.hashLo(), why), why + ": key " + rec.hashLo() + " in "
                        + rec.file().getFileName() + " cut at " + cut);
            }
            for (Map.Entry<String, Long> e : cuts.entrySet()) {
                long end = records.stream().filter(rec -> rec.file().toString().equals(e.getKey()))
                        .mapToLong(rec -> rec.offset() + rec.usedBytes()).max().orElse(0);
                if (e.getValue() < end) {
                    cutBelowData++;
                }
            }
            DiskStats s = tier.stats();
            assertTrue(s.recoveryFaults() + s.droppedSegments() >= cutBelowData,
                    why + ": every segment cut short counted (" + s + ")");
            assertEquals(0, s.corruptMisses(), why);
            tier.checkInvariants();
        }
    }
}

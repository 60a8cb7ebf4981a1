package io.tierkv.tiers.disk.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.core.DType;
import io.tierkv.core.KvLayout;
import io.tierkv.tiers.disk.Compression;
import io.tierkv.tiers.disk.DiskOptions;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;

/** The disk tier's parts on their own: options, format descriptor, index, codec, admission. */
class DiskPartsTest {

    private static final Path DIR = Path.of("/tmp/tierkv-options-only");

    // ---------------------------------------------------------------- options

    @Test
    void defaultsAreValidAndCopiesValidate() {
        DiskOptions o = DiskOptions.at(DIR);
        assertEquals(DiskOptions.DEFAULT_BUDGET_BYTES, o.budgetBytes());
        assertEquals(DiskOptions.DEFAULT_SEGMENT_BYTES, o.segmentBytes());
        assertEquals(Compression.NONE, o.compression(), "LZ4 gains nothing on F16 KV: opt in");
        assertTrue(o.shuffle());
        assertFalse(o.persistent());
        assertEquals(8L << 30, o.withBudgetBytes(8L << 30).budgetBytes());
        assertTrue(o.withPersistent(true).persistent());
        assertEquals(o, o.withShuffle(o.shuffle()));
    }

    @Test
    void invalidOptionsNameTheFieldTheValueAndTheBound() {
        DiskOptions o = DiskOptions.at(DIR);
        assertMessage("segmentBytes: 1000 (expected a multiple of 4096 in [4096, 1073741824])",
                () -> o.withSegmentBytes(1000));
        assertMessage("segmentBytes: 2147483648 (expected a multiple of 4096 in [4096, 1073741824])",
                () -> o.withSegmentBytes(1L << 31));
        assertMessage("budgetBytes: 4095 (expected >= MIN_SEGMENT_BYTES 4096)", () -> o.withBudgetBytes(4095));
        assertMessage("budgetBytes: -1 (expected >= MIN_SEGMENT_BYTES 4096)", () -> o.withBudgetBytes(-1));
        assertMessage("compactBelowLiveRatio: 1.0 (expected 0 <= compactBelowLiveRatio < 1)",
                () -> o.withCompactBelowLiveRatio(1.0));
        assertMessage("compactBelowLiveRatio: NaN (expected 0 <= compactBelowLiveRatio < 1)",
                () -> o.withCompactBelowLiveRatio(Double.NaN));
        assertMessage("lowSpaceWarnBytes: -5 (expected >= 0)", () -> o.withLowSpaceWarnBytes(-5));
        assertMessage("compression: null (expected NONE or LZ4)", () -> o.withCompression(null));
        assertMessage("directory: null (expected a path)", () -> DiskOptions.at(null));
    }

    @Test
    void settersWorkInAnyOrderAndTheBudgetAgainstTheSegmentIsCheckedWhereTheOptionsAreUsed() {
        DiskOptions budgetFirst = DiskOptions.at(DIR).withBudgetBytes(1 << 20).withSegmentBytes(64 << 10);
        DiskOptions segmentFirst = DiskOptions.at(DIR).withSegmentBytes(64 << 10).withBudgetBytes(1 << 20);
        assertEquals(segmentFirst, budgetFirst);
        assertEquals(1 << 20, budgetFirst.budgetBytes());
        assertEquals(64 << 10, budgetFirst.segmentBytes());
        KvLayout small = KvLayout.of(1, 1, 32, DType.F16, 16);
        DiskOptions tooSmall = DiskOptions.at(DIR).withBudgetBytes(1 << 20); // default 64 MiB segments
        assertEquals(1 << 20, tooSmall.budgetBytes(), "the setter takes a budget below the segment size");
        var e = assertThrows(IllegalArgumentException.class, () -> tooSmall.checkFor(small));
        assertTrue(e.getMessage().startsWith("budgetBytes: 1048576 (expected >= segmentBytes 67108864 + "),
                e.getMessage());
        assertTrue(e.getMessage().contains("lower segmentBytes or raise budgetBytes"), e.getMessage());
        assertEquals(e.getMessage(), assertThrows(IllegalArgumentException.class,
                () -> DiskTier.open(tooSmall, small)).getMessage());
        budgetFirst.checkFor(small);
    }

    @Test
    void openRejectsASegmentTooSmallForTheLayoutAndABudgetWithoutRoomForTheJournal() {
        KvLayout big = KvLayout.of(32, 8, 128, DType.F16, 16); // 2 MiB blocks
        var e = assertThrows(IllegalArgumentException.class,
                () -> DiskTier.open(DiskOptions.at(DIR).withSegmentBytes(1 << 20), big));
        assertTrue(e.getMessage().startsWith("segmentBytes: 1048576 (expected >= 2097408"), e.getMessage());
        KvLayout small = KvLayout.of(1, 1, 32, DType.F16, 16);
        var f = assertThrows(IllegalArgumentException.class, () -> DiskTier.open(DiskOptions.at(DIR)
                .withSegmentBytes(1 << 20).withBudgetBytes(1 << 20).withPersistent(true), small));
        assertTrue(f.getMessage().startsWith("budgetBytes: 1048576 (expected >= "), f.getMessage());
        assertTrue(f.getMessage().contains("journal"), f.getMessage());
    }

    private static void assertMessage(String expected, org.junit.jupiter.api.function.Executable e) {
        assertEquals(expected, assertThrows(IllegalArgumentException.class, e).getMessage());
    }

    // ---------------------------------------------------------------- format

    @Test
    void recordHeadersRoundTripAndEveryDamagedFieldIsCaught() {
        CRC32C crc = new CRC32C();
        long fp = 0x1234_5678_9ABC_DEF0L;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment seg = arena.allocate(4096, 64);
            RecordHeaders.writeRecordHeader(seg, 64, crc, DiskFormat.CODEC_LZ4, 2, fp, 7, 8, 99, 16, 2048, 900, 0xABCD, 0);
            long limit = 64 + DiskFormat.recordBytes(16, 900);
            assertEquals(DiskFormat.VALID, RecordHeaders.checkRecordHeader(seg, 64, limit, crc, fp, 99, 16, 2048));
            assertEquals(7, RecordHeaders.recordHashHi(seg, 64));
            assertEquals(8, RecordHeaders.recordHashLo(seg, 64));
            assertEquals(900, RecordHeaders.recordStoredLength(seg, 64));
            assertEquals(DiskFormat.recordBytes(16, 900), RecordHeaders.recordBytesAt(seg, 64));
            assertEquals(DiskFormat.STALE_NONCE, RecordHeaders.checkRecordHeader(seg, 64, limit, crc, fp, 98, 16, 2048));
            assertEquals(DiskFormat.BAD_FINGERPRINT, RecordHeaders.checkRecordHeader(seg, 64, limit, crc, fp + 1, 99, 16,
                    2048));
            assertEquals(DiskFormat.BAD_LENGTH, RecordHeaders.checkRecordHeader(seg, 64, limit, crc, fp, 99, 15, 2048));
            assertEquals(DiskFormat.TRUNCATED, RecordHeaders.checkRecordHeader(seg, 64, limit - 64, crc, fp, 99, 16,
                    2048));
            for (int b = 0; b < DiskFormat.RECORD_HEADER_BYTES; b++) {
                byte old = seg.get(ValueLayout.JAVA_BYTE, 64 + b);
                seg.set(ValueLayout.JAVA_BYTE, 64 + b, (byte) (old ^ 0x10));
                int status = RecordHeaders.checkRecordHeader(seg, 64, limit, crc, fp, 99, 16, 2048);
                assertTrue(status == DiskFormat.NO_MAGIC || status == DiskFormat.BAD_HEADER_CRC,
                        "byte " + b + ": " + DiskFormat.reason(status));
                seg.set(ValueLayout.JAVA_BYTE, 64 + b, old);
            }
            RecordHeaders.rewriteRecordPlace(seg, 64, crc, 100, 0);
            assertEquals(DiskFormat.VALID, RecordHeaders.checkRecordHeader(seg, 64, limit, crc, fp, 100, 16, 2048));
        }
    }

    @Test
    void aRecordHeaderNamesAPreviousRecordThatCanPrecedeIt() {
        CRC32C crc = new CRC32C();
        long fp = 77;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment seg = arena.allocate(8192, 64);
            long off = 1024;
            long limit = off + DiskFormat.recordBytes(4, 100);
            RecordHeaders.writeRecordHeader(seg, off, crc, DiskFormat.CODEC_RAW, 0, fp, 1, 2, 9, 4, 100, 100, 0, 512);
            assertEquals(DiskFormat.VALID, RecordHeaders.checkRecordHeader(seg, off, limit, crc, fp, 9, 16, 2048));
            assertEquals(512, RecordHeaders.recordPreviousOffset(seg, off));
            for (long bad : new long[] {0, 32, 100, off, off + 64, 1L << 31}) {
                RecordHeaders.rewriteRecordPlace(seg, off, crc, 9, bad);
                assertEquals(DiskFormat.BAD_VERSION, RecordHeaders.checkRecordHeader(seg, off, limit, crc, fp, 9, 16, 2048),
                        "previous record offset " + bad + " at " + off);
                assertEquals(DiskFormat.STALE_NONCE, RecordHeaders.checkRecordHeader(seg, off, limit, crc, fp, 8, 16,
                        2048), "a stale header is not judged on its previous record offset");
            }
            RecordHeaders.rewriteRecordPlace(seg, off, crc, 10, off - 64);
            assertEquals(DiskFormat.VALID, RecordHeaders.checkRecordHeader(seg, off, limit, crc, fp, 10, 16, 2048));
            assertEquals(off - 64, RecordHeaders.recordPreviousOffset(seg, off));

            RecordHeaders.writeRecordHeader(seg, 64, crc, DiskFormat.CODEC_RAW, 0, fp, 1, 2, 9, 4, 100, 100, 0, 64);
            assertEquals(DiskFormat.BAD_VERSION, RecordHeaders.checkRecordHeader(seg, 64, 8192, crc, fp, 9, 16, 2048),
                    "the first record names none");
        }
    }

    @Test
    void segmentHeadersAndHighWaterMarksAreChecksummed() {
        CRC32C crc = new CRC32C();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment seg = arena.allocate(8192, 64);
            SegmentHeaders.writeSegmentHeader(seg, crc, 5, 77, 3, 8192);
            assertEquals(DiskFormat.VALID, SegmentHeaders.checkSegmentHeader(seg, crc, 8192, 5));
            assertEquals(DiskFormat.BAD_FINGERPRINT, SegmentHeaders.checkSegmentHeader(seg, crc, 8192, 6));
            assertEquals(DiskFormat.TRUNCATED, SegmentHeaders.checkSegmentHeader(seg, crc, 10, 5));
            assertEquals(64, SegmentHeaders.readHighWaterMark(seg, crc));
            assertEquals(0, SegmentHeaders.lastRecordOffset(seg), "a fresh segment has no last record");
            SegmentHeaders.writeHighWaterMark(seg, crc, 4160, 2112);
            assertEquals(4160, SegmentHeaders.readHighWaterMark(seg, crc));
            assertEquals(2112, SegmentHeaders.lastRecordOffset(seg));
            seg.set(ValueLayout.JAVA_BYTE, DiskFormat.SEG_LAST_RECORD + 1, (byte) 1);
            assertEquals(-1, SegmentHeaders.readHighWaterMark(seg, crc), "the mark's checksum covers the last record");
            SegmentHeaders.writeHighWaterMark(seg, crc, 4160, 2112);
            seg.set(ValueLayout.JAVA_BYTE, DiskFormat.SEG_HWM + 1, (byte) 1);
            assertEquals(-1, SegmentHeaders.readHighWaterMark(seg, crc), "a damaged mark is not trusted");
            seg.set(ValueLayout.JAVA_BYTE, DiskFormat.SEG_ID, (byte) 4);
            assertEquals(DiskFormat.BAD_HEADER_CRC, SegmentHeaders.checkSegmentHeader(seg, crc, 8192, 5));
        }
    }

    @Test
    void fileNamesAndSizes() {
        assertEquals("seg-0000000042.tkv", DiskFormat.segmentFileName(42));
        assertEquals(42, DiskFormat.segmentIdOf("seg-0000000042.tkv"));
        assertEquals(-1, DiskFormat.segmentIdOf("seg-00000000x2.tkv"));
        assertEquals(-1, DiskFormat.segmentIdOf("notes.txt"));
        assertTrue(DiskFormat.isOwnFileName("deletions.journal.tmp"));
        assertFalse(DiskFormat.isOwnFileName("deletions.journal.bak"));
        assertEquals(128, DiskFormat.recordBytes(0, 0), "header 64 + identity key 32, aligned to 64");
        assertEquals(128, DiskFormat.recordBytes(1, 1));
        assertEquals(192, DiskFormat.recordBytes(8, 1));
        assertEquals(4096, DiskFormat.journalBytes(1));
        assertEquals(64 + 32 * 1024 + 4096 - 64, DiskFormat.journalBytes(1024));
    }

    // ---------------------------------------------------------------- index

    @Test
    void indexAgreesWithAHashMapAndKeepsLruOrderUnderSeededChurn() {
        long seed = 0x1D3L;
        SplittableRandom r = new SplittableRandom(seed);
        RecordIndex index = new RecordIndex(4);
        LinkedHashMap<Long, Integer> model = new LinkedHashMap<>(16, 0.75f, true);
        Map<Long, Integer> slots = new HashMap<>();
        for (int step = 0; step < 50_000; step++) {
            long k = r.nextInt(2000);
            long hi = k * 0x9E3779B97F4A7C15L;
            int op = r.nextInt(4);
            int slot = index.find(hi, k);
            assertEquals(slots.containsKey(k), slot != RecordIndex.NONE, "seed " + seed + " step " + step);
            if (op == 0 && slot == RecordIndex.NONE) {
                int s = index.insert(hi, k, 1, k * 64, 64);
                slots.put(k, s);
                model.put(k, s);
            } else if (op == 1 && slot != RecordIndex.NONE) {
                index.remove(slot);
                slots.remove(k);
                model.remove(k);
            } else if (op == 2 && slot != RecordIndex.NONE) {
                index.touch(slot);
                model.get(k);
                assertEquals(k * 64, index.offset[slot]);
            }
            if (step % 5000 == 0) {
                assertEquals(null, index.check(), "seed " + seed);
            }
        }
        assertEquals(model.size(), index.size());
        int slot = index.leastRecent();
        for (long k : model.keySet()) {
            assertEquals(k, index.hashLo[slot], "LRU order, seed " + seed);
            slot = index.after(slot);
        }
        assertEquals(RecordIndex.NONE, slot);
    }

    // ---------------------------------------------------------------- codec

    @Test
    void shuffleAndUnshuffleAreInversesForEveryWidthAndLength() {
        SplittableRandom r = new SplittableRandom(5);
        try (Arena arena = Arena.ofConfined()) {
            for (int len : new int[] {0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 63, 64, 65, 1000, 4097}) {
                for (int width : new int[] {2, 4}) {
                    MemorySegment src = arena.allocate(Math.max(1, len)).asSlice(0, len);
                    for (int i = 0; i < len; i++) {
                        src.set(ValueLayout.JAVA_BYTE, i, (byte) r.nextInt());
                    }
                    MemorySegment mid = arena.allocate(Math.max(1, len)).asSlice(0, len);
                    MemorySegment back = arena.allocate(Math.max(1, len)).asSlice(0, len);
                    BlockCodec.shuffle(src, mid, len, width);
                    int n = len / width;
                    for (int i = 0; i < n; i++) {
                        for (int j = 0; j < width; j++) {
                            assertEquals(src.get(ValueLayout.JAVA_BYTE, (long) i * width + j),
                                    mid.get(ValueLayout.JAVA_BYTE, (long) j * n + i), "len " + len + " width " + width);
                        }
                    }
                    BlockCodec.unshuffle(mid, back, len, width);
                    assertEquals(-1L, src.mismatch(back), "len " + len + " width " + width);
                }
            }
        }
    }

    @Test
    void codecStoresRawWhenCompressionDoesNotPayAndRoundTripsEitherWay() {
        try (Arena arena = Arena.ofConfined()) {
            int len = 512 << 10;
            BlockCodec codec = new BlockCodec(Compression.LZ4, true, 2, len, arena);
            MemorySegment normal = arena.allocate(len);
            DiskTestSupport.fillNormalF16(normal, new SplittableRandom(1));
            codec.encode(normal);
            assertEquals(DiskFormat.CODEC_RAW, codec.codec, "F16 normal: the probe says raw");
            assertEquals(normal, codec.stored);
            MemorySegment runs = arena.allocate(len);
            for (long i = 0; i < len; i += 2) {
                runs.set(ValueLayout.JAVA_SHORT_UNALIGNED, i, Float.floatToFloat16((i / 512) % 3));
            }
            codec.encode(runs);
            assertEquals(DiskFormat.CODEC_LZ4, codec.codec);
            assertEquals(0, codec.encodedShuffleWidth, "LZ4 alone more than halves runs: not shuffled");
            MemorySegment bf16 = arena.allocate(len);
            DiskPathMeasurement.fillNormalBf16(bf16, new SplittableRandom(2));
            codec.encode(bf16);
            assertEquals(DiskFormat.CODEC_LZ4, codec.codec, "BF16 normal compresses once shuffled");
            assertEquals(2, codec.encodedShuffleWidth);
            MemorySegment packed = arena.allocate(codec.stored.byteSize());
            packed.copyFrom(codec.stored);
            MemorySegment back = arena.allocate(len);
            assertTrue(codec.decode(packed, DiskFormat.CODEC_LZ4, 2, len, back));
            assertEquals(-1L, bf16.mismatch(back));
            codec.encode(runs);
            MemorySegment stored = arena.allocate(codec.stored.byteSize());
            stored.copyFrom(codec.stored);
            MemorySegment out = arena.allocate(len);
            assertTrue(codec.decode(stored, DiskFormat.CODEC_LZ4, 0, len, out));
            assertEquals(-1L, runs.mismatch(out));
            stored.set(ValueLayout.JAVA_BYTE, 0, (byte) 0xFF);
            stored.set(ValueLayout.JAVA_BYTE, stored.byteSize() / 2, (byte) 0xFF);
            assertFalse(codec.decode(stored.asSlice(0, stored.byteSize() / 2), DiskFormat.CODEC_LZ4, 0, len, out),
                    "a malformed stream is refused, not decoded to the wrong length");
        }
    }

    @Test
    void admissionFilterAdmitsOnSecondSightAndForgetsAfterItsCapacity() {
        AdmissionFilter f = new AdmissionFilter(100);
        assertFalse(f.admit(1, 2));
        assertTrue(f.admit(1, 2));
        int admittedFirst = 0;
        for (long k = 10; k < 10 + 200; k++) {
            admittedFirst += f.admit(k, k) ? 1 : 0;
        }
        assertTrue(admittedFirst < 5, "false positives stay rare: " + admittedFirst);
    }
}

package io.tierkv.tiers.disk;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.core.DType;
import io.tierkv.core.KvLayout;
import io.tierkv.core.prefix.BlockIdentity;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;

/** Shared fixtures of the disk tier tests: a small layout, deterministic payloads, file sums. */
final class DiskTestSupport {

    private DiskTestSupport() {}

    /** 2 layers, 2 KV heads, head dim 64, F16, 16 tokens: 16 KiB blocks. */
    static final KvLayout LAYOUT = KvLayout.of(2, 2, 64, DType.F16, 16);
    /** Bytes of one full record of {@link #LAYOUT} stored raw. */
    static final long RECORD = DiskFormat.maxRecordBytes(LAYOUT);

    /** Hash words of test key {@code k}. */
    static long hi(long k) {
        return 0x5EED_0000_0000_0000L ^ (k * 0x9E3779B97F4A7C15L);
    }

    static long lo(long k) {
        return k;
    }

    /**
     * The deterministic identity of key {@code k} ({@link BlockIdentity}): context (k, 1), parent
     * (0, 0), then B token ids.
     */
    static MemorySegment identity(Arena arena, long k) {
        MemorySegment t = arena.allocate(BlockIdentity.bytes(LAYOUT.blockSizeTokens()), 8);
        BlockIdentity.writeKey(t, 0, k, 1, 0, 0);
        for (int i = 0; i < LAYOUT.blockSizeTokens(); i++) {
            t.setAtIndex(ValueLayout.JAVA_INT, BlockIdentity.KEY_BYTES / 4 + i, (int) (k * 31 + i));
        }
        return t;
    }

    /** The deterministic block of key {@code k}: F16 values of a normal distribution. */
    static MemorySegment block(Arena arena, long k) {
        MemorySegment b = arena.allocate(LAYOUT.bytesPerBlock(), 64);
        fillNormalF16(b, new SplittableRandom(k * 1_000_003L + 17));
        return b;
    }

    /** Fills with F16 values drawn from N(0, 1). */
    static void fillNormalF16(MemorySegment b, SplittableRandom r) {
        java.util.Random g = new java.util.Random(r.nextLong());
        for (long i = 0; i + 1 < b.byteSize(); i += 2) {
            b.set(ValueLayout.JAVA_SHORT_UNALIGNED, i, Float.floatToFloat16((float) g.nextGaussian()));
        }
    }

    static void assertBlockEquals(MemorySegment expected, MemorySegment actual, String what) {
        long mismatch = expected.mismatch(actual.asSlice(0, expected.byteSize()));
        assertEquals(-1L, mismatch, what + ": first differing byte");
    }

    /** Puts key {@code k} with its deterministic content. */
    static boolean put(DiskTier tier, Arena arena, long k) {
        return tier.put(hi(k), lo(k), identity(arena, k), block(arena, k));
    }

    /** Gets key {@code k} by its identity and checks the bytes when it hits. */
    static boolean getAndVerify(DiskTier tier, Arena arena, long k) {
        MemorySegment b = arena.allocate(LAYOUT.bytesPerBlock(), 64);
        boolean hit = tier.get(hi(k), lo(k), identity(arena, k), b);
        if (hit) {
            assertBlockEquals(block(arena, k), b, "block of key " + k);
        }
        return hit;
    }

    /** Sum of the sizes of the tier's own files in a directory. */
    static long ownFileBytes(Path dir) {
        long sum = 0;
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
            for (Path p : ds) {
                if (DiskFormat.isOwnFileName(p.getFileName().toString()) && Files.isRegularFile(p)) {
                    sum += Files.size(p);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return sum;
    }

    /** Number of segment files in a directory. */
    static int segmentFiles(Path dir) {
        int n = 0;
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir, "seg-*.tkv")) {
            for (Path ignored : ds) {
                n++;
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return n;
    }

    /** Options for {@link #LAYOUT}: segments of {@code recordsPerSegment} records. */
    static DiskOptions options(Path dir, int recordsPerSegment, long budgetBytes) {
        long seg = DiskFormat.alignUp(DiskFormat.SEGMENT_HEADER_BYTES + recordsPerSegment * RECORD, 4096);
        return DiskOptions.at(dir).withSegmentBytes(seg).withBudgetBytes(budgetBytes).withLowSpaceWarnBytes(0);
    }

    static long segmentBytes(int recordsPerSegment) {
        return DiskFormat.alignUp(DiskFormat.SEGMENT_HEADER_BYTES + recordsPerSegment * RECORD, 4096);
    }

    static void assertTrueWithSeed(boolean condition, long seed, String what) {
        assertTrue(condition, what + " (seed " + seed + ")");
    }
}

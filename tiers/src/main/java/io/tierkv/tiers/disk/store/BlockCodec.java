package io.tierkv.tiers.disk.store;

import io.tierkv.tiers.disk.Compression;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import net.jpountz.lz4.LZ4Compressor;
import net.jpountz.lz4.LZ4Exception;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.lz4.LZ4SafeDecompressor;

/**
 * Turns a block's raw bytes into a record payload and back: optional byte shuffle, LZ4 block
 * compression ({@code at.yawk.lz4:lz4-java}, fastest available instance: JNI when its native
 * library loads, else pure Java), and the raw fallback when compression saves less than 1/32. A
 * block of 256 KiB or more is first probed: if its first 64 KiB do not compress, it is stored raw
 * without compressing the rest (on F16 activations, which LZ4 does not shrink, this keeps a spill
 * close to the raw path's speed); with the shuffle on, the probe first compresses them as they
 * are, and if that halves them the block is compressed without the shuffle (the shuffle pass and
 * its inverse run at about 2 GB/s, several times slower than LZ4 on such data; measured on zero
 * blocks: 5 times the compression's time). The record's shuffle-width byte tells which.
 *
 * <p>Byte shuffle of width w over n = len / w elements: byte j of element i moves to
 * {@code j * n + i}, so the sign/exponent bytes of F16 values sit together and LZ4 finds repeats
 * among them; the {@code len % w} trailing bytes stay at the end unchanged.
 *
 * <p>Not thread-safe: it owns scratch memory (one raw block and one LZ4 bound, from the arena
 * given) and remembers the last {@link #encode(MemorySegment)}; the disk tier uses it under its
 * lock.
 */
final class BlockCodec {

    private static final LZ4Factory LZ4 = LZ4Factory.fastestInstance();

    /** Bytes compressed first, for blocks of at least four times this, to detect incompressible data. */
    static final int PROBE_BYTES = 64 << 10;

    private final boolean compress;
    private final int shuffleWidth;
    private final LZ4Compressor compressor;
    private final LZ4SafeDecompressor decompressor;
    private final MemorySegment shuffleScratch;
    private final MemorySegment compressScratch;

    /** Codec byte of the last encode. */
    int codec;
    /** Shuffle width of the last encode, 0 for none. */
    int encodedShuffleWidth;
    /** The payload of the last encode: the raw block itself or a slice of the scratch memory. */
    MemorySegment stored = MemorySegment.NULL;

    /**
     * Creates a codec with its scratch memory.
     *
     * @param compression  NONE or LZ4
     * @param shuffle      shuffle before LZ4
     * @param elementBytes the layout's dtype size; shuffling applies to 2 and 4
     * @param maxRawBytes  the largest block
     * @param arena        where the scratch memory lives (closed by the owner)
     */
    BlockCodec(Compression compression, boolean shuffle, int elementBytes, int maxRawBytes, Arena arena) {
        this.compress = compression == Compression.LZ4;
        this.shuffleWidth = compress && shuffle && (elementBytes == 2 || elementBytes == 4) ? elementBytes : 0;
        this.compressor = LZ4.fastCompressor();
        this.decompressor = LZ4.safeDecompressor();
        this.shuffleScratch = arena.allocate(Math.max(1, maxRawBytes), 64);
        this.compressScratch = compress ? arena.allocate(Math.max(1, compressor.maxCompressedLength(maxRawBytes)), 64)
                : MemorySegment.NULL;
    }

    /**
     * Names the LZ4 implementation in use, for reports.
     *
     * @return for example {@code LZ4Factory:JNI}
     */
    static String lz4Implementation() {
        return LZ4.toString();
    }

    /**
     * Encodes {@code raw}; the result is in {@link #codec}, {@link #encodedShuffleWidth} and
     * {@link #stored} until the next call.
     *
     * @param raw the block's bytes, at most the maximum given at construction
     */
    void encode(MemorySegment raw) {
        int rawLength = (int) raw.byteSize();
        codec = DiskFormat.CODEC_RAW;
        encodedShuffleWidth = 0;
        stored = raw;
        if (!compress || rawLength < 64) {
            return;
        }
        int width = shuffleWidth;
        if (rawLength >= 4 * PROBE_BYTES) {
            int plain = probe(raw, 0);
            if (width != 0 && plain <= PROBE_BYTES / 2) {
                width = 0; // LZ4 alone halves it: the shuffle would cost more than it could add
            } else if ((width == 0 ? plain : probe(raw, width)) >= PROBE_BYTES - PROBE_BYTES / 32) {
                return; // stored raw
            }
        }
        MemorySegment input = raw;
        if (width != 0) {
            input = shuffleScratch.asSlice(0, rawLength);
            shuffle(raw, input, rawLength, width);
        }
        int limit = rawLength - rawLength / 32;
        int max = (int) compressScratch.byteSize();
        ByteBuffer src = input.asByteBuffer();
        ByteBuffer dst = compressScratch.asByteBuffer();
        int n = compressor.compress(src, 0, rawLength, dst, 0, max);
        if (n < limit) {
            codec = DiskFormat.CODEC_LZ4;
            encodedShuffleWidth = width;
            stored = compressScratch.asSlice(0, n);
        }
    }

    /**
     * Compresses the block's first {@link #PROBE_BYTES} (shuffled as a sub-block of their own when
     * {@code width} is not 0) and returns the compressed length: a large incompressible block then
     * costs a sixteenth or less of a full compression attempt before it is stored raw.
     */
    private int probe(MemorySegment raw, int width) {
        MemorySegment input = raw.asSlice(0, PROBE_BYTES);
        if (width != 0) {
            MemorySegment sub = shuffleScratch.asSlice(0, PROBE_BYTES);
            shuffle(input, sub, PROBE_BYTES, width);
            input = sub;
        }
        return compressor.compress(input.asByteBuffer(), 0, PROBE_BYTES, compressScratch.asByteBuffer(), 0,
                (int) compressScratch.byteSize());
    }

    /**
     * Decodes a verified payload into {@code out}.
     *
     * @param payload      the stored bytes (checksum already verified)
     * @param codec        the record's codec byte
     * @param width        the record's shuffle width
     * @param rawLength    the record's raw length
     * @param out          destination, at least {@code rawLength} bytes
     * @return true when exactly {@code rawLength} bytes were produced; false for a malformed
     *     stream (then {@code out} may hold partial output: callers verify first)
     */
    boolean decode(MemorySegment payload, int codec, int width, int rawLength, MemorySegment out) {
        if (codec == DiskFormat.CODEC_RAW) {
            MemorySegment.copy(payload, 0, out, 0, rawLength);
            return true;
        }
        MemorySegment target = width == 0 ? out : shuffleScratch;
        int n;
        try {
            n = decompressor.decompress(payload.asByteBuffer(), 0, (int) payload.byteSize(),
                    target.asSlice(0, rawLength).asByteBuffer(), 0, rawLength);
        } catch (LZ4Exception e) {
            return false;
        }
        if (n != rawLength) {
            return false;
        }
        if (width != 0) {
            unshuffle(shuffleScratch, out, rawLength, width);
        }
        return true;
    }

    /**
     * Groups byte j of every w-byte element into plane j.
     *
     * @param src   input, at least {@code len} bytes
     * @param dst   output, at least {@code len} bytes, not overlapping {@code src}
     * @param len   bytes
     * @param width element size, 2 or 4
     */
    static void shuffle(MemorySegment src, MemorySegment dst, int len, int width) {
        int n = len / width;
        int i = 0;
        if (width == 2) {
            for (; i + 8 <= n; i += 8) { // 16 bytes in, 8 bytes out to each plane
                long a = src.get(DiskFormat.LONG, 2L * i);
                long b = src.get(DiskFormat.LONG, 2L * i + 8);
                dst.set(DiskFormat.LONG, i, pack(a & LOW_BYTES, b & LOW_BYTES));
                dst.set(DiskFormat.LONG, (long) n + i, pack((a >>> 8) & LOW_BYTES, (b >>> 8) & LOW_BYTES));
            }
        } else if (width == 4) {
            for (; i + 8 <= n; i += 8) { // 32 bytes in, 8 bytes out to each plane
                long a = src.get(DiskFormat.LONG, 4L * i);
                long b = src.get(DiskFormat.LONG, 4L * i + 8);
                long c = src.get(DiskFormat.LONG, 4L * i + 16);
                long d = src.get(DiskFormat.LONG, 4L * i + 24);
                for (int j = 0, shift = 0; j < 4; j++, shift += 8) {
                    dst.set(DiskFormat.LONG, (long) j * n + i, gather(a, shift) | gather(b, shift) << 16
                            | gather(c, shift) << 32 | gather(d, shift) << 48);
                }
            }
        }
        for (; i < n; i++) {
            for (int j = 0; j < width; j++) {
                dst.set(java.lang.foreign.ValueLayout.JAVA_BYTE, (long) j * n + i,
                        src.get(java.lang.foreign.ValueLayout.JAVA_BYTE, (long) i * width + j));
            }
        }
        int tail = len - n * width;
        if (tail > 0) {
            MemorySegment.copy(src, (long) n * width, dst, (long) n * width, tail);
        }
    }

    /**
     * Inverse of {@link #shuffle(MemorySegment, MemorySegment, int, int)}.
     *
     * @param src   shuffled input
     * @param dst   output, not overlapping {@code src}
     * @param len   bytes
     * @param width element size, 2 or 4
     */
    static void unshuffle(MemorySegment src, MemorySegment dst, int len, int width) {
        int n = len / width;
        int i = 0;
        if (width == 2) {
            for (; i + 8 <= n; i += 8) { // 8 bytes from each plane, 16 bytes out
                long lo = src.get(DiskFormat.LONG, i);
                long hi = src.get(DiskFormat.LONG, (long) n + i);
                dst.set(DiskFormat.LONG, 2L * i, spread((int) lo) | (spread((int) hi) << 8));
                dst.set(DiskFormat.LONG, 2L * i + 8, spread((int) (lo >>> 32)) | (spread((int) (hi >>> 32)) << 8));
            }
        } else if (width == 4) {
            for (; i + 8 <= n; i += 8) { // 8 bytes from each plane, 32 bytes out
                long p0 = src.get(DiskFormat.LONG, i);
                long p1 = src.get(DiskFormat.LONG, (long) n + i);
                long p2 = src.get(DiskFormat.LONG, 2L * n + i);
                long p3 = src.get(DiskFormat.LONG, 3L * n + i);
                for (int k = 0, shift = 0; k < 4; k++, shift += 16) {
                    dst.set(DiskFormat.LONG, 4L * i + 8L * k, scatter(p0, shift) | scatter(p1, shift) << 8
                            | scatter(p2, shift) << 16 | scatter(p3, shift) << 24);
                }
            }
        }
        for (; i < n; i++) {
            for (int j = 0; j < width; j++) {
                dst.set(java.lang.foreign.ValueLayout.JAVA_BYTE, (long) i * width + j,
                        src.get(java.lang.foreign.ValueLayout.JAVA_BYTE, (long) j * n + i));
            }
        }
        int tail = len - n * width;
        if (tail > 0) {
            MemorySegment.copy(src, (long) n * width, dst, (long) n * width, tail);
        }
    }

    /**
     * Byte {@code shift / 8} of both 32-bit lanes of {@code x}: the low lane's in bits 0-7, the
     * high lane's in bits 8-15.
     */
    private static long gather(long x, int shift) {
        return ((x >>> shift) & 0xFFL) | ((x >>> (shift + 24)) & 0xFF00L);
    }

    /**
     * Inverse of {@link #gather}: bits {@code shift..shift+7} of {@code plane} to bits 0-7 and
     * bits {@code shift+8..shift+15} to bits 32-39 (byte 0 of each 32-bit lane).
     */
    private static long scatter(long plane, int shift) {
        long w = plane >>> shift;
        return (w & 0xFFL) | ((w & 0xFF00L) << 24);
    }

    /** The low byte of every 16-bit lane. */
    private static final long LOW_BYTES = 0x00FF00FF00FF00FFL;

    /**
     * Packs the low bytes of the four 16-bit lanes of {@code a} and then of {@code b} (both have
     * zeros in every high byte) into one long, {@code a}'s in its low half.
     */
    private static long pack(long a, long b) {
        return (pack(a) & 0xFFFFFFFFL) | ((long) pack(b) << 32);
    }

    /** Packs the low byte of each 16-bit lane (x has zeros in every high byte) into 32 bits. */
    private static int pack(long x) {
        x = (x | (x >>> 8)) & 0x0000FFFF0000FFFFL;
        x = (x | (x >>> 16)) & 0x00000000FFFFFFFFL;
        return (int) x;
    }

    /** Inverse of {@link #pack(long)}: 4 bytes into the low byte of four 16-bit lanes. */
    private static long spread(int v) {
        long x = v & 0xFFFFFFFFL;
        x = (x | (x << 16)) & 0x0000FFFF0000FFFFL;
        x = (x | (x << 8)) & LOW_BYTES;
        return x;
    }
}

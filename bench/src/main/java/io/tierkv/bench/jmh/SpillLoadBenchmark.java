package io.tierkv.bench.jmh;

import io.tierkv.bench.jmh.SpillLoadLimits.ColdFile;
import io.tierkv.bench.jmh.SpillLoadLimits.Lz4;
import io.tierkv.bench.jmh.SpillLoadLimits.PlainFile;
import io.tierkv.bench.jmh.SpillLoadStates.ColdLoad;
import io.tierkv.bench.jmh.SpillLoadStates.ColdSpill;
import io.tierkv.bench.jmh.SpillLoadStates.Tier;
import io.tierkv.natives.libc.Libc;
import io.tierkv.tiers.disk.Compression;
import io.tierkv.tiers.disk.store.DiskTier;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Threads;

/**
 * Spill a sealed block from host memory to the disk tier and load it back, raw and LZ4, against
 * the fastest plain Java ways to write and read the same bytes and against lz4-java alone on the
 * same data, all in the same run.
 *
 * <p><b>Scenario.</b> Layout 8 layers x 8 KV heads x 64 with 4, 16, 64 or 128 tokens per block:
 * 64 KiB, 256 KiB, 1 MiB and 2 MiB blocks. Eight source blocks of the chosen {@code data} are visited in
 * turn: {@code f16normal} (standard normal values as IEEE half floats), {@code bf16normal} (the
 * same as bfloat16, layout dtype BF16 so the shuffle groups 2-byte elements), {@code random}
 * (uniform random bytes), {@code zeros}, and {@code realkv}: real K/V of greedy stories260K
 * decodes ({@link RealKvBlocks}), float32, with the layout 8 x 8 x 32 F32 (the same bytes per
 * block, and the shuffle groups 4-byte elements). The model's own sealed blocks hold 16 tokens
 * ({@code [layer][K|V][token][head][dim]} of 5 layers x 4 heads x 8 dims: 20,480 bytes), smaller
 * than any benchmark block, so benchmark source block {@code i} is bytes
 * {@code [i x blockBytes, (i + 1) x blockBytes)} of the decodes' sealed block images laid back to
 * back in decode order (sequence 0's 32 blocks, then sequence 1's, ...): 3.2, 12.8, 51.2 and 102.4
 * consecutive real blocks per 64 KiB, 256 KiB, 1 MiB and 2 MiB block, the last one cut where the block
 * ends; no image is used twice among the eight sources. The {@code codec} is {@code none}
 * ({@link Compression#NONE}), {@code lz4} (no shuffle) or {@code lz4shuffle} (byte shuffle of the
 * layout's element size: 2 bytes for F16 and BF16, 4 for {@code realkv}'s F32).
 * <ul>
 * <li>{@link #spill}: {@link DiskTier#put} of a new key (a counter), so the tier runs at its steady
 * state: once its 256 MiB budget is full (three 64 MiB segments) every put evicts the least
 * recently used record, and a segment that eviction empties is recycled in place; the CRC32C of
 * the stored bytes is computed on every put.</li>
 * <li>{@link #load}: {@link DiskTier#get} of one of 128 MiB of records written in the setup, in
 * turn: header check, copy or LZ4 decompression into a native block, CRC32C of the stored bytes
 * (a fixed cost of every load).</li>
 * <li>Plain write limits, on a preallocated 128 MiB file written whole in the setup (warm page
 * cache), positions visited in turn: {@link #writeChannel} ({@code FileChannel.write} of a direct
 * buffer at a position) and {@link #writeMapped} ({@code MemorySegment.copy} into a read-write
 * mapping of the file, every page touched in the setup).</li>
 * <li>Plain read limits on the same file: {@link #readChannel} ({@code FileChannel.read} into a
 * direct buffer at a position) and {@link #readMapped} ({@code MemorySegment.copy} out of the
 * mapping).</li>
 * <li>Checksum limit: {@link #crc32c}, {@code java.util.zip.CRC32C} (an intrinsic) over one source
 * block alone, the pass every spill and load pays on top of a plain copy.</li>
 * <li>LZ4 limits: {@link #lz4Compress} and {@link #lz4Decompress}, lz4-java's
 * {@code fastestInstance()} fast compressor, fast decompressor and safe decompressor
 * ({@link #lz4SafeDecompress}, the one the tier uses) alone on direct buffers holding
 * the same eight source blocks (decompression from their eight compressed forms); with
 * {@code shuffled = true} the sources are byte-shuffled first, untimed (the bytes of each
 * element of the layout's dtype grouped, as the tier's codec does), so the peer of
 * {@code lz4shuffle} compresses the same bytes the tier's codec does, without the shuffle
 * pass.</li>
 * <li>Cold page cache ({@code *Cold} methods; root is not needed): before each call, untimed in a
 * {@code Level.Invocation} setup, every page of the tier ({@link io.tierkv.tiers.disk.store.DiskMaintenance#dropCachedPages()}) or
 * of the plain file ({@code msync}, {@code MADV_DONTNEED} on the mapping, then
 * {@code POSIX_FADV_DONTNEED}) is written back and dropped from the page cache, and keys or
 * positions are visited in a seeded random order (random reads, so neither side profits from the
 * other blocks' read-ahead). {@link #loadCold} against {@link #readChannelCold},
 * {@link #readMappedCold} (default advice: the kernel's read-around on each fault) and
 * {@link #readMappedWillneedCold}; {@link #spillCold} (a recycled segment, the steady state)
 * against {@link #writeChannelCold} and {@link #writeMappedCold}. Each cold state prints the
 * bytes read from storage during the measured calls per byte asked ({@code device ...} lines,
 * from {@code read_bytes} of {@code /proc/self/io}: 1 means exactly the block was read, above 1
 * read-ahead, 0 nothing), and the tier states print what {@code fincore} reports resident before
 * and after the first drop ({@code fincore ...} line): the checks that the pages were gone.</li>
 * </ul>
 * The compression ratio (raw / stored) of the chosen data and codec is printed by the setup of
 * {@link #spill} and {@link #load} ({@code ratio ...} lines in the output); the setup of the LZ4
 * limits prints lz4-java's ratio on the sources unshuffled and shuffled in 2- and 4-byte lanes
 * ({@code lanes ...}).
 *
 * <p><b>Cold writes.</b> A spill returns once its bytes are in the page cache (dirty); the device
 * write happens later, in the kernel's writeback, and the tier never waits for it (no
 * {@code fsync}), so a spill followed by {@code fsync} is not measured. What a cold page cache
 * changes for a write is whether the destination pages must be read first: a positional write of
 * whole pages reads nothing, a copy into a mapping faults each page in and reads it from the
 * device. {@link #spillCold} and the cold write limits measure that.
 *
 * <p><b>Worst case.</b> Outside the {@code *Cold} methods everything runs against a warm page
 * cache (the machine has far more memory than the files). The tier's spill also pays eviction (and segment creation until its segments are
 * recycled) that the plain write (a fixed, preallocated file) does not; spill and load both pay a
 * CRC32C pass over every byte that the plain write and read do not ({@link #crc32c} measures it
 * alone). The LZ4 limits compress from memory outside the tier's record format and skip the
 * shuffle pass (and its inverse on load), which the tier pays.
 *
 * <p>Targets (issue 6): spill and load without compression at least 0.7 of the faster plain way
 * (warm page cache); with LZ4 at least 0.8 of lz4-java's compressor and decompressor alone.
 * {@code realkv} fails the setup with a message naming the path when the stories260K model is
 * missing ({@code ../shared/data/models/stories260K} from the working directory, or
 * {@code -jvmArgsAppend -Dtierkv.modelDir=DIR}).
 *
 * <p>Classes by job: this one holds the scenario's constants and every benchmark method (their
 * names and parameters are what BENCHMARKS.md's commands select); {@link SpillLoadStates} the
 * states of the tier's side (source blocks, the open tier, its cold variants);
 * {@link SpillLoadLimits} the states of the limits (the plain file, its cold variant, lz4-java's
 * buffers); {@link PageCacheProbe} what the cold states measure with (storage reads, resident
 * pages, a random order).
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Threads(1)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED", "--add-exports=java.base/jdk.internal.ref=ALL-UNNAMED",
    "-Xms1g", "-Xmx1g"})
public class SpillLoadBenchmark {

    /** Creates the benchmark; its state lives in {@link SpillLoadStates} and {@link SpillLoadLimits}. */
    public SpillLoadBenchmark() {
    }

    /** Distinct source blocks visited in turn. */
    static final int SOURCES = 8;
    /** Bytes of records (or of the plain file) read in turn. */
    static final long READ_SET_BYTES = 128L << 20;
    /** Disk budget of the tier. */
    static final long BUDGET_BYTES = 256L << 20;
    /** Segment size of the tier (the default). */
    static final long SEGMENT_BYTES = 64L << 20;
    /** The {@code data} value of real KV blocks ({@link RealKvBlocks}). */
    static final String REAL_KV = "realkv";

    /**
     * Spills a block under a new key; the tier evicts as needed.
     *
     * @param s the tier
     * @return whether it was stored
     */
    @Benchmark
    public boolean spill(Tier s) {
        return s.tier.put(2, s.nextPut++, s.tokens, s.nextSource());
    }

    /**
     * Loads one block of the read set.
     *
     * @param s the tier
     * @return the block's length
     */
    @Benchmark
    public int load(Tier s) {
        int n = s.tier.load(1, s.nextGetKey(), s.tokens, s.out);
        if (n < 0) {
            throw new IllegalStateException("miss");
        }
        return n;
    }

    /**
     * Limit: positional {@code FileChannel.write} of a direct buffer.
     *
     * @param s the file
     * @return bytes written
     * @throws IOException if writing fails
     */
    @Benchmark
    public long writeChannel(PlainFile s) throws IOException {
        return writeFully(s.channel, s.nextSource().asByteBuffer(), s.nextPosition());
    }

    /**
     * Limit: copy into the read-write mapping.
     *
     * @param s the file
     * @return the position
     */
    @Benchmark
    public long writeMapped(PlainFile s) {
        long pos = s.nextPosition();
        MemorySegment.copy(s.nextSource(), 0, s.map, pos, s.blockBytes);
        return pos;
    }

    /**
     * Limit: positional {@code FileChannel.read} into a direct buffer.
     *
     * @param s the file
     * @return bytes read
     */
    @Benchmark
    public long readChannel(PlainFile s) {
        return readFully(s.channel, s.readBuffer.clear(), s.nextPosition());
    }

    /**
     * Limit: copy out of the mapping.
     *
     * @param s the file
     * @return the position
     */
    @Benchmark
    public long readMapped(PlainFile s) {
        long pos = s.nextPosition();
        MemorySegment.copy(s.map, pos, s.out, 0, s.blockBytes);
        return pos;
    }

    /**
     * Limit: CRC32C of a source block alone.
     *
     * @param s the file (its source blocks)
     * @return the checksum
     */
    @Benchmark
    public long crc32c(PlainFile s) {
        CRC32C c = s.crc;
        c.reset();
        c.update(s.nextSource().asByteBuffer());
        return c.getValue();
    }

    /**
     * Limit: lz4-java's fast compressor alone on a source block.
     *
     * @param s the buffers
     * @return the compressed length
     */
    @Benchmark
    public int lz4Compress(Lz4 s) {
        int i = s.nextIndex();
        return s.compressor.compress(s.in[i], 0, s.blockBytes, s.dst, 0, s.dst.capacity());
    }

    /**
     * Limit: lz4-java's fast decompressor alone on a compressed source block.
     *
     * @param s the buffers
     * @return the compressed length consumed
     */
    @Benchmark
    public int lz4Decompress(Lz4 s) {
        int i = s.nextIndex();
        return s.decompressor.decompress(s.packed[i], 0, s.raw, 0, s.blockBytes);
    }

    /**
     * Limit: lz4-java's safe decompressor alone on a compressed source block (the decompressor the
     * disk tier uses; lz4-java's fast decompressor is slow on some streams here).
     *
     * @param s the buffers
     * @return the decompressed length
     */
    @Benchmark
    public int lz4SafeDecompress(Lz4 s) {
        int i = s.nextIndex();
        ByteBuffer p = s.packed[i];
        return s.safeDecompressor.decompress(p, 0, p.limit(), s.raw, 0, s.blockBytes);
    }

    /**
     * Cold: loads one block of the read set whose pages were dropped from the page cache.
     *
     * @param s the tier
     * @return the block's length
     */
    @Benchmark
    public int loadCold(ColdLoad s) {
        int n = s.tier.load(1, s.key, s.tokens, s.out);
        if (n < 0) {
            throw new IllegalStateException("miss");
        }
        return n;
    }

    /**
     * Cold: spills a block under a new key, every page of the tier dropped from the page cache.
     *
     * @param s the tier
     * @return whether it was stored
     */
    @Benchmark
    public boolean spillCold(ColdSpill s) {
        return s.tier.put(2, s.nextPut++, s.tokens, s.nextSource());
    }

    /**
     * Cold limit: positional {@code FileChannel.read} into a direct buffer of a dropped block.
     *
     * @param s the file
     * @return bytes read
     */
    @Benchmark
    public long readChannelCold(ColdFile s) {
        return readFully(s.channel, s.readBuffer.clear(), s.position);
    }

    /**
     * Cold limit: copy a dropped block out of the mapping (default advice: the kernel's read-around
     * on each fault).
     *
     * @param s the file
     * @return the position
     */
    @Benchmark
    public long readMappedCold(ColdFile s) {
        MemorySegment.copy(s.map, s.position, s.out, 0, s.blockBytes);
        return s.position;
    }

    /**
     * Cold limit: {@code madvise(MADV_WILLNEED)} on a dropped block's range of the mapping, then
     * copy it out.
     *
     * @param s the file
     * @return the position
     */
    @Benchmark
    public long readMappedWillneedCold(ColdFile s) {
        Libc.madvise(s.map.asSlice(s.position, s.blockBytes), Libc.MADV_WILLNEED);
        MemorySegment.copy(s.map, s.position, s.out, 0, s.blockBytes);
        return s.position;
    }

    /**
     * Cold limit: positional {@code FileChannel.write} of a direct buffer over a dropped block.
     *
     * @param s the file
     * @return bytes written
     * @throws IOException if writing fails
     */
    @Benchmark
    public long writeChannelCold(ColdFile s) throws IOException {
        return writeFully(s.channel, s.nextSource().asByteBuffer(), s.position);
    }

    /**
     * Cold limit: copy into the mapping over a dropped block (every page faults and is read first).
     *
     * @param s the file
     * @return the position
     */
    @Benchmark
    public long writeMappedCold(ColdFile s) {
        MemorySegment.copy(s.nextSource(), 0, s.map, s.position, s.blockBytes);
        return s.position;
    }

    /** Positional {@code FileChannel.read} until the buffer is full; the bytes read. */
    private static long readFully(FileChannel channel, ByteBuffer b, long position) {
        long pos = position;
        try {
            while (b.hasRemaining()) {
                int n = channel.read(b, pos);
                if (n < 0) {
                    throw new IllegalStateException("end of file");
                }
                pos += n;
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return pos - position;
    }

    /** Positional {@code FileChannel.write} until the buffer is empty; the bytes written. */
    private static long writeFully(FileChannel channel, ByteBuffer b, long position) throws IOException {
        long pos = position;
        while (b.hasRemaining()) {
            pos += channel.write(b, pos);
        }
        return pos - position;
    }
}

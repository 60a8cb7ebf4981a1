package io.tierkv.bench.jmh;

import io.tierkv.core.DType;
import io.tierkv.core.KvLayout;
import io.tierkv.core.prefix.BlockIdentity;
import io.tierkv.natives.libc.Libc;
import io.tierkv.tiers.disk.Compression;
import io.tierkv.tiers.disk.DiskOptions;
import io.tierkv.tiers.disk.DiskTier;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import java.util.zip.CRC32C;
import net.jpountz.lz4.LZ4Compressor;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.lz4.LZ4FastDecompressor;
import net.jpountz.lz4.LZ4SafeDecompressor;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.infra.BenchmarkParams;

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
 * {@code Level.Invocation} setup, every page of the tier ({@link DiskTier#dropCachedPages()}) or
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
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Threads(1)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED", "--add-exports=java.base/jdk.internal.ref=ALL-UNNAMED",
    "-Xms1g", "-Xmx1g"})
public class SpillLoadBenchmark {

    /** Creates the benchmark; its state lives in the nested state classes. */
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
     * Fills a block with the named data.
     *
     * @param seg  the block
     * @param data {@code f16normal}, {@code bf16normal}, {@code random} or {@code zeros}
     * @param seed random seed
     */
    static void fill(MemorySegment seg, String data, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        long n = seg.byteSize();
        switch (data) {
            case "f16normal" -> {
                for (long i = 0; i < n; i += 2) {
                    seg.set(ValueLayout.JAVA_SHORT_UNALIGNED, i, Float.floatToFloat16((float) gaussian(r)));
                }
            }
            case "bf16normal" -> {
                for (long i = 0; i < n; i += 2) {
                    int bits = Float.floatToRawIntBits((float) gaussian(r));
                    seg.set(ValueLayout.JAVA_SHORT_UNALIGNED, i, (short) ((bits + 0x8000) >>> 16));
                }
            }
            case "random" -> {
                for (long i = 0; i < n; i += 8) {
                    seg.set(ValueLayout.JAVA_LONG_UNALIGNED, i, r.nextLong());
                }
            }
            case "zeros" -> seg.fill((byte) 0);
            default -> throw new IllegalArgumentException("data: " + data);
        }
    }

    private static double gaussian(SplittableRandom r) {
        double u1 = 1.0 - r.nextDouble();
        double u2 = r.nextDouble();
        return Math.sqrt(-2.0 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
    }

    /**
     * Deletes a directory tree (best effort).
     *
     * @param dir the directory, or null
     */
    static void deleteTree(Path dir) {
        if (dir == null) {
            return;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // best effort
        }
    }

    /** Source blocks of one size and kind of data, in native memory. */
    @State(Scope.Thread)
    public static class Sources {

        /** Creates the state; JMH sets the parameters and runs the fixtures. */
        public Sources() {
        }

        /** Tokens per block: 4, 16, 64, 128 = 64 KiB, 256 KiB, 1 MiB, 2 MiB blocks. */
        @Param({"4", "16", "64", "128"})
        public int blockSizeTokens;

        /** Data in the blocks: f16normal, bf16normal, random, zeros, realkv. */
        @Param({"f16normal", "bf16normal", "random", "zeros", "realkv"})
        public String data;

        /** The block layout. */
        KvLayout layout;
        /** Bytes per block. */
        int blockBytes;
        /** The source blocks. */
        MemorySegment[] src;
        /** One block of output. */
        MemorySegment out;
        /** Token ids of a block (contents do not matter to the tier). */
        MemorySegment tokens;
        /** Arena of the native blocks. */
        Arena arena;
        private int next;

        /**
         * Allocates and fills the source blocks; each subclass's setup calls it first.
         *
         * @throws IOException if {@code realkv}'s model cannot be read
         */
        void setUpSources() throws IOException {
            boolean real = REAL_KV.equals(data);
            layout = real ? KvLayout.of(8, 8, 32, DType.F32, blockSizeTokens)
                    : KvLayout.of(8, 8, 64, data.startsWith("bf16") ? DType.BF16 : DType.F16, blockSizeTokens);
            blockBytes = layout.bytesPerBlock();
            arena = Arena.ofShared();
            src = new MemorySegment[SOURCES];
            MemorySegment images = real
                    ? RealKvBlocks.images(RealKvBlocks.modelDir(), (long) SOURCES * blockBytes, arena) : null;
            for (int i = 0; i < SOURCES; i++) {
                src[i] = arena.allocate(blockBytes, 4096);
                if (real) {
                    MemorySegment.copy(images, (long) i * blockBytes, src[i], 0, blockBytes);
                } else {
                    fill(src[i], data, 1234 + i);
                }
            }
            out = arena.allocate(blockBytes, 4096);
            out.fill((byte) 1);
            tokens = arena.allocate(BlockIdentity.bytes(blockSizeTokens), 8); // an identity: zero key, zero token ids
        }

        /**
         * The next source block of the ring.
         *
         * @return the block
         */
        MemorySegment nextSource() {
            MemorySegment s = src[next];
            next = next + 1 == SOURCES ? 0 : next + 1;
            return s;
        }

        /** Frees the native blocks; each subclass's teardown calls it last. */
        void tearDownSources() {
            arena.close();
        }
    }

    /** An open disk tier with 128 MiB of records, and a counter of new keys. */
    @State(Scope.Thread)
    public static class Tier extends Sources {

        /** Creates the state; JMH sets the parameters and runs the fixtures. */
        public Tier() {
        }

        /** Stored form: none, lz4, lz4shuffle. */
        @Param({"none", "lz4", "lz4shuffle"})
        public String codec;

        /** The tier. */
        DiskTier tier;
        /** Keys written in the setup, read in turn. */
        int readKeys;
        /** Next new key for {@link #spill}. */
        long nextPut;
        /** The tier's directory. */
        Path dir;
        private int nextGet;

        /**
         * Opens the tier, writes the read set, loads it once (warm), prints the ratio.
         *
         * @throws IOException if the benchmark files cannot be created, written or removed
         */
        @Setup(Level.Trial)
        public void setUpTier() throws IOException {
            setUpSources();
            dir = Files.createTempDirectory("tierkv-spillbench-").resolve("disk");
            DiskOptions o = DiskOptions.at(dir).withSegmentBytes(SEGMENT_BYTES).withBudgetBytes(BUDGET_BYTES)
                    .withCompression("none".equals(codec) ? Compression.NONE : Compression.LZ4)
                    .withShuffle("lz4shuffle".equals(codec));
            tier = DiskTier.open(o, layout);
            readKeys = (int) (READ_SET_BYTES / blockBytes);
            long stored = 0;
            for (int k = 0; k < readKeys; k++) {
                if (!tier.put(1, k, tokens, src[k % SOURCES])) {
                    throw new IllegalStateException("put " + k + " not stored");
                }
                stored += tier.storedPayloadBytes(1, k);
            }
            for (int k = 0; k < readKeys; k++) {
                if (!tier.get(1, k, tokens, out)) {
                    throw new IllegalStateException("get " + k + " missed");
                }
            }
            if (out.mismatch(src[(readKeys - 1) % SOURCES]) != -1) {
                throw new IllegalStateException("loaded bytes differ");
            }
            nextPut = 1L << 40;
            System.out.printf("%nratio %s %s %d B: raw/stored %.4f%n", data, codec, blockBytes,
                    (double) readKeys * blockBytes / stored);
        }

        /**
         * The next key of the read set.
         *
         * @return its low hash word
         */
        long nextGetKey() {
            int k = nextGet;
            nextGet = k + 1 == readKeys ? 0 : k + 1;
            return k;
        }

        /** Checks invariants and closes the tier, deleting its files. */
        @TearDown(Level.Trial)
        public void tearDownTier() {
            tier.checkInvariants();
            tier.close();
            deleteTree(dir.getParent());
            tearDownSources();
        }
    }

    /** A preallocated 128 MiB file, written whole, open as a channel and mapped read-write. */
    @State(Scope.Thread)
    public static class PlainFile extends Sources {

        /** Creates the state; JMH sets the parameters and runs the fixtures. */
        public PlainFile() {
        }

        /** The channel. */
        FileChannel channel;
        /** The mapping of the whole file. */
        MemorySegment map;
        /** A direct buffer of one block (a view of a source block in turn is used for writes). */
        ByteBuffer readBuffer;
        /** Block positions in the file. */
        int positions;
        /** A checksum object for {@link #crc32c}. */
        final CRC32C crc = new CRC32C();
        /** The file. */
        Path file;
        private Arena mapArena;
        private int nextPos;
        private Path dir;

        /**
         * Creates, fills and maps the file; touches every page of the mapping.
         *
         * @throws IOException if the benchmark files cannot be created, written or removed
         */
        @Setup(Level.Trial)
        public void setUpFile() throws IOException {
            setUpSources();
            dir = Files.createTempDirectory("tierkv-plainbench-");
            file = dir.resolve("plain.bin");
            channel = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                    StandardOpenOption.WRITE);
            positions = (int) (READ_SET_BYTES / blockBytes);
            for (int p = 0; p < positions; p++) {
                ByteBuffer b = src[p % SOURCES].asByteBuffer();
                long pos = (long) p * blockBytes;
                while (b.hasRemaining()) {
                    pos += channel.write(b, pos);
                }
            }
            mapArena = Arena.ofShared();
            map = channel.map(FileChannel.MapMode.READ_WRITE, 0, READ_SET_BYTES, mapArena);
            for (int p = 0; p < positions; p++) {
                MemorySegment.copy(map, (long) p * blockBytes, out, 0, blockBytes);
                MemorySegment.copy(src[p % SOURCES], 0, map, (long) p * blockBytes, blockBytes);
            }
            readBuffer = out.asByteBuffer();
        }

        /**
         * The next block position of the file.
         *
         * @return its byte offset
         */
        long nextPosition() {
            int p = nextPos;
            nextPos = p + 1 == positions ? 0 : p + 1;
            return (long) p * blockBytes;
        }

        /**
         * Unmaps, closes and deletes the file.
         *
         * @throws IOException if the benchmark files cannot be created, written or removed
         */
        @TearDown(Level.Trial)
        public void tearDownFile() throws IOException {
            mapArena.close();
            channel.close();
            deleteTree(dir);
            tearDownSources();
        }
    }

    /**
     * Bytes this process has had read from storage ({@code read_bytes} of {@code /proc/self/io}):
     * page-cache misses, read-ahead included.
     *
     * @return bytes, or -1 where the file is missing
     */
    static long deviceReadBytes() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/io"))) {
                if (line.startsWith("read_bytes:")) {
                    return Long.parseLong(line.substring(11).trim());
                }
            }
        } catch (IOException e) {
            return -1;
        }
        return -1;
    }

    /**
     * Resident page-cache bytes of files as {@code fincore} (util-linux) reports them.
     *
     * @param files the files
     * @return the sum, or -1 if {@code fincore} is not installed or fails
     */
    static long residentBytes(List<Path> files) {
        if (files.isEmpty()) {
            return 0;
        }
        List<String> cmd = new ArrayList<>(List.of("fincore", "--bytes", "--noheadings", "--output", "RES"));
        files.forEach(f -> cmd.add(f.toString()));
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            long sum = 0;
            for (String line : new String(p.getInputStream().readAllBytes()).trim().split("\\s+")) {
                sum += Long.parseLong(line);
            }
            return p.waitFor() == 0 ? sum : -1;
        } catch (IOException | NumberFormatException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    /** A seeded random permutation of {@code [0, n)}, visited in turn (random reads). */
    static final class RandomOrder {
        private final int[] items;
        private int next;

        RandomOrder(int n) {
            items = new int[n];
            SplittableRandom r = new SplittableRandom(42);
            for (int i = 0; i < n; i++) {
                int j = r.nextInt(i + 1);
                items[i] = items[j];
                items[j] = i;
            }
        }

        /**
         * The next item of the permutation, starting over at the end.
         *
         * @return the item
         */
        int next() {
            int i = items[next];
            next = next + 1 == items.length ? 0 : next + 1;
            return i;
        }
    }

    /**
     * Counts the storage bytes read during each measured call against the bytes it asked for, and
     * prints the ratio at the end of the trial ({@code device ...} line).
     */
    static final class DeviceReads {
        private final String what;
        private long before;
        private long deviceBytes;
        private long askedBytes;
        private long calls;

        DeviceReads(String what) {
            this.what = what;
        }

        /** Just before a measured call. */
        void start() {
            before = deviceReadBytes();
        }

        /**
         * Just after a measured call.
         *
         * @param asked bytes the call asked for
         */
        void stop(long asked) {
            deviceBytes += deviceReadBytes() - before;
            askedBytes += asked;
            calls++;
        }

        /** Prints the totals. */
        void report() {
            System.out.printf("%ndevice %s: %d calls, %.1f MiB read from storage for %.1f MiB asked: %.3f per byte"
                    + "%n", what, calls, deviceBytes / 1048576.0, askedBytes / 1048576.0,
                    askedBytes == 0 ? 0.0 : (double) deviceBytes / askedBytes);
        }
    }

    /**
     * {@link Tier} with a cold page cache for {@link #loadCold}: before each load, untimed, every
     * page of the tier is written back, released from its mappings and dropped from the page cache
     * ({@link DiskTier#dropCachedPages()}); keys are read in a seeded random order.
     */
    @State(Scope.Thread)
    public static class ColdLoad extends Tier {

        /** Creates the state; JMH sets the parameters and runs the fixtures. */
        public ColdLoad() {
        }

        /** The key the next load reads. */
        long key;
        private RandomOrder order;
        private DeviceReads reads;

        /** Drops the tier's pages and picks the next key. */
        @Setup(Level.Invocation)
        public void dropNextRecord() {
            if (reads == null) {
                reads = new DeviceReads("tier load " + codec + " " + blockBytes + " B");
                order = new RandomOrder(readKeys);
                checkDropped(this);
            }
            key = order.next();
            if (!tier.contains(1, key)) {
                throw new IllegalStateException("key " + key + " is not on disk");
            }
            tier.dropCachedPages();
            reads.start();
        }

        /** Counts what the load read from storage. */
        @TearDown(Level.Invocation)
        public void countReads() {
            reads.stop(tier.recordBytes(1, key));
        }

        /** Prints the storage bytes per byte asked. */
        @TearDown(Level.Trial)
        public void reportReads() {
            if (reads != null) {
                reads.report();
            }
        }
    }

    /**
     * Prints the tier's resident page-cache bytes ({@code fincore}) before and after
     * {@link DiskTier#dropCachedPages()}: the check that dropping works.
     *
     * @param t the tier state
     */
    static void checkDropped(Tier t) {
        List<Path> files;
        try (Stream<Path> s = Files.list(t.dir)) {
            files = s.filter(p -> p.getFileName().toString().endsWith(".tkv")).sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        long before = residentBytes(files);
        t.tier.dropCachedPages();
        System.out.printf("%nfincore: %d segment files, %d bytes resident before dropCachedPages(), %d after%n",
                files.size(), before, residentBytes(files));
    }

    /**
     * {@link Tier} with a cold page cache for {@link #spillCold}: the setup first spills a whole
     * budget (so every later spill goes to a recycled segment, the steady state); before each
     * spill, untimed, every segment is written back, unmapped and dropped from the page cache
     * ({@link DiskTier#dropCachedPages()}), so the spill writes to pages that are not cached.
     */
    @State(Scope.Thread)
    public static class ColdSpill extends Tier {

        /** Creates the state; JMH sets the parameters and runs the fixtures. */
        public ColdSpill() {
        }

        private DeviceReads reads;

        /** Drops every cached page of the tier. */
        @Setup(Level.Invocation)
        public void dropAll() {
            if (reads == null) {
                reads = new DeviceReads("tier spill " + codec + " " + blockBytes + " B");
                for (long b = 0; b < BUDGET_BYTES; b += blockBytes) {
                    tier.put(2, nextPut++, tokens, nextSource());
                }
                checkDropped(this);
            }
            tier.dropCachedPages();
            reads.start();
        }

        /** Counts what the spill read from storage. */
        @TearDown(Level.Invocation)
        public void countReads() {
            reads.stop(blockBytes);
        }

        /** Prints the storage bytes per byte spilled. */
        @TearDown(Level.Trial)
        public void reportReads() {
            if (reads != null) {
                reads.report();
            }
        }
    }

    /**
     * {@link PlainFile} with a cold page cache for the {@code *Cold} plain reads and writes:
     * before each call, untimed, the whole file is written back ({@code msync}), released from the
     * mapping ({@code MADV_DONTNEED}) and dropped from the page cache
     * ({@code POSIX_FADV_DONTNEED}); blocks are visited in a seeded random order.
     */
    @State(Scope.Thread)
    public static class ColdFile extends PlainFile {

        /** Creates the state; JMH sets the parameters and runs the fixtures. */
        public ColdFile() {
        }

        /** Byte offset of the block the next call reads or writes. */
        long position;
        private RandomOrder order;
        private DeviceReads reads;

        /**
         * Drops the file's pages and picks the next block.
         *
         * @param params names the benchmark, for the report
         */
        @Setup(Level.Invocation)
        public void dropNextBlock(BenchmarkParams params) {
            if (reads == null) {
                String name = params.getBenchmark();
                reads = new DeviceReads(name.substring(name.lastIndexOf('.') + 1) + " " + blockBytes + " B");
                order = new RandomOrder(positions);
            }
            position = (long) order.next() * blockBytes;
            map.force();
            int rc = Libc.madvise(map, Libc.MADV_DONTNEED);
            if (rc == 0) {
                rc = Libc.posixFadvise(file, 0, 0, Libc.POSIX_FADV_DONTNEED);
            }
            if (rc != 0) {
                throw new IllegalStateException("dropping the pages of " + file + ": errno " + rc);
            }
            reads.start();
        }

        /** Counts what the call read from storage. */
        @TearDown(Level.Invocation)
        public void countReads() {
            reads.stop(blockBytes);
        }

        /** Prints the storage bytes per byte asked. */
        @TearDown(Level.Trial)
        public void reportReads() {
            if (reads != null) {
                reads.report();
            }
        }
    }

    /** The same source blocks in direct buffers, and their LZ4 forms. */
    @State(Scope.Thread)
    public static class Lz4 extends Sources {

        /** Creates the state; JMH sets the parameters and runs the fixtures. */
        public Lz4() {
        }

        /** Whether the sources are byte-shuffled first (untimed): the peer of {@code lz4shuffle}. */
        @Param({"false", "true"})
        public boolean shuffled;

        /** lz4-java's fastest fast compressor. */
        LZ4Compressor compressor;
        /** lz4-java's fastest fast decompressor. */
        LZ4FastDecompressor decompressor;
        /** lz4-java's fastest safe decompressor (the one the disk tier uses). */
        LZ4SafeDecompressor safeDecompressor;
        /** Source blocks as direct buffers. */
        ByteBuffer[] in;
        /** Compressed forms of the source blocks. */
        ByteBuffer[] packed;
        /** Output of compression. */
        ByteBuffer dst;
        /** Output of decompression. */
        ByteBuffer raw;
        private int nextBlock;

        /**
         * Compresses every source once; prints the lz4-java ratio of the sources unshuffled and
         * shuffled with 2- and 4-byte lanes.
         *
         * @throws IOException if {@code realkv}'s model cannot be read
         */
        @Setup(Level.Trial)
        public void setUpLz4() throws IOException {
            setUpSources();
            LZ4Factory f = LZ4Factory.fastestInstance();
            compressor = f.fastCompressor();
            decompressor = f.fastDecompressor();
            safeDecompressor = f.safeDecompressor();
            int max = compressor.maxCompressedLength(blockBytes);
            in = new ByteBuffer[SOURCES];
            packed = new ByteBuffer[SOURCES];
            long stored = 0;
            int width = layout.dtype().sizeBytes();
            long[] lanes = new long[5];
            MemorySegment scratch = arena.allocate(blockBytes, 4096);
            ByteBuffer probe = arena.allocate(max, 64).asByteBuffer();
            for (int i = 0; i < SOURCES; i++) {
                for (int w : new int[] {1, 2, 4}) {
                    shuffle(src[i], scratch, w);
                    lanes[w] += compressor.compress(scratch.asByteBuffer(), 0, blockBytes, probe, 0, max);
                }
                if (shuffled) {
                    MemorySegment copy = arena.allocate(blockBytes, 4096);
                    shuffle(src[i], copy, width);
                    src[i] = copy;
                }
                in[i] = src[i].asByteBuffer();
                ByteBuffer p = arena.allocate(max, 64).asByteBuffer();
                int n = compressor.compress(in[i], 0, blockBytes, p, 0, max);
                packed[i] = p.limit(n);
                stored += n;
            }
            dst = arena.allocate(max, 64).asByteBuffer();
            raw = out.asByteBuffer();
            System.out.printf("%nratio %s lz4-java%s %s %d B: raw/compressed %.4f%n", data,
                    shuffled ? " shuffled (" + width + "-byte lanes)" : "", f, blockBytes,
                    (double) SOURCES * blockBytes / stored);
            double raw = (double) SOURCES * blockBytes;
            System.out.printf("lanes %s %d B: raw/compressed unshuffled %.4f, 2-byte lanes %.4f, 4-byte lanes %.4f%n",
                    data, blockBytes, raw / lanes[1], raw / lanes[2], raw / lanes[4]);
        }

        /**
         * Byte shuffle as the disk tier's codec does it: byte j of each {@code width}-byte element
         * goes to plane j; width 1 copies.
         */
        private void shuffle(MemorySegment from, MemorySegment to, int width) {
            long n = blockBytes / width;
            for (long e = 0; e < n; e++) {
                for (int j = 0; j < width; j++) {
                    to.set(ValueLayout.JAVA_BYTE, j * n + e, from.get(ValueLayout.JAVA_BYTE, e * width + j));
                }
            }
        }

        /** Frees the buffers. */
        @TearDown(Level.Trial)
        public void tearDownLz4() {
            tearDownSources();
        }

        /**
         * The next block index of the ring.
         *
         * @return the index
         */
        int nextIndex() {
            int i = nextBlock;
            nextBlock = i + 1 == SOURCES ? 0 : i + 1;
            return i;
        }
    }

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
        ByteBuffer b = s.nextSource().asByteBuffer();
        long pos = s.nextPosition();
        long start = pos;
        while (b.hasRemaining()) {
            pos += s.channel.write(b, pos);
        }
        return pos - start;
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
        ByteBuffer b = s.readBuffer.clear();
        long pos = s.nextPosition();
        long start = pos;
        try {
            while (b.hasRemaining()) {
                int n = s.channel.read(b, pos);
                if (n < 0) {
                    throw new IllegalStateException("end of file");
                }
                pos += n;
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return pos - start;
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
        ByteBuffer b = s.readBuffer.clear();
        long pos = s.position;
        long start = pos;
        try {
            while (b.hasRemaining()) {
                int n = s.channel.read(b, pos);
                if (n < 0) {
                    throw new IllegalStateException("end of file");
                }
                pos += n;
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return pos - start;
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
        ByteBuffer b = s.nextSource().asByteBuffer();
        long pos = s.position;
        long start = pos;
        while (b.hasRemaining()) {
            pos += s.channel.write(b, pos);
        }
        return pos - start;
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
}

package io.tierkv.tiers.disk.store;

import io.tierkv.core.DType;
import io.tierkv.core.KvLayout;
import io.tierkv.core.prefix.BlockIdentity;
import io.tierkv.natives.libc.Libc;
import io.tierkv.tiers.disk.Compression;
import io.tierkv.tiers.disk.DiskOptions;
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
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import net.jpountz.lz4.LZ4Compressor;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.lz4.LZ4SafeDecompressor;

/**
 * A measurement, not a test: which way should the disk tier write (spill) and read (load) blocks,
 * and what do LZ4 and the byte shuffle gain? Run by hand (root for {@code cold}):
 * <pre>
 * java --enable-native-access=ALL-UNNAMED --add-opens=java.base/sun.nio.ch=ALL-UNNAMED \
 *      --add-opens=java.base/java.lang.reflect=ALL-UNNAMED \
 *      --add-exports=java.base/jdk.internal.ref=ALL-UNNAMED -cp ... \
 *      io.tierkv.tiers.disk.store.DiskPathMeasurement DIR [MiB per pass, 128] [warm|cold] [reps, 3]
 * </pre>
 * Scenario, per block size (256 KiB, 1 MiB, 2 MiB): write a pass of distinct F16 normal blocks
 * (rotating through 32 MiB of sources, so the source is not cache-hot), then read them back in a
 * seeded random order into rotating destinations. One untimed repetition warms the JIT up; in
 * each timed repetition, interleaved so that machine noise hits all alike:
 * <ul>
 *   <li>baselines: positional {@code FileChannel} write/read with direct buffers; copies into a
 *       freshly {@code posix_fallocate}d mapping and out of a fresh mapping (plain and with
 *       {@code MADV_WILLNEED});</li>
 *   <li>the tier ({@link Compression#NONE}, persistent, reopened before each read pass so its
 *       mapping is fresh): {@link DiskTier#put} through each {@link RecordWriter.SpillPath},
 *       {@link DiskTier#get} with and without {@code MADV_WILLNEED};</li>
 *   <li>LZ4 (BF16 normal blocks, which the shuffle makes compressible): lz4-java's compressor and
 *       decompressor alone against the tier's LZ4 put and get; and the ratio on random, F16 normal,
 *       BF16 normal and zero blocks, plain and shuffled.</li>
 * </ul>
 * Worst cases: the mapped write into a fresh file (every page faults once) and, in {@code cold}
 * mode, random reads from the device after {@code echo 3 > /proc/sys/vm/drop_caches} (then the
 * bytes read from the device per byte asked, from {@code /proc/self/io}, are printed as
 * {@code dev/asked}; read-ahead shows as a value above 1). Figures are GB/s (10^9 B/s), medians
 * over the repetitions, single-threaded; ratios are tier / best baseline of the same repetition.
 * The machines this was written on are shared 2-core VMs: read the ratios, not the absolutes.
 */
public final class DiskPathMeasurement {

    private DiskPathMeasurement() {}

    private static final int SOURCE_BYTES = 32 << 20;
    /** The identity every measured record is stored and read under: zero key, 16 zero token ids. */
    private static final MemorySegment IDENTITY = MemorySegment.ofArray(new byte[(int) BlockIdentity.bytes(16)]);

    /**
     * Runs the measurement.
     *
     * @param args directory, MiB per pass, {@code warm} or {@code cold}, repetitions
     * @throws Exception on I/O failure
     */
    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args.length > 0 ? args[0] : "/var/tmp/tierkv-measure");
        long total = (args.length > 1 ? Long.parseLong(args[1]) : 128) << 20;
        boolean cold = args.length > 2 && args[2].equals("cold");
        int reps = args.length > 3 ? Integer.parseInt(args[3]) : 3;
        Files.createDirectories(dir);
        System.out.printf(Locale.ROOT, "LZ4 implementation: %s; %d MiB per pass; reads %s; %d repetitions%n",
                BlockCodec.lz4Implementation(), total >> 20, cold ? "cold (page cache dropped)" : "warm", reps);
        for (int blockKiB : new int[] {256, 1024, 2048}) {
            runSize(dir, blockKiB << 10, total, cold, reps);
        }
        ratios();
        cleanup(dir);
    }

    /** Median-of-repetitions table. */
    private static final class Figures {
        final Map<String, List<Double>> values = new LinkedHashMap<>();

        void add(String name, double value) {
            values.computeIfAbsent(name, k -> new ArrayList<>()).add(value);
        }

        double median(String name) {
            List<Double> l = new ArrayList<>(values.get(name));
            Collections.sort(l);
            return l.get(l.size() / 2);
        }

        void print() {
            for (String name : values.keySet()) {
                System.out.printf(Locale.ROOT, "  %-44s %6.2f%n", name, median(name));
            }
        }
    }

    private static void runSize(Path dir, int block, long total, boolean cold, int reps) throws Exception {
        int n = (int) (total / block);
        int sources = Math.max(4, SOURCE_BYTES / block);
        KvLayout layout = KvLayout.of(1, 1, block / (2 * 16 * 2), DType.F16, 16);
        Figures f = new Figures();
        try (Arena arena = Arena.ofShared()) {
            MemorySegment[] src = new MemorySegment[sources];
            MemorySegment[] dst = new MemorySegment[sources];
            MemorySegment[] bf16 = new MemorySegment[sources];
            for (int i = 0; i < sources; i++) {
                src[i] = arena.allocate(block, 4096);
                DiskTestSupport.fillNormalF16(src[i], new SplittableRandom(i));
                dst[i] = arena.allocate(block, 4096);
                dst[i].fill((byte) 1);
                bf16[i] = arena.allocate(block, 4096);
                fillNormalBf16(bf16[i], new SplittableRandom(1000 + i));
            }
            MemorySegment tokens = arena.allocate(BlockIdentity.bytes(16), 8); // an identity: zero key, 16 token ids
            int[] order = shuffledOrder(n, 7);
            long bytes = (long) n * block;
            System.out.printf(Locale.ROOT, "%n== block %d KiB, %d blocks per pass (GB/s, median of %d)%n",
                    block >> 10, n, reps);
            for (int rep = -1; rep < reps; rep++) {
                if (rep == 0) {
                    f.values.clear(); // repetition -1 warmed the JIT up
                }
                cleanup(dir);
                // ---- writes
                Path fcFile = fresh(dir.resolve("baseline-channel.bin"), bytes);
                try (FileChannel ch = FileChannel.open(fcFile, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                    long t0 = System.nanoTime();
                    for (int i = 0; i < n; i++) {
                        writeFully(ch, src[i % sources], (long) i * block);
                    }
                    f.add("write baseline FileChannel", gbps(bytes, System.nanoTime() - t0));
                }
                Path mapFile = fresh(dir.resolve("baseline-mapped.bin"), bytes);
                try (FileChannel ch = FileChannel.open(mapFile, StandardOpenOption.READ, StandardOpenOption.WRITE);
                     Arena maps = Arena.ofShared()) {
                    MemorySegment map = ch.map(FileChannel.MapMode.READ_WRITE, 0, bytes, maps);
                    long t0 = System.nanoTime();
                    for (int i = 0; i < n; i++) {
                        MemorySegment.copy(src[i % sources], 0, map, (long) i * block, block);
                    }
                    f.add("write baseline mapped (fresh file)", gbps(bytes, System.nanoTime() - t0));
                }
                double bestWrite = Math.max(last(f, "write baseline FileChannel"),
                        last(f, "write baseline mapped (fresh file)"));
                for (RecordWriter.SpillPath path : RecordWriter.SpillPath.values()) {
                    double w = tierPut(dir.resolve("tier-" + path), layout, Compression.NONE, path, src, tokens, n);
                    f.add("write tier NONE via " + path, w);
                    f.add("  " + path + " ratio to best baseline write", w / bestWrite);
                }
                // ---- reads
                dropCaches(cold);
                long io0 = readBytes();
                try (FileChannel ch = FileChannel.open(fcFile, StandardOpenOption.READ)) {
                    long t0 = System.nanoTime();
                    for (int q = 0; q < n; q++) {
                        readFully(ch, dst[q % sources], (long) order[q] * block);
                    }
                    f.add("read baseline FileChannel", gbps(bytes, System.nanoTime() - t0));
                }
                f.add("  dev/asked", (double) (readBytes() - io0) / bytes);
                for (int will = 0; will < 2; will++) {
                    dropCaches(cold);
                    io0 = readBytes();
                    try (FileChannel ch = FileChannel.open(mapFile, StandardOpenOption.READ);
                         Arena maps = Arena.ofShared()) {
                        MemorySegment map = ch.map(FileChannel.MapMode.READ_ONLY, 0, bytes, maps);
                        long t0 = System.nanoTime();
                        for (int q = 0; q < n; q++) {
                            MemorySegment rec = map.asSlice((long) order[q] * block, block);
                            if (will == 1) {
                                Libc.madvise(rec, Libc.MADV_WILLNEED);
                            }
                            MemorySegment.copy(rec, 0, dst[q % sources], 0, block);
                        }
                        f.add(will == 1 ? "read baseline mapped + WILLNEED" : "read baseline mapped",
                                gbps(bytes, System.nanoTime() - t0));
                    }
                    f.add(will == 1 ? "  dev/asked " : "  dev/asked  ", (double) (readBytes() - io0) / bytes);
                }
                double bestRead = Math.max(last(f, "read baseline FileChannel"),
                        Math.max(last(f, "read baseline mapped"), last(f, "read baseline mapped + WILLNEED")));
                for (int will = 0; will < 2; will++) {
                    double[] amp = new double[1];
                    double r = tierGet(dir.resolve("tier-" + RecordWriter.SPILL_PATH), layout, Compression.NONE, will == 1,
                            cold, order, dst, amp);
                    String name = "read tier NONE" + (will == 1 ? " + WILLNEED" : "");
                    f.add(name, r);
                    f.add("  dev/asked" + (will == 1 ? "   " : "    "), amp[0]);
                    f.add("  " + (will == 1 ? "WILLNEED " : "") + "ratio to best baseline read", r / bestRead);
                }
                // ---- LZ4 on compressible (BF16 normal) blocks
                double lz4w = tierPut(dir.resolve("tier-lz4"), KvLayout.of(1, 1, block / (2 * 16 * 2), DType.BF16, 16),
                        Compression.LZ4, RecordWriter.SPILL_PATH, bf16, tokens, n);
                f.add("write tier LZ4+shuffle (BF16 normal)", lz4w);
                double lz4r = tierGet(dir.resolve("tier-lz4"), KvLayout.of(1, 1, block / (2 * 16 * 2), DType.BF16, 16),
                        Compression.LZ4, true, cold, order, dst, new double[1]);
                f.add("read tier LZ4+shuffle (BF16 normal)", lz4r);
                double[] alone = lz4Alone(arena, bf16, block, n);
                f.add("lz4-java alone: shuffle+compress", alone[0]);
                f.add("lz4-java alone: decompress+unshuffle", alone[1]);
                f.add("  tier write / lz4 alone", lz4w / alone[0]);
                f.add("  tier read / lz4 alone", lz4r / alone[1]);
            }
        }
        cleanup(dir);
        f.print();
    }

    private static double last(Figures f, String name) {
        List<Double> l = f.values.get(name);
        return l.get(l.size() - 1);
    }

    private static double tierPut(Path dir, KvLayout layout, Compression c, RecordWriter.SpillPath path,
                                  MemorySegment[] src, MemorySegment tokens, int n) {
        RecordWriter.SpillPath saved = RecordWriter.SPILL_PATH;
        RecordWriter.SPILL_PATH = path;
        long block = layout.bytesPerBlock();
        long seg = 64L << 20;
        DiskOptions o = DiskOptions.at(dir).withCompression(c).withShuffle(true).withPersistent(true)
                .withSegmentBytes(seg).withBudgetBytes(n * block + 16 * seg).withLowSpaceWarnBytes(0);
        try (DiskTier tier = DiskTier.open(o, layout)) {
            long t0 = System.nanoTime();
            for (int i = 0; i < n; i++) {
                tier.put(i, i, tokens, src[i % src.length]);
            }
            return gbps(n * block, System.nanoTime() - t0);
        } finally {
            RecordWriter.SPILL_PATH = saved;
        }
    }

    private static double tierGet(Path dir, KvLayout layout, Compression c, boolean willNeed, boolean cold,
                                  int[] order, MemorySegment[] dst, double[] amplification) throws IOException {
        boolean saved = RecordReader.LOAD_WILLNEED;
        RecordReader.LOAD_WILLNEED = willNeed;
        long block = layout.bytesPerBlock();
        long seg = 64L << 20;
        DiskOptions o = DiskOptions.at(dir).withCompression(c).withShuffle(true).withPersistent(true)
                .withSegmentBytes(seg).withBudgetBytes(order.length * block + 16 * seg).withLowSpaceWarnBytes(0);
        try (DiskTier tier = DiskTier.open(o, layout)) {
            dropCaches(cold);
            long io0 = readBytes();
            long t0 = System.nanoTime();
            for (int q = 0; q < order.length; q++) {
                if (!tier.get(order[q], order[q], IDENTITY, dst[q % dst.length])) {
                    throw new IllegalStateException("miss " + order[q]);
                }
            }
            double r = gbps(order.length * block, System.nanoTime() - t0);
            amplification[0] = (double) (readBytes() - io0) / (order.length * block);
            return r;
        } finally {
            RecordReader.LOAD_WILLNEED = saved;
        }
    }

    /** lz4-java alone on the same blocks, with the same shuffle: {compress GB/s, decompress GB/s}. */
    private static double[] lz4Alone(Arena arena, MemorySegment[] src, int block, int n) {
        LZ4Factory f = LZ4Factory.fastestInstance();
        LZ4Compressor comp = f.fastCompressor();
        LZ4SafeDecompressor dec = f.safeDecompressor();
        MemorySegment shuffled = arena.allocate(block, 64);
        MemorySegment out = arena.allocate(comp.maxCompressedLength(block), 64);
        MemorySegment back = arena.allocate(block, 64);
        MemorySegment unshuffled = arena.allocate(block, 64);
        int[] lengths = new int[src.length];
        MemorySegment[] compressed = new MemorySegment[src.length];
        long t0 = System.nanoTime();
        for (int i = 0; i < n; i++) {
            BlockCodec.shuffle(src[i % src.length], shuffled, block, 2);
            int len = comp.compress(shuffled.asByteBuffer(), 0, block, out.asByteBuffer(), 0, (int) out.byteSize());
            if (i < src.length) {
                lengths[i] = len;
                compressed[i] = arena.allocate(len, 64);
                MemorySegment.copy(out, 0, compressed[i], 0, len);
            }
        }
        double c = gbps((long) n * block, System.nanoTime() - t0);
        t0 = System.nanoTime();
        for (int i = 0; i < n; i++) {
            int k = i % src.length;
            dec.decompress(compressed[k].asByteBuffer(), 0, lengths[k], back.asByteBuffer(), 0, block);
            BlockCodec.unshuffle(back, unshuffled, block, 2);
        }
        double d = gbps((long) n * block, System.nanoTime() - t0);
        return new double[] {c, d};
    }

    /** LZ4 ratios (raw / compressed) for the data kinds the issue names, plain and shuffled. */
    private static void ratios() {
        int block = 1 << 20;
        LZ4Compressor comp = LZ4Factory.fastestInstance().fastCompressor();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment data = arena.allocate(block, 64);
            MemorySegment shuffled = arena.allocate(block, 64);
            MemorySegment out = arena.allocate(comp.maxCompressedLength(block), 64);
            System.out.printf(Locale.ROOT, "%n== LZ4 ratio (raw/compressed), 1 MiB blocks%n");
            for (String kind : new String[] {"random", "f16-normal", "bf16-normal", "zeros"}) {
                SplittableRandom r = new SplittableRandom(3);
                switch (kind) {
                    case "random" -> {
                        for (long i = 0; i < block; i += 8) {
                            data.set(ValueLayout.JAVA_LONG_UNALIGNED, i, r.nextLong());
                        }
                    }
                    case "f16-normal" -> DiskTestSupport.fillNormalF16(data, r);
                    case "bf16-normal" -> fillNormalBf16(data, r);
                    default -> data.fill((byte) 0);
                }
                int plain = comp.compress(data.asByteBuffer(), 0, block, out.asByteBuffer(), 0, (int) out.byteSize());
                BlockCodec.shuffle(data, shuffled, block, 2);
                int shuf = comp.compress(shuffled.asByteBuffer(), 0, block, out.asByteBuffer(), 0,
                        (int) out.byteSize());
                System.out.printf(Locale.ROOT, "  %-12s plain %.3f, shuffled %.3f%n", kind, (double) block / plain,
                        (double) block / shuf);
            }
        }
    }

    static void fillNormalBf16(MemorySegment b, SplittableRandom r) {
        java.util.Random g = new java.util.Random(r.nextLong());
        for (long i = 0; i + 1 < b.byteSize(); i += 2) {
            int bits = Float.floatToRawIntBits((float) g.nextGaussian());
            b.set(ValueLayout.JAVA_SHORT_UNALIGNED, i, (short) (bits >>> 16));
        }
    }

    private static void writeFully(FileChannel ch, MemorySegment s, long pos) throws IOException {
        ByteBuffer b = s.asByteBuffer();
        while (b.hasRemaining()) {
            pos += ch.write(b, pos);
        }
    }

    private static void readFully(FileChannel ch, MemorySegment s, long pos) throws IOException {
        ByteBuffer b = s.asByteBuffer();
        while (b.hasRemaining()) {
            int r = ch.read(b, pos);
            if (r < 0) {
                throw new IOException("short file");
            }
            pos += r;
        }
    }

    private static Path fresh(Path file, long bytes) throws IOException {
        Files.deleteIfExists(file);
        Files.createFile(file);
        int rc = Libc.posixFallocate(file, 0, bytes);
        if (rc != 0) {
            throw new IOException("posix_fallocate: " + Libc.errnoName(rc));
        }
        return file;
    }

    private static int[] shuffledOrder(int n, long seed) {
        int[] order = new int[n];
        for (int i = 0; i < n; i++) {
            order[i] = i;
        }
        SplittableRandom r = new SplittableRandom(seed);
        for (int i = n - 1; i > 0; i--) {
            int j = r.nextInt(i + 1);
            int t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        return order;
    }

    private static double gbps(long bytes, long nanos) {
        return (double) bytes / nanos;
    }

    private static void dropCaches(boolean cold) throws IOException {
        if (!cold) {
            return;
        }
        try {
            new ProcessBuilder("sync").inheritIO().start().waitFor();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        Files.writeString(Path.of("/proc/sys/vm/drop_caches"), "3");
    }

    private static long readBytes() throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/self/io"))) {
            if (line.startsWith("read_bytes:")) {
                return Long.parseLong(line.substring(11).trim());
            }
        }
        return 0;
    }

    private static void cleanup(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                if (!p.equals(dir)) {
                    Files.deleteIfExists(p);
                }
            }
        }
    }
}

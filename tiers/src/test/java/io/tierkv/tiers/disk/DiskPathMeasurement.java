package io.tierkv.tiers.disk;

import io.tierkv.core.DType;
import io.tierkv.core.KvLayout;
import io.tierkv.natives.libc.Libc;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Comparator;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import net.jpountz.lz4.LZ4Compressor;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.lz4.LZ4SafeDecompressor;

/**
 * A measurement, not a test: which way should the disk tier write (spill) and read (load) blocks,
 * and what do LZ4 and the byte shuffle gain? Run by hand:
 * <pre>
 * java --enable-native-access=ALL-UNNAMED --add-opens=java.base/sun.nio.ch=ALL-UNNAMED \
 *      --add-opens=java.base/java.lang.reflect=ALL-UNNAMED -cp ... \
 *      io.tierkv.tiers.disk.DiskPathMeasurement DIR [totalMiB] [cold]
 * </pre>
 * For each block size (256 KiB, 1 MiB, 2 MiB) it writes {@code totalMiB} (default 256) of F16
 * normal-distributed blocks and reads them back in a seeded random order:
 * <ul>
 *   <li>baselines: positional {@code FileChannel} write/read with a direct buffer; copies into and
 *       out of a fresh {@code posix_fallocate}d mapping (plain, with {@code MADV_POPULATE_WRITE},
 *       with {@code MADV_WILLNEED});</li>
 *   <li>the tier: {@link DiskTier#put} through each {@link DiskTier.SpillPath}, {@link DiskTier#get}
 *       with and without {@code MADV_WILLNEED}, all with {@link Compression#NONE};</li>
 *   <li>LZ4: lz4-java's compressor and decompressor alone versus the tier with LZ4, and the ratio
 *       on random, F16 normal, zero blocks, each plain and shuffled.</li>
 * </ul>
 * Reads are warm (page cache) unless {@code cold} is given, which drops the page cache before each
 * read pass ({@code echo 3 > /proc/sys/vm/drop_caches}, root only) and reports bytes the process
 * read from the device ({@code /proc/self/io read_bytes}) per byte asked. Figures are best of three
 * passes, in GB/s (10^9 bytes per second); worst case for the mapped write is a fresh file (every
 * page faults once). Single-threaded; the machine is shared, so read the figures as ratios.
 */
public final class DiskPathMeasurement {

    private DiskPathMeasurement() {}

    private static final int MADV_POPULATE_WRITE = 23;

    /**
     * Runs the measurement.
     *
     * @param args directory, optional total MiB per pass, optional {@code cold}
     * @throws Exception on I/O failure
     */
    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args.length > 0 ? args[0] : "/tmp/tierkv-measure");
        long total = (args.length > 1 ? Long.parseLong(args[1]) : 256) << 20;
        boolean cold = args.length > 2 && args[2].equals("cold");
        Files.createDirectories(dir);
        System.out.printf(Locale.ROOT, "LZ4 implementation: %s; %d MiB per pass; reads %s%n",
                BlockCodec.lz4Implementation(), total >> 20, cold ? "cold (page cache dropped)" : "warm");
        for (int blockKiB : new int[] {256, 1024, 2048}) {
            runSize(dir, blockKiB << 10, total, cold);
        }
        ratios();
        cleanup(dir);
    }

    private static void runSize(Path dir, int block, long total, boolean cold) throws Exception {
        int n = (int) (total / block);
        try (Arena arena = Arena.ofShared()) {
            MemorySegment src = arena.allocate(block, 4096);
            DiskTestSupport.fillNormalF16(src, new SplittableRandom(42));
            MemorySegment dst = arena.allocate(block, 4096);
            int[] order = shuffledOrder(n, 7);
            System.out.printf(Locale.ROOT, "%n== block %d KiB, %d blocks%n", block >> 10, n);

            double chW = 0;
            double chR = 0;
            double mapW = 0;
            double mapPopW = 0;
            double mapR = 0;
            double mapWillR = 0;
            double[] amp = new double[3];
            for (int pass = 0; pass < 3; pass++) {
                cleanup(dir);
                Path f = fresh(dir.resolve("baseline.bin"), (long) n * block);
                try (FileChannel ch = FileChannel.open(f, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                    ByteBuffer buf = src.asByteBuffer();
                    long t0 = System.nanoTime();
                    for (int i = 0; i < n; i++) {
                        buf.clear();
                        long pos = (long) i * block;
                        while (buf.hasRemaining()) {
                            pos += ch.write(buf, pos);
                        }
                    }
                    chW = Math.max(chW, gbps((long) n * block, System.nanoTime() - t0));
                    dropCaches(cold);
                    long io0 = readBytes();
                    ByteBuffer in = dst.asByteBuffer();
                    t0 = System.nanoTime();
                    for (int i : order) {
                        in.clear();
                        long pos = (long) i * block;
                        while (in.hasRemaining()) {
                            pos += ch.read(in, pos);
                        }
                    }
                    chR = Math.max(chR, gbps((long) n * block, System.nanoTime() - t0));
                    amp[0] = (double) (readBytes() - io0) / ((long) n * block);
                }
                cleanup(dir);
                Path g = fresh(dir.resolve("mapped.bin"), (long) n * block);
                Path h = fresh(dir.resolve("mapped-populate.bin"), (long) n * block);
                try (FileChannel ch = FileChannel.open(g, StandardOpenOption.READ, StandardOpenOption.WRITE);
                     FileChannel ch2 = FileChannel.open(h, StandardOpenOption.READ, StandardOpenOption.WRITE);
                     Arena maps = Arena.ofShared()) {
                    MemorySegment map = ch.map(FileChannel.MapMode.READ_WRITE, 0, (long) n * block, maps);
                    MemorySegment map2 = ch2.map(FileChannel.MapMode.READ_WRITE, 0, (long) n * block, maps);
                    long t0 = System.nanoTime();
                    for (int i = 0; i < n; i++) {
                        MemorySegment.copy(src, 0, map, (long) i * block, block);
                    }
                    mapW = Math.max(mapW, gbps((long) n * block, System.nanoTime() - t0));
                    t0 = System.nanoTime();
                    for (int i = 0; i < n; i++) {
                        Libc.madvise(map2.asSlice((long) i * block, block), MADV_POPULATE_WRITE);
                        MemorySegment.copy(src, 0, map2, (long) i * block, block);
                    }
                    mapPopW = Math.max(mapPopW, gbps((long) n * block, System.nanoTime() - t0));
                    dropCaches(cold);
                    long io0 = readBytes();
                    t0 = System.nanoTime();
                    for (int i : order) {
                        MemorySegment.copy(map, (long) i * block, dst, 0, block);
                    }
                    mapR = Math.max(mapR, gbps((long) n * block, System.nanoTime() - t0));
                    amp[1] = (double) (readBytes() - io0) / ((long) n * block);
                    dropCaches(cold);
                    io0 = readBytes();
                    t0 = System.nanoTime();
                    for (int i : order) {
                        MemorySegment s = map2.asSlice((long) i * block, block);
                        Libc.madvise(s, Libc.MADV_WILLNEED);
                        MemorySegment.copy(s, 0, dst, 0, block);
                    }
                    mapWillR = Math.max(mapWillR, gbps((long) n * block, System.nanoTime() - t0));
                    amp[2] = (double) (readBytes() - io0) / ((long) n * block);
                }
            }
            cleanup(dir);
            System.out.printf(Locale.ROOT, "baseline write: FileChannel %.2f, mapped %.2f, mapped+POPULATE_WRITE %.2f%n",
                    chW, mapW, mapPopW);
            System.out.printf(Locale.ROOT, "baseline read : FileChannel %.2f (dev/asked %.2f), mapped %.2f (%.2f), "
                    + "mapped+WILLNEED %.2f (%.2f)%n", chR, amp[0], mapR, amp[1], mapWillR, amp[2]);

            KvLayout layout = KvLayout.of(1, 1, block / (2 * 16 * 2), DType.F16, 16);
            MemorySegment tokens = arena.allocate(4L * 16, 4);
            for (Compression c : new Compression[] {Compression.NONE, Compression.LZ4}) {
                for (DiskTier.SpillPath path : DiskTier.SpillPath.values()) {
                    if (c == Compression.LZ4 && path == DiskTier.SpillPath.MAPPED) {
                        continue;
                    }
                    double put = 0;
                    double getWill = 0;
                    double getPlain = 0;
                    double[] tierAmp = new double[2];
                    for (int pass = 0; pass < 3; pass++) {
                        cleanup(dir);
                        DiskTier.SpillPath saved = DiskTier.SPILL_PATH;
                        boolean savedWill = DiskTier.LOAD_WILLNEED;
                        DiskTier.SPILL_PATH = path;
                        long seg = 64L << 20;
                        DiskOptions o = DiskOptions.at(dir.resolve("tier")).withCompression(c).withShuffle(true)
                                .withSegmentBytes(seg).withBudgetBytes(total + 16 * seg).withLowSpaceWarnBytes(0);
                        try (DiskTier tier = DiskTier.open(o, layout)) {
                            long t0 = System.nanoTime();
                            for (int i = 0; i < n; i++) {
                                src.set(ValueLayout.JAVA_INT, 0, i); // distinct blocks
                                tier.put(i, i, tokens, src);
                            }
                            put = Math.max(put, gbps((long) n * block, System.nanoTime() - t0));
                            for (int will = 0; will < 2; will++) {
                                DiskTier.LOAD_WILLNEED = will == 1;
                                dropCaches(cold);
                                long io0 = readBytes();
                                t0 = System.nanoTime();
                                for (int i : order) {
                                    if (!tier.get(i, i, null, dst)) {
                                        throw new IllegalStateException("miss " + i);
                                    }
                                }
                                double g = gbps((long) n * block, System.nanoTime() - t0);
                                tierAmp[will] = (double) (readBytes() - io0) / ((long) n * block);
                                if (will == 1) {
                                    getWill = Math.max(getWill, g);
                                } else {
                                    getPlain = Math.max(getPlain, g);
                                }
                            }
                            if (pass == 0) {
                                System.out.printf(Locale.ROOT, "tier %s: stored ratio %.3f%n", c,
                                        tier.stats().compressionRatio());
                            }
                        } finally {
                            DiskTier.SPILL_PATH = saved;
                            DiskTier.LOAD_WILLNEED = savedWill;
                        }
                    }
                    System.out.printf(Locale.ROOT, "tier %-4s put via %-7s %.2f (%.2f of best baseline write); "
                            + "get plain %.2f (%.2f), get+WILLNEED %.2f (%.2f) -> %.2f of best baseline read%n",
                            c, path, put, put / Math.max(chW, mapW), getPlain, tierAmp[0], getWill, tierAmp[1],
                            Math.max(getPlain, getWill) / Math.max(chR, Math.max(mapR, mapWillR)));
                }
            }
            lz4Alone(arena, src, block, n);
        }
    }

    /** lz4-java alone on the same block (shuffled, as the tier does by default) for the 0.8 ratio. */
    private static void lz4Alone(Arena arena, MemorySegment src, int block, int n) {
        LZ4Factory f = LZ4Factory.fastestInstance();
        LZ4Compressor comp = f.fastCompressor();
        LZ4SafeDecompressor dec = f.safeDecompressor();
        MemorySegment shuffled = arena.allocate(block, 64);
        BlockCodec.shuffle(src, shuffled, block, 2);
        MemorySegment out = arena.allocate(comp.maxCompressedLength(block), 64);
        MemorySegment back = arena.allocate(block, 64);
        double c = 0;
        double d = 0;
        double s = 0;
        int len = 0;
        for (int pass = 0; pass < 3; pass++) {
            long t0 = System.nanoTime();
            for (int i = 0; i < n; i++) {
                len = comp.compress(shuffled.asByteBuffer(), 0, block, out.asByteBuffer(), 0, (int) out.byteSize());
            }
            c = Math.max(c, gbps((long) n * block, System.nanoTime() - t0));
            t0 = System.nanoTime();
            for (int i = 0; i < n; i++) {
                dec.decompress(out.asSlice(0, len).asByteBuffer(), 0, len, back.asByteBuffer(), 0, block);
            }
            d = Math.max(d, gbps((long) n * block, System.nanoTime() - t0));
            t0 = System.nanoTime();
            for (int i = 0; i < n; i++) {
                BlockCodec.shuffle(src, shuffled, block, 2);
            }
            s = Math.max(s, gbps((long) n * block, System.nanoTime() - t0));
        }
        System.out.printf(Locale.ROOT, "lz4-java alone (shuffled F16 normal): compress %.2f, decompress %.2f, "
                + "ratio %.3f; shuffle alone %.2f GB/s%n", c, d, (double) block / len, s);
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
                    case "bf16-normal" -> {
                        java.util.Random g = new java.util.Random(r.nextLong());
                        for (long i = 0; i < block; i += 2) {
                            int bits = Float.floatToRawIntBits((float) g.nextGaussian());
                            data.set(ValueLayout.JAVA_SHORT_UNALIGNED, i, (short) (bits >>> 16));
                        }
                    }
                    default -> data.fill((byte) 0);
                }
                int plain = comp.compress(data.asByteBuffer(), 0, block, out.asByteBuffer(), 0, (int) out.byteSize());
                BlockCodec.shuffle(data, shuffled, block, 2);
                int shuf = comp.compress(shuffled.asByteBuffer(), 0, block, out.asByteBuffer(), 0,
                        (int) out.byteSize());
                System.out.printf(Locale.ROOT, "%-12s plain %.3f, shuffled %.3f%n", kind, (double) block / plain,
                        (double) block / shuf);
            }
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

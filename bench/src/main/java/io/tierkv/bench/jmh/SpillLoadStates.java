package io.tierkv.bench.jmh;

import static io.tierkv.bench.jmh.SpillLoadBenchmark.BUDGET_BYTES;
import static io.tierkv.bench.jmh.SpillLoadBenchmark.READ_SET_BYTES;
import static io.tierkv.bench.jmh.SpillLoadBenchmark.REAL_KV;
import static io.tierkv.bench.jmh.SpillLoadBenchmark.SEGMENT_BYTES;
import static io.tierkv.bench.jmh.SpillLoadBenchmark.SOURCES;

import io.tierkv.bench.jmh.PageCacheProbe.DeviceReads;
import io.tierkv.bench.jmh.PageCacheProbe.RandomOrder;
import io.tierkv.core.DType;
import io.tierkv.core.KvLayout;
import io.tierkv.core.prefix.BlockIdentity;
import io.tierkv.tiers.disk.Compression;
import io.tierkv.tiers.disk.DiskOptions;
import io.tierkv.tiers.disk.store.DiskTier;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The states of {@link SpillLoadBenchmark}'s tier side: {@link Sources}, the source blocks of one
 * size and kind of data (and {@link #fill}, how synthetic data are made); {@link Tier}, an open
 * {@link DiskTier} holding the 128 MiB read set; {@link ColdLoad} and {@link ColdSpill}, the tier
 * with its pages dropped from the page cache before each call. The scenario is described in
 * {@link SpillLoadBenchmark}'s javadoc.
 *
 * <p>Thread-safety: JMH gives each benchmark thread its own states ({@code Scope.Thread}).
 */
public final class SpillLoadStates {

    private SpillLoadStates() {
    }

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
        /** Next new key for {@link SpillLoadBenchmark#spill}. */
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
                stored += tier.maintenance().storedPayloadBytes(1, k);
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
            BenchFiles.deleteTree(dir.getParent());
            tearDownSources();
        }
    }

    /**
     * {@link Tier} with a cold page cache for {@link SpillLoadBenchmark#loadCold}: before each load, untimed, every
     * page of the tier is written back, released from its mappings and dropped from the page cache
     * ({@link io.tierkv.tiers.disk.store.DiskMaintenance#dropCachedPages()}); keys are read in a seeded random order.
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
            tier.maintenance().dropCachedPages();
            reads.start();
        }

        /** Counts what the load read from storage. */
        @TearDown(Level.Invocation)
        public void countReads() {
            reads.stop(tier.maintenance().recordBytes(1, key));
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
     * {@link io.tierkv.tiers.disk.store.DiskMaintenance#dropCachedPages()}: the check that dropping works.
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
        long before = PageCacheProbe.residentBytes(files);
        t.tier.maintenance().dropCachedPages();
        System.out.printf("%nfincore: %d segment files, %d bytes resident before dropCachedPages(), %d after%n",
                files.size(), before, PageCacheProbe.residentBytes(files));
    }

    /**
     * {@link Tier} with a cold page cache for {@link SpillLoadBenchmark#spillCold}: the setup first spills a whole
     * budget (so every later spill goes to a recycled segment, the steady state); before each
     * spill, untimed, every segment is written back, unmapped and dropped from the page cache
     * ({@link io.tierkv.tiers.disk.store.DiskMaintenance#dropCachedPages()}), so the spill writes to pages that are not cached.
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
            tier.maintenance().dropCachedPages();
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
}

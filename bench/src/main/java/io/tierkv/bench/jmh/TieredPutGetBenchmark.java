package io.tierkv.bench.jmh;

import io.tierkv.core.DType;
import io.tierkv.core.KvLayout;
import io.tierkv.core.cache.Sequence;
import io.tierkv.core.cache.SequenceOptions;
import io.tierkv.natives.EmulatedDevice;
import io.tierkv.tiers.KvBlockManager;
import io.tierkv.tiers.disk.DiskOptions;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.caffinitas.ohc.CacheSerializer;
import org.caffinitas.ohc.DirectValueAccess;
import org.caffinitas.ohc.OHCache;
import org.caffinitas.ohc.OHCacheBuilder;
import org.ehcache.Cache;
import org.ehcache.PersistentCacheManager;
import org.ehcache.config.builders.CacheConfigurationBuilder;
import org.ehcache.config.builders.CacheManagerBuilder;
import org.ehcache.config.builders.ResourcePoolsBuilder;
import org.ehcache.config.units.EntryUnit;
import org.ehcache.config.units.MemoryUnit;
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

/**
 * Tiered put and get of 64 KiB values: TierKV's {@link KvBlockManager} (emulated device, pinned
 * host, disk tier) against Ehcache 3 (heap, off-heap and disk tiers at the same budgets) and OHC
 * (off-heap only, for the case where everything fits in memory), in the same run.
 *
 * <p><b>Scenario.</b> A memory budget of 64 MiB: TierKV's device and host tiers get 32 MiB each,
 * Ehcache's heap tier 512 entries (32 MiB of values) and its off-heap tier 32 MiB, both with a
 * 512 MiB disk tier (TierKV's: 64 MiB segments, no compression, the default). {@code workingSet}
 * {@code 4x}: 4,096 keys (256 MiB of values, four times the memory budget), so about three gets
 * in four come from disk (warm page cache); {@code fits}: 256 keys (16 MiB, a quarter of the memory
 * budget, half of TierKV's device tier, so it stays on the device below its watermarks), and the OHC peer, sized at the whole memory budget, joins. Values are random bytes;
 * every get copies the 64 KiB into the same native output block (Ehcache's and OHC's gets would
 * otherwise hand out a heap array or a view).
 * <ul>
 * <li>TierKV: layout 1 layer x 8 KV heads x 128, F16, 16 tokens per block: 64 KiB per block. Key
 * {@code k} is the 16 token ids {@code 16k .. 16k+15}; the value is the block image.
 * {@link #tierkvPut}: open a sequence, {@link Sequence#appendBlock} (one copy; the block seals,
 * is hashed and indexed), close (the block stays cached; when the device is full the allocation
 * demotes a block to the host, and a full host spills one to disk, on this thread).
 * {@link #tierkvGet}: open a sequence, {@code matchPrefix} the key's tokens (found in any tier,
 * by hash, token ids compared), {@link Sequence#readBlock} into the output (from the device, the
 * host, or the disk with its CRC32C checked; no promotion), close. {@code movers}: {@code 1}, one
 * background mover thread does the pressure-mode demotions and forwards disk evictions (the
 * builder's default); {@code 0}, the same work as one {@code runMoverCycle()} after each
 * operation on the benchmark thread. With {@code 4x} the tiers are full for the whole run (the
 * setup fills them; every put is a new key).</li>
 * <li>Ehcache 3.12: {@code Cache<Long, byte[]>}, {@code heap(512 entries).offheap(32 MB)
 * .disk(512 MB, not persistent)}; {@link #ehcachePut} / {@link #ehcacheGet}. Ehcache's disk store
 * evicts a few keys of the 4x working set even below its size (its per-segment space): a get
 * that misses puts the value back (as a read-through would) and is counted and printed.</li>
 * <li>OHC 0.7.4: {@code OHCache<Long, byte[]>} of 64 MiB capacity, one segment per core pair
 * default, LRU; get via {@code getDirect} (no heap copy); {@link #ohcPut} / {@link #ohcGet}
 * ({@code fits} only: OHC has no disk tier).</li>
 * </ul>
 * Gets choose a key uniformly at random from the working set. Puts with {@code 4x} write new keys
 * (a counter past the working set), so every put is an insertion that, once the caches are full,
 * pushes older values down a tier (TierKV, Ehcache) or out (OHC). Puts with {@code fits} write
 * the working set's own keys again, round robin, each with its own value (a KV cache's block for
 * the same tokens holds the same bytes), so everything still fits in memory: each system copies
 * the value in and replaces or drops the old entry (TierKV: a new device block that seals as a
 * duplicate of the indexed one and is freed at close).
 *
 * <p><b>Worst case.</b> Uniform keys: no locality for the memory tiers to exploit (a 4x working set
 * gives about 25% memory hits at best). The page cache holds all disk files (23 GiB RAM), so disk
 * reads are memory copies plus each system's verification and bookkeeping; a cold disk would
 * lower every system's figure. One thread.
 *
 * <p>Targets (issue 7): at least 10 times Ehcache 3 with its disk tier in play, and at least OHC's
 * throughput when everything fits in memory.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Threads(1)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED", "--add-exports=java.base/jdk.internal.ref=ALL-UNNAMED",
    "-Xms1g", "-Xmx1g"})
public class TieredPutGetBenchmark {

    /** Creates the benchmark; its state lives in the nested state classes. */
    public TieredPutGetBenchmark() {
    }

    /** Bytes per value. */
    static final int VALUE_BYTES = 64 << 10;
    /** Memory budget (device + host; heap + off-heap). */
    static final long MEMORY_BYTES = 64L << 20;
    /** Disk budget. */
    static final long DISK_BYTES = 512L << 20;
    /** Tokens per block (key). */
    static final int B = 16;

    /** Common fields: working-set size, values, output. */
    @State(Scope.Thread)
    public static class Base {

        /** Creates the state; JMH sets the parameters and runs the fixtures. */
        public Base() {
        }

        /** 4x: working set four times the memory budget; fits: half the memory budget. */
        @Param({"4x", "fits"})
        public String workingSet;

        /** Keys in the working set. */
        int keys;
        /** Distinct values (random bytes), used in turn. */
        byte[][] values;
        /** The same values in native memory. */
        MemorySegment[] nativeValues;
        /** The output of every get. */
        MemorySegment out;
        /** Arena of native memory. */
        Arena arena;
        /** Next new key for puts. */
        long nextPut;
        private SplittableRandom random;
        private int nextValue;

        /** Creates the values and the output block. */
        @Setup(Level.Trial)
        public void setUpBase() {
            keys = (int) ("4x".equals(workingSet) ? 4 * MEMORY_BYTES / VALUE_BYTES : MEMORY_BYTES / 4 / VALUE_BYTES);
            arena = Arena.ofShared();
            SplittableRandom r = new SplittableRandom(11);
            values = new byte[16][VALUE_BYTES];
            nativeValues = new MemorySegment[values.length];
            for (int i = 0; i < values.length; i++) {
                r.nextBytes(values[i]);
                nativeValues[i] = arena.allocate(VALUE_BYTES, 64).copyFrom(MemorySegment.ofArray(values[i]));
            }
            out = arena.allocate(VALUE_BYTES, 64);
            out.fill((byte) 1);
            random = new SplittableRandom(5);
            nextPut = keys;
        }

        /**
         * A key of the working set, uniformly at random.
         *
         * @return the key
         */
        int randomKey() {
            return random.nextInt(keys);
        }

        /**
         * The key of the next put: a new key past the working set ({@code 4x}), or the working
         * set's keys in turn ({@code fits}).
         *
         * @return the key
         */
        long nextPutKey() {
            long k = nextPut++;
            return "fits".equals(workingSet) ? k % keys : k;
        }

        /**
         * The value index of a put: the key's own value ({@code fits}: the same bytes a get of
         * it checks), else the next of the 16 values in turn.
         *
         * @param key the key being put
         * @return the index into {@link #values} and {@link #nativeValues}
         */
        int valueOf(long key) {
            return "fits".equals(workingSet) ? (int) (key & 15) : nextValue();
        }

        /**
         * The next value index.
         *
         * @return the index
         */
        int nextValue() {
            int i = nextValue;
            nextValue = (i + 1) & 15;
            return i;
        }

        /** Frees native memory. */
        @TearDown(Level.Trial)
        public void tearDownBase() {
            arena.close();
        }
    }

    /** TierKV: a tiered {@link KvBlockManager} with a disk tier. */
    @State(Scope.Thread)
    public static class TierKv extends Base {

        /** Creates the state; JMH sets the parameters and runs the fixtures. */
        public TierKv() {
        }

        /**
         * Where the mover's work runs: {@code 1}, one background mover thread (the builder's
         * default, what a runtime runs); {@code 0}, no mover thread and one
         * {@link KvBlockManager#runMoverCycle()} after each operation on the benchmark thread.
         */
        @Param({"1", "0"})
        public int movers;

        /**
         * TierKV's eviction policy for the device and host tiers (uniform keys give no policy an
         * edge in hits; the figure shows its bookkeeping cost).
         */
        @Param({"lru", "s3fifo"})
        public String policy;

        /** The manager. */
        KvBlockManager kv;
        /** The layout (64 KiB blocks). */
        KvLayout layout;
        /** Token ids of the key being put or got. */
        int[] tokens = new int[B];
        /** The options of every sequence (one tenant), built once as a runtime keeps them. */
        final SequenceOptions options = SequenceOptions.salt("kv");
        private EmulatedDevice device;
        private Path dir;

        /**
         * Builds the manager, puts every key of the working set, then gets every key and checks
         * its bytes (and, for the first 16 keys, the layout order token by token).
         *
         * @throws IOException if the benchmark files cannot be created, written or removed
         */
        @Setup(Level.Trial)
        public void setUpTierKv() throws IOException {
            layout = KvLayout.of(1, 8, 128, DType.F16, B);
            if (layout.bytesPerBlock() != VALUE_BYTES) {
                throw new IllegalStateException("bytesPerBlock " + layout.bytesPerBlock());
            }
            dir = Files.createTempDirectory("tierkv-tieredbench-");
            device = new EmulatedDevice(MEMORY_BYTES);
            kv = KvBlockManager.builder(layout)
                    .device(device, MEMORY_BYTES / 2)
                    .host(MEMORY_BYTES / 2)
                    .disk(DiskOptions.at(dir.resolve("disk")).withSegmentBytes(64L << 20).withBudgetBytes(DISK_BYTES))
                    .movers(movers)
                    .policy(policy)
                    .promoteOnMatch(false) // gets copy blocks out (readBlock); they never lease
                    .build();
            for (int k = 0; k < keys; k++) {
                put(k, nativeValues[k & 15]);
            }
            // A value is stored as the block image, so a get returns it byte for byte; the first
            // 16 keys are also read token by token to check that K and V sit where KvLayout says.
            int stride = layout.tokenVectorBytes();
            MemorySegment k0 = arena.allocate(stride);
            MemorySegment v0 = arena.allocate(stride);
            for (int k = 0; k < keys; k++) {
                get(k);
                if (out.mismatch(nativeValues[k & 15]) != -1) {
                    throw new IllegalStateException("key " + k + ": wrong bytes");
                }
                if (k < 16) {
                    try (Sequence seq = kv.openSequence(options)) {
                        seq.matchPrefix(tokens);
                        for (int t = 0; t < B; t++) {
                            seq.read(0, t, k0, v0);
                            if (k0.mismatch(out.asSlice(layout.offsetOf(0, KvLayout.K, t), stride)) != -1
                                    || v0.mismatch(out.asSlice(layout.offsetOf(0, KvLayout.V, t), stride)) != -1) {
                                throw new IllegalStateException("key " + k + " token " + t + ": not in KvLayout order");
                            }
                        }
                    }
                }
            }
            System.out.printf("%ntierkv after warm-up: %s%n", kv.stats());
        }

        /**
         * Writes a value as the block of a key: one sequence, one {@link Sequence#appendBlock},
         * close (the block seals, is hashed and cached).
         *
         * @param key   the key
         * @param value 64 KiB, the block image
         */
        void put(long key, MemorySegment value) {
            int[] t = tokensOf(key);
            try (Sequence seq = kv.openSequence(options)) {
                seq.appendBlock(t, 0, value);
            }
            if (movers == 0) {
                kv.runMoverCycle();
            }
        }

        /**
         * Reads the block of a key into {@link #out} from whichever tier holds it
         * ({@link Sequence#readBlock}: no promotion).
         *
         * @param key the key
         */
        void get(long key) {
            int[] t = tokensOf(key);
            try (Sequence seq = kv.openSequence(options)) {
                if (seq.matchPrefix(t) != B) {
                    throw new IllegalStateException("key " + key + " not found");
                }
                seq.readBlock(0, out);
            }
            if (movers == 0) {
                kv.runMoverCycle();
            }
        }

        private int[] tokensOf(long key) {
            int[] t = tokens;
            for (int i = 0; i < B; i++) {
                t[i] = (int) (key * B + i);
            }
            return t;
        }

        /** Checks invariants, closes the manager, deletes the directory. */
        @TearDown(Level.Trial)
        public void tearDownTierKv() {
            System.out.printf("%ntierkv at the end: %s%n", kv.stats());
            var bad = kv.checkInvariants();
            kv.close();
            device.close();
            SpillLoadBenchmark.deleteTree(dir);
            if (!bad.isEmpty()) {
                throw new IllegalStateException("invariants: " + bad);
            }
        }
    }

    /** Ehcache 3 with heap, off-heap and disk tiers. */
    @State(Scope.Thread)
    public static class Ehcache extends Base {

        /** Creates the state; JMH sets the parameters and runs the fixtures. */
        public Ehcache() {
        }

        /** The cache manager. */
        PersistentCacheManager manager;
        /** The cache. */
        Cache<Long, byte[]> cache;
        /** Gets that missed (Ehcache evicted the key) and put the value back. */
        long misses;
        private Path dir;

        /**
         * Builds the cache, puts every key, gets each once (warm).
         *
         * @throws IOException if the benchmark files cannot be created, written or removed
         */
        @Setup(Level.Trial)
        public void setUpEhcache() throws IOException {
            dir = Files.createTempDirectory("tierkv-ehcachebench-");
            manager = CacheManagerBuilder.newCacheManagerBuilder()
                    .with(CacheManagerBuilder.persistence(dir.toFile()))
                    .withCache("kv", CacheConfigurationBuilder.newCacheConfigurationBuilder(Long.class, byte[].class,
                            ResourcePoolsBuilder.newResourcePoolsBuilder()
                                    .heap(MEMORY_BYTES / 2 / VALUE_BYTES, EntryUnit.ENTRIES)
                                    .offheap(MEMORY_BYTES / 2 >> 20, MemoryUnit.MB)
                                    .disk(DISK_BYTES >> 20, MemoryUnit.MB, false)))
                    .build(true);
            cache = manager.getCache("kv", Long.class, byte[].class);
            for (int k = 0; k < keys; k++) {
                cache.put((long) k, values[k & 15]);
            }
            int missing = 0;
            for (int k = 0; k < keys; k++) {
                byte[] v = cache.get((long) k);
                if (v == null) {
                    missing++;
                    cache.put((long) k, values[k & 15]);
                } else if (!java.util.Arrays.equals(v, values[k & 15])) {
                    throw new IllegalStateException("ehcache key " + k + ": wrong bytes");
                }
            }
            System.out.printf("%nehcache: %d of %d keys missing after the first put%n", missing, keys);
        }

        /** Closes and destroys the cache manager. */
        @TearDown(Level.Trial)
        public void tearDownEhcache() {
            System.out.printf("%nehcache: %d gets missed and put the value back%n", misses);
            manager.close();
            SpillLoadBenchmark.deleteTree(dir);
        }
    }

    /** OHC off-heap cache sized at the whole memory budget. */
    @State(Scope.Thread)
    public static class Ohc extends Base {

        /** Creates the state; JMH sets the parameters and runs the fixtures. */
        public Ohc() {
        }

        /** The cache. */
        OHCache<Long, byte[]> cache;
        /** {@link #out} as a buffer. */
        ByteBuffer outBuffer;

        /** Builds the cache, puts every key, gets each once (warm). */
        @Setup(Level.Trial)
        public void setUpOhc() {
            cache = OHCacheBuilder.<Long, byte[]>newBuilder()
                    .keySerializer(new LongSerializer())
                    .valueSerializer(new BytesSerializer())
                    .capacity(MEMORY_BYTES)
                    .build();
            outBuffer = out.asByteBuffer();
            for (int k = 0; k < keys; k++) {
                if (!cache.put((long) k, values[k & 15])) {
                    throw new IllegalStateException("ohc refused key " + k);
                }
            }
            for (int k = 0; k < keys; k++) {
                byte[] v = cache.get((long) k);
                if (v == null || !java.util.Arrays.equals(v, values[k & 15])) {
                    throw new IllegalStateException("ohc key " + k + ": " + (v == null ? "missing" : "wrong"));
                }
            }
        }

        /**
         * Closes the cache.
         *
         * @throws IOException if the benchmark files cannot be created, written or removed
         */
        @TearDown(Level.Trial)
        public void tearDownOhc() throws IOException {
            cache.close();
        }
    }

    /**
     * The physical limits of a get and of a put with the working set four times the memory tiers
     * ({@code 4x}), measured beside the peers: the working set's values in one file (page cache
     * warm), mapped read-write. A get is one copy into the output, and for the share of keys that
     * cannot be in memory also one CRC32C pass over the 64 KiB (the disk tier verifies every record
     * it serves; a device or host hit needs none): keys below {@code MEMORY_BYTES / VALUE_BYTES}
     * (a quarter of the {@code 4x} working set, the most the device and host tiers can hold) are
     * copied without the checksum, the rest with it. TierKV's own share of memory hits is at most
     * that (its teardown prints its device, host and disk reads; 19-25% in the runs recorded in
     * BENCHMARKS.md), so this limit is the tighter one. A put is one CRC32C pass over a value and
     * one copy of it into the file (the least a new key costs once every tier is full and it must,
     * sooner or later, go to disk), nothing else. With {@code fits} nothing goes to disk and these
     * limits do not apply: the limit methods refuse that case (OHC is the peer there).
     */
    @State(Scope.Thread)
    public static class Limit extends Base {

        /** Creates the state; JMH sets the parameters and runs the fixtures. */
        public Limit() {
        }

        /** The mapped values. */
        MemorySegment file;
        /** The checksum. */
        final java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
        private Arena mapArena;
        private Path path;

        /**
         * Writes and maps the file.
         *
         * @throws IOException if the file cannot be created, written or mapped
         */
        @Setup(Level.Trial)
        public void setUpLimit() throws IOException {
            path = Files.createTempFile("tierkv-limit-", ".bin");
            try (var ch = java.nio.channels.FileChannel.open(path, java.nio.file.StandardOpenOption.WRITE)) {
                for (int k = 0; k < keys; k++) {
                    ch.write(ByteBuffer.wrap(values[k & 15]));
                }
            }
            mapArena = Arena.ofShared();
            try (var ch = java.nio.channels.FileChannel.open(path, java.nio.file.StandardOpenOption.READ,
                    java.nio.file.StandardOpenOption.WRITE)) {
                file = ch.map(java.nio.channels.FileChannel.MapMode.READ_WRITE, 0, (long) keys * VALUE_BYTES, mapArena);
            }
        }

        /**
         * Unmaps and deletes the file.
         *
         * @throws IOException if the file cannot be deleted
         */
        @TearDown(Level.Trial)
        public void tearDownLimit() throws IOException {
            mapArena.close();
            Files.delete(path);
        }
    }

    /** OHC key serializer: a long. */
    static final class LongSerializer implements CacheSerializer<Long> {
        @Override
        public void serialize(Long value, ByteBuffer buf) {
            buf.putLong(value);
        }

        @Override
        public Long deserialize(ByteBuffer buf) {
            return buf.getLong();
        }

        @Override
        public int serializedSize(Long value) {
            return 8;
        }
    }

    /** OHC value serializer: the bytes as they are (fixed length). */
    static final class BytesSerializer implements CacheSerializer<byte[]> {
        @Override
        public void serialize(byte[] value, ByteBuffer buf) {
            buf.put(value);
        }

        @Override
        public byte[] deserialize(ByteBuffer buf) {
            byte[] b = new byte[buf.remaining()];
            buf.get(b);
            return b;
        }

        @Override
        public int serializedSize(byte[] value) {
            return value.length;
        }
    }

    /**
     * TierKV: put the next key ({@link Base#nextPutKey}).
     *
     * @param s the manager
     * @return the key
     */
    @Benchmark
    public long tierkvPut(TierKv s) {
        long k = s.nextPutKey();
        s.put(k, s.nativeValues[s.valueOf(k)]);
        return k;
    }

    /**
     * TierKV: get a random key of the working set into the output block.
     *
     * @param s the manager
     * @return the first byte
     */
    @Benchmark
    public byte tierkvGet(TierKv s) {
        s.get(s.randomKey());
        return s.out.get(ValueLayout.JAVA_BYTE, 0);
    }

    /**
     * Limit ({@code 4x} only): one copy of a random key's 64 KiB from a mapped page-cache file into
     * the output block, after one CRC32C pass over it unless the key is one the memory tiers could
     * hold (see {@link Limit}).
     *
     * @param s the mapped file
     * @return the checksum
     */
    @Benchmark
    public long limitGet(Limit s) {
        int key = s.randomKey();
        return limitCopy(s, key, key >= MEMORY_BYTES / VALUE_BYTES); // a memory hit is a plain copy
    }

    /**
     * Limit of a get served from disk ({@code 4x} only): one CRC32C pass over a random key's 64 KiB
     * in a mapped page-cache file and one copy of it into the output block, for every key. The
     * bound of a disk hit alone; {@link #limitGet} is the bound of TierKV's mix of hits.
     *
     * @param s the mapped file
     * @return the checksum
     */
    @Benchmark
    public long limitDiskGet(Limit s) {
        return limitCopy(s, s.randomKey(), true);
    }

    /** One copy of a key's value from the mapped file into the output, after a CRC32C pass if {@code verify}. */
    private static long limitCopy(Limit s, int key, boolean verify) {
        skipUnlessDisk(s);
        MemorySegment value = s.file.asSlice((long) key * VALUE_BYTES, VALUE_BYTES);
        s.crc.reset();
        if (verify) {
            s.crc.update(value.asByteBuffer());
        }
        MemorySegment.copy(value, 0, s.out, 0, VALUE_BYTES);
        return s.crc.getValue();
    }

    /**
     * Limit ({@code 4x} only): one CRC32C pass over a value and one copy of it into the mapped
     * file, at the next key's place (round robin over the working set).
     *
     * @param s the mapped file
     * @return the checksum
     */
    @Benchmark
    public long limitPut(Limit s) {
        skipUnlessDisk(s);
        MemorySegment value = s.nativeValues[s.nextValue()];
        s.crc.reset();
        s.crc.update(value.asByteBuffer());
        MemorySegment.copy(value, 0, s.file, (s.nextPut++ % s.keys) * VALUE_BYTES, VALUE_BYTES);
        return s.crc.getValue();
    }

    /**
     * Ehcache: put the next key ({@link Base#nextPutKey}).
     *
     * @param s the cache
     * @return the key
     */
    @Benchmark
    public long ehcachePut(Ehcache s) {
        long k = s.nextPutKey();
        s.cache.put(k, s.values[s.valueOf(k)]);
        return k;
    }

    /**
     * Ehcache: get a random key of the working set into the output block.
     *
     * @param s the cache
     * @return the first byte
     */
    @Benchmark
    public byte ehcacheGet(Ehcache s) {
        long k = s.randomKey();
        byte[] v = s.cache.get(k);
        if (v == null) { // evicted by Ehcache: count it, put it back (as a read-through would)
            s.misses++;
            v = s.values[(int) k & 15];
            s.cache.put(k, v);
        }
        MemorySegment.copy(v, 0, s.out, ValueLayout.JAVA_BYTE, 0, VALUE_BYTES);
        return s.out.get(ValueLayout.JAVA_BYTE, 0);
    }

    /**
     * OHC: put the next key ({@link Base#nextPutKey}; fits only).
     *
     * @param s the cache
     * @return whether it was stored
     */
    @Benchmark
    public boolean ohcPut(Ohc s) {
        skipUnlessFits(s);
        long k = s.nextPutKey();
        return s.cache.put(k, s.values[s.valueOf(k)]);
    }

    /**
     * OHC: get a random key into the output block via {@code getDirect} (fits only).
     *
     * @param s the cache
     * @return the first byte
     */
    @Benchmark
    public byte ohcGet(Ohc s) {
        skipUnlessFits(s);
        try (DirectValueAccess d = s.cache.getDirect((long) s.randomKey())) {
            MemorySegment.copy(MemorySegment.ofBuffer(d.buffer()), 0, s.out, 0, VALUE_BYTES);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return s.out.get(ValueLayout.JAVA_BYTE, 0);
    }

    private static void skipUnlessDisk(Base s) {
        if (!"4x".equals(s.workingSet)) {
            throw new UnsupportedOperationException("the disk limits do not apply when everything fits in memory:"
                    + " run them with -p workingSet=4x");
        }
    }

    private static void skipUnlessFits(Base s) {
        if (!"fits".equals(s.workingSet)) {
            throw new UnsupportedOperationException("OHC has no disk tier: run it with -p workingSet=fits");
        }
    }
}

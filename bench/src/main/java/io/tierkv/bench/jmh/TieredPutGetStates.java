package io.tierkv.bench.jmh;

import static io.tierkv.bench.jmh.TieredPutGetBenchmark.B;
import static io.tierkv.bench.jmh.TieredPutGetBenchmark.DISK_BYTES;
import static io.tierkv.bench.jmh.TieredPutGetBenchmark.MEMORY_BYTES;
import static io.tierkv.bench.jmh.TieredPutGetBenchmark.VALUE_BYTES;

import io.tierkv.core.DType;
import io.tierkv.core.KvLayout;
import io.tierkv.core.cache.Sequence;
import io.tierkv.core.cache.SequenceOptions;
import io.tierkv.natives.EmulatedDevice;
import io.tierkv.tiers.KvBlockManager;
import io.tierkv.tiers.disk.DiskOptions;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The states of {@link TieredPutGetBenchmark}'s TierKV side: {@link Base}, what every state
 * shares (the working set's keys, the values in heap and native memory, the output block, the
 * order of keys); {@link TierKv}, the tiered {@link KvBlockManager} under test. The scenario is
 * described in {@link TieredPutGetBenchmark}'s javadoc.
 *
 * <p>Thread-safety: JMH gives each benchmark thread its own states ({@code Scope.Thread}).
 */
public final class TieredPutGetStates {

    private TieredPutGetStates() {
    }

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

        /**
         * Creates the values and the output block; each subclass's trial setup calls it first (not
         * a JMH fixture of its own: JMH orders the fixtures of a state's class hierarchy by their
         * classes' names, which would run a peer's setup in another class before this one).
         */
        void setUpBase() {
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

        /** Frees native memory; each subclass's trial teardown calls it last. */
        void tearDownBase() {
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
            setUpBase();
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
            BenchFiles.deleteTree(dir);
            tearDownBase();
            if (!bad.isEmpty()) {
                throw new IllegalStateException("invariants: " + bad);
            }
        }
    }
}

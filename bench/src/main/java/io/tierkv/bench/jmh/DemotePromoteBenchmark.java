package io.tierkv.bench.jmh;

import io.tierkv.core.DType;
import io.tierkv.core.KvLayout;
import io.tierkv.core.cache.Sequence;
import io.tierkv.core.cache.SequenceOptions;
import io.tierkv.natives.EmulatedDevice;
import io.tierkv.natives.libc.Libc;
import io.tierkv.tiers.KvBlockManager;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.TimeUnit;
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
 * Demote a block from the emulated device to pinned host memory and promote it back, through a
 * {@link KvBlockManager}, against plain {@link MemorySegment#copy} of the same bytes between
 * regions of the same sizes, each limit copy in the cache state of the tier copy it bounds.
 *
 * <p><b>Scenario.</b> Layout 8 layers x 8 KV heads x 64, F16 with 4, 16, 64 or 128 tokens per
 * block: 64 KiB, 256 KiB, 1 MiB and 2 MiB blocks. One sequence holds 64 MiB of sealed blocks on the device
 * ({@code recentDeviceBlocks(0)}, no mover threads, so only the benchmark moves blocks); device
 * and host tiers have two spare slots. The blocks are visited in turn, so the working set (64 MiB
 * per tier) is twice the 32 MiB L3 of the test machine.
 * <ul>
 * <li>{@link #demote}: {@code kv.demoteBlock(id)} (device to host copy on the emulated
 * device's copy stream, then the device slot is freed). Untimed afterwards: the block is leased
 * back up and the host's clean copy dropped ({@code evictHost(1)}), so every demotion copies.</li>
 * <li>{@link #promote}: {@code acquireLease(id)} + {@code releaseLease(id)} of a block demoted
 * (untimed) just before: a host to device copy into a fresh slot.</li>
 * <li>{@link #roundTrip}: demote, promote and drop the host's clean copy, all timed.</li>
 * <li>{@link #copyDown}, {@link #copyUp}, {@link #copyRoundTrip}: the limits: the same copies
 * between a plain 64 MiB "device" ring and one "host" block with {@code MemorySegment.copy},
 * with the same untimed copy before (or after) each. Cache state, copy by copy, as in the tier:
 * a demotion reads a device block last touched a ring ago (cold) and writes the host slot that the
 * previous call's dropped copy freed (the slot allocator hands out the slot freed last, so the same one: hot); a
 * promotion reads that host slot, just written (hot), into the device slot the demotion just
 * read and freed (hot). The limits copy between the ring and one spare host block, so they see
 * exactly these states, in memory paged as the pools are (2 MiB-aligned, transparent huge pages). (Before 2026-12-01 the limit wrote a cold host slot of a second ring,
 * which made {@link #demote} look 1.7-1.9x faster than a copy.)</li>
 * <li>{@link #leaseResident}: lease + release of a device-resident sealed block of the tiered
 * manager (a demotion candidate, so the lease takes it out of the device policy and the release
 * puts it back): issue 4's lease figure, beside the single-tier one of {@link LeaseBenchmark}.</li>
 * </ul>
 *
 * <p><b>Worst case.</b> Every move here is a real copy (no clean copy to drop) from memory outside
 * the caches. The emulated device runs copies on its stream thread: on a 2-core machine shared
 * with other processes the hand-off and the waiting for the copy's event are part of the figure.
 * A real GPU would add PCIe bandwidth limits instead; those are not measured here.
 *
 * <p>Target (issue 4): demotion and promotion at least 0.8 of plain copy bandwidth; leasing a
 * device-resident block at least 10 M per second without heap allocation.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Threads(1)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xms1g", "-Xmx1g"})
public class DemotePromoteBenchmark {

    /** Creates the benchmark; its state lives in the nested state classes. */
    public DemotePromoteBenchmark() {
    }

    /** Bytes of sealed blocks per tier in the working set. */
    static final long WORKING_SET_BYTES = 64L << 20;

    /** The tiered manager, with one sequence of sealed blocks, all on the device. */
    @State(Scope.Thread)
    public static class Tiered {

        /** Creates the state; JMH sets the parameters and runs the fixtures. */
        public Tiered() {
        }

        /** Tokens per block: 4, 16, 64, 128 = 64 KiB, 256 KiB, 1 MiB, 2 MiB blocks. */
        @Param({"4", "16", "64", "128"})
        public int blockSizeTokens;

        private KvBlockManager kv;
        private Sequence seq;
        private int[] ids;
        private int next;

        /** Builds the manager and writes every block once; checks that nothing was demoted yet. */
        @Setup(Level.Trial)
        public void setUp() {
            KvLayout layout = KvLayout.of(8, 8, 64, DType.F16, blockSizeTokens);
            int blocks = (int) (WORKING_SET_BYTES / layout.bytesPerBlock());
            long tierBytes = (long) (blocks + 2) * layout.bytesPerBlock();
            kv = KvBlockManager.builder(layout)
                    .device(new EmulatedDevice(2 * tierBytes), tierBytes)
                    .host(tierBytes)
                    .recentDeviceBlocks(0)
                    .movers(0)
                    .build();
            seq = kv.openSequence(SequenceOptions.salt("bench"));
            MemorySegment k = MemorySegment.ofArray(new byte[layout.tokenVectorBytes()]);
            for (int t = 0; t < blocks * blockSizeTokens; t++) {
                k.set(ValueLayout.JAVA_INT_UNALIGNED, 0, t);
                int pos = seq.appendToken(t);
                for (int l = 0; l < layout.layers(); l++) {
                    seq.write(l, pos, k, k);
                }
            }
            if (seq.sealedBlocks() != blocks) {
                throw new IllegalStateException("sealed " + seq.sealedBlocks() + " of " + blocks);
            }
            ids = new int[blocks];
            for (int i = 0; i < blocks; i++) {
                ids[i] = seq.blockId(i);
            }
            // Warm the whole working set of both tiers: one round trip per block.
            for (int i = 0; i < blocks; i++) {
                roundTrip(ids[i]);
            }
        }

        /**
         * The next block of the ring.
         * 
         * @return its id
         */
        int nextId() {
            int id = ids[next];
            next = next + 1 == ids.length ? 0 : next + 1;
            return id;
        }

        /**
         * Demotes a block; throws if it did not leave the device.
         * 
         * @param id the block
         */
        void demoteOrFail(int id) {
            if (!kv.demoteBlock(id)) {
                throw new IllegalStateException("block " + id + " was not demoted");
            }
        }

        /**
         * Brings a block to the device by leasing it, and releases the lease.
         * 
         * @param id the block
         */
        void promote(int id) {
            kv.acquireLease(id);
            kv.releaseLease(id);
        }

        /** Drops the host's one clean copy; throws if there was none. */
        void dropHostCopy() {
            if (kv.evictHost(1) != 1) {
                throw new IllegalStateException("the host held no clean copy to drop");
            }
        }

        /**
         * Demote, promote, drop the host copy.
         * 
         * @param id the block
         * @return the id
         */
        long roundTrip(int id) {
            demoteOrFail(id);
            promote(id);
            dropHostCopy();
            return id;
        }

        /** Checks the manager's invariants and closes it. */
        @TearDown(Level.Trial)
        public void tearDown() {
            var bad = kv.checkInvariants();
            seq.close();
            kv.close();
            if (!bad.isEmpty()) {
                throw new IllegalStateException("invariants: " + bad);
            }
        }
    }

    /**
     * For {@link #demote}: the manager, plus the block of the next call; afterwards the block is
     * brought back and the host copy dropped. (A subclass rather than a second state: JMH would
     * give a fixture argument its own instance of {@link Tiered}.)
     */
    @State(Scope.Thread)
    public static class DemoteStep extends Tiered {

        /** Creates the state; JMH sets the parameters and runs the fixtures. */
        public DemoteStep() {
        }
        private int id;

        /** Picks the block. */
        @Setup(Level.Invocation)
        public void pick() {
            id = nextId();
        }

        /** Promotes the block back and drops the host's clean copy. */
        @TearDown(Level.Invocation)
        public void restore() {
            promote(id);
            dropHostCopy();
        }
    }

    /** For {@link #promote}: the manager; each block is demoted first and its host copy dropped after. */
    @State(Scope.Thread)
    public static class PromoteStep extends Tiered {

        /** Creates the state; JMH sets the parameters and runs the fixtures. */
        public PromoteStep() {
        }
        private int id;

        /** Picks the block and demotes it. */
        @Setup(Level.Invocation)
        public void demoteFirst() {
            id = nextId();
            demoteOrFail(id);
        }

        /** Drops the host's clean copy. */
        @TearDown(Level.Invocation)
        public void restore() {
            dropHostCopy();
        }
    }

    /** The limit's "device" ring of slots and its one reused "host" slot. */
    @State(Scope.Thread)
    public static class Flat {

        /** Creates the state; JMH sets the parameters and runs the fixtures. */
        public Flat() {
        }

        /** Tokens per block, as {@link Tiered#blockSizeTokens}. */
        @Param({"4", "16", "64", "128"})
        public int blockSizeTokens;

        private Arena arena;
        private MemorySegment device;
        /** One block: the host slot every demotion reuses (freed last, handed out first), as in the tier. */
        private MemorySegment host;
        private int blockBytes;
        private int slots;
        private int next;

        /** Allocates and writes both regions. */
        @Setup(Level.Trial)
        public void setUp() {
            blockBytes = KvLayout.of(8, 8, 64, DType.F16, blockSizeTokens).bytesPerBlock();
            slots = (int) (WORKING_SET_BYTES / blockBytes);
            arena = Arena.ofShared();
            device = hugePages(arena, WORKING_SET_BYTES);
            host = hugePages(arena, Math.max(blockBytes, Libc.HUGE_PAGE_BYTES)).asSlice(0, blockBytes);
            device.fill((byte) 1);
            host.fill((byte) 2);
        }

        /**
         * The next slot of the ring.
         * 
         * @return the slot
         */
        int nextSlot() {
            int s = next;
            next = next + 1 == slots ? 0 : next + 1;
            return s;
        }

        /**
         * Copies a "device" slot to the reused "host" slot.
         * 
         * @param s the slot
         */
        void down(int s) {
            MemorySegment.copy(device, (long) s * blockBytes, host, 0, blockBytes);
        }

        /**
         * Copies the reused "host" slot to a "device" slot.
         * 
         * @param s the slot
         */
        void up(int s) {
            MemorySegment.copy(host, 0, device, (long) s * blockBytes, blockBytes);
        }

        /** Memory as the tier's pools have it: 2 MiB-aligned, backed by transparent huge pages where the kernel agrees. */
        private static MemorySegment hugePages(Arena arena, long bytes) {
            MemorySegment m = arena.allocate(bytes, Libc.HUGE_PAGE_BYTES);
            Libc.adviseHugePages(m);
            return m;
        }

        /** Frees both regions. */
        @TearDown(Level.Trial)
        public void tearDown() {
            arena.close();
        }
    }

    /** For {@link #copyDown}: the regions; each slot is copied back up afterwards, as the tiered run. */
    @State(Scope.Thread)
    public static class DownStep extends Flat {

        /** Creates the state; JMH sets the parameters and runs the fixtures. */
        public DownStep() {
        }
        private int slot;

        /** Picks the slot. */
        @Setup(Level.Invocation)
        public void pick() {
            slot = nextSlot();
        }

        /** Copies the slot back up. */
        @TearDown(Level.Invocation)
        public void restore() {
            up(slot);
        }
    }

    /** For {@link #copyUp}: the regions; each slot is copied down first, as the tiered run. */
    @State(Scope.Thread)
    public static class UpStep extends Flat {

        /** Creates the state; JMH sets the parameters and runs the fixtures. */
        public UpStep() {
        }
        private int slot;

        /** Picks the slot and copies it down. */
        @Setup(Level.Invocation)
        public void downFirst() {
            slot = nextSlot();
            down(slot);
        }
    }

    /**
     * TierKV: demote one block (device to host).
     *
     * @param step the manager and the block
     * @return the block id
     */
    @Benchmark
    public int demote(DemoteStep step) {
        step.demoteOrFail(step.id);
        return step.id;
    }

    /**
     * TierKV: promote one block (host to device) by leasing it, and release the lease.
     *
     * @param step the manager and the block
     * @return the block id
     */
    @Benchmark
    public int promote(PromoteStep step) {
        step.promote(step.id);
        return step.id;
    }

    /**
     * TierKV: demote, promote, drop the host's clean copy.
     *
     * @param t the manager
     * @return the block id
     */
    @Benchmark
    public long roundTrip(Tiered t) {
        return t.roundTrip(t.nextId());
    }

    /**
     * Limit for {@link #demote}: one plain copy "device" to "host".
     *
     * @param step the regions and the slot
     * @return the slot
     */
    @Benchmark
    public int copyDown(DownStep step) {
        step.down(step.slot);
        return step.slot;
    }

    /**
     * Limit for {@link #promote}: one plain copy "host" to "device".
     *
     * @param step the regions and the slot
     * @return the slot
     */
    @Benchmark
    public int copyUp(UpStep step) {
        step.up(step.slot);
        return step.slot;
    }

    /**
     * Limit for {@link #roundTrip}: a plain copy down and back up.
     *
     * @param f the regions
     * @return the slot
     */
    @Benchmark
    public int copyRoundTrip(Flat f) {
        int s = f.nextSlot();
        f.down(s);
        f.up(s);
        return s;
    }

    /**
     * Lease and release a device-resident sealed block of the tiered manager, reading one long.
     *
     * @param t the manager
     * @return the long read
     */
    @Benchmark
    @BenchmarkMode(Mode.Throughput)
    @OutputTimeUnit(TimeUnit.SECONDS)
    public long leaseResident(Tiered t) {
        int id = t.nextId();
        MemorySegment block = t.kv.acquireLease(id);
        long x = block.get(ValueLayout.JAVA_LONG, 0);
        t.kv.releaseLease(id);
        return x;
    }
}

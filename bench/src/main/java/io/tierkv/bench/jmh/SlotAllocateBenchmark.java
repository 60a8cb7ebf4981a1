package io.tierkv.bench.jmh;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.tierkv.core.pool.SlabMemory;
import io.tierkv.core.pool.SlotAllocator;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
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
 * Allocate one block slot and free it again, on one thread: TierKV's slab slots against Netty's
 * pooled direct allocator and against one shared {@link Arena} per block, for the same slot size.
 *
 * <p><b>Scenario.</b> One operation is one allocate + free pair (the score is pairs per second).
 * {@link #tierkv} takes a slot index from {@link SlotAllocator}, fetches its memory from a
 * pre-touched {@link SlabMemory} and frees it; {@link #tierkvLocked} does the same under an
 * uncontended {@link ReentrantLock}, which is how {@code PagedKvCache} calls the allocator (the
 * allocator itself is not thread-safe). {@link #nettyPooled} asks
 * {@code PooledByteBufAllocator.DEFAULT.directBuffer(slotBytes)} and releases it (Netty is
 * thread-safe; for these sizes, above its 32 KiB thread-cache limit, it serves from its arena).
 * {@link #arenaPerBlock} opens a shared arena, allocates the slot (zero-filled) and closes the
 * arena. Each operation writes one long into the memory it got, so nothing is dead code.
 *
 * <p><b>Worst case.</b> For TierKV the slot size does not matter: the allocator hands out dense
 * indices from a tree of free bits, the slot freed last first (one level for 16 slots, four for
 * 10^7: a walk of a deeper tree, when no recently freed slot is left, costs a word read per level)
 * and the slab's slot segments are created once; the worst case is the locked variant (the cache's
 * path). The pool is kept small (16 slots) so the same, warm slot comes back; a cold slot costs
 * one cache miss more, not measured here. The Netty peer runs with its
 * defaults; the arena peer pays zeroing plus the thread handshake of closing a shared arena, which
 * grows with slot size and thread count.
 *
 * <p>Targets (issue 2): at least 20 M pairs/s on one thread and at least 5x Netty.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Threads(1)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xms1g", "-Xmx1g"})
public class SlotAllocateBenchmark {

    /** Creates the state; JMH sets the parameters and calls {@link #setUp()}. */
    public SlotAllocateBenchmark() {
    }

    /** Slots in the TierKV pool. */
    static final int POOL_SLOTS = 16;

    /** Bytes per slot: 64 KiB, 256 KiB, 1 MiB, 2 MiB. */
    @Param({"65536", "262144", "1048576", "2097152"})
    public int slotBytes;

    private SlotAllocator allocator;
    private SlabMemory memory;
    private final ReentrantLock lock = new ReentrantLock();
    private long counter;

    /** Creates the pool, touches it, and warms the peers over their working sets. */
    @Setup(Level.Trial)
    public void setUp() {
        allocator = new SlotAllocator(POOL_SLOTS);
        memory = new SlabMemory(POOL_SLOTS, slotBytes); // touched at creation
        for (int i = 0; i < POOL_SLOTS; i++) {
            memory.slot(i).fill((byte) 1);
        }
        // Netty: grow its arena to the same working set and write it once.
        ByteBuf[] bufs = new ByteBuf[POOL_SLOTS];
        for (int i = 0; i < bufs.length; i++) {
            bufs[i] = PooledByteBufAllocator.DEFAULT.directBuffer(slotBytes);
            bufs[i].setZero(0, slotBytes);
        }
        for (ByteBuf b : bufs) {
            b.release();
        }
    }

    /** Frees the pool. */
    @TearDown(Level.Trial)
    public void tearDown() {
        memory.close();
    }

    /**
     * TierKV: take a slot and its memory, free it.
     *
     * @return the slot written (kept alive for the blackhole)
     */
    @Benchmark
    public long tierkv() {
        int s = allocator.allocate();
        MemorySegment seg = memory.slot(s);
        seg.set(ValueLayout.JAVA_LONG, 0, ++counter);
        allocator.free(s);
        return s;
    }

    /**
     * TierKV as the cache calls it: the same pair under an uncontended lock.
     *
     * @return the slot written
     */
    @Benchmark
    public long tierkvLocked() {
        lock.lock();
        try {
            int s = allocator.allocate();
            MemorySegment seg = memory.slot(s);
            seg.set(ValueLayout.JAVA_LONG, 0, ++counter);
            allocator.free(s);
            return s;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Peer: Netty's pooled direct allocator, default configuration.
     *
     * @return the buffer's capacity
     */
    @Benchmark
    public long nettyPooled() {
        ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(slotBytes);
        b.setLong(0, ++counter);
        int cap = b.capacity();
        b.release();
        return cap;
    }

    /**
     * Peer: one shared arena per block (allocate, zero-fill, close).
     *
     * @return the segment's address
     */
    @Benchmark
    public long arenaPerBlock() {
        try (Arena arena = Arena.ofShared()) {
            MemorySegment seg = arena.allocate(slotBytes, 4096);
            seg.set(ValueLayout.JAVA_LONG, 0, ++counter);
            return seg.address();
        }
    }
}

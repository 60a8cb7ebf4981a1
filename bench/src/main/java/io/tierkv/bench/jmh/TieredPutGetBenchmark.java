package io.tierkv.bench.jmh;

import io.tierkv.bench.jmh.TieredPutGetPeers.Ehcache;
import io.tierkv.bench.jmh.TieredPutGetPeers.Limit;
import io.tierkv.bench.jmh.TieredPutGetPeers.Ohc;
import io.tierkv.bench.jmh.TieredPutGetStates.Base;
import io.tierkv.bench.jmh.TieredPutGetStates.TierKv;
import io.tierkv.core.cache.Sequence;
import io.tierkv.tiers.KvBlockManager;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.TimeUnit;
import org.caffinitas.ohc.DirectValueAccess;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
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
 *
 * <p>Classes by job: this one holds the scenario's constants and every benchmark method (their
 * names and parameters are what BENCHMARKS.md's commands select); {@link TieredPutGetStates} the
 * values every state shares and TierKV's manager; {@link TieredPutGetPeers} Ehcache, OHC and the
 * limit's mapped file.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Threads(1)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED", "--add-exports=java.base/jdk.internal.ref=ALL-UNNAMED",
    "-Xms1g", "-Xmx1g"})
public class TieredPutGetBenchmark {

    /** Creates the benchmark; its state lives in {@link TieredPutGetStates} and {@link TieredPutGetPeers}. */
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

package io.tierkv.tiers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.core.DType;
import io.tierkv.core.KvLayout;
import io.tierkv.core.cache.Sequence;
import io.tierkv.core.cache.SequenceOptions;
import io.tierkv.core.testing.CacheInvariants;
import io.tierkv.natives.EmulatedDevice;
import io.tierkv.tiers.disk.DiskOptions;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.io.TempDir;

/**
 * Block ids all live, nearly all of them cached and unreferenced, while a mover spills and other
 * threads close their sequences: a new block waits for an id to come free (up to the admission
 * deadline) instead of failing at once. Before, four threads writing and closing 24-token
 * sequences over tiny tiers failed with "BLOCK_IDS capacity exhausted" after some 2,500 rounds
 * each (a newcomer's program, twice in two runs: 225 ids live, 181-217 of them cached, at most 24
 * referenced), and a single thread, or no mover, never did.
 */
class BlockIdsUnderLoadTest {

    @RegisterExtension
    final CacheInvariants invariants = new CacheInvariants();

    @TempDir
    Path dir;

    /**
     * Four threads, 3,000 rounds each: a new block waits for an id to come free (the class
     * comment). Sixteen threads, 1,000 rounds each: the host tier may spill a block's host copy
     * before the block's demotion has committed (the block still in transit, its device slot still
     * held); the note of that spill was settled as stale ("back on the device"), so the block
     * ended unreferenced on disk alone with no note left to retire its id, which stayed live until
     * the record left the disk. Before: 120-173 such ids when a new block failed after its 100 ms
     * deadline, in 3 runs of 3 (and 3 of 3 at 5ad2bd4); the note is now kept until the move ends.
     * The sixteen threads run over 48 device and 48 host slots (the same 225 block ids): with 32
     * device slots their open and recent blocks alone held all 32, so a writer that the scheduler
     * kept waiting past its 100 ms deadline failed with DEVICE exhausted, a timing failure and not
     * this test's (2 of 4 runs at 062a295 and 1 of 4 at 8be72b5 with two busy loops on the 2
     * CPUs). With 48, 5 of 5 pass so loaded, and the code before the fix (b41cb95's parent) still
     * fails 3 of 3 with BLOCK_IDS exhausted.
     *
     * @param threads      writers
     * @param rounds       sequences each writes and closes
     * @param deviceBlocks device slots
     * @param hostBlocks   host slots
     * @throws Exception on failure
     */
    @ParameterizedTest(name = "{0} threads")
    @CsvSource({"4, 3000, 32, 64", "16, 1000, 48, 48"})
    void newBlocksGetIdsWhileTheTiersBelowRetireThem(int threads, int rounds, int deviceBlocks, int hostBlocks)
            throws Exception {
        KvLayout l = KvLayout.of(2, 1, 8, DType.F32, 4);
        KvBlockManager kv = manager(l, deviceBlocks, hostBlocks);
        AtomicReference<Throwable> failure = run(kv, l, threads, rounds, true);
        assertEquals(null, failure.get(), "no thread failed: " + failure.get());
        assertTrue(kv.stats().cache().retiredIds() > 0, "ids were retired to make room");
        assertTrue(kv.checkInvariants().isEmpty(), kv.checkInvariants().toString());
    }

    /**
     * Sixteen threads, then once they stop every id held by hash alone comes free: a block spilled
     * while referenced is retired when its last reference goes. Before, its id stayed live until
     * its record left the disk, and the manager refused every new block for good (a newcomer's
     * program: 0 of 200 appends after the threads stopped, all 225 ids cached).
     *
     * @throws Exception on failure
     */
    @Test
    void idsHeldByHashAloneComeFreeOnceTheirLastReferenceGoes() throws Exception {
        KvLayout l = KvLayout.of(2, 1, 8, DType.F32, 4);
        KvBlockManager kv = manager(l, 32, 64);
        run(kv, l, 16, 1000, false);
        for (int i = 0; i < 200; i++) {
            try (Sequence s = kv.openSequence(SequenceOptions.salt("after"))) {
                s.appendToken(i);
            }
        }
        assertTrue(kv.checkInvariants().isEmpty(), kv.checkInvariants().toString());
    }

    private KvBlockManager manager(KvLayout l, int deviceBlocks, int hostBlocks) {
        long bb = l.bytesPerBlock();
        EmulatedDevice gpu = invariants.track(new EmulatedDevice(1 << 20), List::of);
        return invariants.track(KvBlockManager.builder(l).device(gpu, deviceBlocks * bb).host(hostBlocks * bb)
                .disk(DiskOptions.at(dir.resolve("kv" + System.nanoTime())).withBudgetBytes(64L << 10)
                        .withSegmentBytes(8192))
                .recentDeviceBlocks(1).movers(1).admissionTimeoutNanos(100_000_000L).build(), List::of);
    }

    /** Threads that each open, fill (24 tokens) and close sequences; the first failure, if any. */
    private static AtomicReference<Throwable> run(KvBlockManager kv, KvLayout l, int threadCount, int rounds,
            boolean stopAtFailure) throws InterruptedException {
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < threadCount; t++) {
            int thread = t;
            threads.add(Thread.ofPlatform().start(() -> {
                try (Arena arena = Arena.ofConfined()) {
                    MemorySegment k = arena.allocate(l.tokenVectorBytes());
                    for (int round = 0; round < rounds && (failure.get() == null || !stopAtFailure); round++) {
                        try (Sequence s = kv.openSequence(SequenceOptions.salt("m"))) {
                            for (int p = 0; p < 24; p++) {
                                s.appendToken((thread * 1_000_000 + round) * 100 + p);
                                for (int layer = 0; layer < l.layers(); layer++) {
                                    s.write(layer, p, k, k);
                                }
                            }
                        }
                    }
                } catch (RuntimeException e) { // CapacityExhaustedException above all
                    failure.compareAndSet(null, e);
                }
            }));
        }
        for (Thread t : threads) {
            t.join();
        }
        return failure;
    }
}

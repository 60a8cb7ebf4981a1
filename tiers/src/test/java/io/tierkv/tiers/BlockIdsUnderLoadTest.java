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

    @Test
    void newBlocksWaitForIdsToComeFreeInsteadOfFailingAtOnce() throws Exception {
        KvLayout l = KvLayout.of(2, 1, 8, DType.F32, 4);
        long bb = l.bytesPerBlock();
        EmulatedDevice gpu = invariants.track(new EmulatedDevice(1 << 20), List::of);
        KvBlockManager kv = invariants.track(KvBlockManager.builder(l).device(gpu, 32 * bb).host(64 * bb)
                .disk(DiskOptions.at(dir).withBudgetBytes(64L << 10).withSegmentBytes(8192))
                .recentDeviceBlocks(1).movers(1).admissionTimeoutNanos(100_000_000L).build(), List::of);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            int thread = t;
            threads.add(Thread.ofPlatform().start(() -> {
                try (Arena arena = Arena.ofConfined()) {
                    MemorySegment k = arena.allocate(l.tokenVectorBytes());
                    for (int round = 0; round < 3000 && failure.get() == null; round++) {
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
        assertEquals(null, failure.get(), "no thread failed: " + failure.get());
        assertTrue(kv.stats().cache().retiredIds() > 0, "ids were retired to make room");
        assertTrue(kv.checkInvariants().isEmpty(), kv.checkInvariants().toString());
    }
}

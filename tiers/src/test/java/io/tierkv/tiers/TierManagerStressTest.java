package io.tierkv.tiers;

import static io.tierkv.core.testing.TestCaches.appendWritten;
import static io.tierkv.core.testing.TestCaches.firstMismatch;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.core.cache.BlockLease;
import io.tierkv.core.cache.Sequence;
import io.tierkv.core.cache.SequenceOptions;
import io.tierkv.core.error.CapacityExhaustedException;
import io.tierkv.core.error.TransferTimeoutException;
import io.tierkv.core.testing.CacheInvariants;
import io.tierkv.tiers.disk.Compression;
import io.tierkv.tiers.disk.DiskOptions;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Four worker threads append, fork, match, lease and close against two background movers, with
 * device and host budgets about a tenth of the working set and a disk tier below. Every byte read
 * is checked; invariants are checked throughout by a fifth thread and at the end. Bounded by time.
 */
class TierManagerStressTest {

    private static final int DOCS = 24;
    private static final int MAX_BLOCKS_PER_SEQ = 6;

    @RegisterExtension
    final CacheInvariants invariants = new CacheInvariants();

    @TempDir
    Path dir;

    /** Token ids depend only on (document, position), so equal prefixes mean equal bytes. */
    private static int[] docTokens(int doc, int n) {
        int[] t = new int[n];
        for (int i = 0; i < n; i++) {
            t[i] = doc * 100_000 + i;
        }
        return t;
    }

    @Test
    void fourWritersAndTwoMoversNeverServeAWrongByte() throws Exception {
        // Working set: 24 documents x 6 blocks = 144 blocks; device 12, host 14 (about a tenth each).
        stress(DiskOptions.at(dir.resolve("kv")).withSegmentBytes(256 << 10).withBudgetBytes(4 << 20)
                .withCompression(Compression.LZ4), 50);
    }

    /**
     * Without a disk every host victim is freed through the cache, with the manager lock released
     * around the call; an invariant check between any two steps (here back to back, no pause)
     * must find the host consistent: a resident host block is in the policy unless it moves.
     */
    @Test
    void withoutADiskNoCheckBetweenTwoStepsOfAHostEvictionSeesAHalfDoneState() throws Exception {
        stress(null, 0);
    }

    private void stress(DiskOptions disk, long checkEveryMillis) throws Exception {
        KvBlockManagerBuilder b = KvBlockManager.builder(Managers.LAYOUT);
        KvBlockManager kv = Managers.build(invariants, b, 12, 14, disk);
        // Managers.build sets movers(0); start two movers' worth of work on threads of our own instead.
        long seed = System.nanoTime();
        long endNanos = System.nanoTime() + 6_000_000_000L;
        ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
        AtomicLong ops = new AtomicLong();
        AtomicLong backPressure = new AtomicLong();
        List<Thread> threads = new ArrayList<>();
        for (int m = 0; m < 2; m++) {
            threads.add(Thread.ofPlatform().name("mover-" + m).start(() -> {
                while (System.nanoTime() < endNanos && failures.isEmpty()) {
                    try {
                        kv.runMoverCycle();
                        kv.evictHost(1);
                    } catch (Throwable t) {
                        failures.add(t);
                    }
                }
            }));
        }
        for (int w = 0; w < 4; w++) {
            long workerSeed = seed + w;
            threads.add(Thread.ofPlatform().name("worker-" + w).start(() -> {
                Random rnd = new Random(workerSeed);
                while (System.nanoTime() < endNanos && failures.isEmpty()) {
                    try {
                        oneRequest(kv, rnd);
                        ops.incrementAndGet();
                    } catch (CapacityExhaustedException | TransferTimeoutException e) {
                        backPressure.incrementAndGet();
                    } catch (Throwable t) {
                        failures.add(new AssertionError("worker seed " + workerSeed, t));
                    }
                }
            }));
        }
        List<String> seen = Collections.synchronizedList(new ArrayList<>());
        Thread checker = Thread.ofPlatform().name("checker").start(() -> {
            while (System.nanoTime() < endNanos && failures.isEmpty()) {
                List<String> bad = kv.checkInvariants();
                if (!bad.isEmpty()) {
                    seen.addAll(bad);
                    failures.add(new AssertionError("invariants: " + bad));
                }
                try {
                    Thread.sleep(checkEveryMillis);
                } catch (InterruptedException e) {
                    return;
                }
            }
        });
        threads.add(checker);
        for (Thread t : threads) {
            t.join(30_000);
            assertTrue(!t.isAlive(), t.getName() + " did not finish within its bound");
        }
        if (!failures.isEmpty()) {
            AssertionError e = new AssertionError("seed " + seed + ": " + failures.size() + " failure(s)", failures.peek());
            throw e;
        }
        assertEquals(List.of(), kv.checkInvariants(), "seed " + seed);
        assertTrue(ops.get() > 50, "too few operations: " + ops.get() + " (back-pressure " + backPressure.get() + ")");
        TierStats st = kv.stats();
        assertTrue(st.demotions().blocks() > 0 && st.promotions().blocks() > 0, "tiers were exercised: " + st);
        assertEquals(0, st.diskMisses(), "no block lost below");
    }

    /** Opens a request for a random document: match, prefill the rest, read everything, maybe fork. */
    private static void oneRequest(KvBlockManager kv, Random rnd) {
        int doc = rnd.nextInt(DOCS);
        int length = 16 * (1 + rnd.nextInt(MAX_BLOCKS_PER_SEQ)) + rnd.nextInt(16);
        int[] tokens = docTokens(doc, length);
        try (Sequence s = kv.openSequence(SequenceOptions.defaults())) {
            int cached = s.matchPrefix(tokens);
            appendWritten(s, doc, java.util.Arrays.copyOfRange(tokens, cached, length));
            int bad = firstMismatch(s, doc, 0, length);
            if (bad >= 0) {
                throw new AssertionError("doc " + doc + " position " + bad + " read wrong bytes");
            }
            if (rnd.nextInt(4) == 0) {
                try (Sequence f = s.fork(); BlockLease lease = f.lease(0, f.length())) {
                    if (lease.blockCount() != (length + 15) / 16) {
                        throw new AssertionError("lease covers " + lease.blockCount() + " blocks");
                    }
                    int fb = firstMismatch(f, doc, 0, length);
                    if (fb >= 0) {
                        throw new AssertionError("fork of doc " + doc + " position " + fb + " read wrong bytes");
                    }
                }
            }
        }
    }
}

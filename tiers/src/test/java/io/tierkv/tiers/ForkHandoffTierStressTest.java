package io.tierkv.tiers;

import static io.tierkv.core.testing.TestCaches.appendWritten;
import static io.tierkv.core.testing.TestCaches.firstMismatch;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.core.cache.BlockLease;
import io.tierkv.core.cache.CacheDiagnostics;
import io.tierkv.core.cache.Sequence;
import io.tierkv.core.cache.SequenceOptions;
import io.tierkv.core.testing.CacheInvariants;
import io.tierkv.natives.EmulatedDevice;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Stress, from a review of the lock-free append: an owner thread appends to a sequence without
 * the lock and forks its mid-block tail to a child thread, which appends to the fork (a copy on
 * write) and may lease the shared tail; meanwhile a thread demotes, promotes and evicts host
 * blocks and another checks the invariants. Every sequence checks its token ids, its K/V bytes
 * and that a fresh sequence matches every sealed block of it by its tokens, which also found a
 * match missing a block whose promotion had landed but not committed ({@link
 * PromotionWindowMatchTest} has that race alone).
 */
class ForkHandoffTierStressTest {

    @RegisterExtension
    final CacheInvariants invariants = new CacheInvariants();

    private static final int B = 16;
    private static final long RUN_NANOS = 3_000_000_000L;

    /** A fork handed to the child: the sequence, the tokens it holds, and its owner's content key. */
    private record Handoff(Sequence child, int[] prefix, long ownerKey) {
    }

    private static final Handoff END = new Handoff(null, null, 0);

    /** The token at position p of a sequence written with content key k. */
    private static int token(long k, int p) {
        return (int) ((k * 1_000 + p) & 0x7fffffff);
    }

    @Test
    void forkedTailsHandedAcrossThreadsKeepTheirTokensBytesAndMatchesWhileBlocksMove() throws Exception {
        long bb = Managers.LAYOUT.bytesPerBlock();
        EmulatedDevice device = invariants.track(new EmulatedDevice(40 * bb + (1 << 20)), List::of);
        KvBlockManager built = KvBlockManager.builder(Managers.LAYOUT).device(device, 40 * bb).host(64 * bb)
                .recentDeviceBlocks(0).movers(0).admissionTimeoutNanos(2_000_000_000L).build();
        KvBlockManager cache = invariants.track(built, built::checkInvariants);
        long end = System.nanoTime() + RUN_NANOS;
        ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
        SynchronousQueue<Handoff> handoffs = new SynchronousQueue<>();
        AtomicLong forks = new AtomicLong();
        AtomicLong moves = new AtomicLong();
        Thread owner = Thread.ofPlatform().name("owner").start(() -> {
            try {
                own(cache, end, failures, handoffs, forks);
            } catch (Throwable t) {
                failures.add(t);
            }
            try {
                handoffs.offer(END, 10, TimeUnit.SECONDS); // the child may have ended already on a failure
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        Thread child = Thread.ofPlatform().name("child").start(() -> {
            try {
                appendToForks(cache, handoffs);
            } catch (Throwable t) {
                failures.add(t);
            }
        });
        Thread mover = Thread.ofPlatform().name("mover").start(() -> {
            while (System.nanoTime() < end && failures.isEmpty()) {
                try {
                    moves.addAndGet(cache.runMoverCycle());
                    cache.evictHost(1);
                    moves.addAndGet(cache.demote(Integer.MAX_VALUE));
                } catch (Throwable t) {
                    failures.add(t);
                }
            }
        });
        Thread checker = Thread.ofPlatform().name("checker").start(() -> {
            while (System.nanoTime() < end && failures.isEmpty()) {
                List<String> bad = cache.checkInvariants();
                if (!bad.isEmpty()) {
                    failures.add(new AssertionError("invariants " + bad));
                }
            }
        });
        for (Thread t : List.of(owner, child, checker, mover)) {
            t.join(30_000);
        }
        if (!failures.isEmpty()) {
            AssertionError e = new AssertionError(failures.size() + " failures");
            failures.forEach(e::addSuppressed);
            throw e;
        }
        assertEquals(List.of(), cache.checkInvariants());
        assertTrue(forks.get() > 100, "forks handed over: " + forks.get());
        assertTrue(moves.get() > 100, "blocks moved: " + moves.get());
    }

    /** The owner: sequences of random length, each forked four times mid-block while it goes on appending. */
    private static void own(KvBlockManager cache, long end, ConcurrentLinkedQueue<Throwable> failures,
            SynchronousQueue<Handoff> handoffs, AtomicLong forks) throws InterruptedException {
        SplittableRandom random = new SplittableRandom(1);
        for (long key = 1; System.nanoTime() < end && failures.isEmpty(); key += 2) {
            int[] written = new int[0];
            try (Sequence s = cache.openSequence(SequenceOptions.salt("x"))) {
                written = append(s, key, written, B * random.nextInt(3) + 1 + random.nextInt(B - 1));
                for (int f = 0; f < 4; f++) {
                    Sequence fork = s.fork();
                    if (!handoffs.offer(new Handoff(fork, written, key), 10, TimeUnit.SECONDS)) {
                        fork.close();
                        throw new AssertionError("the child took no fork in 10 s"); // it ended on a failure
                    }
                    forks.incrementAndGet();
                    written = append(s, key, written, 1 + random.nextInt(2 * B));
                    if (s.length() % B == 0) {
                        written = append(s, key, written, 1); // keep a partial tail to fork next
                    }
                }
                verify(cache, s, written, key, -1, 0);
            }
        }
    }

    /** Appends n tokens of content key k to s; returns the tokens s now holds. */
    private static int[] append(Sequence s, long k, int[] written, int n) {
        int[] all = Arrays.copyOf(written, written.length + n);
        for (int p = written.length; p < all.length; p++) {
            all[p] = token(k, p);
            appendWritten(s, k, all[p]);
        }
        return all;
    }

    /** The child: appends to each fork (leasing its shared tail in one of four), checks it, closes it. */
    private static void appendToForks(KvBlockManager cache, SynchronousQueue<Handoff> handoffs) throws InterruptedException {
        SplittableRandom random = new SplittableRandom(2);
        for (long key = 2;; key += 2) {
            Handoff h = handoffs.poll(10, TimeUnit.SECONDS);
            if (h == null || h == END) {
                return;
            }
            Sequence c = h.child();
            int split = h.prefix().length;
            int mode = random.nextInt(4);
            BlockLease lease = mode == 1 ? c.lease(split - 1, split) : null;
            int[] all = Arrays.copyOf(h.prefix(), split);
            all = append(c, key, all, 1 + random.nextInt(2 * B));
            if (lease != null && random.nextBoolean()) {
                lease.close();
                lease = null;
            }
            verify(cache, c, all, h.ownerKey(), key, split);
            if (mode == 2) {
                c.close(); // the sequence before its lease
                if (lease != null) {
                    lease.close();
                }
            } else {
                if (lease != null) {
                    lease.close();
                }
                c.close();
            }
        }
    }

    /**
     * Checks a sequence's tokens and K/V (content key a before {@code split}, b from it; {@code b < 0}: a
     * throughout), and that a fresh sequence matches every sealed block of it by its tokens.
     */
    private static void verify(KvBlockManager cache, Sequence s, int[] tokens, long a, long b, int split) {
        assertEquals(tokens.length, s.length());
        for (int p = 0; p < tokens.length; p++) {
            assertEquals(tokens[p], s.tokenAt(p), "position " + p);
        }
        if (b < 0) {
            assertEquals(-1, firstMismatch(s, a, 0, tokens.length));
        } else {
            assertEquals(-1, firstMismatch(s, a, 0, split));
            assertEquals(-1, firstMismatch(s, b, split, tokens.length));
        }
        try (Sequence probe = cache.openSequence(SequenceOptions.salt("x"))) {
            int matched = probe.matchPrefix(tokens);
            if (matched != s.sealedBlocks() * B) {
                assertEquals(s.sealedBlocks() * B, matched, "sealed blocks found by their tokens (split " + split
                        + ")" + missed(cache.diagnostics(), s, matched / B));
            }
        }
    }

    /** The state of each sealed block from {@code from} on, for a failed match's message. */
    private static String missed(CacheDiagnostics d, Sequence s, int from) {
        StringBuilder out = new StringBuilder();
        for (int i = from; i < s.sealedBlocks(); i++) {
            int id = s.blockId(i);
            long[] h = d.blockHash(id);
            out.append("\n block ").append(i).append(" id ").append(id).append(" hash ").append(Long.toHexString(h[0]))
                    .append(" indexed as ").append(d.indexedBlock(h[0], h[1])).append(" on device ")
                    .append(d.isOnDevice(id)).append(" refs ").append(d.referenceCount(id));
        }
        return out.toString();
    }
}

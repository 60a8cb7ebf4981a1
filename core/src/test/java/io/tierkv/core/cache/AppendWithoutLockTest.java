package io.tierkv.core.cache;

import static io.tierkv.core.testing.TestCaches.appendWritten;
import static io.tierkv.core.testing.TestCaches.firstMismatch;
import static io.tierkv.core.testing.TestCaches.smallLayout;
import static io.tierkv.core.testing.TestCaches.writeAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.tierkv.core.KvLayout;
import io.tierkv.core.testing.CacheInvariants;
import io.tierkv.core.testing.TestCaches;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * An append within a block takes no lock when the tail is OPEN and unshared ({@link
 * Sequence#appendToken}): whatever can reach the tail besides its sequence (a fork, a lease, a
 * close) must still send the append through the lock, and appends on several threads must keep
 * every sequence's token ids its own.
 */
class AppendWithoutLockTest {

    @RegisterExtension
    final CacheInvariants invariants = new CacheInvariants();

    private static final int B = 4;

    private PagedKvCache cache(int slots) {
        return TestCaches.singleTier(invariants, CacheOptions.of(smallLayout(B), slots).withAdmissionTimeoutNanos(1_000_000_000L));
    }

    @Test
    void aForkedTailIsCopiedByWhicheverSideAppendsFirstAndEachKeepsItsTokens() {
        PagedKvCache cache = cache(8);
        try (Sequence s = cache.openSequence(SequenceOptions.salt("s"))) {
            appendWritten(s, 1, 10, 11);
            int shared = s.blockId(0);
            try (Sequence c = s.fork()) {
                s.appendToken(12); // refs 2: the lock, and a private copy for s
                assertNotEquals(shared, s.blockId(0), "s appended to a copy");
                c.appendToken(22); // the copy dropped refs to 1: c appends to the original without the lock
                assertEquals(shared, c.blockId(0), "c keeps the original");
                assertEquals(List.of(10, 11, 12), tokensOf(s), "c's append reached nothing of s's");
                assertEquals(List.of(10, 11, 22), tokensOf(c));
                writeAll(s, 1, 2);
                writeAll(c, 1, 2);
                appendWritten(s, 1, 13);
                appendWritten(c, 1, 23);
                assertEquals(2, cache.stats().deviceUsedBlocks(), "two blocks: the original and s's copy");
                assertEquals(-1, firstMismatch(s, 1, 0, 4));
                assertEquals(-1, firstMismatch(c, 1, 0, 4));
                assertEquals(B, matched(cache, "s", 10, 11, 12, 13), "s's block is found by its own tokens");
                assertEquals(B, matched(cache, "s", 10, 11, 22, 23), "c's block is found by its own tokens");
            }
        }
    }

    @Test
    void anAppendToALeasedOpenTailTakesTheLockAndKeepsTheBlock() {
        PagedKvCache cache = cache(8);
        try (Sequence s = cache.openSequence(SequenceOptions.defaults())) {
            appendWritten(s, 1, 10);
            int tail = s.blockId(0);
            try (BlockLease lease = s.lease(0, 1)) {
                appendWritten(s, 1, 11);
                assertEquals(tail, s.blockId(0), "a lease alone does not make the tail shared");
                assertEquals(2, cache.diagnostics().referenceCount(tail));
                assertEquals(tail, lease.blockId(0));
            }
            assertEquals(List.of(10, 11), tokensOf(s));
        }
    }

    @Test
    void anAppendToAClosedSequenceWithinABlockWritesNothingIntoItsReusedId() {
        PagedKvCache cache = cache(8);
        Sequence a = cache.openSequence(SequenceOptions.salt("a"));
        appendWritten(a, 1, 5); // a partial block: freed when a closes
        int id = a.blockId(0);
        a.close();
        try (Sequence c = cache.openSequence(SequenceOptions.salt("c"))) {
            appendWritten(c, 2, 9, 11);
            assertEquals(id, c.blockId(0), "the freed id is reused by the other tenant");
            assertEquals("sequence is closed", assertThrows(IllegalStateException.class, () -> a.appendToken(6)).getMessage());
            assertEquals(List.of(9, 11), tokensOf(c), "a's append reached nothing of c's");
            assertEquals(1, a.length());
        }
    }

    @Test
    void anAppendWithinABlockWritesOnlyTheSequencesOwnMemoryUntilTheLockIsNextTaken() {
        PagedKvCache cache = cache(8);
        try (Sequence s = cache.openSequence(SequenceOptions.defaults())) {
            appendWritten(s, 1, 10); // the lock: a new block
            int id = s.blockId(0);
            int before = rowToken(cache, id, 1);
            s.appendToken(11); // no lock
            assertEquals(11, s.tokenAt(1));
            assertEquals(before, rowToken(cache, id, 1), "the block's row is untouched until the lock is taken");
            appendWritten(s, 1, 12, 13); // the last write seals, under the lock
            writeAll(s, 1, 1);
            assertEquals(1, s.sealedBlocks());
            assertEquals(11, rowToken(cache, id, 1), "in the row before the seal hashed it");
            assertEquals(B, matched(cache, "", 10, 11, 12, 13));
        }
    }

    @Test
    void anAppendThatACloseOnAnotherThreadOvertakesNeverReachesTheBlockThatReusesItsId() throws Exception {
        // Misuse (one thread at a time per sequence), as a cancelling thread might do it: the
        // appender may pass its unlocked checks, be descheduled, and resume after the close freed
        // its tail and another sequence took that id. More runnable threads than CPUs make that likely.
        int b = 256;
        PagedKvCache cache = TestCaches.singleTier(invariants, CacheOptions.of(smallLayout(b), 8)
                .withAdmissionTimeoutNanos(1_000_000_000L));
        java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
        List<Thread> spinners = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            spinners.add(Thread.ofPlatform().daemon(true).start(() -> {
                while (!stop.get()) {
                    Thread.onSpinWait();
                }
            }));
        }
        SplittableRandom random = new SplittableRandom(7);
        long end = System.nanoTime() + 3_000_000_000L;
        int rounds = 0;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment image = arena.allocate(cache.layout().bytesPerBlock());
            while (System.nanoTime() < end) {
                rounds++;
                Sequence s = cache.openSequence(SequenceOptions.salt("a"));
                s.appendToken(7);
                java.util.concurrent.CountDownLatch started = new java.util.concurrent.CountDownLatch(1);
                Thread appender = Thread.ofPlatform().start(() -> {
                    started.countDown();
                    try {
                        while (s.length() < 3 * b - 1) {
                            s.appendToken(0xBAD);
                        }
                    } catch (IllegalStateException closed) {
                        // "sequence is closed": the append the close overtook
                    }
                });
                started.await();
                long spin = System.nanoTime() + random.nextLong(30_000);
                while (System.nanoTime() < spin) {
                    Thread.onSpinWait();
                }
                s.close();
                int lengthAtClose = s.length();
                int[] other = io.tierkv.core.testing.TestCaches.tokens(rounds * b, b);
                try (Sequence s2 = cache.openSequence(SequenceOptions.salt("b"))) {
                    s2.appendBlock(other, 0, image); // takes the freed tail id (the last freed is reused first)
                    appender.join();
                    assertEquals(lengthAtClose, s.length(), "round " + rounds + ": the length at close");
                    for (int p = 0; p < b; p++) {
                        assertEquals(other[p], s2.tokenAt(p), "round " + rounds + ": position " + p + " of block " + s2.blockId(0));
                    }
                    try (Sequence probe = cache.openSequence(SequenceOptions.salt("b"))) {
                        assertEquals(b, probe.matchPrefix(other), "round " + rounds + ": found by its own tokens");
                    }
                }
            }
        } finally {
            stop.set(true);
        }
    }

    @Test
    void aWriteThatACloseOvertakesFlushesNothingIntoTheBlockThatReusesItsTail() throws Exception {
        // Misuse again, made deterministic: the writer waits for the lock (block 0 is shared with
        // a fork) while this thread, holding it, closes the sequence and lets another take its tail.
        PagedKvCache cache = cache(8);
        KvLayout layout = cache.layout();
        Sequence p = cache.openSequence(SequenceOptions.salt("p"));
        appendWritten(p, 1, 10, 11, 12);
        p.appendToken(13); // block 0 full, position 3 unwritten: OPEN
        try (Sequence c = p.fork()) { // block 0 shared: refs 2
            appendWritten(p, 1, 20); // the tail, taken under the lock
            p.appendToken(21); // kept in p
            p.appendToken(22);
            int tail = p.blockId(1);
            int[] other = io.tierkv.core.testing.TestCaches.tokens(500, B);
            java.util.concurrent.atomic.AtomicReference<Throwable> thrown = new java.util.concurrent.atomic.AtomicReference<>();
            try (Sequence q = cache.openSequence(SequenceOptions.salt("q")); Arena arena = Arena.ofConfined()) {
                MemorySegment image = TestCaches.blockImage(arena.allocate(layout.bytesPerBlock()), layout, 9, 0);
                Thread writer;
                cache.lock.lock();
                try {
                    writer = Thread.ofPlatform().start(() -> {
                        try {
                            writeAll(p, 1, 3); // refs 2 on block 0: waits for the lock in writableBlock
                        } catch (Throwable e) {
                            thrown.set(e);
                        }
                    });
                    while (!cache.lock.hasQueuedThread(writer)) {
                        Thread.onSpinWait();
                    }
                    p.close(); // frees the OPEN tail
                    q.appendBlock(other, 0, image); // takes the freed id and seals it
                } finally {
                    cache.lock.unlock();
                }
                writer.join();
                assertEquals(tail, q.blockId(0), "q took p's tail id");
                assertEquals("sequence is closed", thrown.get() == null ? null : thrown.get().getMessage());
                for (int i = 0; i < B; i++) {
                    assertEquals(other[i], q.tokenAt(i), "q's block, position " + i);
                }
                try (Sequence probe = cache.openSequence(SequenceOptions.salt("q"))) {
                    assertEquals(B, probe.matchPrefix(other), "q's block is found by its own tokens");
                }
                assertEquals(-1, firstMismatch(c, 1, 0, 3), "the fork's shared block kept its bytes");
            }
        }
    }

    @Test
    void twoThreadsAppendingTheirOwnSequencesKeepEveryTokenAndPayload() throws Exception {
        PagedKvCache cache = cache(512);
        int threads = 2;
        int sequencesPerThread = 20;
        int tokensPerSequence = 10 * B + 3; // ten sealed blocks and an OPEN tail
        CyclicBarrier start = new CyclicBarrier(threads);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<List<Sequence>>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int thread = t;
                Callable<List<Sequence>> work = () -> {
                    SplittableRandom random = new SplittableRandom(thread);
                    List<Sequence> mine = new ArrayList<>();
                    start.await();
                    for (int i = 0; i < sequencesPerThread; i++) {
                        Sequence s = cache.openSequence(SequenceOptions.salt("t" + thread + "s" + i));
                        for (int p = 0; p < tokensPerSequence; p++) {
                            appendWritten(s, thread * 1_000 + i, random.nextInt(1 << 17));
                            if (p % 7 == 3 && i % 3 == 0) {
                                s.fork().close(); // shares the tail for a moment: the next append copies it
                            }
                        }
                        mine.add(s);
                    }
                    return mine;
                };
                done.add(pool.submit(work));
            }
            for (int t = 0; t < threads; t++) {
                List<Sequence> mine = done.get(t).get(60, TimeUnit.SECONDS);
                SplittableRandom random = new SplittableRandom(t);
                for (int i = 0; i < sequencesPerThread; i++) {
                    Sequence s = mine.get(i);
                    for (int p = 0; p < tokensPerSequence; p++) {
                        assertEquals(random.nextInt(1 << 17), s.tokenAt(p), "thread " + t + " sequence " + i + " position " + p);
                    }
                    assertEquals(-1, firstMismatch(s, t * 1_000 + i, 0, tokensPerSequence), "thread " + t + " sequence " + i);
                    assertEquals(10, s.sealedBlocks());
                    int[] prompt = new int[10 * B];
                    for (int p = 0; p < prompt.length; p++) {
                        prompt[p] = s.tokenAt(p);
                    }
                    assertEquals(10 * B, matched(cache, "t" + t + "s" + i, prompt), "every sealed block is found by its tokens");
                    s.close();
                }
            }
        } finally {
            pool.shutdownNow();
        }
    }

    /** {@return token {@code offset} as block {@code id}'s identity row holds it, read under the lock} */
    private static int rowToken(PagedKvCache cache, int id, int offset) {
        cache.lock.lock();
        try {
            return cache.identities.token(id, offset);
        } finally {
            cache.lock.unlock();
        }
    }

    private static List<Integer> tokensOf(Sequence s) {
        List<Integer> ids = new ArrayList<>();
        for (int p = 0; p < s.length(); p++) {
            ids.add(s.tokenAt(p));
        }
        return ids;
    }

    private static int matched(PagedKvCache cache, String salt, int... prompt) {
        try (Sequence probe = cache.openSequence(SequenceOptions.salt(salt))) {
            return probe.matchPrefix(prompt);
        }
    }
}

package io.tierkv.remote;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.core.DType;
import io.tierkv.core.KvLayout;
import io.tierkv.remote.testing.RedisTargets;
import io.tierkv.remote.testing.RedisProcess;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Faults on a real server this JVM owns: paused with SIGSTOP and resumed, killed and restarted on
 * the same port. Calls must return misses and dropped writes within their timeout, never throw,
 * and never hand over a wrong byte; the breaker must open and close again.
 */
class RemoteFaultTest {

    private static final long FINGERPRINT = KvLayout.of(1, 2, 64, DType.F16, 16).fingerprint();
    private static final long TIMEOUT_NANOS = TimeUnit.MILLISECONDS.toNanos(80);

    private static RemoteOptions faultOptions(RedisProcess server) {
        return RemoteOptions.of(server.url()).withNamespace("faults").withTimeoutNanos(TIMEOUT_NANOS)
                .withBreakerFailures(3).withBreakerOpenNanos(TimeUnit.MILLISECONDS.toNanos(200))
                .withReconnectMaxDelayNanos(TimeUnit.MILLISECONDS.toNanos(100))
                .withConnectTimeoutNanos(TimeUnit.SECONDS.toNanos(2));
    }

    @Test
    void aPausedServerGivesMissesWithinTheTimeoutOpensTheBreakerAndHitsResumeAfterIt() throws Exception {
        try (RedisProcess server = RedisTargets.ownStandalone(); Arena arena = Arena.ofShared();
                RemoteStore store = RemoteStore.open(faultOptions(server), FINGERPRINT)) {
            TestBlocks b = new TestBlocks(arena, 21, 256 << 10, 16);
            fill(server, b, 4);
            server.pause();
            long slowestNanos = 0;
            for (int round = 0; round < 12; round++) {
                int i = round % 4;
                MemorySegment dst = b.dst();
                long t0 = System.nanoTime();
                assertFalse(store.get(b.hi(i), b.lo(i), b.identity(i), dst), "a paused server gives a miss");
                assertFalse(store.put(b.hi(10 + round), b.lo(10 + round), b.identity(0), b.payload(0)),
                        "and drops writes");
                assertEquals(0, store.lookup(b.his(4), b.los(4), 4));
                slowestNanos = Math.max(slowestNanos, System.nanoTime() - t0);
                assertTrue(TestBlocks.untouched(dst), "no byte written into the destination");
            }
            RemoteStats paused = store.stats();
            assertEquals(BreakerState.OPEN, paused.breakerState(), paused.toString());
            assertTrue(paused.breakerTrips() >= 1, paused.toString());
            assertTrue(paused.breakerRejected() > 0, paused.toString());
            assertTrue(paused.timeouts() >= 3, paused.toString());
            // three calls of at most one timeout each, plus scheduling slack on 2 shared cores
            assertTrue(slowestNanos < 3 * TIMEOUT_NANOS + TimeUnit.MILLISECONDS.toNanos(700),
                    "slowest round " + slowestNanos / 1_000_000 + " ms");
            server.resume();
            assertTrue(awaitHit(store, b, 0, 10), "hits resume after SIGCONT: " + store.stats());
            assertEquals(BreakerState.CLOSED, store.stats().breakerState());
            for (int i = 0; i < 4; i++) {
                MemorySegment dst = b.dst();
                assertTrue(store.get(b.hi(i), b.lo(i), b.identity(i), dst));
                assertTrue(b.holds(dst, i), "block " + i);
            }
        }
    }

    @Test
    void aKilledServerRestartedOnItsPortIsReconnectedWithMissesMeanwhileAndNoWrongByte() throws Exception {
        try (RedisProcess server = RedisTargets.ownStandalone(); Arena arena = Arena.ofShared();
                RemoteStore store = RemoteStore.open(faultOptions(server), FINGERPRINT)) {
            TestBlocks b = new TestBlocks(arena, 22, 64 << 10, 16);
            int n = 8;
            fill(server, b, n);
            AtomicBoolean stop = new AtomicBoolean();
            AtomicReference<Throwable> escaped = new AtomicReference<>();
            AtomicLong wrong = new AtomicLong();
            AtomicLong readerHits = new AtomicLong();
            List<Thread> readers = new ArrayList<>();
            for (int t = 0; t < 2; t++) {
                Thread reader = Thread.ofPlatform().start(() -> {
                    MemorySegment[] ids = new MemorySegment[n];
                    MemorySegment[] dsts = new MemorySegment[n];
                    for (int i = 0; i < n; i++) {
                        ids[i] = b.identity(i);
                        dsts[i] = arena.allocate(b.payloadBytes());
                    }
                    try {
                        while (!stop.get()) {
                            int got = store.getAll(b.his(n), b.los(n), ids, dsts, n);
                            for (int i = 0; i < got; i++) {
                                if (!b.holds(dsts[i], i)) {
                                    wrong.incrementAndGet();
                                }
                            }
                            readerHits.addAndGet(got);
                        }
                    } catch (Throwable e) {
                        escaped.set(e);
                    }
                });
                readers.add(reader);
            }
            RedisProcess.sleep(200);
            server.kill();
            long hitsAtKill = readerHits.get();
            for (int round = 0; round < 10; round++) {
                assertFalse(store.get(b.hi(0), b.lo(0), b.identity(0), b.dst()), "the server is gone");
                assertFalse(store.put(b.hi(0), b.lo(0), b.identity(0), b.payload(0)));
                RedisProcess.sleep(20);
            }
            long hitsWhileDown = readerHits.get() - hitsAtKill;
            server.restart();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
            boolean stored = false;
            while (!stored && System.nanoTime() < deadline) {
                stored = true;
                for (int i = 0; i < n; i++) {
                    stored &= store.put(b.hi(i), b.lo(i), b.identity(i), b.payload(i))
                            || store.lookup(new long[] {b.hi(i)}, new long[] {b.lo(i)}, 1) == 1;
                }
                RedisProcess.sleep(20);
            }
            assertTrue(stored, "writes resume after the restart: " + store.stats());
            assertTrue(awaitHit(store, b, n - 1, 10), "reads resume: " + store.stats());
            long hitsBefore = readerHits.get();
            RedisProcess.sleep(300);
            stop.set(true);
            for (Thread r : readers) {
                r.join(10_000);
            }
            assertEquals(null, escaped.get(), "no exception escapes to a caller");
            assertEquals(0, wrong.get(), "every byte returned is the block's");
            assertTrue(hitsWhileDown <= n * 2L, "at most calls already answered count after the kill: " + hitsWhileDown);
            assertTrue(readerHits.get() > hitsBefore, "the readers hit again after the restart");
            RemoteStats s = store.stats();
            assertTrue(s.errors() + s.timeouts() > 0, s.toString());
            assertTrue(s.breakerTrips() >= 1, s.toString());
        }
    }

    @Test
    void writesAServerOutOfMemoryRefusesAreCountedAndLeaveTheBreakerClosedForReads() throws Exception {
        try (RedisProcess server = RedisTargets.ownStandalone(); Arena arena = Arena.ofShared();
                PlainClient admin = new PlainClient("127.0.0.1", server.port());
                RemoteStore store = RemoteStore.open(faultOptions(server).withTimeoutNanos(TimeUnit.SECONDS.toNanos(5)),
                        FINGERPRINT)) {
            TestBlocks b = new TestBlocks(arena, 23, 64 << 10, 16);
            int n = 4;
            fill(server, b, n);
            admin.sync().configSet("maxmemory-policy", "noeviction");
            admin.sync().configSet("maxmemory", "1");
            for (int i = n; i < n + 10; i++) {
                assertFalse(store.put(b.hi(i), b.lo(i), b.identity(i), b.payload(i)), "OOM: put " + i + " dropped");
            }
            long[] hi = new long[4];
            long[] lo = new long[4];
            MemorySegment[] ids = new MemorySegment[4];
            MemorySegment[] srcs = new MemorySegment[4];
            for (int i = 0; i < 4; i++) {
                hi[i] = b.hi(20 + i);
                lo[i] = b.lo(20 + i);
                ids[i] = b.identity(20 + i);
                srcs[i] = b.payload(20 + i);
            }
            assertEquals(0, store.putAll(hi, lo, ids, srcs, 4), "OOM: a batch dropped too");
            RemoteStats s = store.stats();
            assertEquals(14, s.putsDropped(), s.toString());
            assertEquals(14, s.errorReplies(), "every OOM reply counted: " + s);
            assertEquals(0, s.puts(), s.toString());
            assertEquals(0, s.errors() + s.timeouts(), "the server answered every command: " + s);
            assertEquals(BreakerState.CLOSED, s.breakerState(), s.toString());
            assertEquals(0, s.breakerTrips(), s.toString());
            assertEquals(0, admin.sync().exists(PlainClient.bytes(store.keyOf(b.hi(n), b.lo(n)))), "nothing stored");
            assertEquals(n, store.lookup(b.his(n), b.los(n), n), "the valid values are still found");
            MemorySegment[] readIds = new MemorySegment[n];
            MemorySegment[] dsts = new MemorySegment[n];
            for (int i = 0; i < n; i++) {
                readIds[i] = b.identity(i);
                dsts[i] = b.dst();
            }
            assertEquals(n, store.getAll(b.his(n), b.los(n), readIds, dsts, n), "and read: " + store.stats());
            for (int i = 0; i < n; i++) {
                assertTrue(b.holds(dsts[i], i), "block " + i);
            }
            admin.sync().configSet("maxmemory", "0");
            assertTrue(store.put(b.hi(n), b.lo(n), b.identity(n), b.payload(n)), "writes resume with memory");
        }
    }

    /** Writes blocks 0..n-1 through a store with a generous timeout (a cold JVM is slow to start). */
    private static void fill(RedisProcess server, TestBlocks b, int n) {
        try (RemoteStore setup = RemoteStore.open(faultOptions(server).withTimeoutNanos(TimeUnit.SECONDS.toNanos(5)),
                FINGERPRINT)) {
            for (int i = 0; i < n; i++) {
                assertTrue(setup.put(b.hi(i), b.lo(i), b.identity(i), b.payload(i)));
            }
        }
    }

    private static boolean awaitHit(RemoteStore store, TestBlocks b, int i, int seconds) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (System.nanoTime() < deadline) {
            MemorySegment dst = b.dst();
            if (store.get(b.hi(i), b.lo(i), b.identity(i), dst)) {
                assertTrue(b.holds(dst, i));
                return true;
            }
            RedisProcess.sleep(20);
        }
        return false;
    }
}

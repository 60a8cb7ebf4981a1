package io.tierkv.natives;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.natives.emulated.CopyQueue;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class CopyQueueTest {

    private static CopyQueue.Task blockingOn(CountDownLatch latch) {
        return () -> {
            try {
                latch.await();
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        };
    }

    @Test
    void tasksRunInSubmissionOrderOnTheWorkerThread() {
        List<String> ran = new CopyOnWriteArrayList<>();
        try (CopyQueue q = new CopyQueue("test-worker", 4)) {
            long last = 0;
            for (int i = 0; i < 50; i++) {
                int n = i;
                last = q.submit(() -> ran.add(Thread.currentThread().getName() + ":" + n));
            }
            assertEquals(50, last);
            q.await(last);
            assertEquals(50, q.completedSeq());
        }
        for (int i = 0; i < 50; i++) {
            assertEquals("test-worker:" + i, ran.get(i));
        }
    }

    @Test
    void aFailedTaskFailsWaitsAtOrAfterItSkipsLaterCopiesAndStillReleasesThem() throws Exception {
        CountDownLatch gate = new CountDownLatch(1);
        AtomicInteger laterCopyRan = new AtomicInteger();
        AtomicInteger released = new AtomicInteger();
        AtomicInteger markerRan = new AtomicInteger();
        try (CopyQueue q = new CopyQueue("test-worker", 8)) {
            long first = q.submit(blockingOn(gate));
            long failing = q.submit(() -> {
                throw new IllegalStateException("Already closed");
            });
            long marker = q.submit(new CopyQueue.Task() {
                @Override
                public void run() {
                    markerRan.incrementAndGet();
                }

                @Override
                public boolean isMarker() {
                    return true;
                }
            });
            long later = q.submit(new CopyQueue.Task() {
                @Override
                public void run() {
                    laterCopyRan.incrementAndGet();
                }

                @Override
                public void release() {
                    released.incrementAndGet();
                }
            });
            try {
                assertFalse(q.isDone(first));
            } finally {
                gate.countDown();
            }
            q.await(first);
            var e = assertThrows(GpuException.class, () -> q.await(failing));
            assertEquals(700, e.code());
            assertEquals("emulatedErrorIllegalAddress", e.name());
            assertEquals("EMULATED emulatedErrorIllegalAddress (700): queued task #2 failed:"
                    + " java.lang.IllegalStateException: Already closed", e.getMessage());
            assertThrows(GpuException.class, () -> q.await(marker));
            assertThrows(GpuException.class, () -> q.await(later));
            assertEquals(1, markerRan.get());
            assertEquals(0, laterCopyRan.get());
            assertEquals(1, released.get());
            assertTrue(q.isDone(first));
        }
    }

    @Test
    void otherExceptionsMapToUnknown() {
        try (CopyQueue q = new CopyQueue("test-worker", 2)) {
            long seq = q.submit(() -> {
                throw new ArithmeticException("boom");
            });
            var e = assertThrows(GpuException.class, () -> q.await(seq));
            assertEquals(999, e.code());
        }
    }

    @Test
    void aFullQueueBlocksTheSubmitterUntilTheWorkerMakesRoom() throws Exception {
        CountDownLatch gate = new CountDownLatch(1);
        try (CopyQueue q = new CopyQueue("test-worker", 2)) {
            q.submit(blockingOn(gate)); // taken by the worker, which blocks
            q.submit(() -> {});
            q.submit(() -> {}); // the queue now holds 2 (its capacity)
            CountDownLatch submitted = new CountDownLatch(1);
            Thread t = Thread.ofPlatform().start(() -> {
                q.submit(() -> {});
                submitted.countDown();
            });
            try {
                assertFalse(submitted.await(200, TimeUnit.MILLISECONDS), "submit to a full queue returned");
            } finally {
                gate.countDown();
            }
            assertTrue(submitted.await(10, TimeUnit.SECONDS));
            t.join();
            q.awaitAll();
            assertEquals(4, q.completedSeq());
        }
    }

    @Test
    void closeDrainsQueuedTasksAndLaterSubmitsAreRefusedButReleased() {
        AtomicInteger ran = new AtomicInteger();
        AtomicInteger released = new AtomicInteger();
        CopyQueue q = new CopyQueue("test-worker", 100);
        for (int i = 0; i < 100; i++) {
            q.submit(ran::incrementAndGet);
        }
        q.close();
        q.close();
        assertEquals(100, ran.get());
        assertThrows(IllegalStateException.class, () -> q.submit(new CopyQueue.Task() {
            @Override
            public void run() {}

            @Override
            public void release() {
                released.incrementAndGet();
            }
        }));
        assertEquals(1, released.get());
    }

    @Test
    void runOrSubmitRunsInlineOnlyOnAnIdleQueueAndKeepsStreamOrder() throws Exception {
        List<String> ran = new CopyOnWriteArrayList<>();
        CountDownLatch gate = new CountDownLatch(1);
        String caller = Thread.currentThread().getName();
        try (CopyQueue q = new CopyQueue("test-worker", 4)) {
            long inline = q.runOrSubmit(() -> ran.add("a:" + Thread.currentThread().getName()));
            assertEquals(1, inline);
            assertTrue(q.isDone(inline), "an inline task is done when runOrSubmit returns");
            assertEquals(List.of("a:" + caller), ran);
            long blocked = q.submit(blockingOn(gate)); // the worker is busy from here on
            long behind = q.runOrSubmit(() -> ran.add("b:" + Thread.currentThread().getName()));
            assertEquals(2, blocked);
            assertEquals(3, behind);
            Thread.sleep(50);
            assertFalse(q.isDone(behind), "a task ran before the busy worker's task ended");
            assertEquals(1, ran.size());
            gate.countDown();
            q.await(behind);
            assertEquals(List.of("a:" + caller, "b:test-worker"), ran);
            long again = q.runOrSubmit(() -> ran.add("c:" + Thread.currentThread().getName()));
            long queued = q.submit(() -> ran.add("d:" + Thread.currentThread().getName()));
            assertEquals(4, again);
            assertEquals(5, queued);
            q.await(queued);
            assertEquals(5, q.completedSeq());
            assertEquals(List.of("a:" + caller, "b:test-worker", "c:" + caller, "d:test-worker"), ran);
        }
    }

    @Test
    void aTaskThatRefusesToRunInlineIsQueuedAndOneThatThrowsInlineFailsTheQueue() {
        AtomicInteger released = new AtomicInteger();
        List<String> ran = new CopyOnWriteArrayList<>();
        try (CopyQueue q = new CopyQueue("test-worker", 4)) {
            long deferred = q.runOrSubmit(new CopyQueue.Task() {
                @Override
                public void run() {
                    ran.add(Thread.currentThread().getName());
                }

                @Override
                public boolean runInline() {
                    return false;
                }
            });
            q.await(deferred);
            assertEquals(List.of("test-worker"), ran);
            long failing = q.runOrSubmit(new CopyQueue.Task() {
                @Override
                public void run() {
                    throw new IllegalStateException("Already closed");
                }

                @Override
                public void release() {
                    released.incrementAndGet();
                }
            });
            assertEquals(2, failing);
            assertEquals(1, released.get(), "release runs before runOrSubmit returns");
            var e = assertThrows(GpuException.class, () -> q.isDone(failing));
            assertEquals("EMULATED emulatedErrorIllegalAddress (700): queued task #2 failed:"
                    + " java.lang.IllegalStateException: Already closed", e.getMessage());
            long after = q.runOrSubmit(() -> ran.add("after:" + Thread.currentThread().getName()));
            assertThrows(GpuException.class, () -> q.await(after)); // waits, then reports the failure
            assertEquals(3, q.completedSeq()); // a failed queue runs nothing inline: the worker skipped it
            assertEquals(List.of("test-worker"), ran);
        }
    }

    @Test
    void tryCopyInlineCopiesOnAnIdleQueueOnlyAndFinishedCleanlyTellsFailuresApart() throws Exception {
        CountDownLatch gate = new CountDownLatch(1);
        try (Arena arena = Arena.ofConfined(); CopyQueue q = new CopyQueue("test-worker", 4)) {
            MemorySegment src = arena.allocate(64).fill((byte) 7);
            MemorySegment dst = arena.allocate(64);
            assertTrue(q.finishedCleanly(q.submittedSeq()), "an empty queue has nothing pending");
            assertEquals(1, q.tryCopyInline(src, 0, dst, 0, 64));
            assertEquals(-1L, src.mismatch(dst), "copied when the call returns");
            assertTrue(q.finishedCleanly(1));
            long blocked = q.submit(blockingOn(gate));
            assertEquals(-1, q.tryCopyInline(src, 0, dst, 0, 64), "a busy queue copies nothing inline");
            assertEquals(blocked, q.submittedSeq(), "and numbers nothing");
            assertFalse(q.finishedCleanly(blocked));
            gate.countDown();
            q.await(blocked);
            assertTrue(q.finishedCleanly(blocked));
            long failing = q.tryCopyInline(src, 0, dst, 32, 64); // out of bounds: fails the queue at its number
            assertEquals(blocked + 1, failing);
            var e = assertThrows(GpuException.class, () -> q.isDone(failing));
            assertEquals(700, e.code());
            assertFalse(q.finishedCleanly(failing), "finished, but failed");
            assertTrue(q.finishedCleanly(blocked), "a failure after a task does not taint it");
            assertEquals(-1, q.tryCopyInline(src, 0, dst, 0, 64), "a failed queue copies nothing inline");
        }
    }

    @Test
    void waitersOnSeveralThreadsWakeWhenTheirTasksFinish() throws Exception {
        for (int round = 0; round < 50; round++) {
            CountDownLatch gate = new CountDownLatch(1);
            try (CopyQueue q = new CopyQueue("test-worker", 8)) {
                long first = q.submit(blockingOn(gate));
                long second = q.submit(() -> { });
                List<Thread> waiters = new java.util.ArrayList<>();
                AtomicInteger woken = new AtomicInteger();
                for (int i = 0; i < 4; i++) {
                    long seq = i % 2 == 0 ? first : second;
                    Thread t = Thread.ofPlatform().start(() -> {
                        q.await(seq);
                        woken.incrementAndGet();
                    });
                    waiters.add(t);
                }
                gate.countDown();
                for (Thread t : waiters) {
                    t.join(TimeUnit.SECONDS.toMillis(10));
                    assertFalse(t.isAlive(), "a waiter was not woken (round " + round + ")");
                }
                assertEquals(4, woken.get());
            }
        }
    }
}

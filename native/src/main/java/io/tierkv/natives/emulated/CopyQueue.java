package io.tierkv.natives.emulated;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.tierkv.natives.GpuException;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * The engine of one emulated stream: a bounded queue of tasks run in order by one worker thread,
 * with sequence numbers so that callers can wait for "everything queued up to here".
 *
 * <p>Sequence numbers start at 1 and follow queue order. {@link #completedSeq()} is the last task
 * the worker finished (run or skipped). The first task that throws makes the queue fail: its
 * number and a {@link GpuException} ({@code emulatedErrorIllegalAddress} for memory that was
 * closed or out of range, {@code emulatedErrorUnknown} otherwise) are kept; later copies are
 * skipped (their {@link Task#release()} still runs) and every wait at or after that number throws
 * the failure, like a sticky CUDA error. Markers ({@link Task#isMarker()}) always run.
 *
 * <p>Inline runs: {@link #runOrSubmit(Task)} runs a task on the calling thread when the stream is
 * idle (nothing queued or running, no failure) and the task agrees ({@link Task#runInline()}),
 * holding the submit lock so that no other submitter can slip a task in front of it; it gets the
 * next sequence number and is complete when the call returns, as a real asynchronous copy may be
 * complete before its call returns. This saves the hand-off to the worker (tens to hundreds of
 * microseconds on these machines) when nothing is queued. {@link #tryCopyInline} does the same for a
 * plain copy without a task object, so that an inline copy allocates nothing.
 *
 * <p>Waking waiters: a finished task publishes its number ({@code completedSeq}, volatile) and then
 * notifies {@link #await} callers only if one is registered ({@code waiters}, volatile, counted
 * before the waiter reads {@code completedSeq}): of the two writes and two reads, one side
 * always sees the other's, so no wake-up is lost, and a completion nobody waits for (an inline
 * run, the usual case) costs no monitor.
 *
 * <p>Back-pressure: at most {@code capacity} tasks ({@value #DEFAULT_CAPACITY} by default) wait
 * behind the one running; a submit to a full queue blocks until the worker takes the next task, as
 * a full hardware queue does.
 *
 * <p>Thread-safety: {@link #submit(Task)}, the waits and {@link #close()} are thread-safe.
 */
public final class CopyQueue implements AutoCloseable {

    /** Default number of tasks that can wait in the queue. */
    public static final int DEFAULT_CAPACITY = 1024;

    /** A unit of work for the worker. */
    public interface Task {
        /** Does the work on the worker thread; may throw to fail the queue. */
        void run();

        /** Runs after {@link #run()}, or instead of it when the task is skipped; must not throw. */
        default void release() {}

        /**
         * Runs the task on the submitting thread if it may run now; the default runs it. A task
         * that must wait its turn on the worker (a stalled copy) returns false having done nothing.
         * May throw to fail the queue, as {@link #run()}.
         *
         * @return whether the task ran
         */
        default boolean runInline() {
            run();
            return true;
        }

        /**
         * Whether this task marks a point (an event) rather than moving bytes: markers run even
         * after a failure.
         *
         * @return true for a marker
         */
        default boolean isMarker() {
            return false;
        }
    }

    private record Failure(long seq, GpuException error) {}

    private static final Task STOP = () -> {};

    private final LinkedBlockingQueue<Task> queue = new LinkedBlockingQueue<>();
    private final Semaphore waitingSlots;
    private final Thread worker;
    private final Object submitLock = new Object();
    private final Object progress = new Object();
    /** Written under submitLock; volatile so that {@link #submittedSeq()} reads it without the lock. */
    private volatile long submittedSeq;
    private volatile long completedSeq;
    /** Threads in {@link #await} (changed under {@code progress}): a completion wakes them only if there are any. */
    private volatile int waiters;
    private volatile Failure failure;
    @GuardedBy("submitLock") private boolean stopped;

    /**
     * Starts the worker thread (a daemon).
     *
     * @param threadName the worker's name
     * @param capacity tasks that may wait, {@code > 0}
     * @throws IllegalArgumentException if capacity is not positive
     */
    public CopyQueue(String threadName, int capacity) {
        if (capacity <= 0) {
            throw new IllegalArgumentException("capacity: " + capacity + " (expected > 0)");
        }
        this.waitingSlots = new Semaphore(capacity);
        this.worker = Thread.ofPlatform().name(threadName).daemon(true).unstarted(this::workLoop);
        this.worker.start();
    }

    /**
     * Queues a task, blocking while the queue is full.
     *
     * @param task the task
     * @return its sequence number
     * @throws IllegalStateException if the queue is closed (the task's release runs first)
     */
    public long submit(Task task) {
        synchronized (submitLock) {
            if (stopped) {
                task.release();
                throw new IllegalStateException("stream is closed");
            }
            acquireSlotUninterruptibly();
            queue.add(task);
            return ++submittedSeq;
        }
    }

    /**
     * Runs a task on the calling thread if the stream is idle (every task submitted so far has
     * finished, none failed, the queue is open) and {@link Task#runInline()} agrees; otherwise
     * queues it as {@link #submit(Task)}. Either way the task keeps its place in stream order: an
     * inline run holds the submit lock, so a concurrent submitter queues behind it, and the
     * worker has nothing left to run before it. A task that throws inline fails the queue at its
     * number, as on the worker; its {@link Task#release()} runs before this returns.
     *
     * @param task the task
     * @return its sequence number; when it ran inline, {@link #isDone(long)} is already true (or throws its failure)
     * @throws IllegalStateException if the queue is closed (the task's release runs first)
     */
    public long runOrSubmit(Task task) {
        synchronized (submitLock) {
            if (idle()) {
                long seq = submittedSeq + 1;
                boolean ran;
                try {
                    ran = task.runInline();
                } catch (Throwable t) {
                    failure = new Failure(seq, toGpuException(seq, t));
                    ran = true;
                }
                if (ran) {
                    task.release();
                    finishInline(seq);
                    return seq;
                }
            }
            return submit(task);
        }
    }

    /**
     * A copy run inline as {@link #runOrSubmit(Task)} runs a task, without a task object (none to
     * allocate per copy): if the stream is idle, copies {@code bytes} on the calling thread and
     * returns its number; else does nothing and returns -1, and the caller queues the copy as a
     * task. The caller checks beforehand what its task's {@link Task#runInline()} would (a stall)
     * and releases what the copy held once this returns. A copy that throws fails the queue at
     * its number, as a task does.
     *
     * @param src       source segment
     * @param srcOffset first source byte
     * @param dst       destination segment
     * @param dstOffset first destination byte
     * @param bytes     bytes to copy
     * @return its sequence number ({@link #isDone(long)} already true, or throwing its failure),
     *     or -1 if the stream was not idle
     */
    public long tryCopyInline(MemorySegment src, long srcOffset, MemorySegment dst, long dstOffset, long bytes) {
        synchronized (submitLock) {
            if (!idle()) {
                return -1;
            }
            long seq = submittedSeq + 1;
            try {
                MemorySegment.copy(src, srcOffset, dst, dstOffset, bytes);
            } catch (Throwable t) {
                failure = new Failure(seq, toGpuException(seq, t));
            }
            finishInline(seq);
            return seq;
        }
    }

    /** Open, not failed, and every task queued has finished: a task may run inline now. Under submitLock. */
    @GuardedBy("submitLock")
    private boolean idle() {
        return !stopped && failure == null && completedSeq == submittedSeq;
    }

    /** Numbers and completes a task that ran inline. Under submitLock. */
    @GuardedBy("submitLock")
    private void finishInline(long seq) {
        submittedSeq = seq;
        complete(seq);
    }

    /**
     * The number of the last task queued: at least that of every task this thread queued before
     * the call, so waiting for it waits for all of them.
     *
     * @return 0 if none
     */
    public long submittedSeq() {
        return submittedSeq;
    }

    /**
     * The number of the last task the worker finished.
     *
     * @return 0 if none
     */
    public long completedSeq() {
        return completedSeq;
    }

    /**
     * Whether task {@code seq} has finished, throwing the failure if it happened at or before it.
     *
     * @param seq a sequence number from {@link #submit(Task)}
     * @return true once finished
     * @throws GpuException if a task numbered {@code <= seq} failed
     */
    public boolean isDone(long seq) {
        throwIfFailedAtOrBefore(seq);
        return completedSeq >= seq;
    }

    /**
     * Whether task {@code seq} has finished and no task up to it failed: {@link #isDone(long)}
     * without the throw.
     *
     * @param seq a sequence number
     * @return true once finished without a failure at or before it
     */
    public boolean finishedCleanly(long seq) {
        if (completedSeq < seq) {
            return false;
        }
        Failure f = failure; // read after completedSeq: a task's failure is set before its number is
        return f == null || f.seq() > seq;
    }

    /**
     * Blocks until task {@code seq} has finished.
     *
     * @param seq a sequence number from {@link #submit(Task)}
     * @throws GpuException if a task numbered {@code <= seq} failed
     */
    public void await(long seq) {
        if (completedSeq < seq) {
            boolean interrupted = false;
            synchronized (progress) {
                waiters++; // before reading completedSeq: see the class comment
                try {
                    while (completedSeq < seq && worker.isAlive()) {
                        try {
                            progress.wait();
                        } catch (InterruptedException e) {
                            interrupted = true;
                        }
                    }
                } finally {
                    waiters--;
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
        throwIfFailedAtOrBefore(seq);
    }

    /**
     * Blocks until everything queued so far has finished.
     *
     * @throws GpuException if a queued task failed
     */
    public void awaitAll() {
        await(submittedSeq());
    }

    /**
     * Refuses new tasks, lets the worker finish the queued ones, and stops it. A second call is a
     * no-op.
     */
    @Override
    public void close() {
        synchronized (submitLock) {
            if (stopped) {
                return;
            }
            stopped = true;
            queue.add(STOP); // needs no slot: close never waits for room
        }
        boolean interrupted = false;
        while (worker.isAlive()) {
            try {
                worker.join();
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    private void throwIfFailedAtOrBefore(long seq) {
        Failure f = failure;
        if (f != null && f.seq() <= seq) {
            throw f.error();
        }
    }

    private void acquireSlotUninterruptibly() {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    if (waitingSlots.tryAcquire(1, TimeUnit.SECONDS)) {
                        return;
                    }
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Polls for the next task for up to {@link #SPIN_NANOS} before the worker parks: a copy that
     * follows another within that time starts without a thread wake-up (tens of microseconds on
     * these machines), as a DMA engine polling its doorbell would.
     */
    private Task pollBriefly() {
        long until = System.nanoTime() + SPIN_NANOS;
        Task task;
        while ((task = queue.poll()) == null && System.nanoTime() < until) {
            Thread.onSpinWait();
        }
        return task;
    }

    /** How long the worker polls for work before it parks: 50 microseconds. */
    private static final long SPIN_NANOS = 50_000;

    private void workLoop() {
        while (true) {
            Task task = pollBriefly();
            if (task == null) {
                try {
                    task = queue.take();
                } catch (InterruptedException e) {
                    continue; // only close() stops the worker, so queued releases always run
                }
            }
            if (task == STOP) {
                synchronized (progress) {
                    progress.notifyAll();
                }
                return;
            }
            waitingSlots.release();
            // Every earlier task has finished (queued ones on this thread, inline ones before this
            // task was queued), so this task's number follows the last completed one.
            long seq = completedSeq + 1;
            try {
                if (failure == null || task.isMarker()) {
                    task.run();
                }
            } catch (Throwable t) {
                failure = new Failure(seq, toGpuException(seq, t));
            } finally {
                task.release();
            }
            complete(seq);
        }
    }

    /** Publishes that task {@code seq} finished and wakes the waiters, if any (see the class comment). */
    private void complete(long seq) {
        completedSeq = seq;
        if (waiters != 0) {
            synchronized (progress) {
                progress.notifyAll();
            }
        }
    }

    private static GpuException toGpuException(long seq, Throwable t) {
        EmulatedError code = t instanceof IllegalStateException || t instanceof IndexOutOfBoundsException
                ? EmulatedError.ILLEGAL_ADDRESS
                : EmulatedError.UNKNOWN;
        GpuException e = new GpuException("EMULATED", code.code(), code.cName(),
                "queued task #" + seq + " failed: " + t);
        e.initCause(t);
        return e;
    }
}

package io.tierkv.natives.emulated;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.tierkv.natives.GpuException;
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
 * microseconds on these machines) when nothing is queued.
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
    @GuardedBy("submitLock")
    private long submittedSeq;
    private volatile long completedSeq;
    private volatile Failure failure;
    @GuardedBy("submitLock")
    private boolean stopped;

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
            if (!stopped && failure == null && completedSeq == submittedSeq) {
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
                    submittedSeq = seq;
                    synchronized (progress) {
                        completedSeq = seq;
                        progress.notifyAll();
                    }
                    return seq;
                }
            }
            return submit(task);
        }
    }

    /**
     * The number of the last task queued.
     *
     * @return 0 if none
     */
    public long submittedSeq() {
        synchronized (submitLock) {
            return submittedSeq;
        }
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
     * Blocks until task {@code seq} has finished.
     *
     * @param seq a sequence number from {@link #submit(Task)}
     * @throws GpuException if a task numbered {@code <= seq} failed
     */
    public void await(long seq) {
        if (completedSeq < seq) {
            boolean interrupted = false;
            synchronized (progress) {
                while (completedSeq < seq && worker.isAlive()) {
                    try {
                        progress.wait();
                    } catch (InterruptedException e) {
                        interrupted = true;
                    }
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
            synchronized (progress) {
                completedSeq = seq;
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

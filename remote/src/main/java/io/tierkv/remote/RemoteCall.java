package io.tierkv.remote;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisFuture;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One public call's wait for its commands: a single deadline for all of them (so a batch waits at
 * most one timeout, not one per command), and, at {@link #finish()}, one report to the breaker and
 * the counters: a timeout, an error, or a success.
 *
 * <p>What counts against the server: a command that timed out, or that failed without an answer
 * (connection lost, refused while disconnected). A command the server answered with an error
 * ({@code OOM} under {@code maxmemory} with {@code noeviction}, {@code READONLY}, {@code LOADING},
 * any {@code -ERR}) proves the server reachable and answered at once, so it is counted in
 * {@link RemoteCounters#errorReplies} as it arrives and the call still reports a success to the
 * breaker: a server that refuses writes must not close off the reads it still serves.
 *
 * <p>Confined to the calling thread.
 */
final class RemoteCall {

    private final CircuitBreaker breaker;
    private final RemoteCounters counters;
    private final long deadlineNanos;
    private boolean timedOut;
    private boolean failed;

    /**
     * Starts the clock of a call that the breaker admitted.
     *
     * @param breaker      the store's breaker, told the outcome at {@link #finish()}
     * @param counters     the store's counters
     * @param timeoutNanos the call's timeout
     */
    RemoteCall(CircuitBreaker breaker, RemoteCounters counters, long timeoutNanos) {
        this(breaker, counters, timeoutNanos, System.nanoTime() + timeoutNanos);
    }

    /**
     * Starts the clock of a call that the breaker admitted and whose caller has a deadline of its
     * own (a prefix match's several calls share one): it waits until that deadline or its own
     * timeout, whichever comes first. A call that times out at the caller's deadline counts as a
     * timeout to the breaker too: the server did not answer in the time the caller had.
     *
     * @param breaker       the store's breaker, told the outcome at {@link #finish()}
     * @param counters      the store's counters
     * @param timeoutNanos  the call's own timeout
     * @param deadlineNanos the caller's deadline, on {@link System#nanoTime()}'s clock
     */
    RemoteCall(CircuitBreaker breaker, RemoteCounters counters, long timeoutNanos, long deadlineNanos) {
        this.breaker = breaker;
        this.counters = counters;
        long own = System.nanoTime() + timeoutNanos;
        this.deadlineNanos = deadlineNanos - own < 0 ? deadlineNanos : own;
    }

    /**
     * Waits for a command until the deadline, without recording its outcome.
     *
     * @param future the command's future
     * @return whether it completed (normally or not) in time
     */
    boolean awaitQuietly(RedisFuture<?> future) {
        long left = deadlineNanos - System.nanoTime();
        try {
            return future.isDone() || (left > 0 && future.await(left, TimeUnit.NANOSECONDS));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /**
     * Waits for a command until the deadline and records a timeout, a failure without an answer,
     * or an error reply (counted at once in {@code errorReplies}; not a failure of the call).
     *
     * @param future the command's future
     * @return whether it completed normally in time (then {@code future.resultNow()} is its result)
     */
    boolean await(RedisFuture<?> future) {
        long left = Math.max(0, deadlineNanos - System.nanoTime());
        try {
            future.get(left, TimeUnit.NANOSECONDS);
            return true;
        } catch (TimeoutException e) {
            timedOut = true;
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RedisCommandTimeoutException) {
                timedOut = true;
            } else if (e.getCause() instanceof RedisCommandExecutionException) {
                counters.errorReplies.increment();
            } else {
                failed = true;
            }
        } catch (CancellationException e) {
            failed = true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            failed = true;
        }
        return false;
    }

    /**
     * {@return whether a command of this call has timed out or failed without an answer so far}
     * (Later commands of a broken call are not waited for.)
     */
    boolean broken() {
        return timedOut || failed;
    }

    /**
     * Reports the call to the breaker and counts one timeout or one error, if any. A call whose
     * commands were all answered, some with errors, is a success to the breaker.
     */
    void finish() {
        if (timedOut) {
            counters.timeouts.increment();
            breaker.onFailure();
        } else if (failed) {
            counters.errors.increment();
            breaker.onFailure();
        } else {
            breaker.onSuccess();
        }
    }

    /**
     * Counts the outcome of a command nobody waits for (a delete, an LRU touch): a timeout, an
     * error reply or a failure without an answer; the breaker is not told.
     *
     * @param counters the store's counters
     * @param error    the command's failure, or null
     */
    static void countUnwaited(RemoteCounters counters, Throwable error) {
        if (error instanceof RedisCommandTimeoutException) {
            counters.timeouts.increment();
        } else if (error instanceof RedisCommandExecutionException) {
            counters.errorReplies.increment();
        } else if (error != null) {
            counters.errors.increment();
        }
    }
}

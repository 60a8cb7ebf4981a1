package io.tierkv.remote;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import java.util.function.LongSupplier;

/**
 * A circuit breaker over calls to the server: after {@code failureThreshold} consecutive failed
 * calls it opens and refuses calls for {@code openNanos}; then it lets one probe call through
 * (half-open): the probe's success closes it, its failure opens it again for another
 * {@code openNanos}. (The pattern of Nygard, "Release It!", ch. 5; the half-open single probe as
 * in resilience4j.) A failed call is one that timed out or got no answer; a call the server
 * answered, even with an error reply, is a success ({@link RemoteCall}).
 *
 * <p>Thread-safe. The closed-state fast path ({@link #tryAcquire()} and {@link #onSuccess()}
 * while nothing failed) reads one volatile field; transitions happen under this object's monitor.
 */
final class CircuitBreaker {

    private final int failureThreshold;
    private final long openNanos;
    private final LongSupplier nanoClock;

    private volatile BreakerState state = BreakerState.CLOSED;
    /** Consecutive failures while closed. Written under {@code this}; read without it on the fast path. */
    private volatile int failures;
    /** When the breaker last opened, by {@link #nanoClock}. */
    @GuardedBy("this") private long openedAtNanos;
    /** Closed-to-open and half-open-to-open transitions. */
    @GuardedBy("this") private long trips;
    /** Calls refused while open or half-open. */
    @GuardedBy("this") private long rejected;

    /**
     * A closed breaker.
     *
     * @param failureThreshold consecutive failures that open it, >= 1
     * @param openNanos        how long it stays open before a probe, > 0
     * @param nanoClock        the time source ({@link System#nanoTime} in production)
     */
    CircuitBreaker(int failureThreshold, long openNanos, LongSupplier nanoClock) {
        this.failureThreshold = failureThreshold;
        this.openNanos = openNanos;
        this.nanoClock = nanoClock;
    }

    /**
     * Asks to make a call. A caller that got {@code true} must report its outcome with
     * {@link #onSuccess()} or {@link #onFailure()}.
     *
     * @return whether the call may go to the server; false is counted as rejected
     */
    boolean tryAcquire() {
        if (state == BreakerState.CLOSED) {
            return true;
        }
        synchronized (this) {
            if (state == BreakerState.CLOSED) {
                return true;
            }
            if (state == BreakerState.OPEN && nanoClock.getAsLong() - openedAtNanos >= openNanos) {
                state = BreakerState.HALF_OPEN;
                return true;
            }
            rejected++;
            return false;
        }
    }

    /**
     * Reports a call that the server answered in time (with results or error replies): closes a
     * half-open breaker.
     */
    void onSuccess() {
        if (state == BreakerState.CLOSED && failures == 0) {
            return;
        }
        synchronized (this) {
            failures = 0;
            state = BreakerState.CLOSED;
        }
    }

    /** Reports a call that timed out or failed without an answer: may open the breaker. */
    synchronized void onFailure() {
        if (state == BreakerState.HALF_OPEN) {
            open();
        } else if (state == BreakerState.CLOSED) {
            int n = failures + 1;
            failures = n;
            if (n >= failureThreshold) {
                open();
            }
        }
    }

    @GuardedBy("this")
    private void open() {
        state = BreakerState.OPEN;
        openedAtNanos = nanoClock.getAsLong();
        failures = 0;
        trips++;
    }

    /** {@return the current state} */
    BreakerState state() {
        return state;
    }

    /** {@return how many times the breaker opened} */
    synchronized long trips() {
        return trips;
    }

    /** {@return how many calls it refused} */
    synchronized long rejected() {
        return rejected;
    }
}

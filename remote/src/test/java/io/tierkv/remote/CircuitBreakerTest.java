package io.tierkv.remote;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The breaker's transitions on a clock the test moves. */
class CircuitBreakerTest {

    private final AtomicLong now = new AtomicLong(1_000);
    private final CircuitBreaker breaker = new CircuitBreaker(3, 100, now::get);

    @Test
    void opensAfterTheThresholdOfConsecutiveFailuresOnly() {
        breaker.onFailure();
        breaker.onFailure();
        breaker.onSuccess();
        breaker.onFailure();
        breaker.onFailure();
        assertEquals(BreakerState.CLOSED, breaker.state(), "a success in between resets the count");
        breaker.onFailure();
        assertEquals(BreakerState.OPEN, breaker.state());
        assertEquals(1, breaker.trips());
        assertFalse(breaker.tryAcquire());
        assertEquals(1, breaker.rejected());
    }

    @Test
    void letsOneProbeThroughAfterTheBackOffAndItsOutcomeDecides() {
        for (int i = 0; i < 3; i++) {
            breaker.onFailure();
        }
        now.addAndGet(99);
        assertFalse(breaker.tryAcquire(), "still open");
        now.addAndGet(1);
        assertTrue(breaker.tryAcquire(), "the probe");
        assertEquals(BreakerState.HALF_OPEN, breaker.state());
        assertFalse(breaker.tryAcquire(), "one probe at a time");
        breaker.onFailure();
        assertEquals(BreakerState.OPEN, breaker.state(), "a failed probe opens it again");
        assertEquals(2, breaker.trips());
        now.addAndGet(100);
        assertTrue(breaker.tryAcquire());
        breaker.onSuccess();
        assertEquals(BreakerState.CLOSED, breaker.state());
        assertTrue(breaker.tryAcquire());
        assertEquals(2, breaker.rejected());
    }
}

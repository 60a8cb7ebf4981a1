package io.tierkv.remote;

import java.util.concurrent.atomic.LongAdder;

/**
 * The store's counters, one {@link LongAdder} each (many threads count at once). The fields are
 * the {@link RemoteStats} components of the same names.
 *
 * <p>Thread-safe.
 */
final class RemoteCounters {

    final LongAdder lookups = new LongAdder();
    final LongAdder lookupKeysFound = new LongAdder();
    final LongAdder gets = new LongAdder();
    final LongAdder hits = new LongAdder();
    final LongAdder misses = new LongAdder();
    final LongAdder puts = new LongAdder();
    final LongAdder putsPresent = new LongAdder();
    final LongAdder putsDropped = new LongAdder();
    final LongAdder bytesWritten = new LongAdder();
    final LongAdder bytesRead = new LongAdder();
    final LongAdder damagedDeleted = new LongAdder();
    final LongAdder foreignDeleted = new LongAdder();
    final LongAdder mismatchedDeleted = new LongAdder();
    final LongAdder collisions = new LongAdder();
    final LongAdder timeouts = new LongAdder();
    final LongAdder errors = new LongAdder();
    final LongAdder errorReplies = new LongAdder();
    final LongAdder lruEvicted = new LongAdder();

    /**
     * Counts a read's outcome other than a hit (the miss itself is counted by the caller).
     *
     * @param outcome what the read found
     */
    void countMissReason(ReadOutcome outcome) {
        switch (outcome) {
            case DAMAGED -> damagedDeleted.increment();
            case FOREIGN -> foreignDeleted.increment();
            case MISMATCHED -> mismatchedDeleted.increment();
            case COLLISION -> collisions.increment();
            case HIT, ABSENT -> { }
        }
    }

    /**
     * {@return a snapshot}
     *
     * @param breaker       the store's breaker
     * @param inFlightBytes value bytes in flight now
     */
    RemoteStats snapshot(CircuitBreaker breaker, long inFlightBytes) {
        return new RemoteStats(lookups.sum(), lookupKeysFound.sum(), gets.sum(), hits.sum(), misses.sum(),
                puts.sum(), putsPresent.sum(), putsDropped.sum(), bytesWritten.sum(), bytesRead.sum(),
                damagedDeleted.sum(), foreignDeleted.sum(), mismatchedDeleted.sum(), collisions.sum(),
                timeouts.sum(), errors.sum(), errorReplies.sum(), breaker.state(), breaker.trips(), breaker.rejected(),
                lruEvicted.sum(), inFlightBytes);
    }
}

package io.tierkv.core;

/**
 * A tier store's counters since it opened (the remote tier's store, for example), as the tier
 * manager reports them in its statistics ({@code TierStats.RemoteTierStats#store()}). Counters
 * only grow, except {@code breakerState}. Public, unlike the store SPI that produces it
 * ({@code io.tierkv.core.spi}), because the manager's statistics carry it.
 *
 * @param lookups       lookup calls
 * @param lookupHits    leading keys those calls found, in total
 * @param gets          blocks asked for by reads
 * @param hits          blocks read and verified
 * @param puts          blocks stored
 * @param putsPresent   writes whose key already held a value
 * @param putsDropped   writes not made: store unreachable, breaker open, bound on bytes in flight,
 *                      timeout or error
 * @param bytesWritten  payload bytes stored
 * @param bytesRead     payload bytes read
 * @param damaged       values found damaged, foreign or of another length (deleted by the store)
 * @param collisions    values of another identity under an expected hash (kept; a miss)
 * @param timeouts      calls past the store's timeout
 * @param errors        calls that failed other than by a timeout: commands left without an answer (a lost
 *                      connection) and error replies of a live server
 * @param breakerState  the store's circuit breaker now ({@code CLOSED}, {@code OPEN},
 *                      {@code HALF_OPEN}; {@code NONE} for a store without one)
 */
public record StoreStats(long lookups, long lookupHits, long gets, long hits, long puts, long putsPresent,
                         long putsDropped, long bytesWritten, long bytesRead, long damaged, long collisions,
                         long timeouts, long errors, String breakerState) {}

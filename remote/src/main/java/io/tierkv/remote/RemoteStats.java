package io.tierkv.remote;

/**
 * A snapshot of a {@link RemoteStore}'s counters since it opened. Counters are read one after
 * another while calls run, so a snapshot taken under load may be a few operations off between
 * fields; every field only grows except {@code breakerState} and {@code inFlightBytes}.
 *
 * @param lookups           {@code lookup} calls
 * @param lookupKeysFound   leading keys those calls found, in total
 * @param gets              blocks asked for by {@code get} and {@code getAll}
 * @param hits              blocks read, verified and copied
 * @param misses            blocks asked for and not returned, for any reason ({@code gets - hits}
 *                          once calls have returned)
 * @param puts              blocks stored by {@code put}
 * @param putsPresent       puts whose key already held a value (write-once: not overwritten)
 * @param putsDropped       puts not made or not stored: breaker open, in-flight bound,
 *                          timeout, no answer, or an error reply (such as {@code OOM})
 * @param bytesWritten      payload bytes of the blocks stored
 * @param bytesRead         payload bytes of the blocks read
 * @param damagedDeleted    values with a bad magic, version, length or CRC32C, and keys holding
 *                          another type than a string, deleted
 * @param foreignDeleted    values written for another layout fingerprint, deleted
 * @param mismatchedDeleted values of this layout whose payload length was not the reader's,
 *                          deleted
 * @param collisions        values of another identity under the same hash, kept
 * @param timeouts          calls (or fire-and-forget commands) past their timeout
 * @param errors            calls (or fire-and-forget commands) that failed without an answer:
 *                          connection lost, refused while disconnected (each call one breaker
 *                          failure)
 * @param errorReplies      commands the server answered with an error: {@code OOM} (its
 *                          {@code maxmemory} reached under {@code noeviction}), {@code READONLY},
 *                          {@code LOADING}, any {@code -ERR}; not breaker failures (the server
 *                          answered); a put so answered is in {@code putsDropped} too
 * @param breakerState      the breaker's state now
 * @param breakerTrips      times the breaker opened
 * @param breakerRejected   calls refused by an open breaker without touching the network
 * @param lruEvicted        blocks the owned LRU evicted (0 with server eviction)
 * @param inFlightBytes     value bytes of writes sent and not yet answered, now
 */
public record RemoteStats(long lookups, long lookupKeysFound, long gets, long hits, long misses, long puts,
                          long putsPresent, long putsDropped, long bytesWritten, long bytesRead,
                          long damagedDeleted, long foreignDeleted, long mismatchedDeleted, long collisions,
                          long timeouts, long errors, long errorReplies, BreakerState breakerState, long breakerTrips,
                          long breakerRejected, long lruEvicted, long inFlightBytes) {}

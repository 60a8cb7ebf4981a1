package io.tierkv.tiers.events;

/**
 * A snapshot of a manager's KV event queue.
 *
 * @param queueCapacity  most events waiting
 * @param depth          events waiting now
 * @param queued         events the tiers reported that entered the queue
 * @param dropped        events dropped because the queue was full
 * @param batches        batches delivered to the listener
 * @param delivered      events delivered in them: the queued ones less the duplicates of a copy
 *                       already reported (folded), plus the final {@code AllBlocksCleared}, which is
 *                       delivered at close without being queued
 * @param listenerErrors exceptions the listener threw
 */
public record KvEventStats(int queueCapacity, int depth, long queued, long dropped, long batches, long delivered,
        long listenerErrors) {
}

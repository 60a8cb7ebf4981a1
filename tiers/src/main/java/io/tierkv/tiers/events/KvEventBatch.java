package io.tierkv.tiers.events;

import java.util.List;
import java.util.Objects;

/**
 * The events drained together from a manager's event queue, as vLLM publishes a step's events
 * as one {@code KVEventBatch}.
 *
 * <p>Sequence numbers: the first batch of a manager is 0; each next batch is the previous one
 * plus 1 plus {@link #droppedBefore()}, the events dropped (queue full) since the previous batch.
 * So a consumer sees a lost event as a gap, and the gaps add up to the dropped events.
 *
 * @param sequence         this batch's sequence number, >= 0
 * @param timestampSeconds when the batch was formed, seconds since the epoch (vLLM's {@code ts})
 * @param events           the events, in the order the tiers reported them; immutable, not empty
 * @param droppedBefore    events dropped between the previous batch and this one, >= 0
 */
public record KvEventBatch(long sequence, double timestampSeconds, List<KvEvent> events, long droppedBefore) {

    /**
     * Validates and copies.
     *
     * @throws NullPointerException     if events is null
     * @throws IllegalArgumentException if sequence or droppedBefore is negative
     */
    public KvEventBatch {
        events = List.copyOf(Objects.requireNonNull(events, "events"));
        if (sequence < 0) {
            throw new IllegalArgumentException("sequence: " + sequence + " (expected >= 0)");
        }
        if (droppedBefore < 0) {
            throw new IllegalArgumentException("droppedBefore: " + droppedBefore + " (expected >= 0)");
        }
    }
}

package io.tierkv.tiers.events;

/**
 * Receives a manager's KV events in batches, in-process: for runtimes that route requests
 * themselves, and for publishers (the {@code observe} module's ZeroMQ publisher is one). Given to
 * {@code KvBlockManagerBuilder.kvEvents}.
 *
 * <p>Called on the manager's one event thread, never on the data path, one batch at a time in
 * sequence order; a slow listener fills the bounded queue and later events are dropped (counted,
 * and visible as a sequence gap), the data path never waits. Whatever is thrown here (an
 * exception or an {@code Error}) is counted ({@link KvEventStats#listenerErrors()}) and the next
 * batch is still delivered; an interrupt left on the thread is cleared and stops nothing.
 *
 * <p>The manager calls {@link #onEvents}, whose default builds a {@link KvEventBatch} (an object
 * per event) and calls {@link #onBatch}; a listener that encodes or indexes events as they come
 * overrides {@link #onEvents} and reads the {@link KvEventView} in place instead.
 */
@FunctionalInterface
public interface KvEventListener {

    /**
     * Receives one batch.
     *
     * @param batch the batch; immutable
     */
    void onBatch(KvEventBatch batch);

    /**
     * Receives one batch as a view over the event queue: what the manager calls. The default
     * copies the events into a {@link KvEventBatch} and calls {@link #onBatch}.
     *
     * @param sequence         the batch's sequence number ({@link KvEventBatch#sequence()})
     * @param timestampSeconds when the batch was formed, seconds since the epoch
     * @param droppedBefore    events dropped since the previous batch, >= 0
     * @param events           the events, not empty; valid only during this call
     */
    default void onEvents(long sequence, double timestampSeconds, long droppedBefore, KvEventView events) {
        onBatch(new KvEventBatch(sequence, timestampSeconds, events.events(), droppedBefore));
    }
}

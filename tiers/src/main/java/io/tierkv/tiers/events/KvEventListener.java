package io.tierkv.tiers.events;

/**
 * Receives a manager's KV events in batches, in-process: for runtimes that route requests
 * themselves, and for publishers (the {@code observe} module's ZeroMQ publisher is one). Given to
 * {@code KvBlockManagerBuilder.kvEvents}.
 *
 * <p>Called on the manager's one event thread, never on the data path, one batch at a time in
 * sequence order; a slow listener fills the bounded queue and later events are dropped (counted,
 * and visible as a sequence gap), the data path never waits. An exception thrown here is counted
 * ({@link KvEventStats#listenerErrors()}) and the next batch is still delivered.
 */
@FunctionalInterface
public interface KvEventListener {

    /**
     * Receives one batch.
     *
     * @param batch the batch; immutable
     */
    void onBatch(KvEventBatch batch);
}

/**
 * KV events in vLLM's model: {@link io.tierkv.tiers.events.KvEvent} (BlockStored, BlockRemoved,
 * AllBlocksCleared), their batches and the in-process {@link io.tierkv.tiers.events.KvEventListener}.
 * The tiers report through {@link io.tierkv.core.event.KvEventSink}; the manager's bounded queue
 * turns those reports into batches on its own thread. Wire encoding (msgpack over ZeroMQ) lives in
 * the {@code observe} module, so this package needs nothing beyond the JDK.
 */
package io.tierkv.tiers.events;

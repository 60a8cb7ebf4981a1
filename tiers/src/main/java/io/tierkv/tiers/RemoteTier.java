package io.tierkv.tiers;

import io.tierkv.core.KvLayout;
import io.tierkv.core.StoreStats;
import io.tierkv.core.prefix.BlockIdentity;
import io.tierkv.core.spi.BlockStore;

/**
 * The remote tier as the manager wires it: a {@link BlockStore} below the lowest local tier, the
 * outbox that sends it the blocks leaving that tier ({@link RemotePush}), and the fetch that brings
 * blocks up for a prefix match ({@link RemoteFetch}).
 *
 * <p>Where blocks go down: a record the disk tier evicts, verified, just before its bytes go
 * ({@link io.tierkv.tiers.disk.store.DepartureSink}); without a disk tier, an unreferenced
 * hashed host block the host tier frees for room. Where they come up: a prefix match that misses
 * locally fetches the rest of its chain into host slots with every lock released, then adopts
 * them as host-resident blocks (promoted to the device by the lease, like any host block). With
 * write-through, every block demoted to the host is sent as well, from its new host slot.
 *
 * <p>Outbox size: {@value #OUTBOX_BYTES} bytes of blocks (at least 1, at most
 * {@value #OUTBOX_MAX_BLOCKS} blocks), allocated at build. Thread-safe.
 */
final class RemoteTier implements AutoCloseable {

    /** Bytes of blocks the outbox holds at most. */
    static final long OUTBOX_BYTES = 64L << 20;
    /** Most blocks in the outbox. */
    static final int OUTBOX_MAX_BLOCKS = 8192;

    final BlockStore store;
    final RemotePush push;
    final RemoteFetch fetch;
    /** Whether every block is also sent when it is demoted to the host tier. */
    final boolean writeThrough;

    RemoteTier(BlockStore store, KvLayout layout, HostTier host, boolean writeThrough) {
        this.store = store;
        this.writeThrough = writeThrough;
        long block = layout.bytesPerBlock();
        int buffers = (int) Math.max(1, Math.min(OUTBOX_MAX_BLOCKS, OUTBOX_BYTES / block));
        this.push = new RemotePush(store, buffers, block, BlockIdentity.bytes(layout.blockSizeTokens()));
        this.fetch = new RemoteFetch(host, store);
    }

    /**
     * Reports the store's contents as KV events ({@link io.tierkv.core.event.KvMedium#REMOTE}):
     * stored for each block this manager's outbox got stored, removed for each value the store
     * reports gone (its own LRU's evictions, damaged values it deleted; an eviction made by the
     * outbox's own write is reported after that write's stores). Values the server evicts
     * or expires on its own are invisible to a client and not reported. Before first use.
     *
     * @param sink where the events go
     */
    void setEventSink(io.tierkv.core.event.KvEventSink sink) {
        push.events = sink;
        store.setRemovalListener(push::removed); // a removal during the outbox's own write follows that write's stores
    }

    /** {@return the remote tier's counters for {@link TierStats}} */
    TierStats.RemoteTierStats stats() {
        StoreStats s = store.storeStats();
        return new TierStats.RemoteTierStats(store.describe(), s, push.offered.sum(), push.dropped.sum(),
                push.pending(), fetch.fetched.sum(), fetch.adopted.sum());
    }

    /** Sends what the outbox holds (bounded wait), then closes the store. */
    @Override
    public void close() {
        push.close();
        store.close();
    }
}

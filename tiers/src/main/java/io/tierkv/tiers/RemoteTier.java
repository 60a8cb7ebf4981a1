package io.tierkv.tiers;

import io.tierkv.core.KvLayout;
import io.tierkv.core.StoreStats;
import io.tierkv.core.cache.RemoteRecords;
import io.tierkv.core.prefix.BlockIdentity;
import io.tierkv.core.spi.BlockStore;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.LongAdder;

/**
 * The remote tier as the cache's moves drive it ({@link RemoteRecords}): a {@link BlockStore}
 * below the lowest local tier and the outbox that sends it the blocks offered ({@link
 * RemotePush}). It calls no tier and never the cache: which blocks go down and which come up, the
 * cache decides.
 *
 * <p>Where blocks go down (the cache's offers): a record the disk tier evicts, verified, just
 * before its bytes go ({@link io.tierkv.core.cache.DiskRecords#setDepartures}); without a disk
 * tier, an unreferenced hashed host block evicted for room; with write-through, every block
 * demoted to the host, from its new host slot. Where they come up: a prefix match that misses
 * locally looks the rest of its chain up ({@link #lookup}) and fetches the leading blocks found
 * into host slots the cache reserved ({@link #fetch}), with every lock released; the cache adopts
 * them as host-resident blocks.
 *
 * <p>A lookup asks for at most a quarter of the host slots and {@value #MAX_FETCH_BLOCKS} blocks.
 * Outbox size: {@value #OUTBOX_BYTES} bytes of blocks (at least 1, at most
 * {@value #OUTBOX_MAX_BLOCKS} blocks), allocated at build. Thread-safe.
 */
final class RemoteTier implements RemoteRecords, AutoCloseable {

    /** Bytes of blocks the outbox holds at most. */
    static final long OUTBOX_BYTES = 64L << 20;
    /** Most blocks in the outbox. */
    static final int OUTBOX_MAX_BLOCKS = 8192;
    /** Most blocks one fetch brings in. */
    static final int MAX_FETCH_BLOCKS = 256;

    final BlockStore store;
    final RemotePush push;
    /** Whether every block is also offered when it is demoted to the host tier. */
    private final boolean writeThrough;
    /** Most blocks one lookup counts: a quarter of the host slots, at least 1, at most {@value #MAX_FETCH_BLOCKS}. */
    private final int fetchBlocks;
    private final LongAdder fetched = new LongAdder();
    private final LongAdder adopted = new LongAdder();

    /**
     * Starts the outbox on an open store.
     *
     * @param store        the store, open
     * @param layout       the blocks' layout
     * @param hostBlocks   host slots, which bound one fetch
     * @param writeThrough whether every block is offered when it is demoted to the host tier
     */
    RemoteTier(BlockStore store, KvLayout layout, int hostBlocks, boolean writeThrough) {
        this.store = store;
        this.writeThrough = writeThrough;
        this.fetchBlocks = Math.min(MAX_FETCH_BLOCKS, Math.max(1, hostBlocks / 4));
        long block = layout.bytesPerBlock();
        int buffers = (int) Math.max(1, Math.min(OUTBOX_MAX_BLOCKS, OUTBOX_BYTES / block));
        this.push = new RemotePush(store, buffers, block, BlockIdentity.bytes(layout.blockSizeTokens()));
    }

    /** {@inheritDoc} Pipelined {@code EXISTS} ({@link BlockStore#lookup}); a store that throws is a reported miss. */
    @Override
    public int lookup(long[] hashHi, long[] hashLo, int count, long startNanos) {
        try {
            return store.lookup(hashHi, hashLo, Math.min(count, fetchBlocks), startNanos + store.timeoutNanos());
        } catch (RuntimeException e) { // a store that broke its contract: a miss, never a failed match
            TierEvents.fault("remote lookup failed: " + e);
            return 0;
        }
    }

    /** {@inheritDoc} {@link BlockStore#getAll}; a store that throws is a reported miss. */
    @Override
    public int fetch(long[] hashHi, long[] hashLo, MemorySegment[] identities, MemorySegment[] dsts, int count,
            long startNanos) {
        if (count == 0) {
            return 0;
        }
        try {
            int got = store.getAll(hashHi, hashLo, identities, dsts, count, startNanos + store.timeoutNanos());
            fetched.add(got);
            return got;
        } catch (RuntimeException e) { // a store that broke its contract: a miss, never a failed match
            TierEvents.fault("remote fetch failed: " + e);
            return 0;
        }
    }

    /** {@inheritDoc} Into the outbox ({@link RemotePush#offer}). */
    @Override
    public boolean offer(long hashHi, long hashLo, MemorySegment identity, MemorySegment block) {
        return push.offer(hashHi, hashLo, identity, block);
    }

    @Override
    public boolean writesThrough() {
        return writeThrough;
    }

    @Override
    public void countAdopted() {
        adopted.increment();
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
                push.pending(), fetched.sum(), adopted.sum());
    }

    /** Sends what the outbox holds (bounded wait), then closes the store. */
    @Override
    public void close() {
        push.close();
        store.close();
    }
}

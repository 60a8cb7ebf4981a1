package io.tierkv.core.cache;

import io.tierkv.core.event.KvBlockHash;
import io.tierkv.core.event.KvMedium;
import java.util.List;
import java.util.Objects;

/**
 * A read-only view of a cache's block state, for tests, tools and diagnostics: where a block is,
 * its hash and reference count, slots in use. Answers describe one moment and may be stale at
 * once. Obtained from {@link PagedKvCache#diagnostics()}; thread-safe (each call takes the cache
 * lock); changes nothing.
 */
public final class CacheDiagnostics {

    private final PagedKvCache cache;

    CacheDiagnostics(PagedKvCache cache) {
        this.cache = cache;
    }

    /**
     * Tells whether a block's bytes are on the top tier now.
     *
     * @param blockId a block id
     * @return whether the block's bytes are on the top tier now
     */
    public boolean isOnDevice(int blockId) {
        cache.lock.lock();
        try {
            return cache.blocks.slot[blockId] >= 0;
        } finally {
            cache.lock.unlock();
        }
    }

    /** {@return top-tier slots in use (blocks plus reservations), 0..capacity} */
    public int deviceUsedBlocks() {
        cache.lock.lock();
        try {
            return cache.admission.slots.usedCount();
        } finally {
            cache.lock.unlock();
        }
    }

    /**
     * Blocks an allocation could have now without waiting: free slots plus candidates that can
     * leave (cached blocks for a single-tier cache).
     *
     * @return available blocks, 0..capacity
     */
    public int availableBlocks() {
        cache.lock.lock();
        try {
            return cache.admission.slots.freeCount() + cache.policy.size();
        } finally {
            cache.lock.unlock();
        }
    }

    /**
     * The block id registered under a hash, for tests and diagnostics.
     *
     * @param hi hash high word
     * @param lo hash low word
     * @return the block id, or -1
     */
    public int indexedBlock(long hi, long lo) {
        cache.lock.lock();
        try {
            return cache.prefix.index.get(hi, lo);
        } finally {
            cache.lock.unlock();
        }
    }

    /**
     * The chained hash of a sealed block, for tests and diagnostics.
     *
     * @param blockId a block id
     * @return {hi, lo}, or {0, 0} for an unsealed block
     */
    public long[] blockHash(int blockId) {
        cache.lock.lock();
        try {
            return new long[] {cache.blocks.hashHi[blockId], cache.blocks.hashLo[blockId]};
        } finally {
            cache.lock.unlock();
        }
    }

    /**
     * The reference count of a block (table references plus leases), for tests and diagnostics.
     *
     * @param blockId a block id
     * @return its reference count
     */
    public int referenceCount(int blockId) {
        cache.lock.lock();
        try {
            return cache.blocks.refs[blockId];
        } finally {
            cache.lock.unlock();
        }
    }

    /** {@return top-tier slots} */
    public int deviceCapacityBlocks() {
        return cache.options.deviceBlocks(); // the slot allocator's fixed capacity, read without the lock
    }

    /**
     * The block hashes findable in one tier now, by the definition the KV events use ({@link
     * io.tierkv.core.event.KvEventSink}): what a consumer that applied every event so far holds for
     * that medium. Taken for one tier at a time; for a consistent picture of all tiers call it
     * when the manager is quiet (no sequence working, movers idle). {@code REMOTE} is always empty:
     * a remote store is shared by managers, and this one does not keep a copy of what it holds
     * (its REMOTE events are hints; README, "When events are sent").
     *
     * @param medium the tier
     * @return the hashes, once per block (GPU) or per copy (below); empty for {@code REMOTE}; a fresh list
     * @throws NullPointerException if medium is null
     */
    public List<KvBlockHash> findableHashes(KvMedium medium) {
        Objects.requireNonNull(medium, "medium");
        if (medium != KvMedium.GPU && medium != KvMedium.CPU) {
            return cache.lower == null ? List.of() : cache.lower.findableHashes(medium);
        }
        cache.lock.lock();
        try {
            return medium == KvMedium.GPU ? cache.events.findableHashes() : cache.copiesBelow.findableOnHost();
        } finally {
            cache.lock.unlock();
        }
    }
}

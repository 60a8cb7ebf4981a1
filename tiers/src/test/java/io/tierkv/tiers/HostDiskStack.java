package io.tierkv.tiers;

import io.tierkv.core.cache.CacheOptions;
import io.tierkv.core.cache.LowerTier;
import io.tierkv.core.cache.PagedKvCache;
import io.tierkv.core.prefix.HashAlgorithm;
import io.tierkv.natives.EmulatedDevice;
import io.tierkv.natives.PinnedHostBuffer;
import io.tierkv.tiers.disk.Compression;
import io.tierkv.tiers.disk.DiskOptions;
import io.tierkv.tiers.disk.store.DiskTier;
import io.tierkv.core.cache.Sequence;
import io.tierkv.core.cache.SequenceOptions;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.function.Function;

import static io.tierkv.core.testing.TestCaches.appendWritten;
import static io.tierkv.core.testing.TestCaches.tokens;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A cache over an emulated device, a host tier and an uncompressed disk tier (or none), built from
 * the parts (no manager, no mover), for tests that drive the tiers' interleavings by hand: {@link #BLOCKS}
 * device and host slots, {@link #MAX_BLOCKS} block ids, LRU, no recent-block protection, a 2 ms
 * admission timeout. The host tier is bound to the cache; {@link #close} closes everything in order.
 */
final class HostDiskStack implements AutoCloseable {

    static final int BLOCKS = 4;
    static final int MAX_BLOCKS = 16;

    final EmulatedDevice runtime;
    final DeviceTier device;
    final PinnedHostBuffer pinned;
    /** The disk tier, or null if built without one. */
    final DiskTier disk;
    /** The disk tier's directory. */
    final Path dir;
    final HostTier host;
    /** The cache's lower tier: {@link #host} or the wrapper made of it. */
    final LowerTier lower;
    final PagedKvCache cache;

    /**
     * @param dir     the disk tier's directory (created)
     * @param lowerOf the cache's lower tier, given the host tier (the host tier itself, or a wrapper)
     */
    HostDiskStack(Path dir, Function<HostTier, LowerTier> lowerOf) {
        this(dir, lowerOf, true);
    }

    /**
     * @param dir      the disk tier's directory (created if {@code withDisk})
     * @param lowerOf  the cache's lower tier, given the host tier (the host tier itself, or a wrapper)
     * @param withDisk whether a disk tier lies below the host; else the host is the lowest local tier
     */
    HostDiskStack(Path dir, Function<HostTier, LowerTier> lowerOf, boolean withDisk) {
        this.dir = dir;
        int bb = Managers.LAYOUT.bytesPerBlock();
        runtime = new EmulatedDevice((long) BLOCKS * bb + (1 << 20));
        device = new DeviceTier(runtime, BLOCKS, bb);
        pinned = runtime.allocatePinnedHost((long) BLOCKS * bb);
        disk = !withDisk ? null : DiskTier.open(
                DiskOptions.at(dir).withCompression(Compression.NONE).withLowSpaceWarnBytes(0), Managers.LAYOUT);
        host = new HostTier(Managers.LAYOUT, device, pinned, BLOCKS, MAX_BLOCKS, "lru", disk, new StagingPool(1, bb),
                CacheOptions.DEFAULT_PROMOTION_TIMEOUT_NANOS, new TierCounters());
        CacheOptions options = new CacheOptions(Managers.LAYOUT, BLOCKS, MAX_BLOCKS, "lru",
                HashAlgorithm.MURMUR3_128, 0, 2_000_000, CacheOptions.DEFAULT_PROMOTION_TIMEOUT_NANOS);
        lower = lowerOf.apply(host);
        cache = new PagedKvCache(options, device, lower);
    }

    /** A block spilled by {@link #spillCachedBlock}: its id, its identity (a copy) and its hash. */
    record Spilled(int id, MemorySegment identity, long hashHi, long hashLo) {
    }

    /**
     * Writes one block (token ids 0..15, pattern 7), then makes it a cached block (indexed,
     * referenced by nobody) held only by an unpinned disk record: referenced while it is demoted
     * and spilled (so its id is kept), then released.
     *
     * @param arena owns the identity copy
     * @return the block
     */
    Spilled spillCachedBlock(Arena arena) {
        int id = cachedBlock();
        try (Sequence holder = cache.openSequence(SequenceOptions.defaults())) {
            assertEquals(16, holder.matchPrefix(tokens(0, 32)));
            assertTrue(cache.tierControl().demoteBlock(id), "demoted to the host");
            Spilled spilled;
            host.blocks.lock.lock();
            try {
                spilled = new Spilled(id, arena.allocate(host.blocks.identityBytes).copyFrom(
                        host.blocks.identityOf(id)), host.blocks.hashHi(id), host.blocks.hashLo(id));
            } finally {
                host.blocks.lock.unlock();
            }
            java.util.List<Integer> queued = new java.util.ArrayList<>();
            assertEquals(1, cache.tierControl().queueSpills(1, queued::add), "the host's one block queued to spill");
            assertEquals(java.util.List.of(id), queued);
            assertTrue(cache.tierControl().spillQueued(id), "spilled to disk");
            return spilled;
        }
    }

    /** {@return a block written (tokens 0..15, pattern 7) and cached: unreferenced, indexed, on the device} */
    int cachedBlock() {
        try (Sequence first = cache.openSequence(SequenceOptions.defaults())) {
            appendWritten(first, 7, tokens(0, 16));
            return first.blockId(0);
        }
    }

    /**
     * A block written over tokens {@code first..first+15} (pattern {@code key}) and demoted to the
     * host; its sequence kept open in {@code keep} (the block referenced), or closed if null.
     *
     * @return the block id
     */
    int onHost(long key, int first, java.util.List<Sequence> keep) {
        Sequence s = cache.openSequence(SequenceOptions.defaults());
        appendWritten(s, key, tokens(first, 16));
        int id = s.blockId(0);
        if (keep != null) {
            keep.add(s);
        } else {
            s.close();
        }
        assertTrue(cache.tierControl().demoteBlock(id), "demoted to the host");
        return id;
    }

    /** {@return {@link #cachedBlock}, demoted to the host} */
    int cachedOnHost() {
        int id = cachedBlock();
        assertTrue(cache.tierControl().demoteBlock(id), "demoted to the host");
        return id;
    }

    @Override
    public void close() {
        try (runtime; device; pinned; disk; host; cache) {
            // closed in reverse order: the cache, the host tier, the disk, the pinned buffer, the device, the runtime
        }
    }
}

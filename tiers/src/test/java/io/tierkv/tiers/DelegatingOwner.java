package io.tierkv.tiers;

import io.tierkv.core.cache.BlockOwner;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.locks.ReentrantLock;

/** The cache's {@link BlockOwner} behind one of a test's own, which overrides the answer it watches or changes. */
class DelegatingOwner implements BlockOwner {

    private final BlockOwner owner;

    /** @param owner the cache's view every call goes to unless overridden */
    DelegatingOwner(BlockOwner owner) {
        this.owner = owner;
    }

    @Override
    public ReentrantLock lock() {
        return owner.lock();
    }

    @Override
    public MemorySegment identity(int blockId) {
        return owner.identity(blockId);
    }

    @Override
    public long hashHi(int blockId) {
        return owner.hashHi(blockId);
    }

    @Override
    public long hashLo(int blockId) {
        return owner.hashLo(blockId);
    }

    @Override
    public boolean referenced(int blockId) {
        return owner.referenced(blockId);
    }
}

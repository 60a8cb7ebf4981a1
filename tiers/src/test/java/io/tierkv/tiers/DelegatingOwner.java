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
    public int maxBlocks() {
        return owner.maxBlocks();
    }

    @Override
    public int hostSlot(int blockId) {
        return owner.hostSlot(blockId);
    }

    @Override
    public void setHostSlot(int blockId, int hostSlot) {
        owner.setHostSlot(blockId, hostSlot);
    }

    @Override
    public byte belowBits(int blockId) {
        return owner.belowBits(blockId);
    }

    @Override
    public void setBelowBits(int blockId, byte bits) {
        owner.setBelowBits(blockId, bits);
    }

    @Override
    public boolean referenced(int blockId) {
        return owner.referenced(blockId);
    }
}

package io.tierkv.core.cache;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The cache's {@link BlockOwner}: its lock, its identity records, its hashes, its HELD bits, and
 * the residency facts below that the tier below records in it. Thread-safe as the interface says.
 */
final class OwnerView implements BlockOwner {

    private final ReentrantLock lock;
    private final BlockStates blocks;
    private final IdentityTable records;

    OwnerView(ReentrantLock lock, BlockStates blocks, IdentityTable records) {
        this.lock = lock;
        this.blocks = blocks;
        this.records = records;
    }

    @Override
    public ReentrantLock lock() {
        return lock;
    }

    @Override
    public MemorySegment identity(int blockId) {
        return records.of(blockId);
    }

    @Override
    public long hashHi(int blockId) {
        return blocks.hashHi[blockId];
    }

    @Override
    public long hashLo(int blockId) {
        return blocks.hashLo[blockId];
    }

    @Override
    public int hostSlot(int blockId) {
        return blocks.hostSlot[blockId];
    }

    @Override
    public void setHostSlot(int blockId, int hostSlot) {
        blocks.hostSlot[blockId] = hostSlot;
    }

    @Override
    public byte belowBits(int blockId) {
        return blocks.below[blockId];
    }

    @Override
    public void setBelowBits(int blockId, byte bits) {
        blocks.below[blockId] = bits;
    }

    @Override
    public int maxBlocks() {
        return blocks.capacity();
    }

    @Override
    public boolean referenced(int blockId) {
        return (blocks.bits[blockId] & BlockStates.HELD) != 0;
    }
}

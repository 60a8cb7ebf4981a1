package io.tierkv.core.cache;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.locks.ReentrantLock;

/** The cache's {@link BlockOwner}: its lock, its identity records, its hashes, its HELD bits. Thread-safe as the interface says. */
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
    public boolean referenced(int blockId) {
        return (blocks.bits[blockId] & BlockStates.HELD) != 0;
    }
}

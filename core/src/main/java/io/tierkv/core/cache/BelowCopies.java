package io.tierkv.core.cache;

import static io.tierkv.core.cache.BlockOwner.HOST_CLEAN;

/**
 * Where a block's copy is below the top tier, answered in one place from the cache's own records
 * ({@link BlockStates#hostSlot} and {@link BlockStates#below}, which the tier below writes through
 * {@link BlockOwner}) and, for a disk copy, whether the record the id is bound to is still there
 * ({@link DiskCopies#held}). Before, the tier below answered it
 * itself in three ways (a residence, a take-over of a clean copy, a settled notice). Every method
 * is called with the cache lock held.
 */
// Every method runs with the cache lock held by a caller in another class, which Error Prone
// cannot relate to this class's cache.lock (it has no aliasing).
@SuppressWarnings("GuardedBy")
final class BelowCopies {

    private final BlockStates b;
    /** Null without a lower tier. */
    private final DiskCopies disks;

    BelowCopies(BlockStates b, DiskCopies disks) {
        this.b = b;
        this.disks = disks;
    }

    /**
     * {@return which tier below holds a copy of the block, changing nothing the block has: {@link
     * LowerTier#RESIDENT_HOST} if a host slot does, {@link LowerTier#RESIDENT_DISK} if only a disk
     * record does, else {@link LowerTier#RESIDENT_NOWHERE}} A copy below a block not on the top
     * tier is its authoritative one; below a block also on the top tier it is clean. A disk record
     * found gone (a broken pin) is settled on the way.
     *
     * @param id a block id
     */
    int residence(int id) {
        if (disks == null) {
            return LowerTier.RESIDENT_NOWHERE;
        }
        if (b.hostSlot[id] >= 0) {
            return LowerTier.RESIDENT_HOST;
        }
        return disks.held(id) ? LowerTier.RESIDENT_DISK
                : LowerTier.RESIDENT_NOWHERE;
    }

    /**
     * {@return the hashes of the blocks a host slot holds, once each, as the host tier's CPU events
     * describe them (a host copy is reported stored when its slot is recorded, removed when it
     * goes)} From the cache's records alone; empty without a lower tier.
     */
    java.util.List<io.tierkv.core.event.KvBlockHash> findableOnHost() {
        java.util.List<io.tierkv.core.event.KvBlockHash> out = new java.util.ArrayList<>();
        if (disks != null) {
            for (int id = 0; id < b.capacity(); id++) {
                if (b.hostSlot[id] >= 0) {
                    out.add(new io.tierkv.core.event.KvBlockHash(b.hashHi[id], b.hashLo[id]));
                }
            }
        }
        return out;
    }

    /**
     * For a block leaving the top tier: whether a complete copy below can take over from its
     * top-tier copy, which the caller then drops. A clean host copy (the device held the block
     * too) is the block's only copy from now on, so it is clean no more; a disk record the id is
     * bound to, with no host slot, takes over as it is.
     *
     * @param id a block on the top tier
     * @return whether a copy below takes over
     */
    boolean takeOverCopy(int id) {
        if (disks == null) {
            return false;
        }
        if (b.hostSlot[id] >= 0) {
            if ((b.below[id] & HOST_CLEAN) == 0) {
                return false;
            }
            b.below[id] &= ~HOST_CLEAN;
            return true;
        }
        return disks.held(id);
    }
}

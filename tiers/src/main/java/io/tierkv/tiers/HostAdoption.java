package io.tierkv.tiers;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.tierkv.core.cache.LowerTier;
import java.lang.foreign.MemorySegment;

/**
 * Adoption of a block the host tier fetched ahead from the remote store ({@code RemoteFetch#take}):
 * a prefix match binds it, its identity compared, to a fresh block id in the host slot it was
 * fetched into. Disk records the cache adopts itself ({@code DiskRecordStore#adopt}).
 */
final class HostAdoption {

    private final HostTier t;
    private final HostBlocks h;

    HostAdoption(HostTier t) {
        this.t = t;
        this.h = t.blocks;
    }

    /** Adopts a block fetched ahead from the remote store, if one of this identity waits; see {@link LowerTier#adopt}. */
    int adopt(int blockId, long hi, long lo, MemorySegment identity) {
        if (t.remote == null) {
            return LowerTier.ABSENT;
        }
        int hs = t.remote.fetch.take(hi, lo, identity);
        if (hs < 0) {
            return LowerTier.ABSENT;
        }
        h.lock.lock();
        try {
            h.reservedHostSlots--;
            bindFetched(blockId, hs);
        } finally {
            h.lock.unlock();
        }
        return LowerTier.ADOPTED;
    }

    /**
     * Binds a block fetched from the remote store into host slot {@code hs} to a block id: the
     * host slot holds its only local copy, as after a demotion. Lock held.
     */
    @GuardedBy("h.lock")
    void bindFetched(int blockId, int hs) {
        h.setState(blockId, (byte) 0);
        h.place(blockId, hs);
        h.policy.onAdmit(blockId, 0, h.hashLo(blockId));
    }
}

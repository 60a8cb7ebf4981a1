package io.tierkv.tiers;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.tierkv.core.cache.LowerTier;
import io.tierkv.tiers.disk.store.DiskTier;
import java.lang.foreign.MemorySegment;

import static io.tierkv.tiers.HostBlocks.ON_DISK;

/**
 * Adoption: binds a block found by hash on a prefix match to a fresh block id, after its identity
 * was compared: a block the match fetched from the remote store into a host slot
 * ({@code RemoteFetch#take}), or a disk record (with read on adopt, its bytes read and verified
 * into a free host slot or a staging buffer).
 */
final class HostAdoption {

    private final HostTier t;
    private final HostBlocks h;

    HostAdoption(HostTier t) {
        this.t = t;
        this.h = t.blocks;
    }

    /**
     * Adopts a disk record for a prefix match; see {@link LowerTier#adopt}.
     *
     * <p>With {@linkplain HostTier#readOnAdopt read on adopt} (the default, for promotion on match) the
     * record is read (its identity compared and its checksum verified) once: into a free host
     * slot when one is free, so that the promotion or read that usually follows a match is a host
     * copy rather than a second disk read; else through a staging buffer. No host block is
     * evicted or spilled for it (the caller holds the cache lock). Without it only the record's
     * header and identity are read ({@link DiskTier#match}) and the block is bound to the record
     * alone: the read that follows ({@link HostTier#read}, {@link HostTier#promote}) verifies the checksum as it
     * copies, once, and a damaged payload is a counted loss there rather than a miss here. Either
     * way a stored identity that differs is verified at once, so damaged identity bytes are a
     * counted miss here rather than a hash collision.
     */
    int adopt(int blockId, long hi, long lo, MemorySegment identity) {
        if (t.remote != null) {
            int hs = t.remote.fetch.take(hi, lo, identity);
            if (hs >= 0) {
                h.lock.lock();
                try {
                    h.reservedHostSlots--;
                    bindFetched(blockId, hs);
                } finally {
                    h.lock.unlock();
                }
                return LowerTier.ADOPTED;
            }
        }
        if (t.disk == null) {
            return LowerTier.ABSENT;
        }
        int found = t.readOnAdopt ? adoptRead(blockId, hi, lo, identity) : t.disk.match(hi, lo, identity);
        if (found == DiskTier.COLLISION) {
            return LowerTier.COLLISION;
        }
        if (found < 0) {
            if (found != DiskTier.ABSENT) {
                t.counters.diskMisses.increment(); // damaged (quarantined), or evicted since it was seen
            }
            return LowerTier.ABSENT;
        }
        if (!t.readOnAdopt) {
            h.lock.lock();
            try {
                bindAdopted(blockId, -1);
            } finally {
                h.lock.unlock();
            }
        }
        t.counters.diskAdoptions.increment();
        return LowerTier.ADOPTED;
    }

    /**
     * Reads a record of the expected identity for an adoption, into a free host slot (bound to
     * the id with it) or through a staging buffer (bound to the record alone). With no host slot
     * and no staging buffer free, it reads the record's header and identity only, as without
     * {@code readOnAdopt} (the read that follows verifies the payload): the caller holds the
     * manager lock, so it does not wait for a buffer.
     *
     * @return the block's length on a hit, else {@link DiskTier#ABSENT}, {@link DiskTier#DAMAGED}
     *     or {@link DiskTier#COLLISION}
     */
    int adoptRead(int blockId, long hi, long lo, MemorySegment identity) {
        if (!t.disk.contains(hi, lo)) {
            return DiskTier.ABSENT;
        }
        long start = System.nanoTime();
        int hs = t.hostSlots.reserveFree(); // the caller holds the manager lock; no room is made for an adoption
        int found = DiskTier.ABSENT;
        if (hs < 0) {
            int buffer = t.staging.tryAcquire(); // the manager lock is held: never wait for one ({@link StagingPool})
            if (buffer < 0) {
                found = t.disk.match(hi, lo, identity); // header and identity only, as without readOnAdopt
            } else {
                try {
                    found = t.disk.load(hi, lo, identity, t.staging.block(buffer));
                } finally {
                    t.staging.release(buffer);
                }
            }
        } else {
            try {
                found = t.disk.load(hi, lo, identity, h.slotView(hs));
            } finally {
                h.lock.lock();
                try {
                    h.reservedHostSlots--;
                    if (found < 0) {
                        h.slots.free(hs);
                    }
                } finally {
                    h.lock.unlock();
                }
            }
        }
        if (found >= 0) {
            h.lock.lock();
            try {
                bindAdopted(blockId, hs);
                if (hs >= 0) {
                    h.policy.onAdmit(blockId, 0, lo);
                }
            } finally {
                h.lock.unlock();
            }
            if (hs >= 0) {
                t.counters.diskToHost.record(blockId, t.layout.bytesPerBlock(), System.nanoTime() - start);
            }
        }
        return found == -1 ? DiskTier.DAMAGED : found; // -1 from load: a key just seen is damaged or was evicted since
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

    /** Binds an adopted disk record to a block id, with its bytes in host slot {@code hs} or none (-1). Lock held. */
    @GuardedBy("h.lock")
    void bindAdopted(int blockId, int hs) {
        h.setState(blockId, ON_DISK);
        if (hs >= 0) {
            h.place(blockId, hs);
        }
    }
}

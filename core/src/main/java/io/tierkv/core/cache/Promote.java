package io.tierkv.core.cache;

import io.tierkv.core.error.CorruptBlockException;
import io.tierkv.core.error.TransferTimeoutException;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.locks.LockSupport;

import static io.tierkv.core.cache.BlockStates.TRANSIT;

/**
 * The promote move (from the tier below into a top-tier slot taken for it): plan under the cache
 * lock (the block TRANSIT, the slot reserved, the source below held: a host copy by {@link
 * LowerTier#preparePromote}, else its disk copy if the cache finds it held), copy with the lock
 * released ({@link LowerTier#promote} from the host; from disk, {@link DiskRecords#stage} into a
 * staging buffer, then {@link LowerTier#promoteStaged}), commit under the lock ({@link
 * LowerTier#completePromote}; the slot is the block's, or freed and the block lost, a disk miss
 * settled, or parked until a late copy lands). One hold of the lock plans and one commits. One
 * instance per cache, called with the cache lock held.
 */
final class Promote {

    /** How long a promotion waits, the lock released, before it asks again for a source another move reads. */
    private static final long BUSY_PARK_NANOS = 20_000;

    private final PagedKvCache cache;
    private final BlockStates b;
    private final LowerTier lower;

    Promote(PagedKvCache cache, LowerTier lower) {
        this.cache = cache;
        this.b = cache.blocks;
        this.lower = lower;
    }

    /**
     * Promotes a block into a slot taken for it, with the lock released while it copies; the slot
     * is the block's on success, freed or parked (a late copy) otherwise.
     *
     * @return the slot
     * @throws TransferTimeoutException if the copy does not complete in time, or another move
     *                                  still reads the block's copy below after the timeout
     * @throws CorruptBlockException    if the block is lost below
     */
    @SuppressWarnings("GuardedBy") // cache.lock held by the caller (Admission, TierControl, PagedKvCache), another path
    int run(int id, int s) {
        Admission admission = cache.admission;
        admission.reserve();
        b.bits[id] |= TRANSIT;
        long timeoutNanos = cache.options.promotionTimeoutNanos();
        long hi = b.hashHi[id]; // read under the lock: the block is TRANSIT, so its hash stays
        long lo = b.hashLo[id];
        int source;
        try {
            source = prepare(id, timeoutNanos);
        } catch (RuntimeException | Error e) { // nothing is held below: the move ends as a copy that threw
            if (e instanceof TransferTimeoutException) {
                cache.counters.failedPromotions++; // as a copy that timed out
            }
            end(id, s, false);
            throw e;
        }
        int result = LowerTier.LOST;
        boolean returned = false;
        // A view of the record, made under the lock; the block is in transit, so the cache keeps it.
        MemorySegment identity = source == LowerTier.SOURCE_DISK ? cache.identities.of(id) : null;
        cache.lock.unlock();
        try {
            result = source >= 0 ? lower.promote(id, source, s, timeoutNanos)
                    : source == LowerTier.SOURCE_DISK ? fromDisk(id, hi, lo, identity, s) : LowerTier.LOST; // NONE
            returned = true;
        } finally {
            cache.lock.lock();
            lower.completePromote(id, source, result); // committed in this hold: LOST if it threw
            end(id, s, returned);
        }
        if (source == LowerTier.SOURCE_DISK && result != LowerTier.PROMOTED) {
            settleMiss(id, s, result);
        }
        if (result == LowerTier.PROMOTED) {
            cache.counters.promotions++;
            b.slot[id] = s;
            cache.events.stored(id);
            cache.refresh(id);
            cache.endTransit(id);
            cache.signalChange();
            return s;
        }
        cache.counters.failedPromotions++;
        if (result == LowerTier.TIMED_OUT) {
            admission.parkLateSlot(); // stays allocated until the lower tier says the late copy is done
        } else {
            admission.freeSlot(s);
            cache.markLost(id);
        }
        cache.endTransit(id);
        cache.signalChange();
        if (result == LowerTier.TIMED_OUT) {
            throw new TransferTimeoutException("promote block " + id, timeoutNanos);
        }
        throw new CorruptBlockException("block " + id, "missing or corrupt below the top tier", -1, -1);
    }

    /**
     * Promotes a block held on disk alone, the lock released: its record, under the key the cache
     * holds ({@code hi}, {@code lo}, read under the lock) and verified against {@code identity}, into a
     * staging buffer ({@link DiskRecords#stage}), then up into slot {@code s} ({@link
     * LowerTier#promoteStaged}). The buffer goes back before the commit takes the lock (a match
     * that adopts under the lock may be waiting for none: it never waits for one).
     *
     * @return {@link LowerTier#PROMOTED}, {@link LowerTier#LOST} or {@link LowerTier#FOREIGN}
     */
    private int fromDisk(int id, long hi, long lo, MemorySegment identity, int s) {
        long start = System.nanoTime(); // for the tier's latency figures: a disk read dwarfs the clock read
        HostSlots host = lower.hostSlots();
        int buffer = host.acquireStaging();
        try {
            int read = cache.disks.disk.stage(id, hi, lo, identity, host.staging(buffer));
            if (read != DiskRecords.LOADED) {
                return read == DiskRecords.FOREIGN ? LowerTier.FOREIGN : LowerTier.LOST;
            }
            return lower.promoteStaged(id, buffer, s, start);
        } finally {
            host.releaseStaging(buffer);
        }
    }

    /**
     * Settles a disk read that missed, lock held; a settle that throws (a disk store that broke its
     * contract) gives the slot back and ends the transit first, as a copy that threw does.
     */
    @SuppressWarnings("GuardedBy") // cache.lock held by the caller
    private void settleMiss(int id, int s, int result) {
        try {
            cache.disks.settleMiss(id, result == LowerTier.FOREIGN);
        } catch (RuntimeException | Error e) {
            cache.admission.freeSlot(s);
            cache.endTransit(id);
            throw e;
        }
    }

    /**
     * Holds the block's source below (its host copy, {@link LowerTier#preparePromote}, else its
     * disk copy if {@link DiskCopies#held}), in the caller's hold of the lock; while another move
     * reads it, releases the lock a moment and asks again, for at most
     * {@code timeoutNanos} (a late copy of the block that may never land; a spill or an offer to the
     * remote store holds the block in transit, so a lease waits before it gets here).
     *
     * @throws TransferTimeoutException if another move still reads the source after the timeout
     * @throws IllegalStateException    if the cache closed while it waited
     */
    @SuppressWarnings("GuardedBy") // cache.lock held by the caller
    private int prepare(int id, long timeoutNanos) {
        int source = lower.preparePromote(id);
        long deadline = 0;
        while (source == LowerTier.SOURCE_BUSY) { // another move reads the host copy, with the lock released
            long now = System.nanoTime();
            if (deadline == 0) {
                deadline = now + timeoutNanos;
            } else if (now - deadline >= 0) {
                throw new TransferTimeoutException("promote block " + id + ": another move reads its copy below",
                        timeoutNanos);
            }
            cache.lock.unlock();
            LockSupport.parkNanos(BUSY_PARK_NANOS);
            cache.lock.lock();
            cache.checkOpen(); // closed meanwhile: its memory is going, so no copy may start
            source = lower.preparePromote(id);
        }
        return source == LowerTier.SOURCE_NONE && cache.disks.held(id) ? LowerTier.SOURCE_DISK : source;
    }

    /**
     * Ends the move's transit, lock held; one that threw (before its copy was issued, or after it
     * was waited for) gives its slot back and wakes the waiters, the block staying below.
     */
    @SuppressWarnings("GuardedBy") // cache.lock held by the caller
    private void end(int id, int s, boolean returned) {
        Admission admission = cache.admission;
        b.bits[id] &= ~TRANSIT;
        admission.unreserve();
        admission.reclaimLateSlots(); // a promotion that waited for a late copy of its block saw it land
        if (!returned) {
            admission.freeSlot(s); // which wakes the waiters (a match waiting for this move)
            cache.endTransit(id);
        }
    }
}

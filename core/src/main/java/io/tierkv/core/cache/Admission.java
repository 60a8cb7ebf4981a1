package io.tierkv.core.cache;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.tierkv.core.error.BudgetExceededException;
import io.tierkv.core.error.CapacityExhaustedException;
import io.tierkv.core.error.CorruptBlockException;
import io.tierkv.core.error.TransferTimeoutException;
import io.tierkv.core.pool.SlotAllocator;
import java.lang.foreign.MemorySegment;

import static io.tierkv.core.cache.BlockStates.LOST;
import static io.tierkv.core.cache.BlockStates.OPEN;
import static io.tierkv.core.cache.BlockStates.TRANSIT;

/**
 * Admission to the top tier: the allocator of top-tier slots and the only way to take one. A slot
 * is free, made free by the eviction policy's next victim (evicted, dropped for a clean copy
 * below, or demoted), handed back by a timed-out promotion's late copy, or waited for until the
 * admission deadline ({@link CapacityExhaustedException} then). Also the waits of a block that is
 * moving ({@link #awaitSettled}) and the path that makes a block resident ({@link
 * #ensureOnDevice}). Every method is called with the cache lock held.
 *
 * <p>Slot accounting: {@code used == resident blocks + reserved (promotions copying into a slot)
 * + late (timed-out promotions whose copy may still land)}; {@link CacheInvariants} checks it.
 */
// Every method runs with the cache lock held by a caller in another class (PagedKvCache, Sequence,
// TierControl), which Error Prone cannot relate to this class's cache.lock (it has no aliasing).
@SuppressWarnings("GuardedBy")
final class Admission {

    /**
     * What {@link #acquireSlot} returns instead of a slot when the block it works for no longer
     * needs one: another party brought it up, is moving it, or lost it while the call waited.
     */
    static final int SLOT_NOT_NEEDED = -1;

    /**
     * An admission deadline not read yet: {@link #ensureOnDevice} reads the clock for it
     * ({@code admissionTimeoutNanos} from then) only when the block must wait or room must be
     * made, which is the first moment the deadline can matter (a clock read is tens of ns on
     * these VMs; a resident block, or one promoted into a free slot, needs none).
     */
    static final long DEADLINE_WHEN_NEEDED = Long.MIN_VALUE;

    /** How often a wait for a block id tries again: settling, which frees ids, signals nobody. */
    static final long ID_RETRY_NANOS = 1_000_000;

    private final PagedKvCache cache;
    private final BlockStates b;
    private final LowerTier lower;
    /** Guarded by the cache lock, reached through {@code PagedKvCache.admission} (annotated there). */
    final SlotAllocator slots;
    @GuardedBy("cache.lock") private int reservedSlots;
    @GuardedBy("cache.lock") private int lateSlots;

    Admission(PagedKvCache cache, LowerTier lower, int deviceBlocks) {
        this.cache = cache;
        this.b = cache.blocks;
        this.lower = lower;
        this.slots = new SlotAllocator(deviceBlocks);
    }

    /**
     * Allocates a fresh OPEN block with a top-tier slot, waiting for space up to the deadline. When
     * every block id is live it settles what the tiers below let go of (ids retired or freed), and
     * then waits, holding no slot, for ids to come free (a close, a mover's spills settled here on
     * the next try), trying again at least every {@link #ID_RETRY_NANOS}, until the deadline.
     */
    int allocateOpenBlock(long deadlineNanos) {
        boolean waited = false;
        for (;;) {
            int s = acquireSlot(deadlineNanos, 1, -1);
            int id = b.allocateId();
            if (id < 0 && cache.moves.settle.run() > 0) { // ids the tiers below no longer need may come free
                id = b.allocateId();
            }
            if (id >= 0) {
                return open(id, s);
            }
            slots.free(s);
            long remaining = deadlineNanos - System.nanoTime();
            if (remaining <= 0) {
                cache.counters.admissionFailures++;
                throw new CapacityExhaustedException("BLOCK_IDS", 1, 0, "all " + b.capacity()
                        + " block ids live until the admission deadline (the builder sizes them from the tiers' "
                        + "budgets: raise one)");
            }
            if (!waited) {
                cache.counters.admissionWaits++;
                waited = true;
            }
            cache.awaitChange(Math.min(remaining, ID_RETRY_NANOS));
        }
    }

    /** Makes block {@code id} a fresh OPEN block in slot {@code s}, referenced once. */
    private int open(int id, int s) {
        b.bits[id] = OPEN; // no flags
        b.refs[id] = 1;
        b.slot[id] = s;
        b.hashHi[id] = 0;
        b.hashLo[id] = 0;
        cache.written.clear(id);
        return id;
    }

    /**
     * Takes a free top-tier slot, making room by the policy's victims and waiting for leases,
     * moves and closes up to the deadline. A slot for an existing block ({@code forBlock >= 0})
     * is taken only while that block still needs one: the block is looked at again before every
     * try (the lock is released to wait and to demote a victim, and meanwhile a prefetch, another
     * lease or the mover may promote it, move it or find it lost), and once it no longer needs a
     * slot the call returns {@link #SLOT_NOT_NEEDED} at once rather than waiting for room that only
     * a release of its own caller's reference could make. A slot returned for a block was taken
     * with the lock held since the block was last seen needing it.
     *
     * @param forBlock the block the slot is for, or -1 for a new block
     * @return a slot, or {@link #SLOT_NOT_NEEDED} (only for a block)
     */
    private int acquireSlot(long deadlineNanos, int requested, int forBlock) {
        boolean waited = false;
        for (;;) {
            if (forBlock >= 0 && !b.needsPromotion(forBlock)) {
                return SLOT_NOT_NEEDED;
            }
            int s = slots.allocate();
            if (s >= 0) {
                return s;
            }
            if (lateSlots > 0) {
                reclaimLateSlots();
                s = slots.allocate();
                if (s >= 0) {
                    return s;
                }
            }
            int victim = cache.policy.victim();
            if (victim >= 0) {
                vacate(victim);
                continue;
            }
            long remaining = deadlineNanos - System.nanoTime();
            if (remaining <= 0) {
                cache.counters.admissionFailures++;
                throw new CapacityExhaustedException("DEVICE", requested, slots.freeCount() + cache.policy.size(),
                        slots.usedCount() + " slots held by referenced, leased, recent or moving blocks");
            }
            if (!waited) {
                cache.counters.admissionWaits++;
                waited = true;
            }
            cache.awaitChange(remaining);
        }
    }

    /** Makes a candidate leave the top tier: evict, drop a clean top copy, or demote. */
    void vacate(int id) {
        cache.policy.onRemove(id);
        if (lower == null) {
            cache.counters.evictions++;
            cache.freeBlock(id);
            return;
        }
        if (cache.copiesBelow.takeOverCopy(id)) {
            cache.counters.cleanDrops++;
            cache.releaseSlot(id);
            return;
        }
        cache.moves.demote.run(id);
    }

    /**
     * Makes a block's bytes top-tier resident, promoting it from below if needed. While it waits
     * for a slot, another party may bring the block up or start moving it; it then takes the
     * block's slot, or waits for that move to settle, instead of a slot of its own.
     *
     * @param deadlineNanos the admission deadline, or {@link #DEADLINE_WHEN_NEEDED}
     * @return the slot
     */
    int ensureOnDevice(int id, long deadlineNanos) {
        if (b.residentNow(id)) {
            return b.slot[id]; // the common case: no clock read, no wait
        }
        if (lateSlots == 0 && b.needsPromotion(id)) {
            // The first pass of the loop below when a slot is free: nothing to settle, reclaim or
            // wait for, so no clock read.
            int s = slots.allocate();
            if (s >= 0) {
                return cache.moves.promote.run(id, s);
            }
        }
        if (deadlineNanos == DEADLINE_WHEN_NEEDED) {
            deadlineNanos = cache.admissionDeadline();
        }
        long transitDeadline = Math.max(deadlineNanos, System.nanoTime() + cache.options.promotionTimeoutNanos());
        for (;;) {
            awaitSettled(id, transitDeadline); // a move in flight is bounded by the move timeout, not admission
            if (b.slot[id] >= 0) {
                return b.slot[id];
            }
            int s = slotFor(id, deadlineNanos);
            if (s != SLOT_NOT_NEEDED) {
                return cache.moves.promote.run(id, s);
            }
        }
    }

    /** A slot to promote a block into, or {@link #SLOT_NOT_NEEDED}; see {@link #acquireSlot}. */
    int slotFor(int id, long deadlineNanos) {
        reclaimLateSlots(); // also ends the lower tier's finished late copies, which a promotion would wait for
        return acquireSlot(deadlineNanos, 1, id);
    }

    /**
     * Waits until no move holds the block, then checks that its bytes are not lost.
     *
     * @param transitDeadline {@code System.nanoTime()} deadline of the wait, or 0 for
     *                        {@code promotionTimeoutNanos} from the first wait (no clock read
     *                        when nothing moves the block)
     * @throws TransferTimeoutException if the move does not end by the deadline
     * @throws CorruptBlockException    if the block is lost below
     */
    void awaitSettled(int id, long transitDeadline) {
        while ((b.bits[id] & TRANSIT) != 0) {
            if (transitDeadline == 0) {
                transitDeadline = System.nanoTime() + cache.options.promotionTimeoutNanos();
            }
            long remaining = transitDeadline - System.nanoTime();
            if (remaining <= 0) {
                throw new TransferTimeoutException("wait for block " + id + " in transit",
                        cache.options.promotionTimeoutNanos());
            }
            cache.awaitChange(remaining);
        }
        if (b.state(id) == LOST) {
            throw new CorruptBlockException("block " + id, "its bytes were lost below the top tier", -1, -1);
        }
    }

    /** Frees top-tier slots of timed-out promotions whose late copies have ended; asks nothing when none waits. */
    void reclaimLateSlots() {
        if (lateSlots > 0) {
            endLateCopies();
        }
    }

    /**
     * Has the lower tier end every late copy that has ended, whatever this cache holds: a timed-out
     * promotion's top-tier slot comes back here, a late demotion's host slot goes back to the host
     * (which no top-tier count shows).
     */
    void endLateCopies() {
        lower.releaseLateSlots(this::freeLateSlot);
    }

    /** {@return top-tier late slots handed back now; late demotions' host slots go back too} */
    int reclaimLateSlotsNow() {
        int before = lateSlots;
        if (lower != null) {
            endLateCopies();
        }
        return before - lateSlots;
    }

    private void freeLateSlot(int s) {
        lateSlots--;
        freeSlot(s);
    }

    /** Frees a slot no block holds and wakes the waiters. */
    void freeSlot(int s) {
        slots.free(s);
        cache.signalChange();
    }

    /** A promotion starts copying into a slot it took. */
    void reserve() {
        reservedSlots++;
    }

    /** That copy ended. */
    void unreserve() {
        reservedSlots--;
    }

    /** A timed-out promotion's slot stays allocated until its late copy ends ({@link #reclaimLateSlots}). */
    void parkLateSlot() {
        lateSlots++;
    }

    /** {@return slots held by promotions copying now and by late copies, for {@link CacheInvariants}} */
    int reservedAndLateSlots() {
        return reservedSlots + lateSlots;
    }

    /** {@return a description of the slot counts, for an invariant violation} */
    String describeReserved() {
        return "reserved " + reservedSlots + " + late " + lateSlots;
    }

    /** Copy-on-write: replaces a shared OPEN block by a private copy holding the same bytes. Lock held. */
    int copyOnWrite(int id, long deadlineNanos) {
        int copy = allocateOpenBlock(deadlineNanos);
        MemorySegment.copy(cache.slotMemory(cache.blocks.slot[id]), 0, cache.slotMemory(cache.blocks.slot[copy]), 0,
                cache.blockBytes);
        cache.identities.copy(id, copy);
        cache.written.copy(id, copy);
        cache.counters.copiesOnWrite++;
        cache.unref(id);
        return copy;
    }

    /** Takes a new OPEN block at the end of a sequence's table, within its budgets. Lock held. */
    int newBlockFor(Sequence s) {
        long used = (long) s.table.count() * cache.blockBytes;
        if (used + cache.blockBytes > s.options.budgetBytes()) {
            throw new BudgetExceededException("cache[" + s.options.salt() + "].blocks", cache.blockBytes, used,
                    s.options.budgetBytes());
        }
        cache.budget.admitNewBlock(s);
        int id = allocateOpenBlock(cache.admissionDeadline());
        cache.blocks.setPriority(id, s.options.priority());
        s.table.push(id);
        return id;
    }
}

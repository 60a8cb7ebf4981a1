package io.tierkv.tiers;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.tierkv.natives.GpuEvent;
import java.util.ArrayDeque;
import java.util.function.IntConsumer;

/**
 * Copies that missed their deadline, until they land: a timed-out promotion keeps its device slot
 * (handed back to the cache only once its copy completed, so no late write lands in a reused slot)
 * and its host copy; a timed-out demotion parks its host slot. All methods run with the manager lock
 * held.
 */
final class LateCopies {

    /**
     * A copy that missed its deadline: a promotion's ({@code deviceSlot >= 0}; its host slot is
     * freed with it if the cache freed the block meanwhile, {@code orphanedHostSlot >= 0}; its
     * copy seen to end and its block's read of the host copy ended with it, before the device slot
     * goes back, if {@code moveEnded}: its event is not asked again) or a demotion's parked host
     * slot ({@code deviceSlot < 0}, {@code blockId = -1 - slot}).
     */
    private record LateCopy(GpuEvent event, int deviceSlot, int blockId, int orphanedHostSlot, boolean moveEnded) {
        LateCopy(GpuEvent event, int deviceSlot, int blockId) {
            this(event, deviceSlot, blockId, -1, false);
        }
    }

    private final HostBlocks h;
    @GuardedBy("h.lock") private final ArrayDeque<LateCopy> late = new ArrayDeque<>();

    LateCopies(HostBlocks h) {
        this.h = h;
    }

    /** A demotion's copy into host slot {@code hs} missed its deadline: the slot is parked until it lands. */
    @SuppressWarnings("GuardedBy") // the callers (HostTier, HostInvariants) hold blocks.lock, h.lock here
    void parkDemotion(GpuEvent event, int hs) {
        late.add(new LateCopy(event, -1, -1 - hs));
    }

    /** A promotion of {@code blockId} into {@code deviceSlot} missed its deadline: the block stays MOVING until it lands. */
    @SuppressWarnings("GuardedBy") // the callers (HostTier, HostInvariants) hold blocks.lock, h.lock here
    void parkPromotion(GpuEvent event, int deviceSlot, int blockId) {
        late.add(new LateCopy(event, deviceSlot, blockId));
    }

    /** {@return whether no late copy is pending} */
    @SuppressWarnings("GuardedBy") // the callers (HostTier, HostInvariants) hold blocks.lock, h.lock here
    boolean isEmpty() {
        return late.isEmpty();
    }

    /** {@return host slots parked by late demotions} */
    @SuppressWarnings("GuardedBy") // the callers (HostTier, HostInvariants) hold blocks.lock, h.lock here
    int parkedHostSlots() {
        int parked = 0;
        for (LateCopy c : late) {
            if (c.deviceSlot() < 0) {
                parked++;
            }
        }
        return parked;
    }

    /**
     * Hands back device slots of late promotions whose copies completed, and frees host slots of
     * late demotions and orphans; see {@link io.tierkv.core.cache.LowerTier#releaseLateSlots}.
     *
     * @param sink receives each device slot that is safe to reuse
     */
    void releaseLateSlots(IntConsumer sink) {
        h.lock.lock();
        try {
            for (int n = late.size(); n > 0; n--) {
                LateCopy c = late.poll();
                if (!c.moveEnded() && !ended(c)) { // one that ended was reported when it was seen to
                    late.add(c);
                    continue;
                }
                settle(c);
                if (c.deviceSlot() >= 0) {
                    sink.accept(c.deviceSlot());
                }
            }
        } finally {
            h.lock.unlock();
        }
    }

    /**
     * Ends the host-side move of every late promotion whose copy has landed (its block's host slot
     * is read no more), without handing its device slot back: that stays the cache's to take in
     * {@link #releaseLateSlots}. For a promotion that waits on such a block, which would otherwise
     * wait for the cache to ask. Lock held.
     */
    @SuppressWarnings("GuardedBy") // the callers (HostTier, HostInvariants) hold blocks.lock, h.lock here
    void endLandedPromotions() {
        for (int n = late.size(); n > 0; n--) {
            LateCopy c = late.poll();
            if (c.deviceSlot() >= 0 && c.orphanedHostSlot() < 0 && !c.moveEnded() && ended(c)) {
                endMove(c);
                c = new LateCopy(c.event(), c.deviceSlot(), c.blockId(), -1, true);
            }
            late.add(c);
        }
    }

    /**
     * Whether a late copy has ended: completed, or failed (its event throws {@link
     * io.tierkv.natives.GpuException}, or any exception). Either way no write of it lands later,
     * so its slots can go back; a failure is reported as a fault, so a copy seen to end is not
     * asked again ({@link LateCopy#moveEnded}). Never throws: a late copy taken
     * out of the queue to be looked at always goes back in or is settled. "No write lands after a
     * failure" holds on the emulated device, whose stream fails for good at its first failed copy
     * and skips every later one ({@code CopyQueue}), and on CUDA and HIP for the errors an event
     * query reports for work before it, which are sticky: the context is unusable after them (the
     * CUDA Runtime API's "sticky errors"; HIP follows it).
     */
    private static boolean ended(LateCopy c) {
        try {
            return c.event().isComplete();
        } catch (RuntimeException e) {
            TierEvents.fault("late copy failed: " + e);
            return true;
        }
    }

    /**
     * The cache gave up on this promotion: the device slot goes back empty-handed, so the host
     * copy is still the block's own, not a clean second copy. Lock held.
     */
    @SuppressWarnings("GuardedBy") // the callers (HostTier, HostInvariants) hold blocks.lock, h.lock here
    private void endMove(LateCopy c) {
        h.endMove(c.blockId(), (byte) 0);
    }

    /** Hands a late promotion of a block the cache frees its host slot, to free when the copy lands. Lock held. */
    @SuppressWarnings("GuardedBy") // the callers (HostTier, HostInvariants) hold blocks.lock, h.lock here
    void orphanPromotion(int blockId, int hs) {
        for (LateCopy c : late) {
            if (c.deviceSlot() >= 0 && c.blockId() == blockId && c.orphanedHostSlot() < 0 && !c.moveEnded()) {
                late.remove(c);
                late.add(new LateCopy(c.event(), c.deviceSlot(), blockId, hs, false));
                return; // leaves the loop before the changed deque is iterated again
            }
        }
    }

    /**
     * Waits for every late copy (at close: a DMA cannot be recalled, so the memory it writes is
     * not freed before it lands), then settles it as {@link #releaseLateSlots} does: a promotion's
     * read of its host copy ends, so a lease still waiting for that read sees it end; parked and
     * orphaned host slots are freed. Device slots are not handed back (the cache is closing). A
     * copy that failed is reported as a fault, unless it was seen to end before.
     */
    @SuppressWarnings("GuardedBy") // the callers (HostTier, HostInvariants) hold blocks.lock, h.lock here
    void awaitAll() {
        for (LateCopy c : late) {
            if (!c.moveEnded()) {
                try {
                    c.event().synchronize();
                } catch (RuntimeException e) {
                    TierEvents.fault("late copy failed: " + e);
                }
            }
            settle(c);
        }
        late.clear();
    }

    /**
     * Settles a late copy that has ended, on this side: releases its event; frees a demotion's
     * parked host slot, or a promotion's orphaned one (the block was freed meanwhile: its id may be
     * another's now), or ends the promotion's read of its block's host copy. Its device slot, if
     * any, is the caller's to hand back. Lock held.
     */
    @SuppressWarnings("GuardedBy") // the callers hold blocks.lock, h.lock here
    private void settle(LateCopy c) {
        c.event().close();
        if (c.deviceSlot() < 0) {
            h.slots.free(-1 - c.blockId());
        } else if (c.orphanedHostSlot() >= 0) {
            h.orphanedSlots--;
            h.slots.free(c.orphanedHostSlot());
        } else if (!c.moveEnded()) {
            endMove(c);
        }
    }
}

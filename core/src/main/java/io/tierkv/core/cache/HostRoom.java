package io.tierkv.core.cache;

import static io.tierkv.core.cache.BlockOwner.HOST_CLEAN;
import static io.tierkv.core.cache.BlockOwner.HOST_MOVING;
import static io.tierkv.core.cache.BlockOwner.HOST_QUEUED;
import static io.tierkv.core.cache.BlockStates.HELD;

/**
 * Room on the host tier, decided by the cache: which block leaves a host slot, and how. The host
 * store ({@link HostSlots}) only offers free slots and its policy's victims, and carries out
 * what is decided here for each victim:
 * <ol>
 *   <li>a clean copy (the top tier holds the block too) is dropped, at no cost;</li>
 *   <li>a block with a hash spills to the disk below ({@link MoveBelow}: the victim in transit, the
 *       lock released for the write), after which a record keyed by its hash holds it;</li>
 *   <li>a block that did not spill and that nothing references is evicted (offered to a remote
 *       store first where the host is the lowest local tier);</li>
 *   <li>a referenced block that did not spill stays, at the back of the policy.</li>
 * </ol>
 * Before, the host tier made these choices itself, inside the moves that needed a slot; now a
 * move that needs a host slot (a demotion, a read-ahead load, a remote fetch) asks {@link
 * #reserve} first and hands the slot to the store with its copy, and the movers' spills and a
 * runtime's {@code evictHost} go through here too. One instance per cache with a lower tier;
 * every method is called with the cache lock held once (a victim's spill, or its offer to a
 * remote store, releases it). A victim the cache holds in transit (another move has it) is kept:
 * no move below takes a block in transit, and a spill or an offer takes its source in the hold
 * that puts it in transit ({@link HostSlots#prepareSpill}), so a victim being copied below is
 * never chosen again meanwhile.
 */
// Every method runs with the cache lock held by a caller in another class, which Error Prone
// cannot relate to this class's cache.lock (it has no aliasing).
@SuppressWarnings("GuardedBy")
final class HostRoom {

    private final PagedKvCache cache;
    private final BlockStates b;
    private final HostSlots host;

    HostRoom(PagedKvCache cache, HostSlots host) {
        this.cache = cache;
        this.b = cache.blocks;
        this.host = host;
    }

    /**
     * Reserves a host slot for a copy coming to the host: a free one; else one a late demotion's
     * ended copy gives back; else room made by the host policy's victims. Counted in {@link
     * CacheStats#hostAllocationFailures} when none could be made. The lock is released while a
     * victim spills.
     *
     * @return a reserved host slot, or -1 if no victim could leave
     */
    int reserve() {
        int first = host.reserveFree();
        if (first >= 0) {
            return first;
        }
        cache.admission.endLateCopies(); // demotions whose late copies ended give their host slots back
        int attempts = host.victimCount() + 1;
        while (attempts-- > 0) {
            int hs = host.reserveFree();
            if (hs >= 0) {
                return hs;
            }
            int victim = host.victim();
            if (victim < 0) {
                break;
            }
            if (!leave(victim)) {
                host.keep(victim); // cannot leave now
            }
        }
        int hs = host.reserveFree();
        if (hs < 0) {
            cache.counters.hostAllocationFailures++;
        }
        return hs;
    }

    /**
     * Makes up to {@code count} host blocks leave by policy order (a runtime's {@code evictHost}).
     *
     * @param count most blocks, >= 0
     * @return blocks that left their host slots
     */
    int evict(int count) {
        int done = 0;
        int attempts = host.victimCount();
        while (done < count && attempts-- > 0) {
            int victim = host.victim();
            if (victim < 0) {
                break;
            }
            if (leave(victim)) {
                done++;
            } else {
                host.keep(victim);
            }
        }
        return done;
    }

    /**
     * Takes up to {@code max} host victims, in policy order, out of the policy into a mover's
     * host-to-disk queue; a refused offer (queue full) or a victim without a hash ends the call. A
     * clean copy is dropped instead, at no cost. Nothing is queued without a disk below.
     *
     * @param max   most blocks, >= 0
     * @param queue offered each block id; false when full
     * @return blocks queued or dropped
     */
    int queueSpills(int max, java.util.function.IntPredicate queue) {
        if (!host.spills()) {
            return 0;
        }
        int done = 0;
        while (done < max) {
            int victim = host.victim();
            if (victim < 0 || (b.hashHi[victim] | b.hashLo[victim]) == 0) {
                break;
            }
            if ((b.below[victim] & HOST_CLEAN) != 0) {
                host.dropClean(victim);
                cache.disks.hold(victim); // referenced: its disk record, if any, may be its only copy below soon
            } else if (queue.test(victim)) {
                host.queue(victim);
            } else {
                break;
            }
            done++;
        }
        return done;
    }

    /**
     * Spills one block a mover took from its host-to-disk queue, if it is still queued in its slot
     * and nothing else moves it; one that cannot spill now goes back in the host policy.
     *
     * @param id a block id from the queue
     * @return whether it spilled
     */
    boolean spillQueued(int id) {
        if (!host.unqueue(id)) {
            return false;
        }
        boolean spilled = cache.moves.below.run(id, false);
        if (!spilled) {
            host.keep(id); // another move holds it (it re-admits it when it ends), or the disk refused it
        }
        return spilled;
    }

    /** Makes one victim leave its host slot by the rules above; whether it left. */
    private boolean leave(int victim) {
        if ((b.below[victim] & HOST_CLEAN) != 0) {
            host.dropClean(victim);
            cache.disks.hold(victim); // referenced: its disk record, if any, may be its only copy below soon
            return true;
        }
        if (host.spills() && (b.hashHi[victim] | b.hashLo[victim]) != 0 && cache.moves.below.run(victim, false)) {
            return true;
        }
        // Not spilled (no disk, no hash, refused, or another move holds it); the lock may have
        // been released meanwhile, so the victim is checked as it is now.
        if (!evictable(victim)) {
            return false;
        }
        if (cache.moves.remote != null && cache.disks.disk == null) {
            cache.moves.below.offer(victim); // the host is the lowest local tier: its bytes go below first
            if (!evictable(victim)) { // checked again: the lock was released for the offer
                return false;
            }
        }
        return host.evict(victim);
    }

    /** Whether a victim may be evicted now: unreferenced, not in transit, in its slot, not read or queued by a move. */
    private boolean evictable(int victim) {
        return (b.bits[victim] & HELD) == 0 && !b.inTransit(victim) && b.hostSlot[victim] >= 0
                && (b.below[victim] & (HOST_MOVING | HOST_QUEUED)) == 0; // a mover may have queued it meanwhile
    }
}

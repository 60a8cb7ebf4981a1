package io.tierkv.core.cache;

/**
 * The host tier as a slot store, as the cache's host moves drive it ({@link LowerTier#hostSlots}):
 * free slots reserved for copies in flight, and the host policy's order of victims. The store
 * carries out what the cache decides for a victim (drop a clean copy, evict, keep) and never
 * decides which block leaves or how; the decision is {@code HostRoom}'s, in the cache.
 *
 * <p>Every method is called with the cache lock held ({@link BlockOwner#lock()}) and returns
 * without releasing it, except {@link #evict}, which may release it for a copy to a store below,
 * and {@link #releaseReserved}, which takes it itself (a tier gives a slot back from a copy that
 * threw with the lock released).
 * A store records what changes in the cache's records ({@link BlockOwner#setHostSlot}, {@link
 * BlockOwner#setBelowBits}) as {@link LowerTier#attach} says.
 */
public interface HostSlots {

    /**
     * {@return a free host slot, now reserved for a copy in flight (a demotion, a load, a fetch),
     * or -1 if every slot is taken} Nothing leaves for it: making room is the caller's.
     */
    int reserveFree();

    /**
     * Frees a slot {@link #reserveFree} reserved that no copy was issued into (the move failed or
     * found it was not needed).
     *
     * @param hostSlot the reserved slot
     */
    void releaseReserved(int hostSlot);

    /** {@return the host policy's next victim, a block held in a host slot, or -1 if none} It stays in the policy. */
    int victim();

    /** {@return the blocks in the host policy now, which bounds one round of room making} */
    int victimCount();

    /** {@return whether a block leaving the host can be spilled to a disk below it ({@link LowerTier#spill})} */
    boolean spills();

    /**
     * Drops a victim's clean host copy: the top tier holds the block too ({@link
     * BlockOwner#HOST_CLEAN}). A referenced block's disk record, if it has one, is pinned now,
     * since the top tier may hand its slot over to that record at any time.
     *
     * @param blockId a victim whose host copy is clean
     */
    void dropClean(int blockId);

    /**
     * Evicts an unreferenced victim's host copy: its bytes go, after being offered to a store
     * below when the host is the lowest local tier and one is configured (a remote store). The id
     * is reported as left ({@link LowerTier#drainChanges}), so the cache frees it when it next
     * settles. May release the cache lock for the offer; held again on return.
     *
     * @param blockId an unreferenced block held in a host slot, not moving or queued
     * @return true (the copy went); false if it could not go: not held in a slot, moving, queued,
     *         or referenced (on entry, or by the time the offer below ended)
     */
    boolean evict(int blockId);

    /**
     * Puts a victim that could not leave at the back of the host policy, unless it left its slot
     * or started moving meanwhile (a move re-admits it when it ends).
     *
     * @param blockId the victim
     */
    void keep(int blockId);

    /**
     * Takes a victim out of the host policy while it waits in a mover's queue ({@link
     * BlockOwner#HOST_QUEUED}) for a spill, until {@link #unqueue}.
     *
     * @param blockId a victim held in a host slot
     */
    void queue(int blockId);

    /**
     * Ends a block's wait in a mover's queue (its queue mark cleared, if it had one): whether it
     * was still queued, in its slot and not moving, so a spill may read it. A block that was not
     * is left out of the policy (a move that reads it re-admits it when it ends).
     *
     * @param blockId a block taken from the queue
     * @return whether the block was queued and may spill now
     */
    boolean unqueue(int blockId);
}

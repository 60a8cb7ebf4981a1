package io.tierkv.core.cache;

import java.lang.foreign.MemorySegment;

/**
 * The host tier as a slot store, as the cache's host moves drive it ({@link LowerTier#hostSlots}):
 * free slots reserved for copies in flight, and the host policy's order of victims. The store
 * carries out what the cache decides for a victim (drop a clean copy, evict, keep) and never
 * decides which block leaves or how; the decision is {@code HostRoom}'s, in the cache.
 *
 * <p>Every method is called with the cache lock held ({@link BlockOwner#lock()}) and returns
 * without releasing it, except {@link #view} and the staging buffers' methods, which take no lock
 * (a staging buffer is waited for without it), and {@link #releaseReserved}, which takes it itself
 * (a slot is given back from a copy that threw with the lock released).
 * A store records what changes in the cache's records ({@link BlockOwner#setHostSlot}, {@link
 * BlockOwner#setBelowBits}) as {@link LowerTier#attach} says.
 */
public interface HostSlots {

    /**
     * {@return a free host slot, now reserved for a copy in flight (a demotion, a load, a remote
     * fetch), or -1 if every slot is taken} Nothing leaves for it: making room is the caller's.
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

    /** {@return whether a block leaving the host can be spilled to a disk below it ({@link LowerTier#diskRecords})} */
    boolean spills();

    /**
     * Records that reserved host slot {@code hostSlot} now holds block {@code blockId} (a
     * demotion's or a load's copy landed in it), the commit of a move the cache started: the slot
     * is the block's ({@link BlockOwner#setHostSlot}), reserved no more, and the block enters the
     * host policy.
     *
     * @param blockId  the block, with no host slot
     * @param hostSlot a slot {@link #reserveFree} reserved, holding the block's bytes
     */
    void fill(int blockId, int hostSlot);

    /**
     * {@return host slot {@code hostSlot}'s bytes, {@code bytesPerBlock}} A view for a copy the cache
     * makes, with the lock released, from a slot it holds (a spill's source) or into one it
     * reserved (a load's destination); valid while the slot is held.
     *
     * @param hostSlot a host slot
     */
    MemorySegment view(int hostSlot);

    /**
     * {@return a staging buffer, a pinned transfer buffer of one block, held by the caller until
     * {@link #releaseStaging}} Waits for one to be free: called without the cache lock, since a
     * holder may need the lock before it gives its buffer back.
     */
    int acquireStaging();

    /**
     * {@return staging buffer {@code buffer}'s bytes, {@code bytesPerBlock}}
     *
     * @param buffer a buffer {@link #acquireStaging} handed out
     */
    MemorySegment staging(int buffer);

    /**
     * Gives a staging buffer back; without the cache lock.
     *
     * @param buffer a buffer {@link #acquireStaging} handed out
     */
    void releaseStaging(int buffer);

    /**
     * Plans a spill (vLLM's "prepare store"), in the cache's hold of the lock that puts the block
     * in transit: takes the block's host copy as the source of a copy below (a disk record,
     * {@link DiskRecords#write}, or an offer to the remote store, {@link RemoteRecords#offer}),
     * out of the host policy and any mover queue, marked as read ({@link BlockOwner#HOST_MOVING}),
     * if it has a host slot, no other move reading it, not a clean copy, and a hash. Changes
     * nothing when it answers false.
     *
     * @param blockId a block not on the top tier
     * @return whether the cache may copy it below; {@link #endSpill} then ends it
     */
    boolean prepareSpill(int blockId);

    /**
     * Ends a spill {@link #prepareSpill} began, in the cache's commit: the host copy is read no
     * more. If the block {@code left} (its record is on disk and relied on now), its host slot is
     * freed; else it stays, back in the host policy. If the cache freed the block while it moved,
     * the slot is an orphan and is freed.
     *
     * @param blockId  the block
     * @param hostSlot the slot the spill read
     * @param left     whether the block left for its disk record
     */
    void endSpill(int blockId, int hostSlot, boolean left);

    /**
     * Drops a victim's clean host copy: the top tier holds the block too ({@link
     * BlockOwner#HOST_CLEAN}). A referenced block's disk record, if it has one, the cache pins
     * next, since the top tier may hand its slot over to that record at any time.
     *
     * @param blockId a victim whose host copy is clean
     */
    void dropClean(int blockId);

    /**
     * Evicts an unreferenced victim's host copy: its bytes go (the cache has offered them to a
     * remote store first where one lies below the host, reading the slot as a spill does). The id
     * is reported as left ({@link LowerTier#drainChanges}), so the cache frees it when it next
     * settles.
     *
     * @param blockId an unreferenced block held in a host slot, not moving or queued
     * @return true (the copy went); false if it could not go: not held in a slot, moving, queued,
     *         or referenced
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

package io.tierkv.core.cache;

import java.lang.foreign.MemorySegment;

/**
 * What lies below the top tier: the hook through which {@link PagedKvCache} demotes sealed blocks
 * and promotes them back. The tier manager in module {@code tiers} implements it over pinned host
 * memory and the disk tier; a single-tier cache has none.
 *
 * <p>One lock: the tier guards its per-block facts with the cache's own lock, lent at {@link
 * #attach} ({@link BlockOwner#lock()}). Calls that copy bytes arrive without it held, with the
 * block pinned (in transit): nobody else reads, moves or frees it until the call returns; calls
 * that only change facts arrive with it held, as each says. Implementations are thread-safe.
 *
 * <p>Identity: every call that moves bytes hands over the block's {@link
 * io.tierkv.core.prefix.BlockIdentity} (a view of the cache's own record, valid for the call).
 * A store keyed by hash (disk, remote) stores it with the bytes and compares it on every read by
 * hash: bytes stored for another identity are never handed up, whatever their hash (a counted
 * collision and a miss). A tier keyed by block id (host slots) keeps no copy: it reads the
 * cache's record of an id it holds ({@link BlockOwner#identity}), which stays as it is until the cache calls
 * {@link #forget} for that id.
 */
public interface LowerTier {

    /**
     * Hands this tier the cache's lock and records ({@link BlockOwner}), once, from the cache's
     * constructor, before any block moves. The tier guards its own facts with {@link
     * BlockOwner#lock()}, the manager lock, and reads the cache's facts ({@link
     * BlockOwner#referenced}), hashes ({@link BlockOwner#hashHi}) and identity records ({@link
     * BlockOwner#identity}) through the view instead of keeping copies, and reads them with the lock
     * held (the cache copies a record itself for its own copies made with the lock released). Where it
     * holds each block it records in the cache ({@link BlockOwner#setHostSlot}, {@link
     * BlockOwner#setBelowBits}), as its copies arrive and go: the cache reads where a block's copy is
     * from that record alone, so a tier that records nothing is taken to hold nothing. Whether an
     * id is bound to a disk record (ON_DISK, set by an adoption) and the pins the ids hold on disk
     * records are kept by the cache itself ({@link #diskRecords}). No default: a tier that wraps another must pass the owner on.
     *
     * @param owner the cache's view of itself for the tiers below
     */
    void attach(BlockOwner owner);

    /**
     * {@return this tier's host slots as a slot store, which the cache's room making drives
     * (free slots, victims; {@link HostSlots})} The same object on every call.
     */
    HostSlots hostSlots();

    /**
     * {@return the disk below the host as a store of records keyed by hash, which the cache's
     * spills write and whose pins the cache takes and releases ({@link DiskRecords}); null without
     * a disk} The same object on every call.
     */
    DiskRecords diskRecords();

    /**
     * Copies a sealed block down into a host slot the cache reserved for it ({@link
     * HostSlots#reserveFree}) and confirms the copy is complete. The slot is not recorded as the
     * block's here: on true the cache commits it ({@link HostSlots#fill}).
     *
     * @param blockId the block
     * @param hashHi  its hash, high word (0 if the block has no hash)
     * @param hashLo  its hash, low word
     * @param identity its identity ({@link io.tierkv.core.prefix.BlockIdentity}, B token ids)
     * @param slot    its top-tier slot, the source of the copy
     * @param hostSlot the reserved host slot, the destination: on true it holds the copy, still
     *                 reserved, for the cache's commit; on false or a throw the tier has taken it
     *                 back (parked for a late copy, or freed)
     * @return true if a complete copy now lies in the host slot; false leaves nothing behind below
     */
    boolean demote(int blockId, long hashHi, long hashLo, MemorySegment identity, int slot, int hostSlot);

    /**
     * Plans a promotion (vLLM's "prepare load"), with the cache lock held and the block in
     * transit: holds the block's host copy as the source until {@link #completePromote}: the
     * host slot is marked as read and leaves the host policy, so nothing drops or spills it
     * meanwhile. Changes nothing when it answers {@link #SOURCE_NONE} or {@link #SOURCE_BUSY}.
     * Must not call the cache or block. A block with no host copy the cache promotes from its disk
     * copy, if it has one ({@link #SOURCE_DISK}).
     *
     * @param blockId the block, not on the top tier
     * @return the source for {@link #promote}: a host slot ({@code >= 0}), {@link #SOURCE_NONE}
     *         (no host slot holds the block), or {@link #SOURCE_BUSY} (another move reads its
     *         host copy now: release the lock a moment and ask again)
     */
    int preparePromote(int blockId);

    /** {@link #preparePromote} result: no host slot holds the block. */
    int SOURCE_NONE = -1;
    /**
     * A promotion's source the cache names itself: only the disk holds the block. The cache reads
     * the record into a staging buffer ({@link HostSlots#acquireStaging}, {@link
     * DiskRecords#stage}) and has it copied up ({@link #promoteStaged}).
     */
    int SOURCE_DISK = -2;
    /** {@link #preparePromote} result: another move reads the block's copy now; nothing was held. */
    int SOURCE_BUSY = -3;

    /**
     * Copies a block's bytes up into a top-tier slot from the host slot {@link #preparePromote}
     * held, with the cache lock released.
     *
     * @param blockId       the block
     * @param source        the host slot {@link #preparePromote} answered
     * @param slot          the top-tier slot to fill
     * @param timeoutNanos  how long to wait for the device copy, {@code > 0}, from when the wait
     *                      begins
     * @return {@link #PROMOTED} if the slot now holds the block's bytes; {@link #TIMED_OUT} if the
     *         copy did not complete in time: the copy may still land, so the slot stays reserved
     *         until {@link #releaseLateSlots} hands it back, and the source stays held until then
     */
    int promote(int blockId, int source, int slot, long timeoutNanos);

    /**
     * Copies a staging buffer the cache filled with a block's verified disk record ({@link
     * HostSlots#acquireStaging}) up into a top-tier slot, with the cache lock released, and waits
     * for the copy whatever its deadline (the buffer is reused next).
     *
     * @param blockId    the block, in transit
     * @param buffer     the staging buffer, held by the caller
     * @param slot       the top-tier slot to fill
     * @param startNanos {@link System#nanoTime()} when the promotion began (before the cache waited
     *                   for the buffer and read the record), for the tier's latency figures
     * @return {@link #PROMOTED}
     */
    int promoteStaged(int blockId, int buffer, int slot, long startNanos);

    /**
     * Ends a promotion (vLLM's "complete load"), with the cache lock held, whatever {@link
     * #promote} did, also when it threw: a host source is released, back in the host policy, and
     * kept as a clean second copy if the block was promoted. Must not call the cache or block.
     *
     * @param blockId the block
     * @param source  what {@link #preparePromote} answered
     * @param result  what {@link #promote} returned, or {@link #LOST} if it threw
     */
    void completePromote(int blockId, int source, int result);

    /** {@link #promote} result: the slot holds the block. */
    int PROMOTED = 0;
    /** A promotion's result: the block is gone below; the destination is untouched. */
    int LOST = 1;
    /** {@link #promote} result: timed out; the slot must wait for {@link #releaseLateSlots}. */
    int TIMED_OUT = 2;
    /**
     * A promotion's result: the disk record under the block's key
     * is another identity's (a counted collision), no copy of this block; the destination is
     * untouched.
     */
    int FOREIGN = 3;

    /**
     * Copies a block's host copy into caller memory without moving it (a read that does not
     * promote); a block held on disk alone the cache reads from the disk store itself ({@link
     * DiskRecords#read}). The read counts as a host hit and tells the host policy of the access.
     *
     * @param blockId the block, in transit for the call (not on the top tier)
     * @param out     receives the block's {@code bytesPerBlock} bytes from offset 0
     * @return true if {@code out} holds the block; false if no host slot holds it (nothing copied)
     */
    boolean read(int blockId, MemorySegment out);

    /**
     * Hands back top-tier slots of timed-out promotions whose late copies have now completed (or
     * were cancelled), so they can be reused without a late write landing in them.
     *
     * @param sink receives each slot that is safe to reuse
     */
    void releaseLateSlots(java.util.function.IntConsumer sink);

    /** Where a block's copy is below ({@link TierControl#residence}): nothing below holds it. */
    int RESIDENT_NOWHERE = 0;
    /** Where a block's copy is below ({@link TierControl#residence}): a host slot holds it. */
    int RESIDENT_HOST = 1;
    /** Where a block's copy is below ({@link TierControl#residence}): only a disk record holds it. */
    int RESIDENT_DISK = 2;

    /**
     * Told when a prefix match took a block that lies below the top tier, so it can start
     * promoting it before the lease asks (promotion on match). Called with the cache lock held:
     * must not block. The default does nothing.
     *
     * @param blockId the matched block
     */
    default void matchedBelow(int blockId) {
    }

    /**
     * Forgets everything held below for a block id (the block was freed or its id reused); the
     * cache has released its disk pin, if any, first. Keyed copies that can serve later prefix
     * hits (disk) may be kept by hash.
     *
     * @param blockId the block
     */
    void forget(int blockId);

    /**
     * Moves into {@code out} what this tier let go of since the last call, and forgets it there: a
     * host copy evicted as the cache asked (only blocks nothing references), and keys whose disk
     * records went on their own. A store returns what it evicted this way and never calls the
     * cache. Called with the cache lock held, by the cache after its own moves and by the tier manager's movers; must not call
     * the cache and should return at once when there is nothing to drain. No default: a tier
     * that wraps another must pass its changes on.
     *
     * @param out the list to add to ({@link BelowChanges#add})
     */
    void drainChanges(BelowChanges out);

    /**
     * Whether {@link #drainChanges} would add anything now, answered without locks, so a caller
     * with nothing to settle need not take the cache lock. May answer false just as a change
     * arrives (it is drained by the next call) and true for changes another caller is draining.
     *
     * @return whether there may be changes to drain
     */
    boolean hasChanges();

    /**
     * {@return the shared store below the lowest local tier as the cache's moves drive it (a
     * remote store), or null for none (the default)} Read once, when the cache is built: the
     * cache then fetches from it for prefix matches that miss locally, and offers it the blocks
     * that leave the lowest local tier.
     */
    default RemoteRecords remoteRecords() {
        return null;
    }

    /**
     * The hashes findable in one tier below the host now, as its KV events describe them ({@link
     * io.tierkv.core.event.KvEventSink}), for diagnostics and tests: the store's own keys (the host's
     * the cache reads from its records of host slots). Called without the cache lock. The default
     * holds nothing.
     *
     * @param medium a tier below the host (DISK, REMOTE)
     * @return the hashes, each once per copy the tier holds; a fresh list
     */
    default java.util.List<io.tierkv.core.event.KvBlockHash> findableHashes(io.tierkv.core.event.KvMedium medium) {
        return java.util.List.of();
    }
}

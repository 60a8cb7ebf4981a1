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
     * BlockOwner#identity}) through the view instead of keeping copies. A tier that reads a record
     * after releasing the lock (a spill's disk write) copies it first, under the lock. Where it
     * holds each block it records in the cache ({@link BlockOwner#setHostSlot}, {@link
     * BlockOwner#setBelowBits}), as its copies arrive and go: the cache reads where a block's copy is
     * from that record alone (asking only {@link #diskCopyHeld}), so a tier that records nothing
     * is taken to hold nothing. No default: a tier that wraps another must pass the owner on.
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
     * Copies a sealed block down into a host slot the cache reserved for it ({@link
     * HostSlots#reserveFree}) and confirms the copy is complete.
     *
     * @param blockId the block
     * @param hashHi  its hash, high word (0 if the block has no hash)
     * @param hashLo  its hash, low word
     * @param identity its identity ({@link io.tierkv.core.prefix.BlockIdentity}, B token ids)
     * @param slot    its top-tier slot, the source of the copy
     * @param hostSlot the reserved host slot, the destination: the tier owns it from this call on
     *                 (placed, parked for a late copy, or freed if the copy cannot be issued)
     * @return true if a complete copy now exists below; false leaves nothing behind below
     */
    boolean demote(int blockId, long hashHi, long hashLo, MemorySegment identity, int slot, int hostSlot);

    /**
     * Plans a promotion (vLLM's "prepare load"), with the cache lock held and the block in
     * transit: finds the block's copy below and holds it as the source until {@link
     * #completePromote}: a host slot is marked as read and leaves the host policy, so nothing
     * drops or spills it meanwhile. Changes nothing when it answers {@link #SOURCE_NONE} or
     * {@link #SOURCE_BUSY}. Must not call the cache or block.
     *
     * @param blockId the block, not on the top tier
     * @return the source for {@link #promote}: a host slot ({@code >= 0}), {@link #SOURCE_DISK},
     *         {@link #SOURCE_NONE} (nothing below holds the block: it is lost), or {@link
     *         #SOURCE_BUSY} (another move reads its copy now: release the lock a moment and ask
     *         again)
     */
    int preparePromote(int blockId);

    /** {@link #preparePromote} result: nothing below holds the block. */
    int SOURCE_NONE = -1;
    /** {@link #preparePromote} result: only the disk holds the block; {@link #promote} reads it there. */
    int SOURCE_DISK = -2;
    /** {@link #preparePromote} result: another move reads the block's copy now; nothing was held. */
    int SOURCE_BUSY = -3;

    /**
     * Copies a block's bytes up into a top-tier slot from the source {@link #preparePromote}
     * held, with the cache lock released.
     *
     * @param blockId       the block
     * @param hashHi        its block hash, high word, as the cache holds it: the key of its disk
     *                      record (the lower tier reads no key of its own, which may be gone by the
     *                      time the copy starts)
     * @param hashLo        its block hash, low word
     * @param source        what {@link #preparePromote} answered: a host slot, {@link
     *                      #SOURCE_DISK} or {@link #SOURCE_NONE}
     * @param slot          the top-tier slot to fill
     * @param timeoutNanos  how long to wait for the device copy, {@code > 0}, from when the wait
     *                      begins
     * @return {@link #PROMOTED} if the slot now holds the block's bytes; {@link #LOST} if the
     *         block is gone below (corrupt, missing, evicted, or its key holds another identity)
     *         and the slot is untouched;
     *         {@link #TIMED_OUT} if the copy did not complete in time: the copy may still land,
     *         so the slot stays reserved until {@link #releaseLateSlots} hands it back, and the
     *         source stays held until then
     */
    int promote(int blockId, long hashHi, long hashLo, int source, int slot, long timeoutNanos);

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
    /** {@link #promote} result: the block is gone below; the slot is untouched and free to reuse. */
    int LOST = 1;
    /** {@link #promote} result: timed out; the slot must wait for {@link #releaseLateSlots}. */
    int TIMED_OUT = 2;

    /**
     * Copies a block held below into caller memory without moving it (a read that does not
     * promote): from its host copy if there is one, else from disk after verifying the record's
     * checksum. The read counts as a hit on the tier that served it and tells that tier's policy
     * of the access.
     *
     * @param blockId  the block, in transit for the call (not on the top tier)
     * @param identity its identity, compared with what a disk record holds
     * @param out      receives the block's {@code bytesPerBlock} bytes from offset 0
     * @return true if {@code out} holds the block; false if the block is gone below (missing,
     *         corrupt or another identity's: a counted miss; no byte of another block is left in
     *         {@code out})
     */
    boolean read(int blockId, MemorySegment identity, MemorySegment out);

    /**
     * Hands back top-tier slots of timed-out promotions whose late copies have now completed (or
     * were cancelled), so they can be reused without a late write landing in them.
     *
     * @param sink receives each slot that is safe to reuse
     */
    void releaseLateSlots(java.util.function.IntConsumer sink);

    /**
     * The one question the cache asks of a store about where a block is: whether the disk record
     * block {@code blockId} is bound to ({@link BlockOwner#ON_DISK}) is still there. A record found
     * gone (a pin broken by another reader's verification, or removed) is settled on the way: ON_DISK
     * is cleared and the pin released. Everything else about where a block is below, the cache reads
     * from its own records ({@link BlockOwner#hostSlot}, {@link BlockOwner#belowBits}). Called with
     * the cache lock held; must not call the cache.
     *
     * @param blockId a block id
     * @return whether the block's disk copy is there; false if it has none
     */
    boolean diskCopyHeld(int blockId);

    /** Where a block's copy is below ({@link TierControl#residence}): nothing below holds it. */
    int RESIDENT_NOWHERE = 0;
    /** Where a block's copy is below ({@link TierControl#residence}): a host slot holds it. */
    int RESIDENT_HOST = 1;
    /** Where a block's copy is below ({@link TierControl#residence}): only a disk record holds it. */
    int RESIDENT_DISK = 2;

    /**
     * Plans a spill (vLLM's "prepare store"), with the cache lock held, in the same hold that puts
     * the block in transit: takes the block's host copy as the spill's source (out of the host
     * policy and any mover queue, marked as read) if it can spill: a disk below, a host slot, no
     * other move reading it, not a clean copy, a hash. Changes nothing when it answers false.
     * Must not call the cache or block.
     *
     * @param blockId a block not on the top tier
     * @return whether {@link #spill} may write it; {@link #spill} is called if and only if true
     */
    boolean prepareSpill(int blockId);

    /**
     * Writes the block {@link #prepareSpill} took as a source to the disk tier and ends the spill,
     * keeping its id. Called without the cache lock, the block pinned in transit.
     *
     * @param blockId a block {@link #prepareSpill} answered true for
     * @return true if the block is on disk now and its host slot is free; false if the disk
     *         refused it: it stays in its host slot, back in the host policy
     */
    boolean spill(int blockId);

    /**
     * Copies a block held only on disk into a host slot the cache reserved for it, keeping the
     * disk record (read-ahead from disk). Called without the cache lock, the block pinned in
     * transit.
     *
     * @param blockId  a block held only on disk
     * @param identity its identity, compared with what the disk record holds
     * @param hostSlot the reserved host slot ({@link HostSlots#reserveFree}): the tier owns it from
     *                 this call on, and frees it on every path that does not fill it
     * @return true if the host slot holds the block now; false if it could not move (not only on
     *         disk): nothing changed; or a disk miss (missing, corrupt or another identity's): a
     *         counted loss, after which the block has no copy below and its next lease fails
     */
    boolean load(int blockId, MemorySegment identity, int hostSlot);

    /**
     * Looks up a hash that the top tier's index does not hold (for example a block recovered from
     * disk) and, if a record with exactly the expected identity is found, binds it to a new block
     * id. A record whose stored identity differs is verified before it is called a collision:
     * damaged identity bytes are a counted miss ({@link #ABSENT}), never a collision that would
     * keep the hash from the block computed again.
     *
     * @param blockId  the fresh id to bind it to
     * @param hashHi   hash, high word
     * @param hashLo   hash, low word
     * @param identity the identity the caller expects (context, parent hash and the prompt's B
     *                 token ids); read only
     * @return {@link #ADOPTED} if found with that identity and bound; {@link #ABSENT} if not found
     *         (or found damaged, a counted miss); {@link #COLLISION} if a sound record of another
     *         identity holds the hash (nothing bound)
     */
    int adopt(int blockId, long hashHi, long hashLo, MemorySegment identity);

    /** {@link #adopt} result: a record with the expected identity is bound to the id. */
    int ADOPTED = 0;
    /** {@link #adopt} result: no sound record for the hash. */
    int ABSENT = 1;
    /** {@link #adopt} result: a sound record of another identity holds the hash. */
    int COLLISION = 2;

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
     * Told when a sealed block becomes referenced (its reference count rises from 0: a sequence's
     * table or a lease holds it), and by a prefix match just before it hands out a block that is
     * not on the top tier. Until {@link #unpinBelow} or {@link #forget}, the lower tier must not
     * evict any copy it holds or later receives of the block (a disk record then may be its only
     * copy); room it cannot make without such a copy is refused instead (a failed demotion or
     * spill), so nothing a sequence references is lost. Idempotent. Called with the cache lock
     * held: must not call the cache.
     *
     * @param blockId a sealed block
     * @return true if a copy of the block exists below now and is kept; false if none does (for a
     *         block not on the top tier: its only copy went before it could be pinned)
     */
    boolean pinBelow(int blockId);

    /**
     * Told when a block pinned by {@link #pinBelow} is referenced no more (its count fell to 0, or
     * its bytes were found lost): its copies below may be evicted again. Idempotent. Called with
     * the cache lock held: must not call the cache.
     *
     * @param blockId the block
     */
    void unpinBelow(int blockId);

    /**
     * Forgets everything held below for a block id (the block was freed or its id reused), pins
     * included. Keyed copies that can serve later prefix hits (disk) may be kept by hash.
     *
     * @param blockId the block
     */
    void forget(int blockId);

    /**
     * Moves into {@code out} what this tier let go of since the last call, and forgets it there: a
     * host copy that left as the cache's moves asked (spilled on down and now kept by hash, or
     * evicted: only blocks not pinned by {@link #pinBelow}), and keys whose disk records went on
     * their own. A
     * store returns what it evicted this way and never calls the cache. Called with the cache
     * lock held, by the cache after its own moves and by the tier manager's movers; must not call
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
     * Settles a drained notice that the disk record of a key went ({@link BelowChanges#NO_BLOCK}),
     * for the block the cache indexes under that key: the notice may be stale (the key written
     * again since), so the tier decides under the lock whether the block's disk copy is gone (then
     * ON_DISK is cleared, and the pin released). Called with the cache lock held; must not call
     * the cache, which reads where the block's copy is afterwards.
     *
     * @param blockId the block the cache indexes under the key
     * @param hashHi  the key, high word
     * @param hashLo  low word
     */
    void settleDrop(int blockId, long hashHi, long hashLo);

    /**
     * Whether this lower tier can fetch blocks by hash from a store it does not hold locally (a
     * remote store): a prefix match that misses locally then asks {@link #lookupAhead}. The
     * default is false.
     *
     * @return whether {@link #fetchAhead} may find anything
     */
    default boolean fetchesAhead() {
        return false;
    }

    /**
     * Called by a prefix match that missed locally, without the cache lock: counts how many
     * leading blocks of the rest of the chain a store below (a remote store) holds and this tier
     * would fetch (it may cap them, for room). The cache then reserves a host slot for each
     * ({@link HostSlots#reserveFree}, making room as for a demotion) and calls {@link #fetchAhead}.
     *
     * @param hashHi     the chain's next hashes, high words, in order
     * @param hashLo     low words
     * @param count      how many, from index 0
     * @param startNanos when the match began ({@link System#nanoTime()}): one match's calls below,
     *                   all together, wait at most the store's timeout from then, so a slow store
     *                   costs a match its timeout and no more (the rest of the prompt misses)
     * @return leading blocks held below and to fetch, in [0, count]; 0 by default
     */
    default int lookupAhead(long[] hashHi, long[] hashLo, int count, long startNanos) {
        return 0;
    }

    /**
     * Fetches the leading blocks {@link #lookupAhead} counted, verified against the identities
     * given, into the host slots the cache reserved for them, held for the calling thread, so
     * that the {@link #adopt} calls of the match that follows on this thread find them without
     * waiting on the network. Without the cache lock. Whatever they do not adopt is released by
     * {@link #endFetch}, which the caller always calls after; slots not filled are freed here.
     *
     * @param hashHi     the chain's next hashes, high words, in order
     * @param hashLo     low words
     * @param identities the identity each block must have
     * @param hostSlots  one reserved host slot per block, from index 0: the tier owns them from this
     *                   call on
     * @param count      how many, from index 0, at most what {@link #lookupAhead} returned
     * @param startNanos when the match began, as for {@link #lookupAhead}
     * @return leading blocks fetched and held for this thread, in [0, count]
     */
    default int fetchAhead(long[] hashHi, long[] hashLo, MemorySegment[] identities, int[] hostSlots, int count,
            long startNanos) {
        for (int i = 0; i < count; i++) {
            hostSlots().releaseReserved(hostSlots[i]);
        }
        return 0;
    }

    /**
     * Releases what {@link #fetchAhead} holds for the calling thread and no {@link #adopt} took.
     * Called without the cache lock; the default does nothing.
     */
    default void endFetch() {
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

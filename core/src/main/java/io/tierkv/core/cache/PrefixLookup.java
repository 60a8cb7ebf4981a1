package io.tierkv.core.cache;

import io.tierkv.core.prefix.PrefixIndex;
import java.lang.foreign.MemorySegment;

import static io.tierkv.core.cache.BlockStates.HELD;
import static io.tierkv.core.cache.BlockStates.INDEXED;
import static io.tierkv.core.cache.BlockStates.SEALED;
import static io.tierkv.core.cache.BlockStates.TRANSIT;
import static io.tierkv.core.cache.BlockStates.TWIN;

/**
 * Prefix matching: finds the sealed block for the next full block of a prompt by its chained
 * hash, in the cache's index or (adopting a record) below it, and takes it only if its identity
 * (context, parent hash, token ids) equals the prompt's: a hash alone never proves a block's
 * identity. A block found below the top tier is pinned there before it is handed out. Every
 * method is called with the cache lock held.
 */
// Every method runs with the cache lock held by a caller in another class (PagedKvCache, Sequence,
// TierControl), which Error Prone cannot relate to this class's cache.lock (it has no aliasing).
@SuppressWarnings("GuardedBy")
final class PrefixLookup {

    private final PagedKvCache cache;
    private final BlockStates b;
    private final LowerTier lower;
    /** Guarded by the cache lock, reached through {@code PagedKvCache.prefix} (annotated there). */
    final PrefixIndex index;
    /** Sealed blocks whose hash another block held when they sealed; guarded as {@link #index}. */
    final TwinBlocks twins;

    PrefixLookup(PagedKvCache cache, LowerTier lower) {
        this.cache = cache;
        this.b = cache.blocks;
        this.lower = lower;
        this.index = new PrefixIndex(b.hashHi, b.hashLo);
        this.twins = new TwinBlocks(b.hashHi, b.hashLo);
    }

    /**
     * Seals a fully written block: hashes its identity, indexes it unless its hash is taken (then
     * it is a twin, {@link TwinBlocks}, indexed when a block of its identity holding the hash
     * leaves the index; a block of another identity under the hash is a counted collision) and
     * makes it a candidate. Lock held.
     */
    void seal(int id, Sequence seq) {
        IdentityTable identities = cache.identities;
        identities.hash(cache.hasher, seq, id);
        b.hashHi[id] = cache.hasher.hi();
        b.hashLo[id] = cache.hasher.lo();
        identities.setKey(id, seq.contextHi, seq.contextLo, seq.parentHi, seq.parentLo);
        b.setState(id, SEALED);
        b.setPriority(id, seq.options.priority());
        if (index.put(id)) {
            b.bits[id] |= INDEXED;
            cache.events.stored(id);
        } else {
            if (!identities.same(index.get(b.hashHi[id], b.hashLo[id]), id)) {
                cache.counters.hashCollisions++;
            }
            twins.add(id);
            b.bits[id] |= TWIN;
        }
        cache.refresh(id);
    }

    /**
     * Takes a block out of the index, a twin of its identity indexed in its place if there is one
     * (so a copy a sequence still holds stays findable; a twin whose hash only collides is not),
     * or out of the twins; nothing if it is in neither. Before the block is freed or lost. Lock
     * held.
     */
    void unindex(int id) {
        if ((b.bits[id] & TWIN) != 0) {
            twins.remove(id);
            b.bits[id] &= ~TWIN;
            return;
        }
        if (!b.indexed(id)) {
            return;
        }
        index.remove(id);
        b.bits[id] &= ~INDEXED;
        int twin = twins.size() == 0 ? -1 : twins.takeCopyOf(id, cache.identities);
        if (twin >= 0) {
            b.bits[twin] &= ~TWIN;
            index.put(twin);
            b.bits[twin] |= INDEXED;
            cache.events.stored(twin);
            cache.refresh(twin);
        }
    }

    /**
     * Finds a sealed block for a hash, in the index or (adopting it) below; -1 if absent. A block
     * found below the top tier comes back pinned there ({@link #holdBelow}): the caller must
     * reference it or {@link PagedKvCache#refresh(int)} it. A block found whose only copy below went
     * before the cache settled it (a disk record evicted) is freed and looked up again: a twin
     * indexed in its place, or one adoption (a copy fetched ahead from a remote store, a disk
     * record), may still find the block. A block that a move holds with no copy
     * below at that moment (a promotion whose copy has landed on the top tier, and whose host copy,
     * clean now, was dropped before the promotion took the lock back) is waited for, at most
     * {@code promotionTimeoutNanos}, and then looked up again: a hit if it arrived, a miss if the
     * move ended without a copy or took longer, or if the thread is interrupted (its interrupt
     * status kept). The lock is released while waiting. Each call counts one hit or one miss.
     *
     * @param hi           the block hash, high word
     * @param lo           the block hash, low word
     * @param seq          the sequence matching (its context and the parent hash of this block)
     * @param promptTokens the prompt's token ids
     * @param from         index of this block's first token in {@code promptTokens}
     * @return the block id, or -1 for a miss
     * @throws IllegalStateException if the cache or {@code seq} was closed while it waited
     */
    int lookup(long hi, long lo, Sequence seq, int[] promptTokens, int from) {
        CacheCounters counters = cache.counters;
        long moveDeadline = 0; // System.nanoTime() bound of the wait for a move, set at the first wait
        int adoptRetries = 1; // a look after a GONE with no twin indexed: one adoption, then a miss
        for (;;) {
            int id = find(hi, lo, seq, promptTokens, from);
            int below = id < 0 || b.slot[id] >= 0 ? KEPT : holdBelow(id);
            if (below == MOVING) {
                if (moveDeadline == 0) {
                    moveDeadline = System.nanoTime() + cache.options.promotionTimeoutNanos();
                }
                long remaining = moveDeadline - System.nanoTime();
                if (remaining > 0 && awaitMove(remaining)) {
                    if (cache.closed || seq.isClosed()) { // closed meanwhile: take nothing into it
                        counters.prefixMissBlocks++;
                        throw new IllegalStateException((cache.closed ? "cache" : "sequence")
                                + " closed while its match waited for a block in transit");
                    }
                    continue;
                }
            }
            if (below == GONE && (index.get(hi, lo) >= 0 || adoptRetries-- > 0)) {
                // The block was freed or lost (its record below went before the cache settled it).
                // Look again: a twin of it may have taken its place in the index, or an adoption
                // may bind a copy held elsewhere (fetched ahead from a remote store) to a fresh id.
                continue;
            }
            if (id < 0 || below != KEPT) {
                counters.prefixMissBlocks++;
                return -1;
            }
            counters.prefixHitBlocks++;
            if (b.slot[id] < 0) {
                counters.prefixHitBlocksBelow++;
                lower.matchedBelow(id);
            }
            cache.policy.onAccess(id);
            return id;
        }
    }

    /**
     * Waits for a change (every move's end signals one), the lock released.
     *
     * @return false if the thread was interrupted, before or during the wait (its interrupt
     *         status kept): a signal and an interrupt that cross end the wait either way
     */
    private boolean awaitMove(long nanos) {
        try {
            cache.changed.awaitNanos(nanos);
            return !Thread.currentThread().isInterrupted();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /**
     * The block a lookup may take for a hash: indexed (or adopted from below), of the prompt's
     * identity, with room for one more reference; -1 if none (a collision is counted here, the
     * miss by the caller).
     */
    private int find(long hi, long lo, Sequence seq, int[] promptTokens, int from) {
        int id = index.get(hi, lo);
        if (id < 0 && lower != null) {
            id = adopt(hi, lo, seq, promptTokens, from);
        }
        if (id < 0) {
            return -1;
        }
        if (!cache.identities.matches(id, seq, promptTokens, from)) {
            cache.counters.hashCollisions++;
            return -1;
        }
        // The most references one block holds: not taken, as past the budget.
        return b.refsFull(id) ? -1 : id;
    }

    /**
     * Matches full blocks {@code fromBlock..toBlock-1} of a prompt into a sequence holding
     * exactly {@code fromBlock} matched blocks, in order, until the first miss: hashes each block
     * along the sequence's chain, looks it up, references it and hands it to the sequence
     * ({@link Sequence#takeMatched}). Lock held.
     *
     * @param seq          the sequence, open, holding {@code fromBlock} full blocks
     * @param promptTokens the prompt's token ids
     * @param fromBlock    the first block to match
     * @param toBlock      one past the last block to take
     */
    void match(Sequence seq, int[] promptTokens, int fromBlock, int toBlock) {
        MemorySegment prompt = MemorySegment.ofArray(promptTokens);
        int b = cache.blockTokens;
        io.tierkv.core.prefix.BlockHasher hasher = cache.hasher;
        for (int i = fromBlock; i < toBlock; i++) {
            hasher.hashBlock(seq.saltHi, seq.saltLo, seq.parentHi, seq.parentLo, seq.extraKeys, prompt, (long) i * b, b);
            long hi = hasher.hi();
            long lo = hasher.lo();
            int id = lookup(hi, lo, seq, promptTokens, i * b);
            if (id < 0) {
                return;
            }
            cache.ref(id);
            seq.takeMatched(id, hi, lo);
        }
    }

    /** Binds a record below that holds the hash with the prompt's identity to a fresh id; -1 if none. */
    private int adopt(long hi, long lo, Sequence seq, int[] promptTokens, int from) {
        int fresh = b.allocateId();
        if (fresh < 0 && cache.moves.settle.run() > 0) { // ids the tiers below no longer need may come free
            fresh = b.allocateId();
        }
        if (fresh < 0) {
            return -1;
        }
        IdentityTable identities = cache.identities;
        b.hashHi[fresh] = hi;
        b.hashLo[fresh] = lo;
        identities.setKey(fresh, seq.contextHi, seq.contextLo, seq.parentHi, seq.parentLo);
        identities.setTokens(fresh, promptTokens, from); // the identity adopt expects
        int adopted;
        boolean returned = false;
        try {
            adopted = adoptFetched(fresh, hi, lo, identities.of(fresh)); // fetched ahead from a remote store
            if (adopted == ABSENT) {
                adopted = adoptFromDisk(fresh, hi, lo, identities.of(fresh));
            }
            returned = true;
        } finally {
            if (!returned) { // a store threw: the fresh id goes back
                b.releaseUnused(fresh);
            }
        }
        if (adopted == COLLISION) {
            cache.counters.hashCollisions++;
        }
        if (adopted != ADOPTED) {
            b.releaseUnused(fresh);
            return -1;
        }
        b.setState(fresh, SEALED);
        index.put(fresh);
        b.bits[fresh] |= INDEXED;
        return fresh;
    }

    /** An adoption's result: a copy with the expected identity is bound to the id. */
    private static final int ADOPTED = 0;
    /** An adoption's result: no sound copy for the hash. */
    private static final int ABSENT = 1;
    /** An adoption's result: a sound record of another identity holds the hash (nothing bound). */
    private static final int COLLISION = 2;

    /**
     * Binds a block this thread's prefix match fetched ahead from the remote store ({@link
     * FetchAhead#take}), fetched for exactly the identity {@code fresh} holds, to it: its host slot
     * holds its only local copy, as after a demotion ({@link HostSlots#fill}).
     *
     * @return {@link #ADOPTED} or {@link #ABSENT}
     */
    private int adoptFetched(int fresh, long hi, long lo, MemorySegment identity) {
        int hs = cache.fetchAhead == null ? -1 : cache.fetchAhead.take(hi, lo, identity);
        if (hs < 0) {
            return ABSENT;
        }
        lower.hostSlots().fill(fresh, hs);
        return ADOPTED;
    }

    /**
     * Binds a disk record of the identity {@code fresh} holds to it ({@link DiskRecords#adopt}):
     * ON_DISK, and, where the store reads the bytes on adoption, in a free host slot if there is
     * one (no room is made for an adoption: the lock is held throughout), so that the promotion or
     * read that usually follows a match is a host copy rather than a second disk read.
     *
     * @return {@link #ADOPTED}, {@link #ABSENT} or {@link #COLLISION}
     */
    private int adoptFromDisk(int fresh, long hi, long lo, MemorySegment identity) {
        DiskRecords disk = cache.disks.disk;
        if (disk == null || !disk.contains(hi, lo)) {
            return ABSENT;
        }
        HostSlots host = lower.hostSlots();
        int hs = disk.verifiesOnAdopt() ? host.reserveFree() : -1;
        int found = DiskRecords.MISSED; // stays a miss if the read throws
        try {
            found = disk.adopt(fresh, hi, lo, identity, hs >= 0 ? host.view(hs) : null);
        } finally {
            if (hs >= 0 && found != DiskRecords.LOADED) {
                host.releaseReserved(hs);
            }
        }
        if (found != DiskRecords.LOADED) {
            return found == DiskRecords.FOREIGN ? COLLISION : ABSENT;
        }
        b.below[fresh] = BlockOwner.ON_DISK; // bound to its record, found again by hash
        if (hs >= 0) {
            host.fill(fresh, hs);
        }
        return ADOPTED;
    }

    /** {@link #holdBelow}: a copy below is kept for the block; it may be handed out. */
    private static final int KEPT = 0;
    /** {@link #holdBelow}: the block has no copy anywhere: a miss. */
    private static final int GONE = 1;
    /** {@link #holdBelow}: no copy below now, but a move holds the block and may be bringing it up. */
    private static final int MOVING = 2;

    /**
     * Pins a matched block that is not on the top tier before the match hands it out; the caller
     * references it next (or calls {@link PagedKvCache#refresh(int)} to drop the hold if it does
     * not). If its only copy below is already gone, the block is freed (unless a move holds it:
     * {@link #MOVING}) and {@link #GONE} returned: a miss now rather than a lost block at its first
     * lease. A block held already (others reference it) whose copy below has gone since (a pinned
     * record found damaged) is lost for them, and a miss here, unless a move holds it.
     *
     * @return {@link #KEPT}, {@link #GONE} or {@link #MOVING}
     */
    private int holdBelow(int id) {
        if ((b.bits[id] & HELD) != 0) {
            if (cache.residence(id) != LowerTier.RESIDENT_NOWHERE) {
                return KEPT;
            }
            if ((b.bits[id] & TRANSIT) != 0) {
                return MOVING;
            }
            cache.markLost(id);
            return GONE;
        }
        b.bits[id] |= HELD;
        if (cache.disks.pinBelow(id)) {
            return KEPT;
        }
        b.bits[id] &= ~HELD;
        cache.disks.unpinBelow(id);
        if ((b.bits[id] & TRANSIT) != 0) {
            return MOVING;
        }
        cache.counters.evictions++;
        cache.freeBlock(id);
        return GONE;
    }
}

package io.tierkv.core.cache;

import io.tierkv.core.KvLayout;
import io.tierkv.core.error.CapacityExhaustedException;
import io.tierkv.core.error.CorruptBlockException;
import io.tierkv.core.error.TransferTimeoutException;
import io.tierkv.core.policy.EvictionPolicies;
import io.tierkv.core.policy.EvictionPolicy;
import io.tierkv.core.pool.SlotAllocator;
import io.tierkv.core.pool.SlotMemory;
import io.tierkv.core.prefix.BlockHasher;
import io.tierkv.core.prefix.BlockIdentity;
import io.tierkv.core.prefix.HashAlgorithm;
import io.tierkv.core.prefix.PrefixIndex;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The paged block model: block ids, top-tier slots, block tables, prefix sharing, reference
 * counts, copy-on-write, eviction and the hook to lower tiers.
 *
 * <h2>Terms</h2>
 * A <em>block id</em> is a stable handle in {@code [0, maxBlocks)}; a <em>slot</em> is where its
 * bytes live on the top tier ({@code [0, deviceBlocks)}), or -1 when they live only below. A
 * block is FREE, OPEN (positions still being written; never moved) or SEALED (all B positions of
 * all L layers written; immutable, hashed, indexed unless another block already holds its hash).
 * The <em>reference count</em> is table references plus live leases; 0 with an index entry means
 * cached (reusable, evictable), 0 without one means freed at once.
 *
 * <h2>Per-block metadata (primitive arrays indexed by id; no object per block)</h2>
 * <pre>
 * state byte | flags byte (INDEXED, TRANSIT, QUEUED, HELD) | priority byte | refs int | leases int | protect int
 * slot int | hashHi long | hashLo long        = 35 bytes of heap per id, plus the index (about 8),
 *                                               the id and slot free stacks (8) and the policy
 * off-heap per id: [identity: context 16 B, parent hash 16 B, B token ids] ({@link BlockIdentity})
 *                  and [written count long][written bits: B x L]
 * </pre>
 *
 * <h2>Identity</h2>
 * A block hash only finds a candidate. Every hit, in the index here and in every tier below,
 * compares the block's {@link BlockIdentity} (context fingerprint of salt and extra keys, parent
 * hash, token ids) with the one asked for before a block is taken; a difference is a counted
 * collision ({@link CacheStats#hashCollisions()}) and a miss. A block that seals under a hash
 * another block already indexes keeps its own bytes and stays unindexed; if the two identities
 * differ that is counted as a collision too. The identity is written once, when the block seals
 * (its tokens as they are appended), and handed to the tiers below with every move.
 *
 * <h2>Candidates</h2>
 * One {@link EvictionPolicy} orders the blocks that may leave the top tier. Without a lower tier
 * they are the cached blocks (leaving = eviction). With one they are the sealed, unleased blocks
 * outside every open sequence's last {@code recentDeviceBlocks} sealed blocks ({@code protect ==
 * 0}), referenced or cached (leaving = demotion, or dropping the top copy when a clean copy exists
 * below). A block waiting in a mover's queue ({@link #queueCandidates}) is QUEUED and not a
 * candidate until drained. {@link #refresh(int)} recomputes candidacy from state after every
 * change, so the policy cannot drift from the blocks. Per-cache budgets: {@link CacheBudget}.
 *
 * <h2>Holding blocks below</h2>
 * Once a block leaves the top tier, a lower tier's copy may be its only copy, and a lower tier
 * that evicts it for room loses bytes a sequence still needs. So the lower tier is told which
 * blocks are referenced: a SEALED block with {@code refs > 0} carries the HELD flag, and every
 * change of that fact goes through {@link #refresh(int)}, which calls
 * {@link LowerTier#pinBelow} or {@link LowerTier#unpinBelow} (with this lock held; the lower tier
 * takes its own lock and the disk tier's, never this one, so the order cache, host, disk holds).
 * The flag follows references, not residence: a referenced block keeps its disk record pinned
 * even while the top tier also holds it, because the top tier may drop its slot for that record
 * at any moment ({@link LowerTier#takeOverCopy}) and there must be no window in which the record
 * is evictable and the only copy. A prefix match pins a block that is not on the top tier before
 * handing it out ({@link #lookup}): if its only copy below went first, the match is a miss, not a
 * block that fails its first lease. Blocks nobody references (cached) stay evictable below.
 *
 * <h2>Concurrency</h2>
 * One lock guards all metadata. Copies between tiers run with the lock released and the block
 * flagged TRANSIT: nobody else frees, moves or reuses it until the move ends; a move that fails
 * leaves the source as it was. Writing a position of an unshared OPEN block takes no lock: one
 * thread writes a sequence at a time, and no other party can gain a reference to an OPEN block
 * except through that sequence. Waiting for space is bounded by {@code admissionTimeoutNanos} and
 * ends in {@link CapacityExhaustedException}. A wait on behalf of a block looks at that block again
 * each time it wakes: a lease whose block another party (a prefetch, another lease, the mover)
 * brought up or started moving meanwhile takes that slot or waits for that move, and every change
 * that ends a move, frees a slot or loses a block signals the waiters.
 *
 * <h2>Failure</h2>
 * A promotion that finds the block gone below unindexes it and throws {@link
 * CorruptBlockException}; one that times out frees the reserved slot and throws {@link
 * TransferTimeoutException}; neither hands out bytes.
 */
public final class PagedKvCache implements AutoCloseable {

    static final byte FREE = 0;
    static final byte OPEN = 1;
    static final byte SEALED = 2;
    /** Sealed, but its bytes are lost below; freed when its references end. */
    static final byte LOST = 3;

    static final byte INDEXED = 1;
    static final byte TRANSIT = 2;
    /** Taken out of the candidates by a mover's queue ({@link #queueCandidates}) until it is drained. */
    static final byte QUEUED = 4;
    /** The lower tier was told the block is referenced ({@link LowerTier#pinBelow}) and keeps its copies. */
    static final byte HELD = 8;

    /**
     * What {@link #acquireSlot} returns instead of a slot when the block it works for no longer
     * needs one: another party brought it up, is moving it, or lost it while the call waited.
     */
    private static final int SLOT_NOT_NEEDED = -1;

    final KvLayout layout;
    final CacheOptions options;
    final int blockTokens;
    final int blockBytes;
    final int writesPerBlock;
    private final int writtenWords;
    private final SlotMemory memory;
    private final LowerTier lower;
    final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private final SlotAllocator slots;
    private final SlotAllocator ids;
    final byte[] state;
    final byte[] flags;
    final int[] refs;
    final int[] leases;
    final int[] protect;
    final int[] slot;
    final byte[] priority;
    final long[] hashHi;
    final long[] hashLo;
    private final Arena metaArena = Arena.ofShared();
    /** Every id's {@link BlockIdentity} (context, parent, B token ids). */
    final IdentityTable identities;
    private final MemorySegment written;
    private final PrefixIndex index;
    private final EvictionPolicy policy;
    final BlockHasher hasher;
    /** SHA-256 (keyed as the block hash is) for context fingerprints, whatever the block hash function. */
    private final BlockHasher contextHasher;
    private final Set<Sequence> openSequences = Collections.newSetFromMap(new IdentityHashMap<>());
    final CacheBudget budget = new CacheBudget(this);
    /** The salt string last hashed by {@link #openSequence}, compared by identity (strings are immutable). */
    private String lastSalt;
    /** Its hash: high word, low word. */
    private final long[] lastSaltHash = new long[2];
    /** The options whose context fingerprint was computed last, compared by identity. */
    private SequenceOptions lastContextOptions;
    /** That fingerprint: high word, low word. */
    private final long[] lastContext = new long[2];
    private int reservedSlots;
    private int lateSlots;
    private boolean closed;

    private long prefixHitBlocks;
    private long prefixHitBlocksBelow;
    private long prefixMissBlocks;
    private long hashCollisions;
    private long evictions;
    private long demotions;
    private long cleanDrops;
    private long failedDemotions;
    private long promotions;
    private long failedPromotions;
    private long copiesOnWrite;
    private long deviceReads;
    private long lostBlocks;
    private long retiredIds;
    private long admissionWaits;
    private long admissionFailures;

    /**
     * Creates a cache over top-tier slot memory, with an optional lower tier.
     *
     * @param options validated options
     * @param memory  slot memory with {@code options.deviceBlocks()} slots of {@code bytesPerBlock}
     * @param lower   the tiers below, or {@code null} for a single-tier cache
     * @throws IllegalArgumentException if the memory does not match the options
     */
    public PagedKvCache(CacheOptions options, SlotMemory memory, LowerTier lower) {
        this.options = options;
        this.layout = options.layout();
        this.blockTokens = layout.blockSizeTokens();
        this.blockBytes = layout.bytesPerBlock();
        this.writesPerBlock = blockTokens * layout.layers();
        this.writtenWords = 1 + ((writesPerBlock + 63) >>> 6); // [count][bits]
        if (memory.capacity() != options.deviceBlocks()) {
            throw new IllegalArgumentException("memory.capacity: " + memory.capacity() + " (expected deviceBlocks "
                    + options.deviceBlocks() + ")");
        }
        if (memory.slotBytes() != blockBytes) {
            throw new IllegalArgumentException("memory.slotBytes: " + memory.slotBytes() + " (expected bytesPerBlock "
                    + blockBytes + ")");
        }
        this.memory = memory;
        this.lower = lower;
        int n = options.maxBlocks();
        this.slots = new SlotAllocator(options.deviceBlocks());
        this.ids = new SlotAllocator(n);
        this.state = new byte[n];
        this.flags = new byte[n];
        this.refs = new int[n];
        this.leases = new int[n];
        this.protect = new int[n];
        this.slot = new int[n];
        java.util.Arrays.fill(slot, -1);
        this.priority = new byte[n];
        this.hashHi = new long[n];
        this.hashLo = new long[n];
        this.identities = new IdentityTable(metaArena, n, blockTokens);
        this.written = metaArena.allocate((long) n * writtenWords * Long.BYTES, 64);
        this.index = new PrefixIndex(hashHi, hashLo);
        this.policy = EvictionPolicies.create(options.policy(), n);
        this.hasher = new BlockHasher(options.hashAlgorithm(), options.hashKey());
        this.contextHasher = new BlockHasher(HashAlgorithm.SHA256_128, options.hashKey());
    }

    /**
     * Native memory a cache commits at construction besides its slots: each block id's identity
     * ({@link BlockIdentity#bytes}, rounded up to 8) and its written-position bits (one count word
     * and B x L bits, in 64-bit words). The arrays indexed by block id live on the Java heap and
     * are not counted here.
     *
     * @param layout    the block layout
     * @param maxBlocks block ids ({@link CacheOptions#maxBlocks()}), {@code >= 0}
     * @return bytes
     * @throws IllegalArgumentException if maxBlocks is negative
     */
    public static long metadataBytes(KvLayout layout, long maxBlocks) {
        if (maxBlocks < 0) {
            throw new IllegalArgumentException("maxBlocks: " + maxBlocks + " (expected >= 0)");
        }
        long stride = IdentityTable.rowBytes(layout.blockSizeTokens());
        long writtenWords = 1 + (((long) layout.blockSizeTokens() * layout.layers() + 63) >>> 6);
        return maxBlocks * (stride + writtenWords * Long.BYTES);
    }

    /** {@return the block layout} */
    public KvLayout layout() {
        return layout;
    }

    /** {@return the validated options} */
    public CacheOptions options() {
        return options;
    }

    /**
     * Opens a sequence with its own block table. The salt's hash is kept for the last salt string
     * seen (compared by identity), so a runtime that reuses its options or salt string per tenant
     * hashes it once rather than per sequence; the sequence itself is the only allocation then.
     *
     * @param options salt, extra keys, priority and budget
     * @return the new, empty sequence
     * @throws NullPointerException  if options is null
     * @throws IllegalStateException after close
     */
    public Sequence openSequence(SequenceOptions options) {
        java.util.Objects.requireNonNull(options, "options");
        lock.lock();
        try {
            checkOpen();
            String salt = options.salt();
            if (salt != lastSalt) { // a runtime reuses one salt string per tenant: hash it once, not per sequence
                hasher.hashSalt(salt, lastSaltHash);
                lastSalt = salt;
            }
            if (options != lastContextOptions) { // once per options object (its extraKeys are its own copy)
                contextHasher.hashContext(salt, options.extraKeys(), lastContext);
                lastContextOptions = options;
            }
            Sequence s = new Sequence(this, options, lastSaltHash[0], lastSaltHash[1], lastContext[0], lastContext[1]);
            openSequences.add(s);
            return s;
        } finally {
            lock.unlock();
        }
    }

    // ---------------------------------------------------------------- block life cycle (lock held)

    /** Allocates a fresh OPEN block with a top-tier slot, waiting for space up to the deadline. */
    int allocateOpenBlock(long deadlineNanos) {
        int s = acquireSlot(deadlineNanos, 1, -1);
        int id = ids.allocate();
        if (id < 0) {
            slots.free(s);
            admissionFailures++;
            throw new CapacityExhaustedException("BLOCK_IDS", 1, 0, "all " + ids.capacity()
                    + " block ids live; raise maxBlocks");
        }
        state[id] = OPEN;
        flags[id] = 0;
        refs[id] = 1;
        slot[id] = s;
        hashHi[id] = 0;
        hashLo[id] = 0;
        written.asSlice((long) id * writtenWords * Long.BYTES, (long) writtenWords * Long.BYTES).fill((byte) 0);
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
            if (forBlock >= 0 && !needsPromotion(forBlock)) {
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
            int victim = policy.victim();
            if (victim >= 0) {
                vacate(victim);
                continue;
            }
            long remaining = deadlineNanos - System.nanoTime();
            if (remaining <= 0) {
                admissionFailures++;
                throw new CapacityExhaustedException("DEVICE", requested, slots.freeCount() + policy.size(),
                        slots.usedCount() + " slots held by referenced, leased, recent or moving blocks");
            }
            if (!waited) {
                admissionWaits++;
                waited = true;
            }
            awaitChange(remaining);
        }
    }

    /** Whether a block is below the top tier, settled and not lost: a promotion of it may start now. Lock held. */
    private boolean needsPromotion(int id) {
        return slot[id] < 0 && (flags[id] & TRANSIT) == 0 && state[id] != LOST;
    }

    private void awaitChange(long nanos) {
        try {
            changed.awaitNanos(nanos);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for space", e);
        }
    }

    /** Makes a candidate leave the top tier: evict, drop a clean top copy, or demote. */
    private void vacate(int id) {
        policy.onRemove(id);
        if (lower == null) {
            evictions++;
            freeBlock(id);
            return;
        }
        if (lower.takeOverCopy(id)) {
            cleanDrops++;
            releaseSlot(id);
            return;
        }
        demote(id);
    }

    /**
     * Demotes one sealed block now: copies it down with the lock released, then frees its slot.
     * A refused copy leaves the block on the top tier (out of the policy until its state next
     * changes), or, if nothing references it, drops it from the index entirely (a clean miss).
     * So does a copy that is gone from below again by the time the lock is taken back
     * ({@link LowerTier#hasCopy}): the lower tier may move it on (spill it to disk) as soon as it
     * lands, and drop that record before anything references the block, so the top-tier slot is
     * then the block's only copy and a reference taken meanwhile would lose it with the slot.
     */
    private void demote(int id) {
        flags[id] |= TRANSIT;
        int src = slot[id];
        MemorySegment tok = identities.of(id);
        long hi = hashHi[id];
        long lo = hashLo[id];
        boolean ok = false;
        lock.unlock();
        try {
            ok = lower.demote(id, hi, lo, tok, src);
        } finally {
            lock.lock();
            flags[id] &= ~TRANSIT;
        }
        ok = ok && lower.hasCopy(id); // its copy below may have gone on down and been dropped meanwhile
        if (ok) {
            demotions++;
            releaseSlot(id);
        } else {
            failedDemotions++;
            if (refs[id] == 0) {
                evictions++;
                freeBlock(id);
            }
        }
        endTransit(id);
        changed.signalAll();
    }

    /** After a move: a block whose references ended while it moved is released now. */
    private void endTransit(int id) {
        if (state[id] != FREE && refs[id] == 0 && (state[id] != SEALED || (flags[id] & INDEXED) == 0)) {
            freeBlock(id);
        }
    }

    private void releaseSlot(int id) {
        slots.free(slot[id]);
        slot[id] = -1;
        refresh(id);
        changed.signalAll();
    }

    /** Frees a block entirely: index entry, slot, lower copies, id. */
    private void freeBlock(int id) {
        policy.onRemove(id);
        if ((flags[id] & INDEXED) != 0) {
            index.remove(id);
        }
        if (slot[id] >= 0) {
            slots.free(slot[id]);
            slot[id] = -1;
        }
        if (lower != null) {
            lower.forget(id);
        }
        state[id] = FREE;
        flags[id] = 0;
        refs[id] = 0;
        leases[id] = 0;
        hashHi[id] = 0;
        hashLo[id] = 0;
        ids.free(id);
        changed.signalAll();
    }

    /** Drops one table reference; frees or caches the block when none remain. */
    void unref(int id) {
        if (refs[id] <= 0) {
            throw new IllegalStateException("block " + id + " released at reference count " + refs[id]);
        }
        refs[id]--;
        if (refs[id] == 0 && (flags[id] & TRANSIT) == 0) {
            if (state[id] == SEALED && (flags[id] & INDEXED) != 0) {
                refresh(id);
                changed.signalAll();
            } else {
                freeBlock(id);
            }
        } else {
            refresh(id);
        }
    }

    void ref(int id) {
        refs[id]++;
        refresh(id);
    }

    /**
     * Recomputes whether a block is a candidate to leave the top tier and tells the policy, and
     * whether the lower tier must hold its copies (SEALED and referenced) and tells the lower tier
     * when that changes.
     */
    void refresh(int id) {
        if (lower != null && (state[id] == SEALED && refs[id] > 0) != ((flags[id] & HELD) != 0)) {
            flags[id] ^= HELD;
            if ((flags[id] & HELD) != 0) {
                if (!lower.pinBelow(id) && slot[id] < 0) {
                    markLost(id); // its only copy below went before this reference could hold it: no match finds it now
                }
            } else {
                lower.unpinBelow(id);
            }
        }
        boolean candidate = state[id] == SEALED && slot[id] >= 0 && leases[id] == 0
                && (flags[id] & (TRANSIT | QUEUED)) == 0
                && (lower == null ? refs[id] == 0 && (flags[id] & INDEXED) != 0
                        : protect[id] == 0 && (refs[id] > 0 || (flags[id] & INDEXED) != 0));
        if (candidate != policy.contains(id)) {
            if (candidate) {
                policy.onAdmit(id, priority[id], hashLo[id]);
            } else {
                policy.onRemove(id);
            }
        }
    }

    /** Seals a fully written block: hash it, index it unless its hash is taken, make it a candidate. */
    void seal(int id, Sequence seq) {
        identities.hash(hasher, seq, id);
        hashHi[id] = hasher.hi();
        hashLo[id] = hasher.lo();
        identities.setKey(id, seq.contextHi, seq.contextLo, seq.parentHi, seq.parentLo);
        state[id] = SEALED;
        priority[id] = priorityByte(seq.options.priority());
        if (index.put(id)) {
            flags[id] |= INDEXED;
        } else if (!identities.same(index.get(hashHi[id], hashLo[id]), id)) {
            hashCollisions++; // another block holds this hash: this one keeps its own bytes, unindexed
        }
        refresh(id);
    }

    /**
     * Makes a block's bytes top-tier resident, promoting it from below if needed. While it waits
     * for a slot, another party may bring the block up or start moving it; it then takes the
     * block's slot, or waits for that move to settle, instead of a slot of its own.
     *
     * @return the slot
     */
    int ensureOnDevice(int id, long deadlineNanos) {
        if (residentNow(id)) {
            return slot[id]; // the common case: no clock read, no wait
        }
        long transitDeadline = Math.max(deadlineNanos, System.nanoTime() + options.promotionTimeoutNanos());
        for (;;) {
            awaitSettled(id, transitDeadline); // a move in flight is bounded by the move timeout, not admission
            if (slot[id] >= 0) {
                return slot[id];
            }
            int s = slotFor(id, deadlineNanos);
            if (s != SLOT_NOT_NEEDED) {
                return promoteInto(id, s);
            }
        }
    }

    /** A slot to promote a block into, or {@link #SLOT_NOT_NEEDED}; see {@link #acquireSlot}. Lock held. */
    private int slotFor(int id, long deadlineNanos) {
        reclaimLateSlots(); // also ends the lower tier's finished late copies, which a promotion would wait for
        return acquireSlot(deadlineNanos, 1, id);
    }

    /**
     * Promotes a block into a slot taken for it, with the lock released while it copies; the slot
     * is the block's on success, freed or parked (a late copy) otherwise. Lock held on entry and exit.
     *
     * @return the slot
     * @throws TransferTimeoutException if the copy does not complete in time
     * @throws CorruptBlockException    if the block is lost below
     */
    private int promoteInto(int id, int s) {
        reservedSlots++;
        flags[id] |= TRANSIT;
        long promotionDeadline = System.nanoTime() + options.promotionTimeoutNanos();
        int result = LowerTier.LOST;
        lock.unlock();
        try {
            result = lower.promote(id, identities.of(id), s, promotionDeadline);
        } finally {
            lock.lock();
            flags[id] &= ~TRANSIT;
            reservedSlots--;
        }
        if (result == LowerTier.PROMOTED) {
            promotions++;
            slot[id] = s;
            refresh(id);
            endTransit(id);
            changed.signalAll();
            return s;
        }
        failedPromotions++;
        if (result == LowerTier.TIMED_OUT) {
            lateSlots++; // stays allocated until the lower tier says the late copy is done
        } else {
            slots.free(s);
            markLost(id);
        }
        endTransit(id);
        changed.signalAll();
        if (result == LowerTier.TIMED_OUT) {
            throw new TransferTimeoutException("promote block " + id, options.promotionTimeoutNanos());
        }
        throw new CorruptBlockException("block " + id, "missing or corrupt below the top tier", -1, -1);
    }

    /** Per-cache budgets: whether a block may be demoted now (a candidate to leave the top tier). Lock held. */
    boolean mayLeaveDevice(int id) {
        return policy.contains(id);
    }

    /** Per-cache budgets: which tier below holds a block whose bytes are not on the top tier. Lock held. */
    int residence(int id) {
        return lower == null ? LowerTier.RESIDENT_NOWHERE : lower.residence(id);
    }

    /**
     * Per-cache budgets: spills a sealed block held on the host tier to disk, the block pinned in
     * transit and the lock released while it moves. Lock held on entry and exit.
     */
    boolean spillBelow(int id) {
        return moveBelow(id, false);
    }

    /**
     * Moves a sealed block that is not on the top tier between the tiers below ({@code up}: disk to
     * host, else host to disk), pinned in transit with the lock released while it moves. A load
     * that found the block's only copy missing or damaged leaves it without a copy anywhere: it is
     * freed if nothing references it, else lost now (unindexed, so no match hands it out; its next
     * lease fails). Lock held.
     */
    private boolean moveBelow(int id, boolean up) {
        if (lower == null || state[id] != SEALED || slot[id] >= 0 || (flags[id] & TRANSIT) != 0) {
            return false;
        }
        flags[id] |= TRANSIT;
        boolean ok = false;
        lock.unlock();
        try {
            ok = up ? lower.load(id, identities.of(id)) : lower.spill(id);
        } finally {
            lock.lock();
            flags[id] &= ~TRANSIT;
        }
        if (!ok && up && !lower.hasCopy(id)) {
            goneBelow(id);
        }
        endTransit(id);
        changed.signalAll();
        return ok;
    }

    /**
     * Read-ahead from disk: copies a sealed block held only on disk into a host slot (keeping the
     * record), so a later promotion is a host copy. A mover calls this for its disk-to-host queue.
     *
     * @param blockId a block id
     * @return true if the block is in a host slot now because of this call; false if it was not
     *         held only on disk, is moving, or the host tier had no room (nothing changed), or
     *         its record was missing or corrupt (a counted loss below; its next lease fails)
     */
    public boolean loadBelow(int blockId) {
        lock.lock();
        try {
            return !closed && lower != null && lower.residence(blockId) == LowerTier.RESIDENT_DISK
                    && moveBelow(blockId, true);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Takes up to {@code maxBlocks} candidates to leave the top tier, in policy order, out of the
     * candidates and offers each to a mover's bounded queue; a refused offer (queue full) ends the
     * call and leaves that block a candidate. A queued block stays out of the candidates until
     * {@link #demoteQueued} drains it or its state changes (a freed block forgets it was queued).
     *
     * @param maxBlocks most blocks to queue, >= 0
     * @param queue     offered each block id; returns false when full
     * @return blocks queued
     */
    public int queueCandidates(int maxBlocks, java.util.function.IntPredicate queue) {
        lock.lock();
        try {
            int queued = 0;
            while (queued < maxBlocks && !closed) {
                int victim = policy.victim();
                if (victim < 0 || !queue.test(victim)) {
                    break;
                }
                flags[victim] |= QUEUED;
                policy.onRemove(victim);
                queued++;
            }
            return queued;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Drains one entry of a mover's device-to-host queue: demotes the block if it is still queued
     * and still a candidate (sealed, unleased, not recent, on the top tier, not moving).
     *
     * @param blockId a block id taken from the queue
     * @return true if the block left the top tier; false if its state changed since it was queued
     *         (freed, leased, protected, moved) and it was skipped
     */
    public boolean demoteQueued(int blockId) {
        lock.lock();
        try {
            if ((flags[blockId] & QUEUED) == 0) {
                return false;
            }
            flags[blockId] &= ~QUEUED;
            refresh(blockId);
            if (closed || !policy.contains(blockId)) {
                return false;
            }
            vacate(blockId);
            return slot[blockId] < 0;
        } finally {
            lock.unlock();
        }
    }

    /** Frees top-tier slots held by timed-out promotions whose late copies have ended. Lock held. */
    private void reclaimLateSlots() {
        if (lateSlots > 0) {
            lower.releaseLateSlots(this::freeLateSlot);
        }
    }

    private void freeLateSlot(int s) {
        lateSlots--;
        slots.free(s);
        changed.signalAll();
    }

    /**
     * Returns top-tier slots of timed-out promotions whose copies have since ended; a mover calls
     * this periodically.
     *
     * @return slots handed back
     */
    public int reclaimLateSlotsNow() {
        lock.lock();
        try {
            int before = lateSlots;
            reclaimLateSlots();
            return before - lateSlots;
        } finally {
            lock.unlock();
        }
    }

    /** A block's only copy, below the top tier, is gone: freed if nothing references it, else lost. Lock held. */
    private void goneBelow(int id) {
        if (refs[id] == 0) {
            evictions++;
            freeBlock(id);
        } else {
            markLost(id);
        }
    }

    /**
     * Marks a block whose bytes are gone from every tier LOST and unindexes it; counted in
     * {@link CacheStats#lostBlocks()} when a sequence's table references it (not when only a
     * read-ahead's own hold does). Lock held.
     */
    private void markLost(int id) {
        if (state[id] != LOST && refs[id] > leases[id]) {
            lostBlocks++;
        }
        if ((flags[id] & INDEXED) != 0) {
            index.remove(id);
            flags[id] &= ~INDEXED;
        }
        state[id] = LOST;
        policy.onRemove(id);
        changed.signalAll(); // a lease waiting for a slot for this block fails now, not at its deadline
    }

    /**
     * Called by a lower tier when it dropped its only copy of a block (for example disk eviction):
     * a block nobody references is freed; a referenced one is marked lost (its next lease fails
     * with {@link CorruptBlockException}). Nothing happens if the block is on the top tier, moving,
     * or has a copy below again ({@link LowerTier#hasCopy}, asked under this lock: the lower tier
     * decided to call without it, and the block may have been demoted since).
     *
     * @param blockId the block whose lower copy is gone
     */
    public void droppedBelow(int blockId) {
        lock.lock();
        try {
            if (state[blockId] == FREE || slot[blockId] >= 0 || (flags[blockId] & TRANSIT) != 0) {
                return;
            }
            if (lower.hasCopy(blockId)) {
                return; // a copy arrived below after the lower tier checked (without this lock)
            }
            goneBelow(blockId);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Read-ahead: brings a sealed block held below up to the top tier without leasing it (a
     * later lease finds it there unless it was demoted again meanwhile). A prefetch that waits
     * for a slot ends, having moved nothing, as soon as another party (a lease, another prefetch)
     * brings the block up or starts moving it.
     *
     * @param blockId a block id
     * @return true if the block was promoted by this call
     */
    public boolean prefetch(int blockId) {
        lock.lock();
        try {
            if (closed || state[blockId] != SEALED || !needsPromotion(blockId)) {
                return false;
            }
            refs[blockId]++; // pinned while it moves, so it cannot be freed
            leases[blockId]++;
            refresh(blockId);
            try {
                int s = slotFor(blockId, admissionDeadline());
                if (s == SLOT_NOT_NEEDED) {
                    return false; // up, moving or lost by another party's doing
                }
                promoteInto(blockId, s);
                policy.onAccess(blockId);
                return true;
            } catch (io.tierkv.core.error.TierKvException e) {
                return false;
            } finally {
                releaseLocked(blockId);
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * Called by a lower tier that needs room: frees a block held only below if nothing references
     * it (a cached block), so the lower tier can drop its copy. Counted as an eviction.
     *
     * @param blockId a block the lower tier holds
     * @return true if the block was freed (the lower tier has been told through {@link LowerTier#forget})
     */
    public boolean evictIfUnreferenced(int blockId) {
        return freeIfUnreferenced(blockId, true);
    }

    /**
     * Called by a lower tier whose copy of a block is now keyed by its hash alone (spilled to
     * disk): frees the block id if nothing references it, since a later prefix match finds the
     * record by hash ({@link LowerTier#adopt}). Not an eviction: the bytes are kept.
     *
     * @param blockId a block now held only by hash below
     * @return true if the id was freed
     */
    public boolean retireIfUnreferenced(int blockId) {
        return freeIfUnreferenced(blockId, false);
    }

    private boolean freeIfUnreferenced(int blockId, boolean eviction) {
        lock.lock();
        try {
            if (state[blockId] == FREE || refs[blockId] != 0 || slot[blockId] >= 0 || (flags[blockId] & TRANSIT) != 0) {
                return false;
            }
            if (eviction) {
                evictions++;
            } else {
                retiredIds++;
            }
            freeBlock(blockId);
            return true;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Finds a sealed block for a hash, in the index or (adopting it) below; -1 if absent. A block
     * found below the top tier comes back pinned there ({@link #holdBelow}): the caller must
     * reference it or {@link #refresh(int)} it.
     */
    int lookup(long hi, long lo, Sequence seq, int[] promptTokens, int from) {
        int id = index.get(hi, lo);
        if (id < 0 && lower != null) {
            int fresh = ids.allocate();
            if (fresh >= 0) {
                hashHi[fresh] = hi;
                hashLo[fresh] = lo;
                identities.setKey(fresh, seq.contextHi, seq.contextLo, seq.parentHi, seq.parentLo);
                identities.setTokens(fresh, promptTokens, from); // the identity adopt expects
                int adopted = lower.adopt(fresh, hi, lo, identities.of(fresh));
                if (adopted == LowerTier.COLLISION) {
                    hashCollisions++;
                }
                if (adopted == LowerTier.ADOPTED) {
                    state[fresh] = SEALED;
                    index.put(fresh);
                    flags[fresh] = INDEXED;
                    id = fresh;
                } else {
                    hashHi[fresh] = 0;
                    hashLo[fresh] = 0;
                    ids.free(fresh);
                }
            }
        }
        if (id < 0) {
            prefixMissBlocks++;
            return -1;
        }
        if (!identities.matches(id, seq, promptTokens, from)) {
            hashCollisions++;
            prefixMissBlocks++;
            return -1;
        }
        if (slot[id] < 0 && !holdBelow(id)) {
            prefixMissBlocks++;
            return -1;
        }
        prefixHitBlocks++;
        if (slot[id] < 0) {
            prefixHitBlocksBelow++;
            lower.matchedBelow(id);
        }
        policy.onAccess(id);
        return id;
    }

    /**
     * Pins a matched block that is not on the top tier before the match hands it out; the caller
     * references it next (or calls {@link #refresh(int)} to drop the hold if it does not). If its
     * only copy below is already gone, the block is freed (unless a move holds it) and false
     * returned: a miss now rather than a lost block at its first lease. A block held already (others
     * reference it) whose copy below has gone since (a pinned record found damaged) is lost for
     * them, and a miss here.
     */
    private boolean holdBelow(int id) {
        if ((flags[id] & HELD) != 0) {
            if (lower.hasCopy(id)) {
                return true;
            }
            if ((flags[id] & TRANSIT) == 0) {
                markLost(id);
            }
            return false;
        }
        flags[id] |= HELD;
        if (lower.pinBelow(id)) {
            return true;
        }
        flags[id] &= ~HELD;
        lower.unpinBelow(id);
        if ((flags[id] & TRANSIT) == 0) {
            evictions++;
            freeBlock(id);
        }
        return false;
    }

    /** Copy-on-write: replaces a shared OPEN block by a private copy holding the same bytes. */
    int copyOnWrite(int id, long deadlineNanos) {
        int copy = allocateOpenBlock(deadlineNanos);
        MemorySegment.copy(memory.slot(slot[id]), 0, memory.slot(slot[copy]), 0, blockBytes);
        identities.copy(id, copy);
        MemorySegment.copy(written, (long) id * writtenWords * Long.BYTES, written,
                (long) copy * writtenWords * Long.BYTES, (long) writtenWords * Long.BYTES);
        copiesOnWrite++;
        unref(id);
        return copy;
    }

    /** Marks (layer, offset) of a block written; returns true when the block just became complete. */
    boolean markWritten(int id, int layer, int offset) {
        int bit = offset * layout.layers() + layer;
        long base = (long) id * writtenWords * Long.BYTES;
        long addr = base + (1 + (bit >>> 6)) * (long) Long.BYTES;
        long word = written.get(ValueLayout.JAVA_LONG, addr);
        long mask = 1L << bit;
        if ((word & mask) != 0) {
            return false;
        }
        written.set(ValueLayout.JAVA_LONG, addr, word | mask);
        long count = written.get(ValueLayout.JAVA_LONG, base) + 1;
        written.set(ValueLayout.JAVA_LONG, base, count);
        return count == writesPerBlock;
    }

    /** Marks every (layer, offset) of an OPEN block written (a whole-block append). */
    void markAllWritten(int id) {
        long base = (long) id * writtenWords * Long.BYTES;
        written.set(ValueLayout.JAVA_LONG, base, writesPerBlock);
        for (int w = 0, left = writesPerBlock; left > 0; w++, left -= 64) {
            written.set(ValueLayout.JAVA_LONG, base + (1L + w) * Long.BYTES, left >= 64 ? -1L : (1L << left) - 1);
        }
    }

    /** @return whether every position of every layer of an OPEN block has been written */
    boolean isComplete(int id) {
        return written.get(ValueLayout.JAVA_LONG, (long) id * writtenWords * Long.BYTES) == writesPerBlock;
    }

    /** Retention priorities are kept in a byte per block; {@link SequenceOptions} bounds them to a byte. */
    static byte priorityByte(int priority) {
        return (byte) priority;
    }

    // ---------------------------------------------------------------- leases

    /**
     * Leases one block: promotes it if needed and pins it on the top tier.
     *
     * @param blockId a live block id, {@code 0 <= blockId < maxBlocks}
     * @return its top-tier bytes
     * @throws IndexOutOfBoundsException if blockId is out of range
     * @throws IllegalStateException     if the block is free
     */
    public MemorySegment acquireLease(int blockId) {
        checkBlockId(blockId);
        lock.lock();
        try {
            // A resident block never waits, so its lease skips the clock read (tens of ns on these VMs).
            long deadline = residentNow(blockId) ? Long.MAX_VALUE : System.nanoTime() + options.admissionTimeoutNanos();
            return memory.slot(leaseLocked(blockId, deadline));
        } finally {
            lock.unlock();
        }
    }

    /** Whether a block is on the top tier and not moving or lost, so a lease needs no wait. Lock held. */
    private boolean residentNow(int id) {
        return slot[id] >= 0 && (flags[id] & TRANSIT) == 0 && state[id] != LOST;
    }

    private void checkBlockId(int blockId) {
        if (blockId < 0 || blockId >= state.length) {
            throw new IndexOutOfBoundsException("blockId: " + blockId + " (expected 0 <= blockId < maxBlocks "
                    + state.length + ")");
        }
    }

    int leaseLocked(int id, long deadlineNanos) {
        checkOpen();
        if (state[id] == FREE) {
            throw new IllegalStateException("block " + id + " is free; lease refused");
        }
        refs[id]++;
        leases[id]++;
        refresh(id);
        try {
            int s = ensureOnDevice(id, deadlineNanos);
            policy.onAccess(id);
            return s;
        } catch (RuntimeException e) {
            leases[id]--;
            unref(id);
            throw e;
        }
    }

    /**
     * Waits (lock held) until no move holds the block, then checks that its bytes are not lost.
     *
     * @param transitDeadline {@code System.nanoTime()} deadline of the wait, or 0 for
     *                        {@code promotionTimeoutNanos} from the first wait (no clock read
     *                        when nothing moves the block)
     * @throws TransferTimeoutException if the move does not end by the deadline
     * @throws CorruptBlockException    if the block is lost below
     */
    private void awaitSettled(int id, long transitDeadline) {
        while ((flags[id] & TRANSIT) != 0) {
            if (transitDeadline == 0) {
                transitDeadline = System.nanoTime() + options.promotionTimeoutNanos();
            }
            long remaining = transitDeadline - System.nanoTime();
            if (remaining <= 0) {
                throw new TransferTimeoutException("wait for block " + id + " in transit",
                        options.promotionTimeoutNanos());
            }
            awaitChange(remaining);
        }
        if (state[id] == LOST) {
            throw new CorruptBlockException("block " + id, "its bytes were lost below the top tier", -1, -1);
        }
    }

    /**
     * Copies a sealed block to {@code out} from the tier holding it, without promoting it: the
     * block is flagged TRANSIT for the copy (nobody moves, frees or reuses it meanwhile), the copy
     * runs with the lock released, and a block found lost below is marked LOST.
     *
     * @throws CorruptBlockException    if the block is lost below
     * @throws TransferTimeoutException if another move of it does not end in time
     */
    void readSealed(int id, MemorySegment out) {
        int s;
        lock.lock();
        try {
            checkOpen();
            awaitSettled(id, 0); // reads the clock only if the block is moving
            policy.onAccess(id);
            flags[id] |= TRANSIT;
            refresh(id);
            s = slot[id];
        } finally {
            lock.unlock();
        }
        boolean copied = false;
        boolean lost = false;
        try {
            if (s >= 0) {
                MemorySegment.copy(memory.slot(s), 0, out, 0, blockBytes);
                copied = true;
            } else {
                copied = lower.read(id, identities.of(id), out);
                lost = !copied;
            }
        } finally {
            lock.lock();
            try {
                flags[id] &= ~TRANSIT;
                if (lost) {
                    markLost(id);
                } else if (copied && s >= 0) {
                    deviceReads++;
                }
                refresh(id);
                endTransit(id);
                changed.signalAll();
            } finally {
                lock.unlock();
            }
        }
        if (lost) {
            throw new CorruptBlockException("block " + id, "missing or corrupt below the top tier", -1, -1);
        }
    }

    /**
     * Releases a lease taken with {@link #acquireLease(int)}.
     *
     * @param blockId the leased block, {@code 0 <= blockId < maxBlocks}
     * @throws IndexOutOfBoundsException if blockId is out of range
     * @throws IllegalStateException     if the block holds no lease
     */
    public void releaseLease(int blockId) {
        checkBlockId(blockId);
        lock.lock();
        try {
            releaseLocked(blockId);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Releases a list of leases at once. The whole list is checked first: if any block appears
     * more often than it holds leases (for example the same block twice for one lease), nothing
     * is released and the call throws.
     *
     * @param blockIds leased block ids, each at most as often as it holds leases
     * @throws IllegalStateException naming the block, when the list over-releases one; no state changes
     */
    public void releaseLeases(int... blockIds) {
        lock.lock();
        try {
            // Check the whole list first by counting it down on the lease counts, then restore.
            int checked = 0;
            String problem = null;
            for (; checked < blockIds.length; checked++) {
                int id = blockIds[checked];
                if (id < 0 || id >= state.length || leases[id] == 0) {
                    problem = "release of block " + id + " with no lease left to release in this list; nothing released";
                    break;
                }
                leases[id]--;
            }
            for (int i = 0; i < checked; i++) {
                leases[blockIds[i]]++;
            }
            if (problem != null) {
                throw new IllegalStateException(problem);
            }
            for (int id : blockIds) {
                releaseLocked(id);
            }
        } finally {
            lock.unlock();
        }
    }

    private void releaseLocked(int id) {
        if (leases[id] <= 0) {
            throw new IllegalStateException("block " + id + " released with no lease held");
        }
        leases[id]--;
        unref(id);
        if (leases[id] == 0) {
            changed.signalAll();
        }
    }

    MemorySegment slotMemory(int s) {
        return memory.slot(s);
    }

    // ---------------------------------------------------------------- tier moves for a mover

    /**
     * Moves up to {@code maxBlocks} candidates off the top tier, by policy order. A background
     * mover calls this under pressure; allocation calls the same path when the tier is full.
     * Without a lower tier, leaving is eviction of cached blocks.
     *
     * @param maxBlocks most blocks to move, >= 0
     * @return blocks that left the top tier
     * @throws IllegalArgumentException if maxBlocks is negative
     */
    public int demoteCandidates(int maxBlocks) {
        if (maxBlocks < 0) {
            throw new IllegalArgumentException("maxBlocks: " + maxBlocks + " (expected >= 0)");
        }
        lock.lock();
        try {
            int moved = 0;
            while (moved < maxBlocks && !closed) {
                int victim = policy.victim();
                if (victim < 0) {
                    break;
                }
                int before = slots.freeCount();
                vacate(victim);
                if (slots.freeCount() > before) {
                    moved++;
                }
            }
            return moved;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Moves one specific block off the top tier now, if it is a candidate (sealed, unleased, not
     * recent, not moving): explicit offload.
     *
     * @param blockId the block
     * @return true if the block left the top tier
     */
    public boolean demoteBlock(int blockId) {
        lock.lock();
        try {
            checkOpen();
            if (!policy.contains(blockId)) {
                return false;
            }
            vacate(blockId);
            return slot[blockId] < 0;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Tells whether a block's bytes are on the top tier now.
     *
     * @param blockId a block id
     * @return whether the block's bytes are on the top tier now
     */
    public boolean isOnDevice(int blockId) {
        lock.lock();
        try {
            return slot[blockId] >= 0;
        } finally {
            lock.unlock();
        }
    }

    /** {@return top-tier slots in use (blocks plus reservations), 0..capacity} */
    public int deviceUsedBlocks() {
        lock.lock();
        try {
            return slots.usedCount();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Blocks an allocation could have now without waiting: free slots plus candidates that can
     * leave (cached blocks for a single-tier cache).
     *
     * @return available blocks, 0..capacity
     */
    public int availableBlocks() {
        lock.lock();
        try {
            return slots.freeCount() + policy.size();
        } finally {
            lock.unlock();
        }
    }

    /**
     * The block id registered under a hash, for tests and diagnostics.
     *
     * @param hi hash high word
     * @param lo hash low word
     * @return the block id, or -1
     */
    public int indexedBlock(long hi, long lo) {
        lock.lock();
        try {
            return index.get(hi, lo);
        } finally {
            lock.unlock();
        }
    }

    /**
     * The chained hash of a sealed block, for tests and diagnostics.
     *
     * @param blockId a block id
     * @return {hi, lo}, or {0, 0} for an unsealed block
     */
    public long[] blockHash(int blockId) {
        lock.lock();
        try {
            return new long[] {hashHi[blockId], hashLo[blockId]};
        } finally {
            lock.unlock();
        }
    }

    /**
     * The reference count of a block (table references plus leases), for tests and diagnostics.
     *
     * @param blockId a block id
     * @return its reference count
     */
    public int referenceCount(int blockId) {
        lock.lock();
        try {
            return refs[blockId];
        } finally {
            lock.unlock();
        }
    }

    /** {@return top-tier slots} */
    public int deviceCapacityBlocks() {
        return slots.capacity();
    }

    // ---------------------------------------------------------------- sequences

    void closed(Sequence s) {
        openSequences.remove(s);
    }

    void checkOpen() {
        if (closed) {
            throw new IllegalStateException("cache is closed");
        }
    }

    /** {@return a snapshot of the counters; thread-safe} */
    public CacheStats stats() {
        lock.lock();
        try {
            int cached = 0;
            for (int id = 0; id < state.length; id++) {
                if (state[id] == SEALED && refs[id] == 0) {
                    cached++;
                }
            }
            return new CacheStats(slots.capacity(), slots.usedCount(), ids.usedCount(), cached, index.size(),
                    prefixHitBlocks, prefixHitBlocksBelow, prefixMissBlocks, hashCollisions, evictions,
                    demotions, cleanDrops, failedDemotions, promotions, failedPromotions, copiesOnWrite,
                    retiredIds, admissionWaits, admissionFailures, budget.demotions(), budget.spills(),
                    budget.refusedSpills(), deviceReads, lostBlocks);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Checks every structural invariant: free + used == capacity for slots and ids; no slot twice;
     * reference counts equal table references plus leases; the index holds exactly the indexed
     * blocks; the policy holds exactly the candidates; recent-block protection equals a recount;
     * with a lower tier, exactly the referenced SEALED blocks are HELD there.
     *
     * @return the violations found, empty when consistent; thread-safe
     */
    public List<String> checkInvariants() {
        lock.lock();
        try {
            List<String> bad = new ArrayList<>();
            addIf(bad, "slots: ", slots.check());
            addIf(bad, "ids: ", ids.check());
            int n = state.length;
            int[] tableRefs = new int[n];
            int[] protects = new int[n];
            for (Sequence s : openSequences) {
                s.countReferences(tableRefs, protects);
            }
            int[] slotOwner = new int[slots.capacity()];
            java.util.Arrays.fill(slotOwner, -1);
            int resident = 0;
            int indexed = 0;
            int candidates = 0;
            for (int id = 0; id < n; id++) {
                boolean live = state[id] != FREE;
                if (live != ids.isAllocated(id)) {
                    bad.add("block " + id + " state " + state[id] + " but id allocated=" + ids.isAllocated(id));
                }
                if (!live) {
                    if (slot[id] >= 0 || refs[id] != 0 || flags[id] != 0) {
                        bad.add("free block " + id + " holds slot " + slot[id] + " refs " + refs[id]);
                    }
                    continue;
                }
                if (slot[id] >= 0) {
                    resident++;
                    if (slot[id] >= slots.capacity() || !slots.isAllocated(slot[id])) {
                        bad.add("block " + id + " slot " + slot[id] + " not an allocated slot");
                    } else if (slotOwner[slot[id]] >= 0) {
                        bad.add("blocks " + slotOwner[slot[id]] + " and " + id + " share slot " + slot[id]);
                    } else {
                        slotOwner[slot[id]] = id;
                    }
                }
                if (refs[id] != tableRefs[id] + leases[id]) {
                    bad.add("block " + id + " refs " + refs[id] + " != table refs " + tableRefs[id] + " + leases "
                            + leases[id]);
                }
                boolean held = (flags[id] & HELD) != 0;
                if (lower != null && state[id] != LOST && held != (state[id] == SEALED && refs[id] > 0)) {
                    bad.add("block " + id + " HELD=" + held + " but state " + state[id] + " refs " + refs[id]);
                }
                if (protect[id] != protects[id]) {
                    bad.add("block " + id + " protect " + protect[id] + " != recount " + protects[id]);
                }
                boolean isIndexed = (flags[id] & INDEXED) != 0;
                if (isIndexed) {
                    indexed++;
                }
                if (isIndexed != index.containsBlock(id)) {
                    bad.add("block " + id + " INDEXED=" + isIndexed + " but index says " + index.containsBlock(id));
                }
                if (policy.contains(id)) {
                    candidates++;
                }
            }
            if (resident + reservedSlots + lateSlots != slots.usedCount()) {
                bad.add("resident " + resident + " + reserved " + reservedSlots + " + late " + lateSlots
                        + " != slots used " + slots.usedCount());
            }
            if (indexed != index.size()) {
                bad.add("indexed blocks " + indexed + " != index size " + index.size());
            }
            if (candidates != policy.size()) {
                bad.add("policy size " + policy.size() + " != candidates found " + candidates);
            }
            return bad;
        } finally {
            lock.unlock();
        }
    }

    private static void addIf(List<String> bad, String prefix, String problem) {
        if (!problem.isEmpty()) {
            bad.add(prefix + problem);
        }
    }

    /**
     * Closes the cache: every open sequence is closed and the metadata memory freed. The slot
     * memory belongs to the caller. Idempotent.
     */
    @Override
    public void close() {
        List<Sequence> open;
        lock.lock();
        try {
            if (closed) {
                return;
            }
            open = new ArrayList<>(openSequences);
        } finally {
            lock.unlock();
        }
        for (Sequence s : open) {
            s.close();
        }
        lock.lock();
        try {
            closed = true;
            metaArena.close();
        } finally {
            lock.unlock();
        }
    }

    /** Signals waiters; used after lease releases and closes. */
    void signalChange() {
        changed.signalAll();
    }

    /** @return the default admission deadline from now */
    long admissionDeadline() {
        return System.nanoTime() + options.admissionTimeoutNanos();
    }
}

package io.tierkv.core.cache;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.tierkv.core.KvLayout;
import io.tierkv.core.error.CapacityExhaustedException;
import io.tierkv.core.error.CorruptBlockException;
import io.tierkv.core.error.TransferTimeoutException;
import io.tierkv.core.policy.EvictionPolicies;
import io.tierkv.core.policy.EvictionPolicy;
import io.tierkv.core.pool.SlotMemory;
import io.tierkv.core.prefix.BlockHasher;
import io.tierkv.core.prefix.BlockIdentity;
import io.tierkv.core.prefix.HashAlgorithm;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

import static io.tierkv.core.cache.BlockStates.FREE;
import static io.tierkv.core.cache.BlockStates.HELD;
import static io.tierkv.core.cache.BlockStates.LOST;
import static io.tierkv.core.cache.BlockStates.QUEUED;
import static io.tierkv.core.cache.BlockStates.SEALED;
import static io.tierkv.core.cache.BlockStates.TRANSIT;

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
 * <h2>Parts (one class a job, all under this cache's one lock)</h2>
 * <ul>
 *   <li>{@code BlockStates}: every block fact (state, flags, references, leases, protection,
 *       slot, priority, hash) in primitive arrays indexed by id, and the id allocator;
 *       {@code IdentityTable} and {@code WrittenPositions}: each id's identity and written
 *       positions, off the heap.</li>
 *   <li>{@code Admission}: top-tier slots, victims, waits for room and for moves.</li>
 *   <li>{@code TierMoves}: the moves, a class each ({@code Demote}, {@code MoveBelow},
 *       {@code Promote}, {@code ReadSealed}), each planned under the lock, copied with it released
 *       and the block in transit, committed under it; {@code HostRoom}: which host blocks leave
 *       for room; {@code SettleBelow}: what the tiers below let go of.</li>
 *   <li>{@code PrefixLookup}: prefix matching by hash, verified by identity; {@code FetchAhead}:
 *       the unlocked fetch from a store below when the local match misses.</li>
 *   <li>{@code Leases}: leases and their release.</li>
 *   <li>{@code CacheCounters} and {@code CacheInvariants}: counters and the atomic recount.</li>
 * </ul>
 * This class keeps what ties them together: a block's life cycle (seal, reference, free),
 * its candidacy ({@link #refresh(int)}) and the public API.
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
 * below). A block waiting in a mover's queue ({@link TierControl#queueCandidates}) is QUEUED and not a
 * candidate until drained. {@link #refresh(int)} recomputes candidacy from state after every
 * change, so the policy cannot drift from the blocks. Per-cache budgets: {@link CacheBudget}.
 *
 * <h2>Holding blocks below</h2>
 * Once a block leaves the top tier, a copy below may be its only copy, and a store that evicts it
 * for room loses bytes a sequence still needs. So a SEALED block with {@code refs > 0} carries the
 * HELD flag, and every change of that fact goes through {@link #refresh(int)}, which pins or
 * releases the block's disk record ({@link DiskCopies#pinBelow}, {@link DiskCopies#unpinBelow}; the
 * disk store takes its own lock, never this one, so the order cache, disk holds).
 * The flag follows references, not residence: a referenced block keeps its disk record pinned
 * even while the top tier also holds it, because the top tier may drop its slot for that record
 * at any moment ({@link BelowCopies#takeOverCopy}) and there must be no window in which the record
 * is evictable and the only copy. A prefix match pins a block that is not on the top tier before
 * handing it out ({@code PrefixLookup}): if its only copy below went first, the match is a miss, not a
 * block that fails its first lease. Blocks nobody references (cached) stay evictable below.
 *
 * <h2>Concurrency</h2>
 * One lock guards all metadata. Copies between tiers run with the lock released and the block
 * flagged TRANSIT: nobody else frees, moves or reuses it until the move ends; a move that fails
 * leaves the source as it was. Appending a token within an unshared OPEN block and writing its
 * positions take no lock: one thread writes a sequence at a time, and no other party can gain a
 * reference to an OPEN block except through that sequence. Waiting for space is bounded by
 * {@code admissionTimeoutNanos} and ends in {@link CapacityExhaustedException}. A wait for a
 * block looks at it again each time it wakes: a lease whose block another party (a prefetch,
 * another lease, the mover) brought up or started moving meanwhile takes that slot or waits for
 * that move, and every change that ends a move, frees a slot or loses a block signals the waiters.
 *
 * <h2>Failure</h2>
 * A promotion that finds the block gone below unindexes it and throws {@link
 * CorruptBlockException}; one that times out frees the reserved slot and throws {@link
 * TransferTimeoutException}; neither hands out bytes.
 */
public final class PagedKvCache implements AutoCloseable {

    final KvLayout layout;
    final CacheOptions options;
    final int blockTokens;
    final int blockBytes;
    private final SlotMemory memory;
    final LowerTier lower;
    final ReentrantLock lock = new ReentrantLock();
    // The parts below are @GuardedBy("lock") on their references here: Error Prone cannot name this
    // lock from inside them. A sequence's own thread reads its unshared OPEN block's facts through
    // references of its own, without the lock (the one-writer rule, see Concurrency).
    @GuardedBy("lock") final Condition changed = lock.newCondition();
    /** Every block fact: state, flags, references, leases, protection, slot, priority, hash. */
    @GuardedBy("lock") final BlockStates blocks;
    private final Arena metaArena = Arena.ofShared();
    /**
     * Every id's {@link BlockIdentity} (context, parent, B token ids). A move's unlocked copy reads
     * the row of its block, immutable while the block is sealed and in transit.
     */
    @GuardedBy("lock") final IdentityTable identities;
    /** Written positions; a sequence's own thread marks its unshared OPEN block's without the lock. */
    @GuardedBy("lock") final WrittenPositions written;
    @GuardedBy("lock") final EvictionPolicy policy;
    @GuardedBy("lock") final CacheCounters counters = new CacheCounters();
    @GuardedBy("lock") final Admission admission;
    final TierMoves moves;
    /** Where a block's copy is below: one answer, from {@link #blocks} and {@link #disks}. */
    final BelowCopies copiesBelow;
    /** Which ids are bound to disk records and the pins they hold; null without a lower tier. */
    final DiskCopies disks;
    @GuardedBy("lock") final PrefixLookup prefix;
    /** The unlocked half of a match that fetches from a remote store below; null without one. */
    final FetchAhead fetchAhead;
    @GuardedBy("lock") final Leases leases;
    final BlockHasher hasher;
    /** SHA-256 (keyed as the block hash is) for context fingerprints, whatever the block hash function. */
    private final BlockHasher contextHasher;
    @GuardedBy("lock") private final Set<Sequence> openSequences = Collections.newSetFromMap(new IdentityHashMap<>());
    @GuardedBy("lock") final CacheBudget budget = new CacheBudget(this);
    /** The salt string last hashed by {@link #openSequence}, compared by identity (strings are immutable). */
    @GuardedBy("lock") private String lastSalt;
    @GuardedBy("lock") private final long[] lastSaltHash = new long[2]; // its hash: high word, low word
    /** The options whose context fingerprint was computed last, compared by identity. */
    @GuardedBy("lock") private SequenceOptions lastContextOptions;
    @GuardedBy("lock") private final long[] lastContext = new long[2]; // that fingerprint: high, low word
    @GuardedBy("lock") boolean closed;
    private final TierControl tierControl = new TierControl(this);
    private final CacheDiagnostics diagnostics = new CacheDiagnostics(this);
    @GuardedBy("lock") final DeviceEvents events = new DeviceEvents(this); // findable on the device or not

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
        this.policy = EvictionPolicies.create(options.policy(), n);
        this.blocks = new BlockStates(n, policy.readsPriority(), lower != null);
        IdentityTable records = new IdentityTable(metaArena, n, blockTokens);
        this.identities = records;
        this.written = new WrittenPositions(metaArena, n, blockTokens, layout.layers());
        this.admission = new Admission(this, lower, options.deviceBlocks());
        this.moves = new TierMoves(this, lower);
        this.disks = lower == null ? null : new DiskCopies(this, lower.diskRecords());
        this.copiesBelow = new BelowCopies(blocks, disks);
        this.prefix = new PrefixLookup(this, lower);
        this.fetchAhead = moves.remote == null ? null : new FetchAhead(this, moves.remote);
        this.leases = new Leases(this);
        this.hasher = new BlockHasher(options.hashAlgorithm(), options.hashKey());
        this.contextHasher = new BlockHasher(HashAlgorithm.SHA256_128, options.hashKey());
        if (lower != null) {
            lower.attach(new OwnerView(lock, blocks, records)); // one lock; a tier keyed by id reads the records it holds
        }
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
        return maxBlocks * (IdentityTable.rowBytes(layout.blockSizeTokens())
                + WrittenPositions.rowBytes(layout.blockSizeTokens(), layout.layers()));
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

    @GuardedBy("lock")
    void awaitChange(long nanos) {
        try {
            changed.awaitNanos(nanos);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for a slot, an id or a move", e);
        }
    }

    /** After a move: a block whose references ended while it moved is released now. */
    @GuardedBy("lock")
    void endTransit(int id) {
        BlockStates b = blocks;
        if (b.state(id) != FREE && b.refs[id] == 0 && (b.state(id) != SEALED || !b.indexed(id))) {
            freeBlock(id);
        }
    }

    /** A block's bytes left the top tier: its slot is free. */
    @GuardedBy("lock")
    void releaseSlot(int id) {
        events.removed(id);
        admission.slots.free(blocks.slot[id]);
        blocks.slot[id] = -1;
        refresh(id);
        changed.signalAll();
    }

    /** Frees a block entirely: index entry, slot, lower copies, id. */
    @GuardedBy("lock")
    void freeBlock(int id) {
        BlockStates b = blocks;
        policy.onRemove(id);
        events.removed(id);
        prefix.unindex(id); // a twin of it takes its place in the index
        if (b.slot[id] >= 0) {
            admission.slots.free(b.slot[id]);
            b.slot[id] = -1;
        }
        if (lower != null) {
            disks.releasePin(id);
            lower.forget(id);
        }
        b.release(id);
        changed.signalAll();
    }

    /** Drops one table reference; frees or caches the block when none remain. */
    @GuardedBy("lock")
    void unref(int id) {
        BlockStates b = blocks;
        if (b.refs[id] <= 0) {
            throw new IllegalStateException("block " + id + " released at reference count " + (int) b.refs[id]);
        }
        b.refs[id]--;
        if (b.refs[id] == 0 && !b.inTransit(id)) {
            if (b.state(id) == SEALED && b.indexed(id)) {
                refresh(id);
                changed.signalAll();
            } else {
                freeBlock(id);
            }
        } else {
            refresh(id);
        }
    }

    @GuardedBy("lock")
    void ref(int id) {
        blocks.addRef(id);
        refresh(id);
    }

    /**
     * Recomputes whether a block is a candidate to leave the top tier and tells the policy, and
     * whether the lower tier must hold its copies (SEALED and referenced) and tells the lower tier
     * when that changes.
     */
    @GuardedBy("lock")
    void refresh(int id) {
        BlockStates b = blocks;
        if (lower != null && (b.state(id) == SEALED && b.refs[id] > 0) != ((b.bits[id] & HELD) != 0)) {
            b.bits[id] ^= HELD;
            if ((b.bits[id] & HELD) != 0) {
                if (!disks.pinBelow(id) && b.slot[id] < 0) {
                    markLost(id); // its only copy below went before this reference could hold it: no match finds it now
                }
            } else {
                disks.unpinBelow(id);
            }
        }
        boolean candidate = b.state(id) == SEALED && b.slot[id] >= 0 && b.leases[id] == 0
                && (b.bits[id] & (TRANSIT | QUEUED)) == 0
                && (lower == null ? b.refs[id] == 0 && b.indexed(id)
                        : b.protect[id] == 0 && (b.refs[id] > 0 || b.indexed(id)));
        if (candidate != policy.contains(id)) {
            if (candidate) {
                policy.onAdmit(id, b.priority(id), b.hashLo[id]);
            } else {
                policy.onRemove(id);
            }
        }
    }

    /** A block's only copy, below the top tier, is gone: freed if nothing references it, else lost. */
    @GuardedBy("lock")
    void goneBelow(int id) {
        if (blocks.refs[id] == 0) {
            counters.evictions++;
            freeBlock(id);
        } else {
            markLost(id);
        }
    }

    /**
     * Marks a block whose bytes are gone from every tier LOST and unindexes it; counted in
     * {@link CacheStats#lostBlocks()} when a sequence's table references it (not when only a
     * read-ahead's own hold does).
     */
    @GuardedBy("lock")
    void markLost(int id) {
        BlockStates b = blocks;
        if (b.state(id) != LOST && b.refs[id] > b.leases[id]) {
            counters.lostBlocks++;
        }
        events.removed(id);
        prefix.unindex(id); // a twin of it takes its place in the index
        b.setState(id, LOST);
        policy.onRemove(id);
        changed.signalAll(); // a lease waiting for a slot for this block fails now, not at its deadline
    }

    MemorySegment slotMemory(int s) {
        return memory.slot(s);
    }

    // ---------------------------------------------------------------- per-cache budgets (lock held)

    /** Per-cache budgets: whether a block may be demoted now (a candidate to leave the top tier). */
    @GuardedBy("lock")
    boolean mayLeaveDevice(int id) {
        return policy.contains(id);
    }

    /** Per-cache budgets: which tier below holds a block whose bytes are not on the top tier. */
    int residence(int id) {
        return copiesBelow.residence(id);
    }

    /** Per-cache budgets: spills a sealed block held on the host tier to disk ({@code MoveBelow}). */
    @GuardedBy("lock")
    boolean spillBelow(int id) {
        return moves.below.run(id, false);
    }

    /** {@return the operations the tier manager and its movers call on this cache; not runtime API} */
    public TierControl tierControl() {
        return tierControl;
    }

    /** {@return a read-only view of this cache's block state, for tests, tools and diagnostics} */
    public CacheDiagnostics diagnostics() {
        return diagnostics;
    }

    // ---------------------------------------------------------------- leases

    /**
     * Leases one block: promotes it if needed and pins it on the top tier.
     *
     * @param blockId a live block id, {@code 0 <= blockId < maxBlocks}
     * @return its top-tier bytes
     * @throws IndexOutOfBoundsException if blockId is out of range
     * @throws IllegalStateException     if the block is free, or holds 65,535 references already
     */
    public MemorySegment acquireLease(int blockId) {
        Checks.index("blockId", blockId, options.maxBlocks(), "maxBlocks ");
        lock.lock();
        try {
            // The deadline is read when the lease must first wait or make room: a resident block, or
            // one promoted into a free slot, reads no clock (tens of ns on these VMs).
            return memory.slot(leases.lease(blockId, Admission.DEADLINE_WHEN_NEEDED));
        } finally {
            lock.unlock();
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
        Checks.index("blockId", blockId, options.maxBlocks(), "maxBlocks ");
        lock.lock();
        try {
            leases.release(blockId);
        } finally {
            lock.unlock();
        }
    }

    /**
     * {@link #releaseLease(int)} then {@link #acquireLease(int)} under one hold of the lock, for a
     * reader walking a sequence's blocks one at a time (a block stream).
     *
     * @param releasedBlockId the leased block to release, {@code 0 <= releasedBlockId < maxBlocks}
     * @param blockId         the live block to lease, {@code 0 <= blockId < maxBlocks}
     * @return the top-tier bytes of {@code blockId}
     * @throws IndexOutOfBoundsException if an id is out of range (nothing released)
     * @throws IllegalStateException     if {@code releasedBlockId} holds no lease (nothing released)
     * @throws RuntimeException          whatever {@link #acquireLease(int)} throws (the release stands)
     */
    public MemorySegment swapLease(int releasedBlockId, int blockId) {
        Checks.index("releasedBlockId", releasedBlockId, options.maxBlocks(), "maxBlocks ");
        Checks.index("blockId", blockId, options.maxBlocks(), "maxBlocks ");
        lock.lock();
        try {
            leases.release(releasedBlockId);
            return memory.slot(leases.lease(blockId, Admission.DEADLINE_WHEN_NEEDED));
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
            leases.releaseAll(blockIds);
        } finally {
            lock.unlock();
        }
    }

    /** {@return a snapshot of the counters; thread-safe} */
    public CacheStats stats() {
        lock.lock();
        try {
            return counters.snapshot(admission.slots.capacity(), admission.slots.usedCount(), blocks.liveCount(),
                    blocks.cachedCount(), blocks.leasedOnlyCount(), prefix.index.size(), budget);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Checks every structural invariant, atomically under the cache lock: free + used == capacity
     * for slots and ids; no slot twice; reference counts equal table references plus leases; the
     * index holds exactly the indexed blocks; the policy holds exactly the candidates; recent-block
     * protection equals a recount; with a lower tier, exactly the referenced SEALED blocks are HELD
     * there.
     *
     * @return the violations found, empty when consistent; thread-safe
     */
    public List<String> checkInvariants() {
        return checkInvariants(List::of);
    }

    /** This cache's invariants and then {@code below}'s, all with the cache lock held (one snapshot). */
    List<String> checkInvariants(java.util.function.Supplier<List<String>> below) {
        lock.lock();
        try {
            List<String> bad = new java.util.ArrayList<>(CacheInvariants.check(this, lower != null, openSequences));
            bad.addAll(below.get());
            return bad;
        } finally {
            lock.unlock();
        }
    }

    // ---------------------------------------------------------------- sequences and close

    @GuardedBy("lock")
    void closed(Sequence s) {
        openSequences.remove(s);
    }

    @GuardedBy("lock")
    void checkOpen() {
        if (closed) {
            throw new IllegalStateException("cache is closed");
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

    /** Signals waiters; used after lease releases, moves and closes. */
    @GuardedBy("lock")
    void signalChange() {
        changed.signalAll();
    }

    /** @return the default admission deadline from now */
    long admissionDeadline() {
        return System.nanoTime() + options.admissionTimeoutNanos();
    }
}

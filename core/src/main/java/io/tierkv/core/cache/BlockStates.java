package io.tierkv.core.cache;

import io.tierkv.core.pool.SlotAllocator;

/**
 * The cache's facts about every block, as primitive arrays indexed by block id (no object per
 * block): its state, flags, reference count, leases, recent-block protection, top-tier slot,
 * retention priority and block hash, plus the allocator of block ids. One instance per cache; the
 * other parts of the cache read and write these arrays directly, always under the cache lock
 * (except the one-writer rule for an unshared OPEN block's positions, which touches none of them).
 * The cache's reference to this object is {@code @GuardedBy("lock")}, which Error Prone checks.
 *
 * <pre>
 * state byte | flags byte | priority byte | refs int | leases int | protect int | slot int
 * hashHi long | hashLo long                                   = 35 bytes of heap per block id
 * </pre>
 *
 * <p>States: {@link #FREE}, {@link #OPEN} (positions still being written; never moved),
 * {@link #SEALED} (immutable, hashed) and {@link #LOST} (sealed, bytes lost below). Flags:
 * {@link #INDEXED}, {@link #TRANSIT}, {@link #QUEUED}, {@link #HELD}. Not thread-safe.
 */
final class BlockStates {

    static final byte FREE = 0;
    static final byte OPEN = 1;
    static final byte SEALED = 2;
    /** Sealed, but its bytes are lost below; freed when its references end. */
    static final byte LOST = 3;

    /** The prefix index holds the block under its hash. */
    static final byte INDEXED = 1;
    /** A move or read holds the block: nobody else frees, moves or reuses it. */
    static final byte TRANSIT = 2;
    /** Taken out of the candidates by a mover's queue ({@link TierControl#queueCandidates}) until drained. */
    static final byte QUEUED = 4;
    /** The lower tier was told the block is referenced ({@link LowerTier#pinBelow}) and keeps its copies. */
    static final byte HELD = 8;

    final byte[] state;
    final byte[] flags;
    final int[] refs;
    final int[] leases;
    final int[] protect;
    /** Top-tier slot, or -1 when the block's bytes live only below. */
    final int[] slot;
    final byte[] priority;
    final long[] hashHi;
    final long[] hashLo;
    private final SlotAllocator ids;

    /**
     * Allocates the arrays.
     *
     * @param maxBlocks block ids, {@code >= 1}
     */
    BlockStates(int maxBlocks) {
        this.ids = new SlotAllocator(maxBlocks);
        this.state = new byte[maxBlocks];
        this.flags = new byte[maxBlocks];
        this.refs = new int[maxBlocks];
        this.leases = new int[maxBlocks];
        this.protect = new int[maxBlocks];
        this.slot = new int[maxBlocks];
        java.util.Arrays.fill(slot, -1);
        this.priority = new byte[maxBlocks];
        this.hashHi = new long[maxBlocks];
        this.hashLo = new long[maxBlocks];
    }

    /** {@return block ids} */
    /** Retention priorities are kept in a byte per block; {@link SequenceOptions} bounds them to a byte. */
    static byte priorityByte(int priority) {
        return (byte) priority;
    }

    int capacity() {
        return state.length;
    }

    /**
     * Takes a free block id, its fields as a freed block left them (FREE, no flags, no slot).
     *
     * @return the id, or -1 if every id is live
     */
    int allocateId() {
        return ids.allocate();
    }

    /** Resets a block's fields and releases its id; its slot must be released already. */
    void release(int id) {
        state[id] = FREE;
        flags[id] = 0;
        refs[id] = 0;
        leases[id] = 0;
        hashHi[id] = 0;
        hashLo[id] = 0;
        ids.free(id);
    }

    /** Releases an id taken by {@link #allocateId} that never became a block (only its hash was set). */
    void releaseUnused(int id) {
        hashHi[id] = 0;
        hashLo[id] = 0;
        ids.free(id);
    }

    /** {@return block ids in use} */
    int liveCount() {
        return ids.usedCount();
    }

    /** {@return whether the id is allocated} */
    boolean isAllocated(int id) {
        return ids.isAllocated(id);
    }

    /** {@return the id allocator's own consistency problems, empty when consistent} */
    String checkIds() {
        return ids.check();
    }

    /** {@return blocks with no references that are sealed (cached)} */
    int cachedCount() {
        int cached = 0;
        for (int id = 0; id < state.length; id++) {
            if (state[id] == SEALED && refs[id] == 0) {
                cached++;
            }
        }
        return cached;
    }

    /** {@return sealed blocks that leases alone hold ({@code refs == leases > 0}): no table references them} */
    int leasedOnlyCount() {
        int leasedOnly = 0;
        for (int id = 0; id < state.length; id++) {
            if (state[id] == SEALED && refs[id] > 0 && refs[id] == leases[id]) {
                leasedOnly++;
            }
        }
        return leasedOnly;
    }

    /** Whether a block is on the top tier and not moving or lost, so a lease needs no wait. */
    boolean residentNow(int id) {
        return slot[id] >= 0 && (flags[id] & TRANSIT) == 0 && state[id] != LOST;
    }

    /** Whether a block is below the top tier, settled and not lost: a promotion of it may start now. */
    boolean needsPromotion(int id) {
        return slot[id] < 0 && (flags[id] & TRANSIT) == 0 && state[id] != LOST;
    }

    /** Whether a move or read holds the block. */
    boolean inTransit(int id) {
        return (flags[id] & TRANSIT) != 0;
    }

    /** Whether the prefix index holds the block. */
    boolean indexed(int id) {
        return (flags[id] & INDEXED) != 0;
    }
}

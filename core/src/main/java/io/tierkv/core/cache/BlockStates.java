package io.tierkv.core.cache;

import io.tierkv.core.pool.SlotAllocator;

/**
 * The cache's facts about every block, as primitive arrays indexed by block id (no object per
 * block): its state, flags, reference count, leases, recent-block protection, top-tier slot,
 * retention priority and block hash, where it is held below the top tier (host slot and the
 * below bits, with a lower tier only), plus the allocator of block ids. One instance per cache; the
 * other parts of the cache read and write these arrays directly, always under the cache lock
 * (except the one-writer rule for an unshared OPEN block's positions, which touches none of them).
 * The cache's reference to this object is {@code @GuardedBy("lock")}, which Error Prone checks.
 *
 * <pre>
 * bits byte (state: bits 0-1, flags: bits 2-6) | refs char | leases char | protect char
 * slot int | hashHi long | hashLo long                          = 27 bytes of heap per block id
 * priority byte, only for a policy that reads it ({@link io.tierkv.core.policy.EvictionPolicy#readsPriority})
 * hostSlot int | below byte, only with a lower tier            = 5 bytes more per block id
 * diskPins: per DISK_PINNED id only, its pin ({@link IdLongs}, one word)
 * </pre>
 *
 * <p>Below the top tier ({@link BlockOwner#hostSlot}, {@link BlockOwner#belowBits}): the tier
 * below records where it holds each block here, under the same lock, and keeps no copy; the
 * cache reads these facts for its invariants (a free id holds nothing below). The disk pins are
 * the cache's own ({@link DiskCopies}).
 *
 * <p>References, leases and protections are unsigned 16-bit counts: leases and protections are
 * each taken with a reference, so none exceeds {@code refs}, which {@link #addRef} bounds by
 * {@link #MAX_REFS} (65,535 holders of one block, far above the sequences one manager serves; an
 * {@code int} each cost 6 B more per block id, issue 19 part 2).
 *
 * <p>States: {@link #FREE}, {@link #OPEN} (positions still being written; never moved),
 * {@link #SEALED} (immutable, hashed) and {@link #LOST} (sealed, bytes lost below), read with
 * {@link #state(int)}. Flags, set and tested on {@link #bits} directly: {@link #INDEXED},
 * {@link #TRANSIT}, {@link #QUEUED}, {@link #HELD}, {@link #TWIN}. Not thread-safe.
 */
final class BlockStates {

    static final byte FREE = 0;
    static final byte OPEN = 1;
    static final byte SEALED = 2;
    /** Sealed, but its bytes are lost below; freed when its references end. */
    static final byte LOST = 3;
    /** The bits of {@link #bits} that hold the state. */
    private static final int STATE_MASK = 3;

    /** The prefix index holds the block under its hash. */
    static final byte INDEXED = 4;
    /** A move or read holds the block: nobody else frees, moves or reuses it. */
    static final byte TRANSIT = 8;
    /** Taken out of the candidates by a mover's queue ({@link TierControl#queueCandidates}) until drained. */
    static final byte QUEUED = 16;
    /** The block is referenced and its copies below are kept: its disk record pinned ({@link DiskCopies#pinBelow}). */
    static final byte HELD = 32;
    /** Sealed, not indexed: another block held its hash when it sealed ({@link TwinBlocks}). */
    static final byte TWIN = 64;

    /** Per block id, its state and its flags in one byte (0: FREE, no flags). */
    final byte[] bits;
    /** The most references one block holds; {@link #addRef} refuses more. */
    static final int MAX_REFS = Character.MAX_VALUE;

    final char[] refs;
    final char[] leases;
    final char[] protect;
    /** Top-tier slot, or -1 when the block's bytes live only below. */
    final int[] slot;
    /** Per block id its host slot, or -1 for none; null without a lower tier ({@link BlockOwner#hostSlot}). */
    final int[] hostSlot;
    /** Per block id its below bits ({@link BlockOwner#belowBits}); null without a lower tier. */
    final byte[] below;
    /** Per DISK_PINNED id the pin it holds on its disk record ({@link DiskCopies}); null without a lower tier. */
    final IdLongs diskPins;
    /** Per block id its retention priority, or null where the policy reads none. */
    private final byte[] priority;
    final long[] hashHi;
    final long[] hashLo;
    private final SlotAllocator ids;

    /**
     * Allocates the arrays.
     *
     * @param maxBlocks  block ids, {@code >= 1}
     * @param priorities whether to keep each block's retention priority
     * @param tiersBelow whether a lower tier records where it holds blocks ({@link #hostSlot}, {@link #below})
     */
    BlockStates(int maxBlocks, boolean priorities, boolean tiersBelow) {
        this.ids = new SlotAllocator(maxBlocks);
        this.bits = new byte[maxBlocks];
        this.refs = new char[maxBlocks];
        this.leases = new char[maxBlocks];
        this.protect = new char[maxBlocks];
        this.slot = new int[maxBlocks];
        java.util.Arrays.fill(slot, -1);
        this.priority = priorities ? new byte[maxBlocks] : null;
        this.hostSlot = tiersBelow ? new int[maxBlocks] : null;
        if (tiersBelow) {
            java.util.Arrays.fill(hostSlot, -1);
        }
        this.below = tiersBelow ? new byte[maxBlocks] : null;
        this.diskPins = tiersBelow ? new IdLongs(1) : null;
        this.hashHi = new long[maxBlocks];
        this.hashLo = new long[maxBlocks];
    }

    /**
     * Sets a block's retention priority, where priorities are kept ({@link SequenceOptions} bounds
     * them to a byte).
     */
    void setPriority(int id, int value) {
        if (priority != null) {
            priority[id] = (byte) value;
        }
    }

    /** {@return a block's retention priority, or 0 where priorities are not kept} */
    int priority(int id) {
        return priority == null ? 0 : priority[id];
    }

    /** {@return block ids} */
    int capacity() {
        return bits.length;
    }

    /** {@return a block's state: FREE, OPEN, SEALED or LOST} */
    byte state(int id) {
        return (byte) (bits[id] & STATE_MASK);
    }

    /** Sets a block's state, keeping its flags. */
    void setState(int id, byte state) {
        bits[id] = (byte) ((bits[id] & ~STATE_MASK) | state);
    }

    /**
     * Takes one more reference on a live block.
     *
     * @param id the block
     * @throws IllegalStateException if it holds {@link #MAX_REFS} already; nothing changes
     */
    void addRef(int id) {
        checkRefRoom(id);
        refs[id]++;
    }

    /** {@return whether a block holds {@link #MAX_REFS} references, so it can take no more} */
    boolean refsFull(int id) {
        return refs[id] == MAX_REFS;
    }

    /**
     * Checks that a block can take one more reference.
     *
     * @param id the block
     * @throws IllegalStateException if it holds {@link #MAX_REFS} already
     */
    void checkRefRoom(int id) {
        if (refsFull(id)) {
            throw new IllegalStateException("block " + id + ": references " + (int) refs[id]
                    + " (expected < " + MAX_REFS + ", the most one block holds: counts are 16 bits)");
        }
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
        bits[id] = 0; // FREE, no flags
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
        for (int id = 0; id < bits.length; id++) {
            if (state(id) == SEALED && refs[id] == 0) {
                cached++;
            }
        }
        return cached;
    }

    /** {@return sealed blocks that leases alone hold ({@code refs == leases > 0}): no table references them} */
    int leasedOnlyCount() {
        int leasedOnly = 0;
        for (int id = 0; id < bits.length; id++) {
            if (state(id) == SEALED && refs[id] > 0 && refs[id] == leases[id]) {
                leasedOnly++;
            }
        }
        return leasedOnly;
    }

    /** Whether a block is on the top tier and not moving or lost, so a lease needs no wait. */
    boolean residentNow(int id) {
        return slot[id] >= 0 && (bits[id] & TRANSIT) == 0 && state(id) != LOST;
    }

    /** Whether a block is below the top tier, settled and not lost: a promotion of it may start now. */
    boolean needsPromotion(int id) {
        return slot[id] < 0 && (bits[id] & TRANSIT) == 0 && state(id) != LOST;
    }

    /** Whether a move or read holds the block. */
    boolean inTransit(int id) {
        return (bits[id] & TRANSIT) != 0;
    }

    /** Whether the prefix index holds the block. */
    boolean indexed(int id) {
        return (bits[id] & INDEXED) != 0;
    }
}

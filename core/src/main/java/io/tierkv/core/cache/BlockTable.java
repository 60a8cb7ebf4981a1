package io.tierkv.core.cache;

import java.util.Arrays;

/**
 * One sequence's block table: logical block index to block id, append-only except for
 * copy-on-write replacement, with the count of leading sealed blocks and the recent window (the
 * last {@code recentDeviceBlocks} sealed blocks, protected from leaving the top tier). Each entry
 * is one table reference on its block. Not thread-safe: used under the cache lock, except reads
 * of entries by the sequence's one writing thread.
 */
final class BlockTable {

    private final BlockStates blocks;
    private final int recentBlocks;
    private int[] ids = new int[8];
    private int count;
    private int sealed;

    BlockTable(BlockStates blocks, int recentBlocks) {
        this.blocks = blocks;
        this.recentBlocks = recentBlocks;
    }

    /** {@return the block id at logical index {@code i}, {@code 0 <= i < count()}} */
    int id(int i) {
        return ids[i];
    }

    /** {@return the block ids at logical indexes {@code [from, to)}, a new array} */
    int[] ids(int from, int to) {
        return Arrays.copyOfRange(ids, from, to);
    }

    /** Replaces the block at index {@code i} (copy-on-write). */
    void set(int i, int id) {
        ids[i] = id;
    }

    /** {@return blocks in the table} */
    int count() {
        return count;
    }

    /** {@return leading blocks that are sealed} */
    int sealed() {
        return sealed;
    }

    /** Appends a block id (its table reference is the caller's to take). */
    void push(int id) {
        if (count == ids.length) {
            ids = Arrays.copyOf(ids, ids.length * 2);
        }
        ids[count++] = id;
    }

    /** Drops the last entry (an append that failed after its block was taken). */
    void pop() {
        count--;
    }

    /**
     * The block at index {@link #sealed()} just sealed: counts it and shifts the recent window,
     * telling the cache of both blocks whose protection changed. Lock held.
     */
    @SuppressWarnings("GuardedBy") // cache.lock held by the caller (Sequence); a parameter's lock cannot be named
    void onSealed(PagedKvCache cache) {
        int k = sealed++;
        blocks.protect[ids[k]]++;
        cache.refresh(ids[k]);
        if (k - recentBlocks >= 0) {
            int old = ids[k - recentBlocks];
            blocks.protect[old]--;
            cache.refresh(old);
        }
    }

    /** Adds {@code delta} to the protection of every block in the recent window. Lock held. */
    void protectRecent(int delta) {
        for (int i = Math.max(0, sealed - recentBlocks); i < sealed; i++) {
            blocks.protect[ids[i]] += delta;
        }
    }

    /**
     * Checks that every block of this table can take one more reference (a fork's). Lock held.
     *
     * @throws IllegalStateException if one holds {@link BlockStates#MAX_REFS} references
     */
    void checkForkable() {
        for (int i = 0; i < count; i++) {
            blocks.checkRefRoom(ids[i]);
        }
    }

    /**
     * Makes this (empty) table a copy of {@code other}, taking one more reference on each block
     * ({@link #checkForkable()} first) and telling the cache of each. Lock held.
     */
    @SuppressWarnings("GuardedBy") // cache.lock held by the caller (Sequence); a parameter's lock cannot be named
    void forkFrom(BlockTable other, PagedKvCache cache) {
        ids = Arrays.copyOf(other.ids, other.ids.length);
        count = other.count;
        sealed = other.sealed;
        for (int i = 0; i < count; i++) {
            blocks.refs[ids[i]]++;
        }
        protectRecent(1);
        for (int i = 0; i < count; i++) {
            cache.refresh(ids[i]);
        }
    }

    /** Adds this table's references and recent-window protections to the arrays (an invariant recount). */
    void countReferences(int[] tableRefs, int[] protects) {
        for (int i = 0; i < count; i++) {
            tableRefs[ids[i]]++;
        }
        for (int i = Math.max(0, sealed - recentBlocks); i < sealed; i++) {
            protects[ids[i]]++;
        }
    }
}

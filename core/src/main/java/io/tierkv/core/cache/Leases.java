package io.tierkv.core.cache;

import static io.tierkv.core.cache.BlockStates.FREE;

/**
 * Leases: a lease pins a block on the top tier (promoting it first if it lies below) until it is
 * released; it counts as a reference. Every method is called with the cache lock held.
 */
// Every method runs with the cache lock held by a caller in another class (PagedKvCache, Sequence,
// TierControl), which Error Prone cannot relate to this class's cache.lock (it has no aliasing).
@SuppressWarnings("GuardedBy")
final class Leases {

    private final PagedKvCache cache;
    private final BlockStates b;

    Leases(PagedKvCache cache) {
        this.cache = cache;
        this.b = cache.blocks;
    }

    /**
     * Leases a live block: references it, makes it resident and tells the policy of the access.
     *
     * @param deadlineNanos the admission deadline ({@link System#nanoTime()}), or
     *                      {@link Admission#DEADLINE_WHEN_NEEDED}
     * @return its top-tier slot
     * @throws IllegalStateException if the cache is closed or the block is free
     */
    int lease(int id, long deadlineNanos) {
        cache.checkOpen();
        if (b.state(id) == FREE) {
            throw new IllegalStateException("block " + id + " is free; lease refused");
        }
        b.addRef(id);
        b.leases[id]++;
        cache.refresh(id);
        try {
            int s = cache.admission.ensureOnDevice(id, deadlineNanos);
            cache.policy.onAccess(id);
            return s;
        } catch (RuntimeException e) {
            b.leases[id]--;
            cache.unref(id);
            throw e;
        }
    }

    /**
     * Leases blocks in order; if one fails, the leases taken so far are released and the failure
     * thrown.
     *
     * @param ids           live block ids, read from {@code owner}'s table
     * @param deadlineNanos admission deadline ({@link System#nanoTime()})
     * @param owner         the sequence holding them: a lease may release the lock to bring a block
     *                      back, and another thread may close {@code owner} meanwhile and its
     *                      freed ids be reused, so a closed owner at the end releases everything
     * @return each block's top-tier bytes, in order
     * @throws IllegalStateException if {@code owner} was closed meanwhile (nothing stays leased)
     */
    java.lang.foreign.MemorySegment[] leaseAll(int[] ids, long deadlineNanos, Sequence owner) {
        java.lang.foreign.MemorySegment[] segs = new java.lang.foreign.MemorySegment[ids.length];
        int done = 0;
        try {
            for (; done < ids.length; done++) {
                segs[done] = cache.slotMemory(lease(ids[done], deadlineNanos));
            }
            if (owner.isClosed()) {
                throw new IllegalStateException("sequence is closed");
            }
        } catch (RuntimeException e) {
            releaseAll(java.util.Arrays.copyOf(ids, done));
            throw e;
        }
        return segs;
    }

    /**
     * Releases one lease.
     *
     * @throws IllegalStateException if the block holds no lease
     */
    void release(int id) {
        if (b.leases[id] <= 0) {
            throw new IllegalStateException("block " + id + " released with no lease held");
        }
        b.leases[id]--;
        cache.unref(id);
        if (b.leases[id] == 0) {
            cache.signalChange();
        }
    }

    /**
     * Releases a list of leases at once. The whole list is checked first: if any block appears
     * more often than it holds leases, nothing is released.
     *
     * @throws IllegalStateException naming the block, when the list over-releases one; no state changes
     */
    void releaseAll(int[] blockIds) {
        // Check the whole list first by counting it down on the lease counts, then restore.
        int checked = 0;
        String problem = null;
        for (; checked < blockIds.length; checked++) {
            int id = blockIds[checked];
            if (id < 0 || id >= b.capacity() || b.leases[id] == 0) {
                problem = "release of block " + id + " with no lease left to release in this list; nothing released";
                break;
            }
            b.leases[id]--;
        }
        for (int i = 0; i < checked; i++) {
            b.leases[blockIds[i]]++;
        }
        if (problem != null) {
            throw new IllegalStateException(problem);
        }
        for (int id : blockIds) {
            release(id);
        }
    }
}

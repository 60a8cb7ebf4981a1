package io.tierkv.tiers;

import io.tierkv.core.spi.BlockStore;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.LongAdder;

/**
 * Fetches from the remote store for a prefix match, into host slots held for the matching
 * thread: the network half runs with every lock released ({@link #lookup} and {@link #fetch},
 * called through {@link io.tierkv.core.cache.LowerTier#lookupAhead} and {@code fetchAhead}); the
 * adoptions of the match that follows take the slots ({@link #take}, cache lock held, no
 * network); what they leave is freed ({@link #release}).
 *
 * <p>A lookup counts the chain's leading blocks the store holds (pipelined {@code EXISTS}); the
 * cache reserves host slots for them (making room as for a demotion: clean copies dropped, blocks
 * spilled to disk); a fetch reads them verified against the identities the match computed
 * ({@link BlockStore#getAll}) and keeps
 * their identities beside the slots, in the thread's own table. All the calls of one match share
 * one deadline, the store's timeout from the match's start. A slot held for a thread is
 * counted reserved, so the host's invariants hold while it waits. At most a quarter of the host
 * slots (and 256 blocks) per call.
 *
 * <p>Thread-safe: each thread holds its own slots; the manager lock guards the slot table.
 */
final class RemoteFetch {

    /** Most blocks one fetch brings in. */
    static final int MAX_BLOCKS = 256;

    private final HostTier t;
    private final HostBlocks h;
    private final BlockStore store;
    private final ThreadLocal<Held> held = ThreadLocal.withInitial(Held::new);
    final LongAdder fetched = new LongAdder();
    final LongAdder adopted = new LongAdder();

    RemoteFetch(HostTier t, BlockStore store) {
        this.t = t;
        this.h = t.blocks;
        this.store = store;
    }

    /**
     * Host slots one thread holds: fetched blocks its match has not adopted yet, with the
     * identities they were read for (no id is bound to them yet, so no cache record names them).
     */
    private static final class Held {
        long[] hashHi = new long[0];
        long[] hashLo = new long[0];
        int[] slot = new int[0];
        /** Block {@code i}'s identity at {@code i * identityBytes}. */
        MemorySegment identities = MemorySegment.NULL;
        int count;

        void ensure(int n, long identityBytes) {
            if (slot.length < n) {
                hashHi = new long[n];
                hashLo = new long[n];
                slot = new int[n];
                identities = MemorySegment.ofArray(new long[(int) ((n * identityBytes + 7) >>> 3)]);
            }
        }
    }

    /**
     * Counts how many leading blocks of a chain the store holds, at most a quarter of the host
     * slots and {@value #MAX_BLOCKS}, waiting at most until the match's deadline ({@code
     * startNanos} plus the store's timeout). No lock held.
     *
     * @return leading blocks held by the store, in [0, count]
     * @see io.tierkv.core.cache.LowerTier#lookupAhead
     */
    int lookup(long[] hashHi, long[] hashLo, int count, long startNanos) {
        int most = Math.min(Math.min(count, MAX_BLOCKS), Math.max(1, t.capacityBlocks() / 4));
        return store.lookup(hashHi, hashLo, most, startNanos + store.timeoutNanos());
    }

    /**
     * Fetches the leading blocks of a chain into the host slots the cache reserved for them, held
     * for this thread, within the match's deadline. Slots not filled are freed. No lock held.
     *
     * @param slots reserved host slots, one per block, from index 0
     * @param count blocks to fetch, at most what {@link #lookup} found
     * @return blocks fetched and held
     * @see io.tierkv.core.cache.LowerTier#fetchAhead
     */
    int fetch(long[] hashHi, long[] hashLo, MemorySegment[] identities, int[] slots, int count, long startNanos) {
        Held mine = held.get();
        mine.ensure(count, h.identityBytes);
        System.arraycopy(slots, 0, mine.slot, 0, count);
        int got = 0;
        try {
            MemorySegment[] dsts = new MemorySegment[count];
            for (int i = 0; i < count; i++) {
                dsts[i] = h.slotView(slots[i]);
            }
            long deadlineNanos = startNanos + store.timeoutNanos();
            got = count == 0 ? 0 : store.getAll(hashHi, hashLo, identities, dsts, count, deadlineNanos);
        } finally { // on a throw (a store or cache closed meanwhile) the slots go back too
            keep(mine, hashHi, hashLo, identities, count, got);
        }
        mine.count = got;
        fetched.add(got);
        return got;
    }

    /** Keeps the first {@code got} of {@code slots} held slots with their keys; frees the rest. */
    private void keep(Held mine, long[] hashHi, long[] hashLo, MemorySegment[] identities, int slots, int got) {
        h.lock.lock();
        try {
            for (int i = 0; i < slots; i++) {
                if (i < got) {
                    MemorySegment.copy(identities[i], 0, mine.identities, i * h.identityBytes, h.identityBytes);
                    mine.hashHi[i] = hashHi[i];
                    mine.hashLo[i] = hashLo[i];
                } else {
                    h.slots.free(mine.slot[i]); // not read: back, untouched by any reader
                    h.reservedHostSlots--;
                }
            }
        } finally {
            h.lock.unlock();
        }
    }

    /**
     * Takes the held slot of a fetched block whose stored identity equals {@code identity}, for
     * an adoption. The manager lock held (reentrant).
     *
     * @return the host slot, still counted reserved, or -1 if this thread holds no such block
     */
    int take(long hi, long lo, MemorySegment identity) {
        Held mine = held.get();
        for (int i = 0; i < mine.count; i++) {
            if (mine.slot[i] >= 0 && mine.hashHi[i] == hi && mine.hashLo[i] == lo) {
                int hs = mine.slot[i];
                long at = i * h.identityBytes;
                long stop = at + h.identityBytes;
                if (MemorySegment.mismatch(mine.identities, at, stop, identity, 0, identity.byteSize()) != -1) {
                    return -1; // fetched for another identity under this hash: never handed out for it
                }
                mine.slot[i] = -1;
                adopted.increment();
                return hs;
            }
        }
        return -1;
    }

    /** Frees the slots this thread still holds. No cache lock needed. */
    void release() {
        Held mine = held.get();
        if (mine.count == 0) {
            return;
        }
        h.lock.lock();
        try {
            for (int i = 0; i < mine.count; i++) {
                if (mine.slot[i] >= 0) {
                    h.slots.free(mine.slot[i]);
                    h.reservedHostSlots--;
                }
            }
        } finally {
            h.lock.unlock();
        }
        mine.count = 0;
    }
}

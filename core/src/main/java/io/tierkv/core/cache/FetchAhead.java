package io.tierkv.core.cache;

import io.tierkv.core.prefix.BlockHasher;
import io.tierkv.core.prefix.BlockIdentity;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The unlocked half of a prefix match that missed locally while a store below can fetch by hash
 * ({@link LowerTier#remoteRecords}): computes the rest of the prompt's chain (hashes and
 * identities) with the cache lock released, asks the store how many of its leading blocks it
 * holds ({@link RemoteRecords#lookup}), reserves host slots for them under the lock ({@link
 * HostRoom#reserve}), has the store read them into those slots ({@link RemoteRecords#fetch}: the
 * network round trips happen there, never under the lock, all the rounds of one match within one
 * store timeout from its start), then takes the lock again and continues the match. The match's
 * adoptions take the fetched blocks from this thread's round ({@link #take}), their identities
 * compared as for every other hit, and bind them to fresh ids in their host slots ({@link
 * HostSlots#fill}); the slots no adoption took go back when the round ends. A slot held for a
 * round is counted reserved by the host store, so its invariants hold while it waits.
 *
 * <p>Thread-safe: the hashers and the rounds are per thread; the sequence is the calling thread's
 * own (one thread writes a sequence at a time), so its chain fields are read without the lock.
 */
final class FetchAhead {

    private final PagedKvCache cache;
    private final RemoteRecords remote;
    private final ThreadLocal<BlockHasher> hashers;
    /** The blocks this thread's current round fetched and no adoption took yet. */
    private final ThreadLocal<Fetched> rounds = ThreadLocal.withInitial(Fetched::new);

    FetchAhead(PagedKvCache cache, RemoteRecords remote) {
        this.cache = cache;
        this.remote = remote;
        this.hashers = ThreadLocal.withInitial(
                () -> new BlockHasher(cache.options.hashAlgorithm(), cache.options.hashKey()));
    }

    /**
     * Blocks one round fetched into host slots, with the hashes and identities they were read for;
     * no id is bound to them until an adoption takes one ({@code slot[i] = -1} then).
     */
    private static final class Fetched {
        long[] hashHi;
        long[] hashLo;
        MemorySegment[] identities;
        int[] slot;
        int count;

        void clear() {
            hashHi = null;
            hashLo = null;
            identities = null;
            slot = null;
            count = 0;
        }
    }

    /**
     * Fetches and matches blocks {@code fromBlock..toBlock-1}, in rounds (a store may fetch fewer
     * blocks than asked, and room may be short), until a round takes fewer than it fetched or the
     * range is done. Called without the cache lock.
     *
     * @param seq          the sequence, holding exactly {@code fromBlock} matched blocks
     * @param promptTokens the prompt's token ids
     * @param fromBlock    the first block the local match missed
     * @param toBlock      one past the last block the match may take
     */
    void matchRest(Sequence seq, int[] promptTokens, int fromBlock, int toBlock) {
        long startNanos = System.nanoTime(); // every round's fetch waits within one store timeout from here
        int from = fromBlock;
        while (from < toBlock) {
            int taken = round(seq, promptTokens, from, toBlock, startNanos);
            if (taken <= 0) {
                return;
            }
            from += taken;
        }
    }

    /** One fetch and the locked match after it; the blocks taken, or -1 if fewer than fetched. */
    private int round(Sequence seq, int[] promptTokens, int fromBlock, int toBlock, long startNanos) {
        int count = toBlock - fromBlock;
        int b = cache.blockTokens;
        long idBytes = BlockIdentity.bytes(b);
        long rowBytes = (idBytes + 7) & ~7L; // each identity 8-aligned in the heap segment
        MemorySegment rows = MemorySegment.ofArray(new long[Math.toIntExact(rowBytes / 8 * count)]);
        long[] hi = new long[count];
        long[] lo = new long[count];
        MemorySegment[] identities = new MemorySegment[count];
        MemorySegment prompt = MemorySegment.ofArray(promptTokens);
        BlockHasher hasher = hashers.get();
        long parentHi = seq.parentHi;
        long parentLo = seq.parentLo;
        for (int i = 0; i < count; i++) {
            int first = (fromBlock + i) * b;
            hasher.hashBlock(seq.saltHi, seq.saltLo, parentHi, parentLo, seq.extraKeys, prompt, first, b);
            hi[i] = hasher.hi();
            lo[i] = hasher.lo();
            MemorySegment id = rows.asSlice(i * rowBytes, idBytes);
            BlockIdentity.writeKey(id, 0, seq.contextHi, seq.contextLo, parentHi, parentLo);
            MemorySegment.copy(promptTokens, first, id, ValueLayout.JAVA_INT, BlockIdentity.KEY_BYTES, b);
            identities[i] = id;
            parentHi = hi[i];
            parentLo = lo[i];
        }
        int found = remote.lookup(hi, lo, count, startNanos);
        if (found == 0) {
            return 0;
        }
        int[] hostSlots = new int[found];
        int slots = reserveHostSlots(hostSlots, found);
        if (slots == 0) {
            return 0;
        }
        HostSlots host = cache.lower.hostSlots();
        int fetched = 0;
        try {
            MemorySegment[] dsts = new MemorySegment[slots];
            for (int i = 0; i < slots; i++) {
                dsts[i] = host.view(hostSlots[i]);
            }
            fetched = remote.fetch(hi, lo, identities, dsts, slots, startNanos);
        } finally { // the slots not filled go back, untouched by any reader (all of them on a throw)
            for (int i = fetched; i < slots; i++) {
                host.releaseReserved(hostSlots[i]);
            }
        }
        if (fetched == 0) {
            return 0;
        }
        Fetched round = rounds.get();
        round.hashHi = hi;
        round.hashLo = lo;
        round.identities = identities;
        round.slot = hostSlots;
        round.count = fetched;
        try {
            cache.lock.lock();
            try {
                if (seq.isClosed() || seq.length() != fromBlock * b) { // closed or used meanwhile
                    return -1;
                }
                cache.prefix.match(seq, promptTokens, fromBlock, fromBlock + fetched);
                int taken = seq.length() / b - fromBlock;
                return taken == fetched ? taken : -1;
            } finally {
                cache.lock.unlock();
            }
        } finally {
            round.clear(); // the thread keeps no arrays of the round
            for (int i = 0; i < fetched; i++) {
                if (hostSlots[i] >= 0) { // not adopted: back
                    host.releaseReserved(hostSlots[i]);
                }
            }
        }
    }

    /**
     * Takes the host slot of a block this thread's round fetched for a hash, if it was fetched
     * for exactly {@code identity}, for an adoption ({@link PrefixLookup}). The cache lock held.
     *
     * @param hi       block hash, high word
     * @param lo       block hash, low word
     * @param identity the identity the match expects
     * @return the host slot, still reserved (the adoption fills it), or -1 if this round holds no
     *     such block
     */
    int take(long hi, long lo, MemorySegment identity) {
        Fetched round = rounds.get();
        for (int i = 0; i < round.count; i++) {
            if (round.slot[i] >= 0 && round.hashHi[i] == hi && round.hashLo[i] == lo) {
                if (round.identities[i].mismatch(identity) != -1) {
                    return -1; // fetched for another identity under this hash: never handed out for it
                }
                int hs = round.slot[i];
                round.slot[i] = -1;
                remote.countAdopted();
                return hs;
            }
        }
        return -1;
    }

    /**
     * Reserves up to {@code n} host slots for blocks found below, making room as a demotion does
     * ({@link HostRoom#reserve}), under the cache lock; fewer if no more room can be made.
     *
     * @return slots reserved into {@code out}, from index 0
     */
    private int reserveHostSlots(int[] out, int n) {
        cache.lock.lock();
        int got = 0;
        try {
            while (got < n && !cache.closed) {
                int hs = cache.moves.hostRoom.reserve();
                if (hs < 0) {
                    break;
                }
                out[got++] = hs;
            }
            return got;
        } catch (RuntimeException | Error e) { // a victim's spill threw: the slots reserved so far go back
            for (int i = 0; i < got; i++) {
                cache.lower.hostSlots().releaseReserved(out[i]);
            }
            throw e;
        } finally {
            cache.lock.unlock();
        }
    }
}

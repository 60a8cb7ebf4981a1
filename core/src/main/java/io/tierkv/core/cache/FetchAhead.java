package io.tierkv.core.cache;

import io.tierkv.core.prefix.BlockHasher;
import io.tierkv.core.prefix.BlockIdentity;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The unlocked half of a prefix match that missed locally while a store below can fetch by hash
 * ({@link LowerTier#fetchesAhead}): computes the rest of the prompt's chain (hashes and
 * identities) with the cache lock released, asks the lower tier how many of its leading blocks a
 * store below holds ({@link LowerTier#lookupAhead}), reserves host slots for them under the lock
 * ({@link HostRoom#reserve}), and has the lower tier fetch them ({@link LowerTier#fetchAhead}:
 * the network round trips happen there, never under the lock, all the rounds of one match within
 * one store timeout from its start), then
 * takes the lock again and continues the match, whose adoptions find the fetched blocks in local
 * memory. A fetched block is taken only through the locked match, so its identity is compared
 * there as for every other hit.
 *
 * <p>Thread-safe: the hashers are per thread; the sequence is the calling thread's own (one
 * thread writes a sequence at a time), so its chain fields are read without the lock.
 */
final class FetchAhead {

    private final PagedKvCache cache;
    private final ThreadLocal<BlockHasher> hashers;

    FetchAhead(PagedKvCache cache) {
        this.cache = cache;
        this.hashers = ThreadLocal.withInitial(
                () -> new BlockHasher(cache.options.hashAlgorithm(), cache.options.hashKey()));
    }

    /**
     * Fetches and matches blocks {@code fromBlock..toBlock-1}, in rounds (a lower tier may fetch
     * fewer blocks than asked, for room), until a round takes fewer than it fetched or the
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
        LowerTier lower = cache.lower;
        try {
            int found = lower.lookupAhead(hi, lo, count, startNanos);
            if (found == 0) {
                return 0;
            }
            int[] hostSlots = new int[found];
            int slots = reserveHostSlots(hostSlots, found);
            if (slots == 0) {
                return 0;
            }
            int fetched = lower.fetchAhead(hi, lo, identities, hostSlots, slots, startNanos);
            if (fetched == 0) {
                return 0;
            }
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
            lower.endFetch();
        }
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

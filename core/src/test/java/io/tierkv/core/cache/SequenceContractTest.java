package io.tierkv.core.cache;

import static io.tierkv.core.testing.TestCaches.appendWritten;
import static io.tierkv.core.testing.TestCaches.smallLayout;
import static io.tierkv.core.testing.TestCaches.tokens;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.tierkv.core.KvLayout;
import io.tierkv.core.error.BudgetExceededException;
import io.tierkv.core.pool.SlabMemory;
import io.tierkv.core.testing.CacheInvariants;
import io.tierkv.core.testing.TestCaches;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.function.Executable;

/** The public contract of {@link Sequence} and {@link BlockLease} under misuse: closed sequences, bad arguments, budgets. */
class SequenceContractTest {

    @RegisterExtension
    final CacheInvariants invariants = new CacheInvariants();

    private static final int B = 4;
    private final Arena arena = Arena.ofAuto();
    private final PagedKvCache cache = TestCaches.singleTier(invariants, CacheOptions.of(smallLayout(B), 8)
            .withAdmissionTimeoutNanos(1_000_000));
    private final KvLayout layout = cache.layout();
    private final int tv = layout.tokenVectorBytes();

    private MemorySegment filled(long bytes, int value) {
        return arena.allocate(bytes).fill((byte) value);
    }

    private static void assertMessage(Class<? extends Throwable> type, String message, Executable e) {
        assertEquals(message, assertThrows(type, e).getMessage());
    }

    @Test
    void aClosedSequenceServesNoBytesNorIdsOfBlocksThatReuseItsIds() {
        Sequence a = cache.openSequence(SequenceOptions.salt("a"));
        int pos = a.appendToken(5); // a partial block: freed when a closes
        for (int l = 0; l < layout.layers(); l++) {
            a.write(l, pos, filled(tv, 1), filled(tv, 1));
        }
        int id = a.blockId(0);
        a.close();
        try (Sequence c = cache.openSequence(SequenceOptions.salt("c"))) {
            int q = c.appendToken(9);
            for (int l = 0; l < layout.layers(); l++) {
                c.write(l, q, filled(tv, 7), filled(tv, 7));
            }
            assertEquals(id, c.blockId(0), "the freed id is reused by the other tenant");
            MemorySegment k = filled(tv, 0);
            MemorySegment v = filled(tv, 0);
            String closed = "sequence is closed";
            assertMessage(IllegalStateException.class, closed, () -> a.read(0, 0, k, v));
            assertEquals(0, k.get(ValueLayout.JAVA_BYTE, 0), "nothing of c's block was copied");
            assertMessage(IllegalStateException.class, closed, () -> a.tokenAt(0));
            assertMessage(IllegalStateException.class, closed, () -> a.blockId(0));
            assertMessage(IllegalStateException.class, closed, () -> a.lease(0, 1));
            assertMessage(IllegalStateException.class, closed, () -> a.write(0, 0, filled(tv, 3), filled(tv, 3)));
            assertMessage(IllegalStateException.class, closed, () -> a.readBlock(0, filled(layout.bytesPerBlock(), 0)));
            assertEquals(1, a.length(), "the length at close");
            assertEquals(9, c.tokenAt(0));
        }
    }

    @Test
    void aClosedLeaseNamesItsStateAndABadIndexNamesTheIndexAndTheBound() {
        try (Sequence s = cache.openSequence(SequenceOptions.defaults())) {
            appendWritten(s, 1, tokens(0, 2 * B));
            BlockLease lease = s.lease(0, 2 * B);
            assertEquals(s.blockId(1), lease.blockId(1));
            assertMessage(IndexOutOfBoundsException.class, "i: 5 (expected 0 <= i < blockCount 2)", () -> lease.block(5));
            assertMessage(IndexOutOfBoundsException.class, "i: -1 (expected 0 <= i < blockCount 2)", () -> lease.blockId(-1));
            lease.close();
            assertMessage(IllegalStateException.class, "lease is closed", () -> lease.blockId(0));
            assertMessage(IllegalStateException.class, "lease is closed", () -> lease.block(0));
        }
        assertMessage(IndexOutOfBoundsException.class, "blockId: -1 (expected 0 <= blockId < maxBlocks 8)",
                () -> cache.acquireLease(-1));
        assertMessage(IndexOutOfBoundsException.class, "blockId: 8 (expected 0 <= blockId < maxBlocks 8)",
                () -> cache.releaseLease(8));
    }

    /**
     * {@code swapLease} releases one lease and takes another in one hold of the lock: the same
     * counts as a release and an acquire; bad ids and a block with no lease release nothing.
     */
    @Test
    void swapLeaseReleasesOneLeaseAndTakesAnotherOrChangesNothing() {
        try (Sequence s = cache.openSequence(SequenceOptions.defaults())) {
            appendWritten(s, 1, tokens(0, 2 * B));
            int a = s.blockId(0);
            int b = s.blockId(1);
            MemorySegment slotA = cache.acquireLease(a);
            assertEquals(2, cache.diagnostics().referenceCount(a));
            MemorySegment slotB = cache.swapLease(a, b);
            assertEquals(1, cache.diagnostics().referenceCount(a), "a's lease released");
            assertEquals(2, cache.diagnostics().referenceCount(b), "b leased");
            assertEquals(layout.bytesPerBlock(), slotB.byteSize());

            assertMessage(IndexOutOfBoundsException.class, "blockId: 8 (expected 0 <= blockId < maxBlocks 8)",
                    () -> cache.swapLease(b, 8));
            assertMessage(IndexOutOfBoundsException.class,
                    "releasedBlockId: -1 (expected 0 <= releasedBlockId < maxBlocks 8)", () -> cache.swapLease(-1, a));
            assertEquals(2, cache.diagnostics().referenceCount(b), "a bad id releases nothing");
            assertThrows(IllegalStateException.class, () -> cache.swapLease(a, b), "a holds no lease");
            assertEquals(1, cache.diagnostics().referenceCount(a));
            assertEquals(2, cache.diagnostics().referenceCount(b), "nothing released, nothing leased");
            cache.releaseLease(b);
            assertEquals(1, cache.diagnostics().referenceCount(b));
        }
    }

    @Test
    void aShortKOrVIsRefusedBeforeAnyByteIsCopied() {
        try (Sequence s = cache.openSequence(SequenceOptions.defaults())) {
            int pos = s.appendToken(1);
            s.write(0, pos, filled(tv, 4), filled(tv, 4));
            assertMessage(IllegalArgumentException.class, "k.byteSize: 4 (expected >= tokenVectorBytes " + tv + ")",
                    () -> s.write(1, pos, filled(4, 9), filled(tv, 9)));
            assertMessage(IllegalArgumentException.class, "v.byteSize: 4 (expected >= tokenVectorBytes " + tv + ")",
                    () -> s.write(1, pos, filled(tv, 9), filled(4, 9)));
            int n = layout.kvHeads() * layout.headDim();
            assertMessage(IllegalArgumentException.class, "v.length: 1 (expected >= kvHeads x headDim " + n + ")",
                    () -> s.write(1, pos, new float[n], new float[1]));
            assertMessage(NullPointerException.class, "k", () -> s.write(1, pos, null, filled(tv, 9)));
            MemorySegment k = filled(tv, 0);
            MemorySegment v = filled(tv, 0);
            s.read(0, pos, k, v);
            assertEquals(4, k.get(ValueLayout.JAVA_BYTE, 0));
            assertMessage(IllegalArgumentException.class, "kOut.byteSize: 1 (expected >= tokenVectorBytes " + tv + ")",
                    () -> s.read(0, pos, filled(1, 0), v));
            assertMessage(IndexOutOfBoundsException.class, "layer: 5 (expected 0 <= layer < 2)", () -> s.read(5, pos, k, v));
            s.write(1, pos, filled(tv, 6), filled(tv, 6)); // layer 1 is still unwritten: no byte landed before
            s.read(1, pos, k, v);
            assertEquals(6, k.get(ValueLayout.JAVA_BYTE, 0));
            assertEquals(6, v.get(ValueLayout.JAVA_BYTE, tv - 1));
        }
    }

    @Test
    void matchPrefixStopsAtTheBudgetAndReturnsTheTokensTaken() {
        int[] prompt = tokens(500, 4 * B);
        try (Sequence w = cache.openSequence(SequenceOptions.salt("m"))) {
            appendWritten(w, 2, prompt);
        }
        try (Sequence m = cache.openSequence(SequenceOptions.salt("m").withBudgetBytes(2L * layout.bytesPerBlock()))) {
            assertEquals(2 * B, m.matchPrefix(prompt), "two blocks fit the budget; the runtime computes the rest");
            assertEquals(2, m.blockCount());
            assertEquals(2 * B, m.length());
            assertEquals(502, m.tokenAt(2));
            assertThrows(BudgetExceededException.class, () -> m.appendToken(1));
            assertEquals(2 * B, m.length(), "the refused append kept what was matched");
        }
        try (Sequence m = cache.openSequence(SequenceOptions.salt("m").withBudgetBytes(layout.bytesPerBlock() - 1L))) {
            assertEquals(0, m.matchPrefix(prompt));
            assertEquals(0, m.blockCount());
        }
        try (Sequence m = cache.openSequence(SequenceOptions.salt("m"))) {
            assertMessage(NullPointerException.class, "promptTokens", () -> m.matchPrefix(null));
            assertMessage(NullPointerException.class, "promptTokens", () -> m.matchPrefix(null, 0));
            assertMessage(NullPointerException.class, "options", () -> cache.openSequence(null));
        }
    }

    @Test
    @SuppressWarnings("GuardedBy") // reads block facts from the test thread while nothing else runs on the cache
    void priorityIsValidatedNotClamped() {
        assertMessage(IllegalArgumentException.class, "priority: -129 (expected -128 <= priority <= 127)",
                () -> SequenceOptions.salt("a").withPriority(-129));
        assertMessage(IllegalArgumentException.class, "priority: 1000 (expected -128 <= priority <= 127)",
                () -> SequenceOptions.salt("a").withPriority(1000));
        assertEquals(-128, SequenceOptions.salt("a").withPriority(SequenceOptions.MIN_PRIORITY).priority());
        assertEquals(127, SequenceOptions.salt("a").withPriority(SequenceOptions.MAX_PRIORITY).priority());
        try (Sequence s = cache.openSequence(SequenceOptions.salt("p").withPriority(-1))) {
            appendWritten(s, 1, tokens(0, B));
            assertEquals(0, cache.blocks.priority(s.blockId(0)), "LRU reads no priority, so none is kept");
        }
        PagedKvCache byPriority = TestCaches.singleTier(invariants, CacheOptions.of(smallLayout(B), 8)
                .withPolicy("priority-lru"));
        try (Sequence s = byPriority.openSequence(SequenceOptions.salt("p").withPriority(-1))) {
            appendWritten(s, 1, tokens(0, B));
            assertEquals(-1, byPriority.blocks.priority(s.blockId(0)));
        }
    }

    @Test
    void differentExtraKeysIsolatePrefixMatches() {
        int[] prompt = tokens(700, 2 * B);
        try (Sequence w = cache.openSequence(SequenceOptions.salt("t").withExtraKeys(1L, 2L))) {
            appendWritten(w, 3, prompt);
        }
        try (Sequence other = cache.openSequence(SequenceOptions.salt("t").withExtraKeys(1L, 3L))) {
            assertEquals(0, other.matchPrefix(prompt), "another adapter's keys match nothing");
        }
        try (Sequence none = cache.openSequence(SequenceOptions.salt("t"))) {
            assertEquals(0, none.matchPrefix(prompt), "no extra keys match nothing either");
        }
        try (Sequence same = cache.openSequence(SequenceOptions.salt("t").withExtraKeys(1L, 2L))) {
            assertEquals(2 * B, same.matchPrefix(prompt));
        }
    }

    /** Reference counts are 16 bits: the 65,536th holder of one block is refused, and nothing changes. */
    @Test
    @SuppressWarnings("GuardedBy") // reads block facts from the test thread while nothing else runs on the cache
    void theMostReferencesOneBlockHoldsIsEnforcedWithoutChangingAnything() {
        try (Sequence s = cache.openSequence(SequenceOptions.defaults())) {
            appendWritten(s, 1, tokens(0, B));
            int id = s.blockId(0);
            int leases = BlockStates.MAX_REFS - 1; // with the table's own reference: the most there is
            for (int i = 0; i < leases; i++) {
                cache.acquireLease(id);
            }
            assertEquals(BlockStates.MAX_REFS, cache.blocks.refs[id]);
            String refused = "block " + id
                    + ": references 65535 (expected < 65535, the most one block holds: counts are 16 bits)";
            assertMessage(IllegalStateException.class, refused, () -> cache.acquireLease(id));
            assertMessage(IllegalStateException.class, refused, s::fork);
            assertEquals(BlockStates.MAX_REFS, cache.blocks.refs[id], "refused: nothing taken");
            assertEquals(leases, cache.blocks.leases[id]);
            CacheStats before = cache.stats();
            try (Sequence m = cache.openSequence(SequenceOptions.defaults())) {
                assertEquals(0, m.matchPrefix(tokens(0, B)), "a match stops before a block at the bound");
            }
            assertEquals(before.prefixHitBlocks(), cache.stats().prefixHitBlocks(), "no hit counted");
            assertEquals(before.prefixMissBlocks() + 1, cache.stats().prefixMissBlocks(), "a miss counted");
            cache.releaseLease(id);
            try (Sequence child = s.fork()) {
                assertEquals(BlockStates.MAX_REFS, cache.blocks.refs[id], "one released, one taken by the fork");
                assertEquals(id, child.blockId(0));
            }
            cache.releaseLease(id);
            try (Sequence m = cache.openSequence(SequenceOptions.defaults())) {
                assertEquals(B, m.matchPrefix(tokens(0, B)), "below the bound again, the block matches");
                assertEquals(id, m.blockId(0));
            }
            for (int i = 2; i < leases; i++) {
                cache.releaseLease(id);
            }
            assertEquals(1, cache.blocks.refs[id]);
        }
    }

    /** A read-ahead of a block below at the bound cannot take the move's reference: it moves nothing and does not throw. */
    @Test
    @SuppressWarnings("GuardedBy") // reads block facts from the test thread while nothing else runs on the cache
    void aReadAheadLeavesABlockAtTheMostReferencesWhereItIs() {
        TimingLowerTier lower = new TimingLowerTier();
        SlabMemory memory = invariants.track(new SlabMemory(4, layout.bytesPerBlock()), java.util.List::of);
        PagedKvCache tiered = invariants.track(new PagedKvCache(CacheOptions.of(smallLayout(B), 4)
                .withMaxBlocks(8).withRecentDeviceBlocks(0), memory, lower));
        java.util.List<Sequence> forks = new java.util.ArrayList<>();
        try (Sequence s = tiered.openSequence(SequenceOptions.defaults())) {
            appendWritten(s, 1, tokens(0, B));
            int id = s.blockId(0);
            for (int i = 1; i < BlockStates.MAX_REFS; i++) {
                forks.add(s.fork());
            }
            assertEquals(BlockStates.MAX_REFS, tiered.blocks.refs[id]);
            assertEquals(true, tiered.tierControl().demoteBlock(id));
            assertEquals(false, tiered.tierControl().prefetch(id), "no room for the move's reference");
            assertEquals(-1, tiered.blocks.slot[id], "still below");
            assertEquals(BlockStates.MAX_REFS, tiered.blocks.refs[id]);
            forks.remove(forks.size() - 1).close();
            assertEquals(true, tiered.tierControl().prefetch(id), "below the bound, it comes up");
        } finally {
            forks.forEach(Sequence::close);
        }
    }

    @Test
    @SuppressWarnings("GuardedBy") // reads block facts from the test thread while nothing else runs on the cache
    void cacheOptionsCopiesTakeEffect() {
        CacheOptions base = CacheOptions.of(smallLayout(B), 4);
        PagedKvCache recent = TestCaches.singleTier(invariants, base.withRecentDeviceBlocks(1));
        try (Sequence s = recent.openSequence(SequenceOptions.defaults())) {
            appendWritten(s, 1, tokens(0, 2 * B));
            assertEquals(0, recent.blocks.protect[s.blockId(0)], "outside the recent window of one block");
            assertEquals(1, recent.blocks.protect[s.blockId(1)], "the last sealed block is kept on the device");
        }
        long timeout = 3_600_000_000_000L;
        TimingLowerTier lower = new TimingLowerTier();
        SlabMemory memory = invariants.track(new SlabMemory(4, layout.bytesPerBlock()), java.util.List::of);
        PagedKvCache tiered = invariants.track(new PagedKvCache(base.withMaxBlocks(8)
                .withPromotionTimeoutNanos(timeout), memory, lower));
        try (Sequence s = tiered.openSequence(SequenceOptions.defaults())) {
            appendWritten(s, 1, tokens(0, B));
            int id = s.blockId(0);
            assertEquals(true, tiered.tierControl().demoteBlock(id));
            tiered.acquireLease(id);
            tiered.releaseLease(id);
            assertEquals(timeout, lower.timeout, "the promotion gets the configured timeout");
        }
        PagedKvCache wide = TestCaches.singleTier(invariants, base.withMaxBlocks(6));
        assertMessage(IndexOutOfBoundsException.class, "blockId: 6 (expected 0 <= blockId < maxBlocks 6)",
                () -> wide.acquireLease(6));
        long[][] hashes = new long[2][];
        io.tierkv.core.prefix.HashAlgorithm[] algorithms = io.tierkv.core.prefix.HashAlgorithm.values();
        for (int i = 0; i < 2; i++) {
            PagedKvCache c = TestCaches.singleTier(invariants, base.withHashAlgorithm(algorithms[i]));
            try (Sequence s = c.openSequence(SequenceOptions.defaults())) {
                appendWritten(s, 1, tokens(0, B));
                hashes[i] = c.diagnostics().blockHash(s.blockId(0));
            }
        }
        assertNotEquals(java.util.Arrays.toString(hashes[0]), java.util.Arrays.toString(hashes[1]),
                "another hash function chains other hashes");
    }

    /**
     * A block that leases alone hold (no sequence's table: a read-ahead's promotion, or a lease
     * kept after its sequence closed) is counted apart from cached blocks in the same snapshot,
     * so a leak count needs no re-read while a mover holds blocks.
     */
    @Test
    void leasedOnlyBlocksAreCountedApartFromCachedAndReferencedBlocks() {
        int id;
        try (Sequence s = cache.openSequence(SequenceOptions.defaults())) {
            appendWritten(s, 1, tokens(0, B));
            id = s.blockId(0);
            cache.acquireLease(id);
            CacheStats referenced = cache.stats();
            assertEquals(0, referenced.leasedOnlyBlocks(), "its sequence references it too");
            assertEquals(0, referenced.cachedBlocks());
        }
        CacheStats leased = cache.stats();
        assertEquals(1, leased.liveBlocks());
        assertEquals(0, leased.cachedBlocks(), "a leased block is not cached");
        assertEquals(1, leased.leasedOnlyBlocks(), "its lease alone holds it");
        cache.releaseLease(id);
        CacheStats cached = cache.stats();
        assertEquals(1, cached.cachedBlocks());
        assertEquals(0, cached.leasedOnlyBlocks());
    }

    /**
     * A lower tier reports what it let go of ({@link LowerTier#drainChanges}) and the cache settles
     * it later, under its own lock: by then the id may have been freed and taken by another block,
     * or have a copy below again, so each entry names the hash it meant and the cache acts only on
     * an id that still holds it, by where its copy is now: on the host, nothing; on disk alone,
     * the id is retired; nowhere, it is freed if unreferenced and lost if referenced.
     */
    @Test
    void aLowerTiersChangesFreeAnIdOnlyIfItStillHoldsTheHashItMeantAndHasNoOtherCopy() {
        TimingLowerTier lower = new TimingLowerTier();
        PagedKvCache tiered = cacheOver(lower);
        int id = demotedCachedBlock(tiered);
        long[] hash = tiered.diagnostics().blockHash(id); // a cached block, held only below (on the host)
        TierControl control = tiered.tierControl();
        lower.changed(id, hash[0] ^ 1, hash[1]);
        lower.changed(id, hash[0], hash[1] ^ 1);
        lower.changed(BelowChanges.NO_BLOCK, hash[0] ^ 1, hash[1]);
        lower.changed(id, hash[0], hash[1]); // still on the host
        assertEquals(4, control.settleBelow(), "every entry drained");
        assertEquals(0, control.settleBelow(), "and only once");
        assertEquals(1, tiered.stats().liveBlocks(), "other hashes, another key, a copy still on the host: left alone");
        try (Sequence again = tiered.openSequence(SequenceOptions.defaults())) {
            assertEquals(B, again.matchPrefix(tokens(0, 2 * B)), "still cached");
        }
        lower.toDiskOnly(id);
        lower.changed(id, hash[0], hash[1]);
        assertEquals(1, control.settleBelow());
        assertEquals(0, tiered.stats().liveBlocks(), "kept by hash alone below: the id is retired");
        assertEquals(1, tiered.stats().retiredIds());
        assertEquals(false, lower.held.contains(id), "and forgotten below");

        int y;
        Sequence reader = tiered.openSequence(SequenceOptions.defaults());
        appendWritten(reader, 2, tokens(100, B));
        y = reader.blockId(0);
        appendWritten(reader, 2, tokens(100 + B, 1)); // y is no longer the sequence's tail
        assertEquals(true, tiered.tierControl().demoteBlock(y));
        long[] hashY = tiered.diagnostics().blockHash(y);
        lower.lose(y); // its copy below went (a disk record evicted or found damaged)
        lower.changed(BelowChanges.NO_BLOCK, hashY[0], hashY[1]);
        assertEquals(1, control.settleBelow());
        assertEquals(1, tiered.stats().lostBlocks(), "referenced, with no copy anywhere: lost");
        long evictions = tiered.stats().evictions();
        reader.close();
        assertEquals(0, tiered.stats().liveBlocks(), "a lost block is freed when its last reference ends");
        assertEquals(evictions, tiered.stats().evictions());
    }

    /**
     * A change reported while its block moves is kept and settled once the move ends: a read-ahead
     * load that lands while its block's copy is evicted below would otherwise leave the block
     * cached with no copy anywhere until a match found out.
     */
    @Test
    void aChangeReportedWhileItsBlockMovesIsSettledAfterTheMove() {
        TimingLowerTier lower = new TimingLowerTier();
        PagedKvCache tiered = cacheOver(lower);
        int id = demotedCachedBlock(tiered);
        long[] hash = tiered.diagnostics().blockHash(id);
        TierControl control = tiered.tierControl();
        lower.toDiskOnly(id); // its copy is a disk record now: a read-ahead may load it
        lower.duringLoad = () -> { // the cache lock is released while the load copies
            lower.lose(id); // the copy goes below meanwhile, and is reported
            lower.changed(id, hash[0], hash[1]);
            assertEquals(0, control.settleBelow(), "its block is moving: the change is kept, not settled");
        };
        assertEquals(true, control.loadBelow(id));
        assertEquals(0, tiered.stats().liveBlocks(), "settled as the move ended: no copy left, freed");
        assertEquals(1, tiered.stats().evictions());
    }

    /** {@return a cache of 4 slots and 8 block ids over {@code lower}} */
    private PagedKvCache cacheOver(LowerTier lower) {
        SlabMemory memory = invariants.track(new SlabMemory(4, layout.bytesPerBlock()), java.util.List::of);
        return invariants.track(new PagedKvCache(CacheOptions.of(smallLayout(B), 4).withMaxBlocks(8), memory, lower));
    }

    /** {@return a block sealed, its sequence closed, then demoted: cached, held only below} */
    private static int demotedCachedBlock(PagedKvCache tiered) {
        try (Sequence s = tiered.openSequence(SequenceOptions.defaults())) {
            appendWritten(s, 1, tokens(0, B));
            int id = s.blockId(0);
            assertEquals(true, tiered.tierControl().demoteBlock(id));
            return id;
        }
    }

    /**
     * A lower tier that keeps a block's bytes nowhere but says it does, and records a promotion's
     * timeout. Where it says a block is, it records in the cache's facts ({@link
     * BlockOwner#hostSlot}, {@link BlockOwner#belowBits}), as a real tier does: a demoted block in
     * "host slot" 0, a block on disk only ON_DISK with no host slot. Its "disk" pins every record
     * it is asked to and none breaks.
     */
    private static final class TimingLowerTier implements LowerTier {
        private final HostSlots roomy = new HostSlots() {
            @Override public int reserveFree() { return 0; }
            @Override public void releaseReserved(int hostSlot) { }
            @Override public int victim() { return -1; }
            @Override public int victimCount() { return 0; }
            @Override public boolean spills() { return false; }
            @Override public void dropClean(int blockId) { }
            @Override public boolean evict(int blockId) { return false; }
            @Override public void keep(int blockId) { }
            @Override public void queue(int blockId) { }
            @Override public boolean unqueue(int blockId) { return false; }
            @Override public MemorySegment view(int hostSlot) { return MemorySegment.NULL; } // no bytes are kept
            @Override public boolean prepareSpill(int blockId) { return false; } // nothing spills: no disk writes
            @Override public void endSpill(int blockId, int hostSlot, boolean left) { throw new AssertionError(); }
            @Override public int acquireStaging() { throw new AssertionError("nothing is staged"); }
            @Override public MemorySegment staging(int buffer) { throw new AssertionError(); }
            @Override public void releaseStaging(int buffer) { throw new AssertionError(); }

            /** A copy that landed is placed in "host slot" 0, unless the test took it away meanwhile ({@link #lose}). */
            @Override public void fill(int blockId, int hostSlot) {
                if (held.contains(blockId)) {
                    owner.setHostSlot(blockId, 0);
                }
            }
        };
        private final DiskRecords pinsAnything = new DiskRecords() {
            @Override public long write(int blockId, long hi, long lo, MemorySegment identity, MemorySegment block,
                    boolean pin) {
                throw new AssertionError("nothing spills");
            }

            /** Runs {@link #duringLoad} (the cache lock released), then reports the block loaded; without it, a miss. */
            @Override public int load(int blockId, long hi, long lo, MemorySegment identity, MemorySegment out) {
                if (duringLoad == null) {
                    return MISSED;
                }
                duringLoad.run();
                return LOADED;
            }
            @Override public int read(int blockId, long hi, long lo, MemorySegment identity, MemorySegment out) {
                return MISSED; // keeps no bytes
            }
            @Override public int stage(int blockId, long hi, long lo, MemorySegment identity, MemorySegment out) {
                return MISSED;
            }
            @Override public int adopt(int blockId, long hi, long lo, MemorySegment identity, MemorySegment into) {
                return MISSED; // keeps no records to adopt
            }
            @Override public boolean verifiesOnAdopt() { return false; }
            @Override public boolean contains(long hi, long lo) { return true; }
            @Override public long pin(long hi, long lo) { return 1; }
            @Override public boolean unpin(long hi, long lo, long pin) { return true; }
            @Override public boolean pinBroken(long pin) { return false; }
            @Override public String checkPins(long[] hi, long[] lo, long[] pins, int[] holders, int n) { return null; }
            @Override public void setDepartures(Departures departures) { }
        };
        private final java.util.Set<Integer> held = new java.util.HashSet<>();
        /** Held ids whose copy is on disk only (kept by hash). */
        private final java.util.Set<Integer> onDiskOnly = new java.util.HashSet<>();
        private BlockOwner owner;
        private final BelowChanges changes = new BelowChanges();
        /** Run by its disk's load (the cache lock released), which then reports the block loaded; null: no load. */
        Runnable duringLoad;
        long timeout;

        void changed(int blockId, long hashHi, long hashLo) {
            changes.add(blockId, hashHi, hashLo);
        }

        @Override
        public void drainChanges(BelowChanges out) {
            changes.moveTo(out);
        }

        @Override
        public boolean hasChanges() {
            return changes.size() > 0;
        }

        @Override
        public void attach(BlockOwner owner) {
            this.owner = owner; // keeps no bytes, so reads no identity; records where blocks are
        }

        /** Its copy is a disk record now, no host slot. */
        void toDiskOnly(int blockId) {
            onDiskOnly.add(blockId);
            place(blockId, -1, BlockOwner.ON_DISK);
        }

        /** Its copy below went (evicted or found damaged). */
        void lose(int blockId) {
            held.remove(blockId);
            onDiskOnly.remove(blockId);
            place(blockId, -1, (byte) 0);
        }

        private void place(int blockId, int hostSlot, byte bits) {
            owner.lock().lock();
            try {
                owner.setHostSlot(blockId, hostSlot);
                owner.setBelowBits(blockId, bits);
            } finally {
                owner.lock().unlock();
            }
        }

        /** Room for every block: "host slot" 0, never full, so no block leaves for room. */
        @Override
        public HostSlots hostSlots() {
            return roomy;
        }

        @Override
        public DiskRecords diskRecords() {
            return pinsAnything;
        }

        /** {@inheritDoc} The cache commits it to "host slot" 0 ({@code fill}). */
        @Override
        public boolean demote(int blockId, long hashHi, long hashLo, MemorySegment identity, int slot, int hostSlot) {
            held.add(blockId);
            onDiskOnly.remove(blockId);
            return true;
        }

        @Override
        public int preparePromote(int blockId) {
            return 0; // "host slot" 0: this fake's promotions all succeed
        }

        @Override
        public void completePromote(int blockId, int source, int result) {
        }

        @Override
        public int promote(int blockId, int source, int slot, long timeoutNanos) {
            timeout = timeoutNanos;
            return PROMOTED;
        }

        @Override
        public int promoteStaged(int blockId, int buffer, int slot, long startNanos) {
            throw new AssertionError("nothing is promoted from disk: its disk keeps no records");
        }

        @Override
        public boolean read(int blockId, MemorySegment out) {
            return false;
        }

        @Override
        public void releaseLateSlots(java.util.function.IntConsumer sink) {
        }

        @Override
        public void forget(int blockId) {
            lose(blockId);
        }
    }
}

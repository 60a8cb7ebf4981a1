package io.tierkv.core.cache;

import static io.tierkv.core.testing.TestCaches.appendWritten;
import static io.tierkv.core.testing.TestCaches.firstMismatch;
import static io.tierkv.core.testing.TestCaches.smallLayout;
import static io.tierkv.core.testing.TestCaches.tokens;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.core.KvLayout;
import io.tierkv.core.error.CapacityExhaustedException;
import io.tierkv.core.testing.CacheInvariants;
import io.tierkv.core.testing.Payloads;
import io.tierkv.core.testing.TestCaches;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The fault cases of ../shared/cases that concern the block model (single tier). */
class PagedKvCacheCasesTest {

    @RegisterExtension
    final CacheInvariants invariants = new CacheInvariants();

    private PagedKvCache cache(int blocks) {
        return TestCaches.singleTier(invariants, CacheOptions.of(smallLayout(16), blocks)
                .withAdmissionTimeoutNanos(1_000_000));
    }

    @Test
    void case02_sameBlockTwiceInOneReleaseIsRejectedWithoutStateChange() {
        PagedKvCache cache = cache(4);
        Sequence a = cache.openSequence(SequenceOptions.defaults());
        a.appendToken(7);
        int b = a.blockId(0);
        cache.acquireLease(b);
        assertEquals(2, cache.diagnostics().referenceCount(b));

        IllegalStateException e = assertThrows(IllegalStateException.class, () -> cache.releaseLeases(b, b));
        assertTrue(e.getMessage().contains("block " + b), e.getMessage());
        assertEquals(2, cache.diagnostics().referenceCount(b), "a rejected release changes nothing");
        invariants.check();

        cache.releaseLeases(b);
        assertEquals(1, cache.diagnostics().referenceCount(b));
        a.close();
        assertEquals(4, cache.diagnostics().availableBlocks(), "free count is 4, never 5");
        assertThrows(IllegalStateException.class, () -> cache.releaseLease(b), "release at count 0 throws");

        Set<Integer> ids = new HashSet<>();
        for (int i = 0; i < 4; i++) {
            Sequence s = cache.openSequence(SequenceOptions.defaults());
            s.appendToken(i);
            ids.add(s.blockId(0));
        }
        assertEquals(4, ids.size(), "four allocations, four distinct ids");
        Sequence fifth = cache.openSequence(SequenceOptions.defaults());
        CapacityExhaustedException full = assertThrows(CapacityExhaustedException.class, () -> fifth.appendToken(9));
        assertEquals(1, full.requestedBlocks());
        assertEquals(0, full.availableBlocks());
        assertEquals(0, fifth.length(), "a failed append leaves the sequence as it was");
    }

    @Test
    void case03_forkThenCopyOnWriteThenFreeBoth() {
        PagedKvCache cache = cache(16);
        KvLayout layout = cache.layout();
        Sequence a = cache.openSequence(SequenceOptions.defaults());
        appendWritten(a, 1, tokens(100, 40));
        assertEquals(2, a.sealedBlocks());
        int aTail = a.blockId(2);

        Sequence s = a.fork();
        assertEquals(2, cache.diagnostics().referenceCount(aTail));
        appendWritten(s, 2, 999);

        int sTail = s.blockId(2);
        assertNotEquals(aTail, sTail, "S got a private copy of the tail");
        assertEquals(1, cache.diagnostics().referenceCount(aTail));
        assertEquals(1, cache.stats().copiesOnWrite());
        for (int p = 32; p < 40; p++) {
            assertEquals(100 + p, s.tokenAt(p), "the copy keeps the 8 original tokens");
        }
        assertEquals(999, s.tokenAt(40));
        assertEquals(-1, firstMismatch(s, 1, 0, 40), "the copy holds A's bytes");
        assertEquals(41, s.length());
        assertEquals(40, a.length(), "A's tail keeps 8 tokens");
        try (BlockLease lease = a.lease(32, 40)) {
            MemorySegment tail = lease.block(0);
            MemorySegment k8 = tail.asSlice(layout.offsetOf(0, KvLayout.K, 8), layout.tokenVectorBytes());
            assertEquals(-1, k8.mismatch(MemorySegment.ofArray(new byte[layout.tokenVectorBytes()])),
                    "A's slot 8 stays unwritten");
        }
        assertEquals(-1, firstMismatch(a, 1, 0, 40));

        a.close();
        s.close();
        assertEquals(16, cache.diagnostics().availableBlocks(), "every block freed exactly once");
        assertEquals(2, cache.stats().cachedBlocks(), "the sealed prefix stays cached");
    }

    @Test
    void case04_promptLengthAnExactMultipleOfTheBlockSize() {
        PagedKvCache cache = cache(8);
        int[] t = tokens(500, 33);
        int[] t32 = java.util.Arrays.copyOf(t, 32);
        try (Sequence writer = cache.openSequence(SequenceOptions.defaults())) {
            appendWritten(writer, 5, t32);
        }
        try (Sequence s = cache.openSequence(SequenceOptions.defaults())) {
            assertEquals(32, s.matchPrefix(t32));
            assertEquals(2, s.blockCount(), "the table holds exactly the 2 matched blocks");
            assertEquals(-1, firstMismatch(s, 5, 0, 32));
        }
        try (Sequence s = cache.openSequence(SequenceOptions.defaults())) {
            assertEquals(16, s.matchPrefix(t32, t32.length - 1), "room left to compute the last token");
            appendWritten(s, 5, java.util.Arrays.copyOfRange(t32, 16, 32));
            assertEquals(32, s.length());
        }
        try (Sequence s = cache.openSequence(SequenceOptions.defaults())) {
            assertEquals(32, s.matchPrefix(t32), "the hash chain is intact: both blocks hit again");
        }
        try (Sequence s = cache.openSequence(SequenceOptions.defaults())) {
            assertEquals(16, s.matchPrefix(java.util.Arrays.copyOf(t, 31)), "31 tokens: one full block");
        }
        try (Sequence s = cache.openSequence(SequenceOptions.defaults())) {
            assertEquals(32, s.matchPrefix(t), "33 tokens: two full blocks");
            assertEquals(2, s.blockCount(), "no zero-length block allocated");
        }
        try (Sequence s = cache.openSequence(SequenceOptions.defaults())) {
            assertEquals(0, s.matchPrefix(new int[0]));
            assertEquals(0, s.blockCount());
        }
        assertEquals(8, cache.diagnostics().availableBlocks(), "free count returns to N");
    }

    @Test
    void case06_evictedBlockIsNotFindableUnderItsOldHash() {
        PagedKvCache cache = cache(2);
        int[] p = tokens(10, 16);
        int x;
        long[] hashP;
        try (Sequence s = cache.openSequence(SequenceOptions.defaults())) {
            appendWritten(s, 1, p);
            x = s.blockId(0);
            hashP = cache.diagnostics().blockHash(x);
        }
        assertEquals(x, cache.diagnostics().indexedBlock(hashP[0], hashP[1]));
        try (Sequence q = cache.openSequence(SequenceOptions.defaults())) {
            appendWritten(q, 2, tokens(7000, 32));
            assertEquals(1, cache.stats().evictions(), "x was evicted for Q");
            assertEquals(-1, cache.diagnostics().indexedBlock(hashP[0], hashP[1]), "the old hash no longer maps anywhere");
        }
        try (Sequence s = cache.openSequence(SequenceOptions.defaults())) {
            assertEquals(0, s.matchPrefix(p), "matching P now misses");
        }
    }

    @Test
    void case15_oneBlockHasExactlyOneCurrentKey() {
        PagedKvCache cache = cache(8);
        Sequence a = cache.openSequence(SequenceOptions.defaults());
        appendWritten(a, 3, tokens(1, 10));
        assertEquals(0, cache.stats().indexedBlocks(), "a partial block has no key");
        appendWritten(a, 3, tokens(11, 6));
        assertEquals(1, cache.stats().indexedBlocks());
        int id = a.blockId(0);
        long[] key = cache.diagnostics().blockHash(id);
        for (int i = 0; i < 3; i++) { // sealing is idempotent: no key reappears or changes
            a.close();
            assertEquals(1, cache.stats().indexedBlocks());
            assertEquals(id, cache.diagnostics().indexedBlock(key[0], key[1]));
        }
        Sequence b = cache.openSequence(SequenceOptions.defaults());
        assertEquals(16, b.matchPrefix(tokens(1, 16)));
        appendWritten(b, 3, tokens(17, 5));
        assertEquals(1, cache.stats().indexedBlocks(), "index entries equal keyed blocks");
        b.close();
    }

    @Test
    void case16_aSharedPartialTailNeedsCopyOnWrite() {
        PagedKvCache cache = cache(8);
        KvLayout layout = cache.layout();
        Sequence a = cache.openSequence(SequenceOptions.defaults());
        appendWritten(a, 1, tokens(0, 20));
        Sequence s = a.fork();
        int shared = a.blockId(1);
        assertEquals(2, cache.diagnostics().referenceCount(shared));

        appendWritten(a, 1, 4242); // x
        assertEquals(1, cache.diagnostics().referenceCount(shared), "A moved to its own copy");
        assertEquals(1, cache.diagnostics().referenceCount(a.blockId(1)));
        appendWritten(s, 2, 3131); // y
        assertEquals(shared, s.blockId(1), "S writes the original, now unshared");
        assertEquals(4242, a.tokenAt(20));
        assertEquals(3131, s.tokenAt(20));
        assertEquals(-1, firstMismatch(a, 1, 0, 21));
        assertEquals(-1, firstMismatch(s, 1, 0, 20));
        assertEquals(-1, firstMismatch(s, 2, 20, 21));
        invariants.check();

        a.close();
        s.close();
        assertEquals(8, cache.diagnostics().availableBlocks());
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment k = arena.allocate(layout.tokenVectorBytes());
            Payloads.fill(k, layout, 1, 0, 0, 0);
            assertTrue(Payloads.matches(k, layout, 1, 0, 0, 0));
        }
    }
}

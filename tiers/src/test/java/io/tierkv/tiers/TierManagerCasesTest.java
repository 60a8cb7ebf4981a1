package io.tierkv.tiers;

import static io.tierkv.core.testing.TestCaches.appendWritten;
import static io.tierkv.core.testing.TestCaches.firstMismatch;
import static io.tierkv.core.testing.TestCaches.tokens;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.core.KvLayout;
import io.tierkv.core.cache.BlockLease;
import io.tierkv.core.cache.PagedKvCache;
import io.tierkv.core.cache.Sequence;
import io.tierkv.core.cache.SequenceOptions;
import io.tierkv.core.error.CapacityExhaustedException;
import io.tierkv.core.testing.CacheInvariants;
import io.tierkv.core.testing.Payloads;
import io.tierkv.core.testing.TestCaches;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The fault cases of ../shared/cases that concern the tier manager (device and host). */
class TierManagerCasesTest {

    @RegisterExtension
    final CacheInvariants invariants = new CacheInvariants();

    private static Sequence sealedSequence(KvBlockManager kv, long key, int firstToken) {
        Sequence s = kv.openSequence(SequenceOptions.defaults());
        appendWritten(s, key, tokens(firstToken, 16));
        return s;
    }

    /** Leases a block (promoting it if it is below) and releases it. */
    private static void touch(PagedKvCache cache, int blockId) {
        cache.acquireLease(blockId);
        cache.releaseLease(blockId);
    }

    @Test
    void case07_demotionWaitsForSealedWrites() throws Exception {
        KvBlockManager kv = Managers.build(invariants, 2, 4, null);
        KvLayout layout = kv.layout();
        long seed = System.nanoTime();
        Random rnd = new Random(seed);
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong demotedEarly = new AtomicLong();
        Thread demoter = Thread.ofPlatform().start(() -> {
            while (!stop.get()) {
                kv.demote(Integer.MAX_VALUE);
            }
        });
        Arena arena = Arena.ofConfined();
        MemorySegment expected = arena.allocate(layout.bytesPerBlock());
        MemorySegment actual = arena.allocate(layout.bytesPerBlock());
        int demotedCopiesChecked = 0;
        try {
            for (int run = 0; run < 10_000; run++) {
                try (Sequence s = kv.openSequence(SequenceOptions.defaults())) {
                    MemorySegment k = MemorySegment.ofArray(new byte[layout.tokenVectorBytes()]);
                    MemorySegment v = MemorySegment.ofArray(new byte[layout.tokenVectorBytes()]);
                    for (int p = 0; p < 16; p++) {
                        s.appendToken(run * 16 + p);
                        for (int l = 0; l < layout.layers(); l++) {
                            Payloads.fill(k, layout, run, p, l, 0);
                            Payloads.fill(v, layout, run, p, l, 1);
                            s.write(l, p, k, v);
                            for (int spin = rnd.nextInt(50); spin > 0; spin--) {
                                Thread.onSpinWait();
                            }
                            if (p < 15 && !kv.cache().diagnostics().isOnDevice(s.blockId(0))) {
                                demotedEarly.incrementAndGet();
                            }
                        }
                    }
                    // The copy where the block lies now (the demoted host copy once it left the
                    // device): its CRC32C equals the final written bytes' checksum.
                    boolean below = !kv.cache().diagnostics().isOnDevice(s.blockId(0));
                    s.readBlock(0, actual);
                    assertEquals(crc32c(TestCaches.blockImage(expected, layout, run, 0)), crc32c(actual),
                            "run " + run + " seed " + seed + (below ? ": demoted copy" : ": device copy"));
                    if (below) {
                        demotedCopiesChecked++;
                    }
                    assertEquals(-1, firstMismatch(s, run, 0, 16), "run " + run + " seed " + seed);
                }
            }
        } finally {
            stop.set(true);
            demoter.join();
            arena.close();
        }
        assertEquals(0, demotedEarly.get(), "an unsealed block was demoted (seed " + seed + ")");
        assertTrue(demotedCopiesChecked > 0, "some demoted copies were checked");
        assertTrue(kv.stats().demotions().blocks() > 0, "the demoter did demote sealed blocks");
    }

    @Test
    void case08_promotionWaitsForAReaderToReleaseTheSlot() {
        KvBlockManager kv = Managers.build(invariants, 1, 2, null);
        PagedKvCache cache = kv.cache();
        int[] cTokens = tokens(5000, 16);
        try (Sequence c = kv.openSequence(SequenceOptions.defaults())) {
            appendWritten(c, 77, cTokens);
        }
        assertEquals(1, kv.demote(1), "C's block goes to the host");
        Sequence a = sealedSequence(kv, 11, 0);
        int d = a.blockId(0);
        MemorySegment readerView = cache.acquireLease(d);
        a.close();
        try (Sequence c2 = kv.openSequence(SequenceOptions.defaults())) {
            assertEquals(16, c2.matchPrefix(cTokens));
            assertThrows(CapacityExhaustedException.class, () -> c2.lease(0, 16), "back-pressure, not reuse");
            assertTrue(Payloads.matches(readerView.asSlice(0, 32), kv.layout(), 11, 0, 0, 0), "R still reads A");
            cache.releaseLease(d);
            try (BlockLease lease = c2.lease(0, 16)) {
                assertTrue(Payloads.matches(lease.block(0).asSlice(0, 32), kv.layout(), 77, 0, 0, 0));
            }
            assertEquals(-1, firstMismatch(c2, 77, 0, 16));
        }
    }

    @Test
    void case09_blockIdAndSlotStayApartAcrossTierMoves() {
        KvBlockManager kv = Managers.build(invariants, 4, 4, null);
        PagedKvCache cache = kv.cache();
        List<Sequence> seqs = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            seqs.add(sealedSequence(kv, 100 + i, 1000 * i));
        }
        Sequence a = seqs.get(0);
        Sequence b = seqs.get(1);
        assertTrue(cache.tierControl().demoteBlock(a.blockId(0)));
        assertOwnPatterns(kv, seqs, "demote A");
        assertTrue(cache.tierControl().demoteBlock(b.blockId(0)));
        assertOwnPatterns(kv, seqs, "demote B");
        touch(cache, a.blockId(0)); // promote A
        assertTrue(cache.diagnostics().isOnDevice(a.blockId(0)));
        assertOwnPatterns(kv, seqs, "promote A");
        seqs.add(sealedSequence(kv, 104, 4000));
        assertOwnPatterns(kv, seqs, "allocate E");
        touch(cache, b.blockId(0)); // promote B, forcing a demotion
        assertTrue(cache.diagnostics().isOnDevice(b.blockId(0)));
        // The checks' reads count as accesses, so the block that leaves may be A, whose clean host
        // copy makes its leaving a drop of the top copy rather than a copy down.
        TierStats st = kv.stats();
        assertEquals(3, st.demotions().blocks() + st.cache().cleanDrops(), "A, B, then one more left the device");
        assertOwnPatterns(kv, seqs, "promote B");
    }

    private static int crc32c(MemorySegment block) {
        CRC32C crc = new CRC32C();
        crc.update(block.asByteBuffer());
        return (int) crc.getValue();
    }

    /**
     * Case 09's check after every step: the slot invariants (every slot below its tier's
     * capacity, no two blocks on one slot), then each sequence's block read where it lies
     * ({@code readBlock} moves nothing) equals its own pattern (sequence i has key 100 + i).
     */
    private void assertOwnPatterns(KvBlockManager kv, List<Sequence> seqs, String step) {
        invariants.check();
        KvLayout layout = kv.layout();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment expected = arena.allocate(layout.bytesPerBlock());
            MemorySegment actual = arena.allocate(layout.bytesPerBlock());
            for (int i = 0; i < seqs.size(); i++) {
                TestCaches.blockImage(expected, layout, 100 + i, 0);
                seqs.get(i).readBlock(0, actual);
                assertEquals(-1, actual.mismatch(expected), "after " + step + ": sequence " + i + " reads its own pattern");
            }
        }
    }

    @Test
    void case11_perTierCountersNeverDrift() {
        KvBlockManager kv = Managers.build(invariants, 4, 4, null);
        PagedKvCache cache = kv.cache();
        for (int i = 0; i < 4; i++) {
            sealedSequence(kv, i, 100 * i).close();
        }
        List<Sequence> open = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            open.add(sealedSequence(kv, 10 + i, 10_000 + 100 * i));
        }
        assertEquals(4, kv.stats().demotions().blocks(), "four demotions on allocate");
        invariants.check();
        long seed = 11;
        Random rnd = new Random(seed);
        for (int step = 0; step < 10_000; step++) {
            int op = rnd.nextInt(5);
            try {
                switch (op) {
                    case 0 -> open.add(sealedSequence(kv, 50 + rnd.nextInt(8), 100 * rnd.nextInt(8)));
                    case 1 -> {
                        if (!open.isEmpty()) {
                            open.remove(rnd.nextInt(open.size())).close();
                        }
                    }
                    case 2 -> kv.demote(rnd.nextInt(3));
                    case 3 -> {
                        if (!open.isEmpty()) {
                            Sequence s = open.get(rnd.nextInt(open.size()));
                            touch(cache, s.blockId(0));
                        }
                    }
                    default -> {
                        try (Sequence s = kv.openSequence(SequenceOptions.defaults())) {
                            s.matchPrefix(tokens(100 * rnd.nextInt(8), 16));
                        }
                    }
                }
            } catch (CapacityExhaustedException expected) {
                // back-pressure under tiny tiers is an allowed outcome; the checks below still run
            }
            List<String> bad = kv.checkInvariants();
            assertEquals(List.of(), bad, "step " + step + " op " + op + " seed " + seed);
        }
        open.forEach(Sequence::close);
    }

    @Test
    void case12_hostEvictionTakesExactlyWhatWasAsked() {
        KvBlockManager kv = Managers.build(invariants, 2, 10, null);
        int[] ids = new int[10];
        for (int i = 0; i < 10; i++) {
            try (Sequence s = sealedSequence(kv, i, 100 * i)) {
                ids[i] = s.blockId(0);
            }
            assertTrue(kv.cache().tierControl().demoteBlock(ids[i]));
        }
        assertEquals(10, kv.stats().hostUsedBlocks());
        assertEquals(2, kv.evictHost(2));
        assertEquals(2, kv.stats().hostEvictions());
        assertEquals(8, kv.stats().cache().liveBlocks(), "the cache freed the evicted ids as it settled the host's notes");
        assertEquals(2, kv.stats().cache().evictions());
        for (int i = 0; i < 10; i++) {
            try (Sequence s = kv.openSequence(SequenceOptions.defaults())) {
                assertEquals(i < 2 ? 0 : 16, s.matchPrefix(tokens(100 * i, 16)), "block " + i);
            }
        }
        assertEquals(0, kv.evictHost(0));
        assertEquals(8, kv.evictHost(100));
        assertEquals(10, kv.stats().hostEvictions());
        assertEquals(0, kv.stats().hostUsedBlocks());
    }

    @Test
    void case13_demotionIntoAFullTierIsNeverReportedAsSuccess() {
        KvBlockManager kv = Managers.build(invariants, 2, 1, null);
        PagedKvCache cache = kv.cache();
        Sequence holder = sealedSequence(kv, 1, 0);
        assertTrue(cache.tierControl().demoteBlock(holder.blockId(0)), "the only host slot holds a referenced block");
        int x;
        long[] hashX;
        try (Sequence s = sealedSequence(kv, 2, 100)) {
            x = s.blockId(0);
            hashX = cache.diagnostics().blockHash(x);
        }
        Sequence other = sealedSequence(kv, 3, 200);
        Sequence third = sealedSequence(kv, 4, 300); // forces X off the device; the host is full
        assertEquals(-1, cache.diagnostics().indexedBlock(hashX[0], hashX[1]), "X was dropped from the index: a clean miss");
        assertEquals(1, kv.stats().hostUsedBlocks(), "X was never recorded on the host");
        assertTrue(kv.stats().hostAllocationFailures() >= 1);
        assertTrue(kv.stats().cache().failedDemotions() >= 1);
        try (Sequence s = kv.openSequence(SequenceOptions.defaults())) {
            assertEquals(0, s.matchPrefix(tokens(100, 16)));
        }
        // A referenced X stays on the device and the allocation gets back-pressure.
        assertThrows(CapacityExhaustedException.class, () -> sealedSequence(kv, 5, 400));
        assertTrue(cache.diagnostics().isOnDevice(other.blockId(0)));
        assertTrue(cache.diagnostics().isOnDevice(third.blockId(0)));
        assertEquals(-1, firstMismatch(other, 3, 0, 16));
        assertThrows(CapacityExhaustedException.class, () -> firstMismatch(holder, 1, 0, 16),
                "promoting the host block needs a device slot: back-pressure while both are referenced");
        third.close();
        assertEquals(-1, firstMismatch(holder, 1, 0, 16), "once a device block is unreferenced, it returns");
        holder.close();
        other.close();
    }
}

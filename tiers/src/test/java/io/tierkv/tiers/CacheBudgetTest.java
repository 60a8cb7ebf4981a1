package io.tierkv.tiers;

import static io.tierkv.core.testing.TestCaches.appendWritten;
import static io.tierkv.core.testing.TestCaches.blockImage;
import static io.tierkv.core.testing.TestCaches.firstMismatch;
import static io.tierkv.core.testing.TestCaches.tokens;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.core.budget.Budgets;
import io.tierkv.core.cache.BlockLease;
import io.tierkv.core.cache.PagedKvCache;
import io.tierkv.core.cache.Sequence;
import io.tierkv.core.cache.SequenceOptions;
import io.tierkv.core.error.BudgetExceededException;
import io.tierkv.core.testing.CacheInvariants;
import io.tierkv.tiers.disk.DiskOptions;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** Per-cache budgets per tier (device, host, transfer, disk), enforced when a sequence takes a new block. */
class CacheBudgetTest {

    @RegisterExtension
    final CacheInvariants invariants = new CacheInvariants();

    @TempDir
    Path dir;

    private final long bb = Managers.LAYOUT.bytesPerBlock();

    private DiskOptions disk() {
        return DiskOptions.at(dir.resolve("kv")).withSegmentBytes(64 << 10).withBudgetBytes(1 << 20);
    }

    private SequenceOptions budgets(String salt, long deviceBlocks, long hostBlocks, long diskBytes) {
        return SequenceOptions.salt(salt).withBudgets(new Budgets(deviceBlocks * bb, hostBlocks * bb, bb, diskBytes));
    }

    private static void assertOnDevice(PagedKvCache cache, Sequence s, boolean... expected) {
        for (int i = 0; i < expected.length; i++) {
            assertEquals(expected[i], cache.diagnostics().isOnDevice(s.blockId(i)), "block index " + i);
        }
    }

    @Test
    void aDeviceBudgetDemotesTheSequencesOwnOldestBlocks() {
        KvBlockManager kv = Managers.build(invariants, 8, 16, null);
        Sequence s = kv.openSequence(budgets("a", 2, 16, 1L << 30));
        appendWritten(s, 1, tokens(0, 16 * 5));
        assertOnDevice(kv.cache(), s, false, false, false, true, true);
        TierStats st = kv.stats();
        assertEquals(3, st.cache().budgetDemotions());
        assertEquals(3, st.demotions().blocks());
        assertEquals(3 * bb, st.demotions().bytes());
        assertEquals(2, kv.cache().diagnostics().deviceUsedBlocks(), "the pool had room; only the budget moved blocks");
        assertEquals(3, kv.stats().hostUsedBlocks());
        assertEquals(-1, firstMismatch(s, 1, 0, 16 * 5));
        s.close();
    }

    @Test
    void wholeBlockAppendsKeepTheSameDeviceBudgetAsTokenAppends() {
        KvBlockManager kv = Managers.build(invariants, 8, 16, null);
        Sequence s = kv.openSequence(budgets("a", 2, 16, 1L << 30));
        int[] ids = tokens(0, 16 * 5);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment image = arena.allocate(bb);
            for (int i = 0; i < 5; i++) {
                assertEquals(16 * i, s.appendBlock(ids, 16 * i, blockImage(image, Managers.LAYOUT, 1, 16 * i)));
            }
        }
        assertOnDevice(kv.cache(), s, false, false, false, true, true);
        assertEquals(3, kv.stats().cache().budgetDemotions());
        assertEquals(2, kv.cache().diagnostics().deviceUsedBlocks(), "the pool had room; only the budget moved blocks");
        assertEquals(-1, firstMismatch(s, 1, 0, 16 * 5), "nothing stored is lost");
        s.close();
    }

    @Test
    void aDeviceBudgetWithNothingMovableThrowsAndLosesNothing() {
        KvBlockManager kv = Managers.build(invariants, 8, 16, null);
        Sequence s = kv.openSequence(budgets("a", 2, 16, 1L << 30));
        appendWritten(s, 1, tokens(0, 16 * 2));
        try (BlockLease lease = s.lease(0, 32)) { // both blocks pinned on the device
            BudgetExceededException e = assertThrows(BudgetExceededException.class, () -> s.appendToken(99));
            assertEquals("cache[a].deviceBytes budget exceeded: requested " + bb + " B with " + 2 * bb + " B used of "
                    + 2 * bb + " B", e.getMessage());
            assertEquals("cache[a].deviceBytes", e.budget());
            assertEquals(2 * bb, e.budgetBytes());
            assertEquals(-1, firstMismatch(s, 1, 0, 32));
        }
        assertEquals(32, s.length(), "the refused token was not appended");
        assertEquals(2, s.blockCount());
        appendWritten(s, 1, tokens(32, 16)); // released: the oldest block makes room now
        assertOnDevice(kv.cache(), s, false, true, true);
        assertEquals(-1, firstMismatch(s, 1, 0, 48));
        s.close();
    }

    @Test
    void aHostBudgetSpillsTheSequencesOwnOldestHostBlocksToDisk() {
        KvBlockManager kv = Managers.build(invariants, 8, 16, disk());
        Sequence s = kv.openSequence(budgets("b", 2, 2, 1 << 20));
        appendWritten(s, 2, tokens(0, 16 * 6)); // device 2, host 2, disk 2
        TierStats st = kv.stats();
        assertEquals(4, st.cache().budgetDemotions());
        assertEquals(2, st.cache().budgetSpills());
        assertEquals(0, st.cache().budgetRefusedSpills());
        assertEquals(2, st.diskSpills().blocks());
        assertEquals(2 * bb, st.diskSpills().bytes());
        assertEquals(2, st.hostUsedBlocks());
        assertEquals(2, kv.cache().diagnostics().deviceUsedBlocks());
        assertEquals(-1, firstMismatch(s, 2, 0, 16 * 6), "every byte back from disk, host and device");
        s.close();
    }

    @Test
    void aHostBudgetWithNowhereToSpillThrowsAndLosesNothing() {
        KvBlockManager kv = Managers.build(invariants, 8, 16, null);
        Sequence s = kv.openSequence(budgets("c", 2, 1, 1L << 30));
        appendWritten(s, 3, tokens(0, 16 * 3)); // device 2, host 1
        BudgetExceededException e = assertThrows(BudgetExceededException.class, () -> s.appendToken(7));
        assertEquals("cache[c].hostBytes budget exceeded: requested " + bb + " B with " + bb + " B used of " + bb
                + " B", e.getMessage());
        assertEquals(1, kv.stats().cache().budgetRefusedSpills(), "no disk tier refused the spill");
        assertEquals(48, s.length());
        assertEquals(-1, firstMismatch(s, 3, 0, 48));
        s.close();
    }

    @Test
    void aDiskBudgetRefusesTheSpillThatWouldExceedIt() {
        KvBlockManager kv = Managers.build(invariants, 8, 16, disk());
        Sequence s = kv.openSequence(budgets("d", 2, 1, bb));
        appendWritten(s, 4, tokens(0, 16 * 4)); // device 2, host 1, disk 1
        assertEquals(1, kv.stats().cache().budgetSpills());
        BudgetExceededException e = assertThrows(BudgetExceededException.class, () -> s.appendToken(7));
        assertEquals("cache[d].diskBytes budget exceeded: requested " + bb + " B with " + bb + " B used of " + bb
                + " B", e.getMessage());
        TierStats st = kv.stats();
        assertEquals(1, st.cache().budgetRefusedSpills());
        assertEquals(1, st.diskSpills().blocks(), "the refused spill wrote nothing");
        assertEquals(64, s.length());
        assertEquals(-1, firstMismatch(s, 4, 0, 64));
        s.close();
    }

    @Test
    void aSharedPrefixCountsForEverySequenceReferencingIt() {
        KvBlockManager kv = Managers.build(invariants, 8, 16, null);
        Sequence a = kv.openSequence(budgets("t", 2, 16, 1L << 30));
        appendWritten(a, 5, tokens(0, 32));
        Sequence b = kv.openSequence(budgets("t", 2, 16, 1L << 30));
        assertEquals(32, b.matchPrefix(tokens(0, 32)));
        assertEquals(0, kv.stats().cache().budgetDemotions());
        appendWritten(b, 6, tokens(32, 16)); // b holds 2 shared blocks on the device: its new block needs room
        assertEquals(1, kv.stats().cache().budgetDemotions());
        assertFalse(kv.cache().diagnostics().isOnDevice(a.blockId(0)), "the shared block left the device for both");
        appendWritten(a, 7, tokens(32, 16)); // a's share is now 1 on the device: no demotion
        assertEquals(1, kv.stats().cache().budgetDemotions());
        assertOnDevice(kv.cache(), a, false, true, true);
        assertEquals(-1, firstMismatch(a, 5, 0, 32));
        assertEquals(-1, firstMismatch(a, 7, 32, 48));
        assertEquals(-1, firstMismatch(b, 5, 0, 32));
        assertEquals(-1, firstMismatch(b, 6, 32, 48));
        a.close();
        b.close();
    }

    @Test
    void perCacheBudgetsAreValidatedAgainstTheManagersPool() {
        KvBlockManager kv = Managers.build(invariants, 8, 16, null);
        assertEquals(new Budgets(8 * bb, 16 * bb, bb, Budgets.MAX_BYTES), kv.budgets());
        assertEquals("cache[v].deviceBytes: " + 9 * bb + " (expected <= pool.deviceBytes " + 8 * bb + ")",
                assertThrows(IllegalArgumentException.class, () -> kv.openSequence(budgets("v", 9, 1, bb)))
                        .getMessage());
        assertEquals("cache[v].hostBytes: " + 17 * bb + " (expected <= pool.hostBytes " + 16 * bb + ")",
                assertThrows(IllegalArgumentException.class, () -> kv.openSequence(budgets("v", 2, 17, bb)))
                        .getMessage());
        assertEquals("cache[v].transferBytes: " + 2 * bb + " (expected <= pool.transferBytes " + bb + ")",
                assertThrows(IllegalArgumentException.class, () -> kv.openSequence(SequenceOptions.salt("v")
                        .withBudgets(new Budgets(bb, bb, 2 * bb, bb)))).getMessage());
        assertEquals("cache[v].deviceBytes: 100 (expected >= (recentDeviceBlocks + 1) x bytesPerBlock " + bb
                + ": the tail and the recent blocks stay on the device)",
                assertThrows(IllegalArgumentException.class, () -> kv.openSequence(SequenceOptions.salt("v")
                        .withBudgets(new Budgets(100, bb, bb, bb)))).getMessage());
        assertEquals("cache[v].diskBytes: 100 (expected >= bytesPerBlock " + bb + ")",
                assertThrows(IllegalArgumentException.class, () -> kv.openSequence(SequenceOptions.salt("v")
                        .withBudgets(new Budgets(bb, bb, bb, 100)))).getMessage());
        assertEquals("hostBytes: 0 (expected 0 < hostBytes <= " + Budgets.MAX_BYTES + ")",
                assertThrows(IllegalArgumentException.class, () -> new Budgets(bb, 0, bb, bb)).getMessage());
        assertEquals(0, kv.stats().cache().liveBlocks(), "refused sequences took nothing");
    }

    @Test
    void aTransferBudgetBoundsReadAhead() {
        KvBlockManager kv = Managers.build(invariants, 8, 16, null);
        Sequence s = kv.openSequence(budgets("r", 2, 16, 1L << 30));
        appendWritten(s, 8, tokens(0, 16 * 4));
        BudgetExceededException e = assertThrows(BudgetExceededException.class, () -> kv.stream(s, 0, 2));
        assertEquals("cache[r].transferBytes budget exceeded: requested " + 2 * bb + " B with 0 B used of " + bb
                + " B", e.getMessage());
        int blocks = 0;
        try (BlockStream stream = kv.stream(s, 0, 1)) { // one block in flight fits
            while (stream.hasNext()) {
                stream.next();
                blocks++;
            }
        }
        assertEquals(4, blocks);
        assertTrue(kv.stats().promotions().blocks() >= 2, "the demoted blocks came back up to be read");
        s.close();
    }
}

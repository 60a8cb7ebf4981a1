package io.tierkv.tiers;

import static io.tierkv.core.testing.TestCaches.appendWritten;
import static io.tierkv.core.testing.TestCaches.firstMismatch;
import static io.tierkv.core.testing.TestCaches.tokens;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.core.budget.Budgets;
import io.tierkv.core.cache.Sequence;
import io.tierkv.core.cache.SequenceOptions;
import io.tierkv.core.testing.CacheInvariants;
import io.tierkv.tiers.disk.DiskOptions;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A sequence's device budget demotes its own oldest block as it appends; when the host is full,
 * that demotion spills a host victim for room, which releases the lock for the write. Before (a
 * review found it), the budget reached the demotion through the public {@code demoteBlock}, a
 * second hold of the lock: the spill's release did not release it (an assertion failed under
 * {@code -ea}; without it the disk write ran under the lock), the victim stayed MOVING and the
 * append threw {@code IllegalMonitorStateException}.
 */
class BudgetDemotionRoomTest {

    @RegisterExtension
    final CacheInvariants invariants = new CacheInvariants();

    @TempDir
    Path dir;

    @Test
    void aBudgetDemotionIntoAFullHostSpillsAVictimForRoom() {
        long bb = Managers.LAYOUT.bytesPerBlock();
        KvBlockManager kv = Managers.build(invariants, 8, 2, DiskOptions.at(dir.resolve("kv")));
        for (int i = 0; i < 2; i++) {
            int id;
            try (Sequence s = kv.openSequence(SequenceOptions.defaults())) {
                appendWritten(s, 10 + i, tokens(1000 + 100 * i, 16));
                id = s.blockId(0);
            }
            assertTrue(kv.cache().tierControl().demoteBlock(id));
        }
        assertEquals(2, kv.stats().hostUsedBlocks(), "the host is full");
        Budgets oneDeviceBlock = new Budgets(bb, 2 * bb, bb, 1L << 20);
        try (Sequence s = kv.openSequence(SequenceOptions.salt("a").withBudgets(oneDeviceBlock))) {
            appendWritten(s, 1, tokens(0, 16 * 3));
            assertEquals(-1, firstMismatch(s, 1, 0, 16 * 3), "every block reads back");
        }
        assertTrue(kv.stats().cache().budgetDemotions() >= 2, "the budget demoted: " + kv.stats().cache().budgetDemotions());
        assertTrue(kv.stats().diskSpills().blocks() >= 1, "a host victim spilled for room");
    }
}

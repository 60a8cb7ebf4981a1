package io.tierkv.tiers;

import static io.tierkv.core.testing.TestCaches.appendWritten;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.tierkv.core.cache.Sequence;
import io.tierkv.core.cache.SequenceOptions;
import io.tierkv.core.testing.CacheInvariants;
import io.tierkv.tiers.disk.DiskOptions;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the cache settles below is bookkeeping, not a mover's work: a cycle that only settled
 * reports none, so the mover backs off. Found by the one-pass re-measure of issue 13: a tiered get
 * (match a block held on disk alone, read it, close) leaves its adopted id to settle, and a mover
 * that counted that as work woke every 50 us to take the cache lock from the serving thread
 * (`TieredPutGetBenchmark.tierkvGet` with one mover at 0.85-0.87 of the code before issue 13; the
 * same after this). Failed before: the cycle reported 1.
 */
class MoverBackOffTest {

    private static final int B = 16;

    @RegisterExtension
    final CacheInvariants invariants = new CacheInvariants();

    @TempDir
    Path dir;

    @Test
    void aCycleThatOnlySettledReportsNoWork() {
        KvBlockManager kv = Managers.build(invariants, KvBlockManager.builder(Managers.LAYOUT).promoteOnMatch(false),
                4, 1, DiskOptions.at(dir.resolve("kv"))); // a match queues no read-ahead: the mover has no move to make
        int[] prompt = new int[B];
        for (int i = 0; i < B; i++) {
            prompt[i] = 500 + i;
        }
        int id;
        try (Sequence s = kv.openSequence(SequenceOptions.salt("a"))) {
            appendWritten(s, 7, prompt);
            id = s.blockId(0);
        }
        assertEquals(true, kv.demoteBlock(id), "demoted");
        assertEquals(1, kv.evictHost(1), "spilled to disk");
        kv.runMoverCycle();
        assertEquals(0, kv.stats().cache().liveBlocks(), "the spilled id is retired: the record holds the block");
        try (Sequence s = kv.openSequence(SequenceOptions.salt("a"))) {
            assertEquals(B, s.matchPrefix(prompt), "the disk record adopted by a match");
        }
        assertEquals(1, kv.stats().cache().liveBlocks(), "the adopted id, left to settle after the close");
        assertEquals(0, kv.runMoverCycle(), "settling alone is no work");
        assertEquals(0, kv.stats().cache().liveBlocks(), "the cycle settled it all the same");
    }
}

package io.tierkv.tiers;

import static io.tierkv.core.testing.TestCaches.appendWritten;
import static io.tierkv.core.testing.TestCaches.tokens;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.core.cache.CacheStats;
import io.tierkv.core.cache.Sequence;
import io.tierkv.core.cache.SequenceOptions;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A block the index still holds whose only copy below went before the cache settled it (a disk
 * record evicted or removed; the cache learns of it later) is a miss where it is matched: the
 * block is freed. With a store below that fetches ahead, the round being matched may hold a copy
 * of exactly that block; the match now looks again and adopts it. Before, it stopped there, and
 * every block the round fetched after it was fetched for nothing (in a replay with 2 MiB of disk,
 * 1 MiB of host and a Redis store, 27,353 of 59,219 blocks fetched, in 420 of 872 rounds).
 */
class FetchAheadGoneBelowTest {

    @TempDir
    Path dir;

    @Test
    void aBlockWhoseRecordWentIsAdoptedFromTheFetchedRound() {
        try (HostDiskStack stack = new HostDiskStack(dir.resolve("kv"), HookedLower::fetching)) {
            HookedLower lower = (HookedLower) stack.lower;
            int[] ids = twoBlocksOnDiskAlone(stack);
            for (int id : ids) { // the records go, and the cache is not told: both stay indexed
                long[] hash = stack.cache.diagnostics().blockHash(id);
                assertTrue(stack.disk.remove(hash[0], hash[1]), "record of block " + id + " removed");
            }
            lower.duringFetch = () -> { }; // the store holds the chain: every block asked for comes
            CacheStats before = stack.cache.stats();
            try (Sequence probe = stack.cache.openSequence(SequenceOptions.defaults())) {
                assertEquals(32, probe.matchPrefix(tokens(0, 32)), "both blocks, from the fetched round"); // 16 before
                assertNull(lower.duringFetch, "the fetch ran");
            }
            CacheStats after = stack.cache.stats();
            assertEquals(2, after.prefixHitBlocks() - before.prefixHitBlocks(), "both blocks hits");
            assertEquals(1, after.prefixMissBlocks() - before.prefixMissBlocks(), "the local match's miss at block 0");
            assertEquals(List.of(), stack.cache.checkInvariants());
            assertEquals(List.of(), stack.host.checkInvariants());
        }
    }

    /**
     * The same with the blocks referenced by another sequence while their pinned records go: they
     * are lost for that sequence (its next lease fails), and the match adopts the fetched copies
     * under fresh ids beside them; the lost ones are freed when that sequence lets go, and a later
     * match finds the adopted ones locally.
     */
    @Test
    void aReferencedBlockWhoseRecordWentIsAdoptedBesideTheLostOne() {
        try (HostDiskStack stack = new HostDiskStack(dir.resolve("kv"), HookedLower::fetching)) {
            HookedLower lower = (HookedLower) stack.lower;
            Sequence holder = stack.cache.openSequence(SequenceOptions.defaults());
            appendWritten(holder, 7, tokens(0, 32));
            int[] held = {holder.blockId(0), holder.blockId(1)};
            demoteAndSpill(stack, held); // referenced: the records are pinned
            for (int id : held) {
                long[] hash = stack.cache.diagnostics().blockHash(id);
                assertTrue(stack.disk.remove(hash[0], hash[1]), "record of block " + id + " removed");
            }
            lower.duringFetch = () -> { };
            long lostBefore = stack.cache.stats().lostBlocks();
            try (Sequence probe = stack.cache.openSequence(SequenceOptions.defaults())) {
                assertEquals(32, probe.matchPrefix(tokens(0, 32)), "both blocks, from the fetched round"); // 16 before
                for (int i = 0; i < 2; i++) {
                    assertNotEquals(held[i], probe.blockId(i), "block " + i + ": a fresh id beside the lost one");
                }
                assertEquals(2, stack.cache.stats().lostBlocks() - lostBefore, "the holder's two blocks lost");
                assertEquals(List.of(), stack.cache.checkInvariants());
                holder.close();
                assertEquals(List.of(), stack.cache.checkInvariants(), "after the lost blocks were let go");
            }
            try (Sequence again = stack.cache.openSequence(SequenceOptions.defaults())) {
                assertEquals(32, again.matchPrefix(tokens(0, 32)), "the adopted blocks, found locally");
            }
            assertEquals(List.of(), stack.cache.checkInvariants());
            assertEquals(List.of(), stack.host.checkInvariants());
        }
    }

    /**
     * Writes two blocks (tokens 0..31, pattern 7), then makes them cached blocks (indexed,
     * referenced by nobody) held only by unpinned disk records: referenced while they are demoted
     * and spilled (so their ids are kept), then released.
     */
    private static int[] twoBlocksOnDiskAlone(HostDiskStack stack) {
        int[] ids = new int[2];
        try (Sequence first = stack.cache.openSequence(SequenceOptions.defaults())) {
            appendWritten(first, 7, tokens(0, 32));
            ids[0] = first.blockId(0);
            ids[1] = first.blockId(1);
        }
        try (Sequence holder = stack.cache.openSequence(SequenceOptions.defaults())) {
            assertEquals(32, holder.matchPrefix(tokens(0, 48)));
            demoteAndSpill(stack, ids);
        }
        return ids;
    }

    /** Demotes the blocks to the host, then spills them to disk (each record pinned while the block is referenced). */
    private static void demoteAndSpill(HostDiskStack stack, int... ids) {
        for (int id : ids) {
            assertTrue(stack.cache.tierControl().demoteBlock(id), "block " + id + " demoted");
        }
        List<Integer> queued = new ArrayList<>();
        assertEquals(ids.length, stack.cache.tierControl().queueSpills(ids.length, queued::add), "all queued to spill");
        for (int id : queued) {
            assertTrue(stack.cache.tierControl().spillQueued(id), "block " + id + " spilled");
        }
    }
}

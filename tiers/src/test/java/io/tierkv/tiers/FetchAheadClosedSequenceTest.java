package io.tierkv.tiers;

import static io.tierkv.core.testing.TestCaches.appendWritten;
import static io.tierkv.core.testing.TestCaches.tokens;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.core.cache.Sequence;
import io.tierkv.core.cache.SequenceOptions;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * With a store below that fetches ahead, a match that misses locally releases the lock, fetches
 * the rest of the chain, takes the lock back and matches again. A sequence closed meanwhile (a
 * runtime's cancellation) must take nothing: a block taken into a closed sequence keeps a
 * reference nobody releases. The fetch here is the test's: it writes the missing block in
 * another sequence (so the second match finds it) and closes the matching sequence.
 */
class FetchAheadClosedSequenceTest {

    @TempDir
    Path dir;

    @Test
    void aSequenceClosedDuringItsFetchTakesNoBlock() {
        try (HostDiskStack stack = new HostDiskStack(dir.resolve("kv"), HookedLower::fetching)) {
            HookedLower lower = (HookedLower) stack.lower;
            Sequence probe = stack.cache.openSequence(SequenceOptions.defaults());
            int[] id = {-1};
            lower.duringFetch = () -> {
                try (Sequence writer = stack.cache.openSequence(SequenceOptions.defaults())) {
                    appendWritten(writer, 7, tokens(0, 16));
                    id[0] = writer.blockId(0);
                }
                probe.close();
            };
            assertEquals(0, probe.matchPrefix(tokens(0, 32)), "the closed sequence holds nothing");
            assertNull(lower.duringFetch, "the fetch ran");
            assertTrue(probe.isClosed());
            assertEquals(0, stack.cache.diagnostics().referenceCount(id[0]), "nobody references the block");
            assertEquals(List.of(), stack.cache.checkInvariants());
        }
    }
}

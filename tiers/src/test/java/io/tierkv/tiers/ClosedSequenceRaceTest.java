package io.tierkv.tiers;

import static io.tierkv.core.testing.TestCaches.appendWritten;
import static io.tierkv.core.testing.TestCaches.tokens;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.core.KvLayout;
import io.tierkv.core.cache.BlockLease;
import io.tierkv.core.cache.Sequence;
import io.tierkv.core.cache.SequenceOptions;
import io.tierkv.core.testing.CacheInvariants;
import io.tierkv.core.testing.Payloads;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A sequence closed by one thread while another reads it (misuse: one thread at a time per
 * sequence, but the kind a runtime's cancellation path commits): the reader (a block stream, a
 * position read or a lease of every block) gets its own bytes or "sequence is closed", never the
 * bytes of the sequence that reused the freed tail block. Before the readers re-checked after
 * taking their leases, two of three runs of 1,500 rounds handed out the other sequence's values
 * (28 and 1 reads; a newcomer's stress program: 24 of about 500 rounds, and with leases 1-7 of
 * 500).
 */
class ClosedSequenceRaceTest {

    private static final int ROUNDS = 4000;
    private static final int TOKENS = 30; // B = 16: one sealed block and an open tail, freed at close

    @RegisterExtension
    final CacheInvariants invariants = new CacheInvariants();

    @Test
    void aReaderOfASequenceClosedUnderItNeverGetsAnotherSequencesBytes() throws Exception {
        KvBlockManager kv = Managers.build(invariants, 8, 8, null);
        KvLayout l = Managers.LAYOUT;
        AtomicInteger foreign = new AtomicInteger();
        AtomicInteger own = new AtomicInteger();
        for (int round = 0; round < ROUNDS; round++) {
            long key = 2L * round + 1;
            Sequence s = kv.openSequence(SequenceOptions.salt("s" + round));
            appendWritten(s, key, tokens(0, TOKENS));
            int mode = round % 3; // a block stream, a position read, a lease of every block
            Thread reader = Thread.ofPlatform().start(() -> {
                try (Arena arena = Arena.ofConfined()) {
                    MemorySegment k = arena.allocate(l.tokenVectorBytes());
                    MemorySegment v = arena.allocate(l.tokenVectorBytes());
                    for (int pass = 0; pass < 50; pass++) {
                        if (mode == 2) {
                            kv.demote(Integer.MAX_VALUE); // the lease promotes, releasing the lock meanwhile
                            try (BlockLease le = s.lease(0, TOKENS)) {
                                for (int pos = 0; pos < TOKENS; pos++) {
                                    MemorySegment block = le.block(pos / l.blockSizeTokens());
                                    check(block.asSlice(l.offsetOf(0, KvLayout.K, pos % l.blockSizeTokens()),
                                            l.tokenVectorBytes()), l, key, pos, foreign, own);
                                }
                            }
                        } else if (mode == 0) {
                            try (BlockStream bs = kv.stream(s, 0, 0)) {
                                while (bs.hasNext()) {
                                    int b = bs.next();
                                    for (int t = 0; t < l.blockSizeTokens() && b * l.blockSizeTokens() + t < TOKENS; t++) {
                                        int pos = b * l.blockSizeTokens() + t;
                                        check(bs.keys().asSlice((long) t * l.tokenVectorBytes(), l.tokenVectorBytes()),
                                                l, key, pos, foreign, own);
                                    }
                                }
                            }
                        } else {
                            for (int pos = 0; pos < TOKENS; pos++) {
                                s.read(0, pos, k, v);
                                check(k, l, key, pos, foreign, own);
                            }
                        }
                    }
                } catch (IllegalStateException closed) {
                    assertEquals("sequence is closed", closed.getMessage());
                }
            });
            Thread.onSpinWait();
            s.close();
            Sequence other = kv.openSequence(SequenceOptions.salt("o" + round)); // takes the freed tail's id
            appendWritten(other, key + 1, tokens(1000, TOKENS));
            reader.join();
            other.close();
        }
        assertEquals(0, foreign.get(), "reads that returned another sequence's bytes (" + own.get() + " own)");
        assertTrue(own.get() > 0, "the readers read before the closes");
        assertTrue(kv.checkInvariants().isEmpty(), kv.checkInvariants().toString());
    }

    private static void check(MemorySegment keys, KvLayout l, long key, int pos, AtomicInteger foreign,
            AtomicInteger own) {
        if (Payloads.matches(keys, l, key, pos, 0, 0)) {
            own.incrementAndGet();
        } else {
            foreign.incrementAndGet();
        }
    }
}

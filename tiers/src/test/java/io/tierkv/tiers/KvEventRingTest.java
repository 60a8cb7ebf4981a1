package io.tierkv.tiers;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.core.event.KvMedium;
import io.tierkv.core.prefix.BlockIdentity;
import io.tierkv.tiers.events.KvEventView;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The event ring alone: many producers against one consumer, a full ring, and slot layouts. */
class KvEventRingTest {

    private static final ValueLayout.OfLong LONG_LE = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /** An identity whose parent and tokens are derived from (producer, n). */
    private static MemorySegment identity(Arena arena, int tokens, long producer, long n) {
        MemorySegment id = arena.allocate(BlockIdentity.KEY_BYTES + 4L * tokens);
        id.set(LONG_LE, BlockIdentity.PARENT_HI, producer + 1);
        id.set(LONG_LE, BlockIdentity.PARENT_LO, n);
        for (int j = 0; j < tokens; j++) {
            id.setAtIndex(ValueLayout.JAVA_INT_UNALIGNED, BlockIdentity.KEY_BYTES / 4 + j, (int) (producer * 1_000_003 + n * 31 + j));
        }
        return id;
    }

    @Test
    void fourProducersAndOneConsumerLoseNothingAndKeepEachProducersOrderAndContent() throws Exception {
        int producers = 4;
        int perProducer = 50_000;
        int tokens = 8;
        KvEventRing ring = new KvEventRing(3_000, tokens); // not a multiple of a chunk: wraps through a short chunk
        AtomicLong refused = new AtomicLong();
        List<Thread> threads = new ArrayList<>();
        for (int p = 0; p < producers; p++) {
            long producer = p;
            threads.add(Thread.ofPlatform().start(() -> {
                try (Arena arena = Arena.ofConfined()) {
                    MemorySegment[] ids = new MemorySegment[16];
                    for (int n = 0; n < perProducer; n++) {
                        boolean stored = n % 3 != 0;
                        boolean ok;
                        do {
                            if (stored) {
                                MemorySegment id = identity(arena, tokens, producer, n);
                                ids[n % ids.length] = id;
                                ok = ring.stored(KvMedium.DISK, producer, n, id) != KvEventRing.REFUSED;
                            } else {
                                ok = ring.removed(KvMedium.CPU, producer, n) != KvEventRing.REFUSED;
                            }
                            if (!ok) {
                                refused.incrementAndGet();
                                Thread.onSpinWait();
                            }
                        } while (!ok);
                    }
                }
            }));
        }
        long[] next = new long[producers];
        int[] got = new int[tokens];
        long read = 0;
        long total = (long) producers * perProducer;
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (read < total) {
            assertTrue(System.nanoTime() < deadline, "consumer stalled at " + read + " of " + total);
            long from = ring.head();
            int n = ring.ready(from, 100);
            for (long t = from; t < from + n; t++) {
                int p = (int) ring.hashHi(t);
                long k = ring.hashLo(t);
                assertEquals(next[p]++, k, "producer " + p + "'s order");
                if (k % 3 != 0) {
                    assertEquals(KvEventView.Type.BLOCK_STORED, ring.type(t));
                    assertEquals(KvMedium.DISK, ring.medium(t));
                    assertEquals(p + 1, ring.parentHi(t));
                    assertEquals(k, ring.parentLo(t));
                    assertEquals(tokens, ring.copyTokens(t, got, 0));
                    for (int j = 0; j < tokens; j++) {
                        assertEquals((int) (p * 1_000_003L + k * 31 + j), got[j]);
                        assertEquals(got[j], ring.token(t, j));
                    }
                } else {
                    assertEquals(KvEventView.Type.BLOCK_REMOVED, ring.type(t));
                    assertEquals(KvMedium.CPU, ring.medium(t));
                    assertEquals(0, ring.tokenCount(t));
                    assertEquals(0, ring.parentHi(t));
                }
            }
            ring.release(from + n);
            read += n;
        }
        for (Thread t : threads) {
            t.join();
        }
        assertArrayEquals(new long[] {perProducer, perProducer, perProducer, perProducer}, next);
        assertEquals(total, ring.accepted(), "accepted counts only what went in");
        assertEquals(0, ring.depth());
    }

    @Test
    void halfFullIsReportedOncePerFillWhateverTheReleasesInBetween() {
        KvEventRing ring = new KvEventRing(8, 1);
        int halfFull = 0;
        for (int n = 0; n < 1_000; n++) {
            int outcome = ring.removed(KvMedium.CPU, 1, n);
            assertNotEquals(KvEventRing.REFUSED, outcome, "event " + n);
            if (outcome == KvEventRing.ADDED_HALF_FULL) {
                halfFull++;
                assertEquals(5, ring.depth(), "reported by the event that took the depth from 4 to 5");
            }
            if (ring.depth() == 6) { // the consumer frees what it read, down to one left
                ring.release(ring.head() + 5);
            }
        }
        assertEquals(1_000 / 5, halfFull, "events 4, 9, 14, ...: each fill to a depth of 6 passes 4 to 5 once");
    }

    @Test
    void aFullRingRefusesUntilTheConsumerReleasesAndNeverOverwritesAnUnreadSlot() {
        KvEventRing ring = new KvEventRing(5, 2);
        try (Arena arena = Arena.ofConfined()) {
            for (int n = 0; n < 5; n++) { // the third event makes the ring of 5 half full (depth 2 before it)
                assertEquals(n == 2 ? KvEventRing.ADDED_HALF_FULL : KvEventRing.ADDED,
                        ring.stored(KvMedium.GPU, 7, n, identity(arena, 2, 0, n)));
            }
            assertEquals(KvEventRing.REFUSED, ring.removed(KvMedium.GPU, 7, 99), "full");
            assertEquals(KvEventRing.REFUSED, ring.stored(KvMedium.GPU, 7, 99, identity(arena, 2, 0, 99)), "full");
            assertEquals(5, ring.depth());
            assertEquals(5, ring.ready(ring.head(), 10));
            assertEquals(3, ring.ready(ring.head(), 3), "at most max");
            ring.release(2); // two freed: exactly two more fit
            assertNotEquals(KvEventRing.REFUSED, ring.removed(KvMedium.GPU, 8, 5));
            assertNotEquals(KvEventRing.REFUSED, ring.removed(KvMedium.GPU, 8, 6));
            assertEquals(KvEventRing.REFUSED, ring.removed(KvMedium.GPU, 8, 7));
            assertEquals(7, ring.accepted());
            long from = ring.head();
            assertEquals(2, from);
            assertEquals(5, ring.ready(from, 10));
            long[] lo = new long[5];
            for (int i = 0; i < 5; i++) {
                lo[i] = ring.hashLo(from + i);
            }
            assertArrayEquals(new long[] {2, 3, 4, 5, 6}, lo, "positions 5 and 6 wrote slots of their own, not 2-4");
        }
    }

    @Test
    void anIdentityOfMoreThanBTokensIsRefusedAndATokenOutOfRangeNamesTheCount() {
        KvEventRing ring = new KvEventRing(4, 2);
        try (Arena arena = Arena.ofConfined()) {
            assertEquals(KvEventRing.REFUSED, ring.stored(KvMedium.GPU, 1, 1, identity(arena, 3, 0, 0)));
            assertEquals(0, ring.accepted());
            assertNotEquals(KvEventRing.REFUSED, ring.stored(KvMedium.GPU, 1, 1, identity(arena, 2, 0, 0)));
            IndexOutOfBoundsException e = assertThrows(IndexOutOfBoundsException.class, () -> ring.token(0, 2));
            assertTrue(e.getMessage().contains("has 2"), e.getMessage());
        }
    }

    @Test
    void largeBlocksGetSmallerChunksAndStillRoundTrip() throws Exception {
        int tokens = 4096; // 64 slots per chunk
        KvEventRing ring = new KvEventRing(200, tokens);
        AtomicBoolean ok = new AtomicBoolean(true);
        try (Arena arena = Arena.ofConfined()) {
            int[] got = new int[tokens];
            for (int round = 0; round < 3; round++) {
                for (int n = 0; n < 200; n++) {
                    ok.compareAndSet(true, ring.stored(KvMedium.DISK, 3, round * 200L + n, identity(arena, tokens, 3, n))
                            != KvEventRing.REFUSED);
                }
                assertTrue(ok.get());
                long from = ring.head();
                assertEquals(200, ring.ready(from, 1000));
                for (int n = 0; n < 200; n++) {
                    ring.copyTokens(from + n, got, 0);
                    assertEquals((int) (3 * 1_000_003L + n * 31L + tokens - 1), got[tokens - 1]);
                }
                ring.release(from + 200);
            }
        }
    }
}

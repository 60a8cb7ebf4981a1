package io.tierkv.tiers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.core.event.KvMedium;
import io.tierkv.core.prefix.BlockIdentity;
import io.tierkv.tiers.events.KvEvent;
import io.tierkv.tiers.events.KvEventBatch;
import io.tierkv.tiers.events.KvEventListener;
import io.tierkv.tiers.events.KvEventStats;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * What a listener's misbehaviour does to the rest of the stream (found by a review): an {@code
 * Error} thrown by the listener ended the event thread for good, uncounted, so every later event
 * was queued and then dropped; an interrupt the listener left on the thread was taken for a close,
 * and the consumer was told AllBlocksCleared while the manager ran. Either way the next batches
 * must still come, and AllBlocksCleared only at close.
 */
class KvEventQueueListenerFaultTest {

    private static final int B = 4;

    @Test
    void aListenerThatThrowsAnErrorIsCountedAndGetsTheNextBatches() throws Exception {
        List<KvEventBatch> got = new CopyOnWriteArrayList<>();
        AtomicInteger calls = new AtomicInteger();
        runTwoBursts(batch -> {
            if (calls.getAndIncrement() == 0) {
                throw new AssertionError("a bug in a router's listener");
            }
            got.add(batch);
        }, got, 1);
    }

    @Test
    void anInterruptTheListenerLeavesIsClearedAndStopsNothing() throws Exception {
        List<KvEventBatch> got = new CopyOnWriteArrayList<>();
        AtomicInteger calls = new AtomicInteger();
        runTwoBursts(batch -> {
            got.add(batch);
            if (calls.getAndIncrement() == 0) {
                Thread.currentThread().interrupt(); // restored after catching InterruptedException
            }
        }, got, 0);
    }

    /**
     * Reports a burst, waits until the listener was called once, reports a second burst, and checks
     * that the second reaches the listener with no AllBlocksCleared, and that close sends one last.
     */
    private static void runTwoBursts(KvEventListener listener, List<KvEventBatch> got, int errors)
            throws InterruptedException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment identity = arena.allocate(BlockIdentity.bytes(B));
            KvEventQueue queue = new KvEventQueue(listener, 1024, B);
            try {
                queue.blockStored(KvMedium.GPU, 1, 1, identity);
                awaitDelivered(queue, 1);
                for (int i = 2; i <= 11; i++) {
                    queue.blockStored(KvMedium.GPU, i, i, identity);
                }
                awaitDelivered(queue, 11);
                KvEventStats s = queue.stats();
                assertEquals(errors, s.listenerErrors(), s.toString());
                assertEquals(0, s.dropped(), s.toString());
                long stored = got.stream().flatMap(b -> b.events().stream())
                        .filter(e -> e instanceof KvEvent.BlockStored).count();
                assertEquals(errors == 0 ? 11 : 10, stored, "every event after the first batch: " + s);
                assertEquals(0, cleared(got), "no AllBlocksCleared while the manager runs");
            } finally {
                queue.close();
            }
            assertEquals(1, cleared(got), "AllBlocksCleared at close");
            KvEvent last = got.getLast().events().getLast();
            assertTrue(last instanceof KvEvent.AllBlocksCleared, "last: " + last);
        }
    }

    private static long cleared(List<KvEventBatch> got) {
        return got.stream().flatMap(b -> b.events().stream()).filter(e -> e instanceof KvEvent.AllBlocksCleared)
                .count();
    }

    private static void awaitDelivered(KvEventQueue queue, long events) throws InterruptedException {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (queue.stats().delivered() < events && System.nanoTime() < deadline) {
            Thread.sleep(2);
        }
        assertEquals(events, queue.stats().delivered(), queue.stats().toString());
    }
}

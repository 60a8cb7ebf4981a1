package io.tierkv.observe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tierkv.tiers.KvBlockManager;
import io.tierkv.tiers.events.KvEventBatch;
import io.tierkv.tiers.events.KvEventStats;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A tiny event queue behind a stalled listener: the data path goes on, drops are counted and show as gaps. */
class KvEventDropsTest {

    @TempDir
    Path dir;

    @Test
    void droppedEventsAreCountedAndEqualTheSequenceGapsOnTheWire() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        List<KvEventBatch> batches = new CopyOnWriteArrayList<>();
        KvEventStats atEnd;
        try (EventIndexer indexer = new EventIndexer(false);
             ZmqKvEventPublisher publisher = new ZmqKvEventPublisher(indexer.endpoint(), "kv", 0, 5_000)) {
            try (KvBlockManager kv = Workload.manager(KvBlockManager.builder(Workload.LAYOUT).kvEvents(batch -> {
                try {
                    release.await(30, TimeUnit.SECONDS); // the listener stalls: the queue of 4 fills
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                batches.add(batch);
                publisher.onBatch(batch);
            }, 4), dir.resolve("kv"))) {
                long start = System.nanoTime();
                Workload.run(kv, 11, 100); // finishes although the listener is stalled
                assertTrue(System.nanoTime() - start < 25_000_000_000L, "the data path did not wait");
                KvEventStats stalled = kv.kvEventStats().orElseThrow();
                assertTrue(stalled.dropped() > 100, "drops " + stalled);
                assertEquals(4, stalled.queueCapacity());
                release.countDown();
                Workload.run(kv, 12, 5); // a batch after the drops carries their count
                long deadline = System.nanoTime() + 10_000_000_000L;
                while (kv.kvEventStats().orElseThrow().depth() > 0 && System.nanoTime() < deadline) {
                    Thread.sleep(10);
                }
                kv.close(); // delivers what is queued and AllBlocksCleared, with the drops before them
                atEnd = kv.kvEventStats().orElseThrow();
            }
            KvEventsEndToEndTest.awaitSent(indexer, publisher);
            long droppedTotal = batches.stream().mapToLong(KvEventBatch::droppedBefore).sum();
            List<Long> wire = indexer.sequences();
            assertEquals(batches.size(), wire.size());
            long gaps = wire.get(0);
            for (int i = 1; i < wire.size(); i++) {
                assertTrue(wire.get(i) > wire.get(i - 1), "increasing");
                gaps += wire.get(i) - wire.get(i - 1) - 1;
                assertEquals(batches.get(i).sequence(), wire.get(i), "the wire numbers are the manager's");
            }
            assertTrue(droppedTotal > 100, "dropped " + droppedTotal);
            assertEquals(atEnd.dropped(), droppedTotal, "every counted drop is reported in a batch");
            assertEquals(droppedTotal, gaps, "every drop is one missing sequence number on the wire");
            assertEquals(atEnd.batches(), wire.size());
        }
    }

    @Test
    void aQueueOfNoEventsIsRefusedNamingTheField() {
        var e = assertThrows(IllegalArgumentException.class, () -> Workload.manager(
                KvBlockManager.builder(Workload.LAYOUT).kvEvents(batch -> { }, 0), dir.resolve("kv")));
        assertEquals("kvEventQueueCapacity: 0 (expected >= 1)", e.getMessage());
    }

    @Test
    void aQueueLargerThanAQuarterOfTheHeapIsRefusedBeforeAnythingIsAllocated() {
        var e = assertThrows(IllegalArgumentException.class, () -> Workload.manager(
                KvBlockManager.builder(Workload.LAYOUT).kvEvents(batch -> { }, Integer.MAX_VALUE), dir.resolve("kv")));
        long heap = Runtime.getRuntime().maxMemory();
        assertTrue(e.getMessage().startsWith("kvEventQueueCapacity: " + Integer.MAX_VALUE + " events of "
                + Workload.LAYOUT.blockSizeTokens() + " tokens take "), e.getMessage());
        assertTrue(e.getMessage().endsWith("(expected <= " + heap / 4 + ", a quarter of the JVM's max heap " + heap + ")"),
                e.getMessage());
    }
}
